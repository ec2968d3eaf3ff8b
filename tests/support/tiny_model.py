"""A tiny sentence-transformers model made here, without a model hub: a static embedding of each character
(CJK ideographs and ASCII) into 32 random dimensions, averaged. It reads Chinese and English as a real model
folder does (`[embedding] model = "/path/to/folder"`), at thousands of chunks a second, so the stages that
embed a whole KB can be tested at 100,000 chunks."""

from __future__ import annotations

from pathlib import Path


def tiny_model(folder: Path) -> Path:
    """Write the model into `folder` (once) and return it."""
    if (folder / "modules.json").exists():
        return folder
    import numpy as np
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    from tokenizers import Tokenizer, models, pre_tokenizers

    chars = [chr(c) for c in range(0x4E00, 0xA000)] + [chr(c) for c in range(32, 127)]
    tokenizer = Tokenizer(models.WordLevel({"[UNK]": 0, **{c: n + 1 for n, c in enumerate(chars)}}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Split(pattern="", behavior="isolated")
    weights = np.random.default_rng(29).standard_normal((len(chars) + 1, 32)).astype(np.float32)
    SentenceTransformer(modules=[StaticEmbedding(tokenizer, embedding_weights=weights)], device="cpu").save(str(folder))
    return folder
