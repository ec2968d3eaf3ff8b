"""Dense embeddings from the workspace's sentence-transformers model, cached on disk.

Texts are embedded once per model: vectors are kept by the sha256 of the text, so an
unchanged snapshot or question set is never embedded again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from curate.errors import CurateError
from curate.fileio import atomic_write_bytes, loads_json
from curate.locks import writing
from curate.progress import progress
from curate.records import EmbeddingKeys, EvalItem
from curate.workspace import Workspace

BATCH = 64


def model_key(model: str) -> str:
    """Return a folder-safe key naming a model (its tail and a hash of the full name or path).

    >>> model_key("sentence-transformers/all-MiniLM-L6-v2")[:17]
    'all-MiniLM-L6-v2-'
    """
    tail = re.sub(r"[^A-Za-z0-9_.-]+", "-", model.rstrip("/").split("/")[-1])[:40]
    return f"{tail}-{hashlib.sha256(model.encode('utf-8')).hexdigest()[:8]}"


@lru_cache(maxsize=2)
def load_model(model: str):
    """Return the sentence-transformers model named by a name or a local folder."""
    try:
        import transformers
        from sentence_transformers import SentenceTransformer
        transformers.utils.logging.disable_progress_bar()  # our own bars only
        transformers.utils.logging.set_verbosity_error()
        return SentenceTransformer(model, device="cpu")
    except Exception as exc:  # a missing folder, no model hub here, a broken download
        raise CurateError(f"cannot load embedding model '{model}' ({type(exc).__name__}: {str(exc)[:160]}); "
                          f"set [embedding] model in curate.toml to a local folder or a reachable name") from None


MAX_UNKNOWN = 0.2


def readable(model: str, texts: Sequence[str]) -> np.ndarray:
    """Return, per text, whether the model can read it: at most 20% of its tokens unknown.

    An English-only model turns Chinese into [UNK] tokens, and the vectors of any two such texts
    look alike; comparing them would join unrelated questions.
    """
    tokenizer = getattr(load_model(model), "tokenizer", None)
    unknown = getattr(tokenizer, "unk_token", None)
    if tokenizer is None or unknown is None:
        return np.ones(len(texts), dtype=bool)
    result = np.ones(len(texts), dtype=bool)
    for n, text in enumerate(texts):
        tokens = tokenizer.tokenize(text)
        if tokens and sum(t == unknown for t in tokens) / len(tokens) > MAX_UNKNOWN:
            result[n] = False
    return result


class EmbeddingCache:
    """Vectors of texts for one model, kept in a folder by text sha256."""

    def __init__(self, folder: Path, model: str):
        self.folder = Path(folder) / model_key(model)
        self.model = model

    def _load(self) -> tuple[list[str], np.ndarray | None]:
        keys_path, vectors_path = self.folder / "keys.json", self.folder / "vectors.npy"
        if not keys_path.exists() or not vectors_path.exists():
            return [], None
        try:
            raw = loads_json(keys_path.read_text(encoding="utf-8"))
            # the first version of the cache kept the bare list of keys
            keys = raw if isinstance(raw, list) else EmbeddingKeys.parse(raw, file=keys_path).keys
            vectors = np.load(vectors_path)
        except (CurateError, OSError, ValueError):
            return [], None  # a damaged cache: embed again rather than mislabel
        if len(keys) != len(vectors):  # an interrupted write: start again rather than mislabel
            return [], None
        return keys, vectors

    def readable(self, texts: Sequence[str]) -> np.ndarray:
        """Return, per text, whether this cache's model can read it (see `readable`)."""
        return readable(self.model, texts)

    def embed(self, texts: Sequence[str], description: str = "embedding") -> np.ndarray:
        """Return L2-normalised float32 vectors of `texts`, computing only those not cached."""
        shas = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        keys, vectors = self._load()
        position = {k: i for i, k in enumerate(keys)}
        if any(s not in position for s in shas):
            with writing(self.folder, f"the embedding cache of {self.model}", clean=[(self.folder, 1)]):
                keys, vectors, position = self._add(shas, texts, description)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return vectors[[position[s] for s in shas]]

    def _add(self, shas: list[str], texts: Sequence[str], description: str):
        """Embed what the cache (read again under its lock: another command may have added to it) lacks,
        store it, and return (keys, vectors, position)."""
        keys, vectors = self._load()
        position = {k: i for i, k in enumerate(keys)}
        missing = list(dict.fromkeys(s for s in shas if s not in position))
        if missing:
            text_of = dict(zip(shas, texts))
            model = load_model(self.model)
            batches = [missing[i:i + BATCH] for i in range(0, len(missing), BATCH)]
            new = [model.encode([text_of[s] for s in batch], batch_size=BATCH, normalize_embeddings=True,
                                convert_to_numpy=True, show_progress_bar=False).astype(np.float32)
                   for batch in progress(batches, f"{description} ({len(missing)} texts)", unit="batch",
                                         total=len(batches) if len(missing) >= 200 else 1)]
            added = np.concatenate(new)
            vectors = added if vectors is None else np.concatenate([vectors, added])
            keys = keys + missing
            position = {k: i for i, k in enumerate(keys)}
            self.folder.mkdir(parents=True, exist_ok=True)
            buffer = _npy_bytes(vectors)
            atomic_write_bytes(self.folder / "vectors.npy", buffer)
            EmbeddingKeys(keys=keys).write(self.folder / "keys.json")
        return keys, vectors, position


def _npy_bytes(array: np.ndarray) -> bytes:
    import io
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def question_vectors(workspace: Workspace, items: Sequence[EvalItem], semantic: bool = True,
                     ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Return the question embeddings of `items` and which of them the model can read, or
    (None, None) when the semantic pass is off or there is nothing to embed."""
    if not semantic or not items:
        return None, None
    cache = workspace_embeddings(workspace)
    questions = [i.question for i in items]
    return cache.embed(questions, "embedding questions"), cache.readable(questions)


def workspace_embeddings(workspace: Workspace) -> EmbeddingCache:
    """Return the embedding cache of the workspace's configured model."""
    model = workspace.setting("embedding", "model")
    if not model:
        raise CurateError("no embedding model: set [embedding] model in curate.toml")
    return EmbeddingCache(workspace.root / "cache" / "embeddings", model)
