"""KBIndex: everything the checks need about one snapshot, built once and cached on disk."""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from curate.errors import CurateError
from curate.fileio import atomic_directory
from curate.index.bm25 import BM25
from curate.index.embeddings import EmbeddingCache
from curate.index.folded import FoldedTexts, write_folded
from curate.index.ngrams import NgramIndex
from curate.kb import SnapshotStore
from curate.kb.shards import NONE, neighbour_positions
from curate.kb.scope_fields import scope_key
from curate.locks import writing
from curate.progress import progress
from curate.records import Chunk, ChunkGroups, LexicalIndexMeta
from curate.records.kb import DenseIndexMeta
from curate.text.normalize import fold
from curate.workspace import Workspace

LEXICAL_VERSION = 3  # 3: folded texts one a line (folded.txt, read a text at a time), not JSON
DENSE_VERSION = 1
DENSE_SAMPLE = 200   # chunks whose readability stands for the snapshot's
DENSE_WARM_UP = 8    # chunks embedded while the model loads, before the speed is measured
DENSE_PROBE = 64     # chunks embedded by then: the speed the estimate rests on
DENSE_SLICE = 192    # chunks per slice, each stored as it is done
DENSE_SAY_FROM = 10  # seconds a build must be expected to take before it says how long
BM25_VERSION = 2  # 2: Chinese after digits or Latin letters is its own token
BRIDGE = 32  # folded characters of the next chunk indexed with each chunk


class KBIndex:
    """The index of one KB snapshot, under kb/index/<snapshot id>/ in the workspace."""

    def __init__(self, workspace: Workspace, snapshot_id: str):
        self.workspace = workspace
        self.snapshot_id = snapshot_id
        self.folder = workspace.kb_dir / "index" / snapshot_id
        self.store = SnapshotStore(workspace)

    @classmethod
    def open(cls, workspace: Workspace, ref: str | None) -> KBIndex:
        """Return the index of the snapshot `ref` names (see SnapshotStore.resolve)."""
        return cls(workspace, SnapshotStore(workspace).resolve(ref))

    @classmethod
    def of_chunks(cls, chunks: Sequence[Chunk], *, snapshot_id: str = "in-memory",
                  copies: dict[str, list[str]] | None = None) -> KBIndex:
        """Return the index of `chunks` held in memory: nothing is read or written (the input of the
        checks' pure cores, and of tests); `copies` is chunk id -> its duplicate group, as
        `check-dups --kb` stores it.

        >>> from curate.kb import sha256_text
        >>> text = "Refunds take 14 days."
        >>> index = KBIndex.of_chunks([Chunk(chunk_id="c1", doc_id="faq", text=text, text_sha256=sha256_text(text))])
        >>> index.folded, index.position
        (['refundstake14days'], {'c1': 0})
        """
        index = cls.__new__(cls)
        index.workspace, index.store, index.folder, index.snapshot_id = None, None, None, snapshot_id
        chunks = list(chunks)
        index.__dict__.update(chunks=chunks, copies=within_scope(dict(copies or {}), chunks))
        return index

    @cached_property
    def chunks(self) -> list[Chunk]:
        return self.store.chunks(self.snapshot_id)

    @cached_property
    def position(self) -> dict[str, int]:
        """Chunk id -> position in `chunks`."""
        return {c.chunk_id: i for i, c in enumerate(self.chunks)}

    def doc_of(self, position: int) -> str:
        """Return the document id of the chunk at `position`."""
        return self.chunks[position].doc_id

    def texts(self, positions: Iterable[int]) -> dict[int, str]:
        """Return position -> text of the chunks at `positions`."""
        return {p: self.chunks[p].text for p in positions}

    @cached_property
    def doc_positions(self) -> dict[str, list[int]]:
        """Document id -> positions of its chunks, in snapshot order."""
        by_doc: dict[str, list[int]] = {}
        for i, chunk in enumerate(self.chunks):
            by_doc.setdefault(chunk.doc_id, []).append(i)
        return by_doc

    @cached_property
    def neighbours(self) -> dict[int, tuple[int | None, int | None]]:
        """Chunk position -> (previous, next) chunk of the same document, by offset or order."""
        before, after = neighbour_positions(self.chunks)
        return {i: (None if b == NONE else b, None if a == NONE else a) for i, (b, a) in enumerate(zip(before, after))}

    # -- positions: an index of the whole snapshot is its own view (a shard's maps them, `ShardIndex`) ---

    @cached_property
    def size(self) -> int:
        """Chunks this index searches (its own, in a shard's view)."""
        return len(self.chunks)

    def global_position(self, position: int) -> int:
        """Return the snapshot position of a position of this index."""
        return position

    def in_view(self, position: int) -> int | None:
        """Return where a snapshot position sits in this index, or None when it is not in it."""
        return position

    def own_texts(self) -> Sequence[str]:
        """Return the texts of this index's own chunks, in order."""
        return [c.text for c in self.chunks[:self.size]]

    def same_text(self, texts: set[str]) -> list[int]:
        """Return, in order, the positions of this index's own chunks whose folded text is one of `texts`."""
        return [p for p, folded in enumerate(self.folded[:self.size]) if folded in texts]

    # -- lexical: folded texts and the n-gram index, built together ------------------------------

    def building(self):
        """Return the context that holds this index's write lock: one command builds a part at a time,
        and the next finds it built."""
        return writing(self.folder, f"the index of {self.snapshot_id}", clean=[(self.folder, 2)])

    def _stored_folded(self) -> FoldedTexts | None:
        """Return the stored folded texts of this index's own chunks, or None when they are missing, damaged
        or of another version (a cache: built again)."""
        folder = self.folder / "lexical"
        try:
            meta = LexicalIndexMeta.read(folder / "meta.json")
            if meta.version == LEXICAL_VERSION and meta.chunks == self.size:
                return FoldedTexts.read(folder, meta.chunks, meta.folded_crc32)
        except (CurateError, OSError, ValueError):
            pass
        return None

    def _stored_lexical(self) -> tuple[Sequence[str], NgramIndex] | None:
        folded = self._stored_folded()
        try:
            return None if folded is None else (folded, NgramIndex.load(self.folder / "lexical"))
        except (OSError, ValueError):
            return None  # a cache that is missing or damaged is built again

    def _lexical(self) -> tuple[Sequence[str], NgramIndex]:
        if self.folder is None:   # in memory
            return self._lexical_of_chunks()
        stored = self._stored_lexical()
        if stored is not None:
            return stored
        with self.building():
            return self._stored_lexical() or self._build_lexical()

    def _lexical_of_chunks(self) -> tuple[list[str], NgramIndex]:
        folded = [fold(c.text) for c in self.chunks]
        # Each chunk is indexed with the start of the next chunk of its document, so a copy that
        # a chunker cut in two is still found whole by the chunk where it begins.
        following = [folded[after][:BRIDGE] if after is not None else ""
                     for _, after in (self.neighbours.get(i, (None, None)) for i in range(len(folded)))]
        return folded, NgramIndex.build([text + tail for text, tail in zip(folded, following)])

    def _build_lexical(self) -> tuple[list[str], NgramIndex]:
        folded, ngrams = self._lexical_of_chunks()
        with atomic_directory(self.folder / "lexical", replace=True) as tmp:
            self._save_lexical(tmp, folded, ngrams)
        return folded, ngrams

    def _save_lexical(self, tmp: Path, folded: list[str], ngrams: NgramIndex) -> None:
        crc32 = write_folded(tmp, folded)
        ngrams.save(tmp)
        LexicalIndexMeta(version=LEXICAL_VERSION, n=ngrams.n, chunks=len(folded), snapshot=self.snapshot_id,
                         folded_crc32=crc32).write(tmp / "meta.json")

    @cached_property
    def lexical(self) -> tuple[Sequence[str], NgramIndex]:
        return self._lexical()

    @property
    def folded(self) -> Sequence[str]:
        """Folded text of every chunk (NFKC, case, white space and punctuation removed)."""
        return self.lexical[0]

    @property
    def ngrams(self) -> NgramIndex:
        return self.lexical[1]

    # -- BM25, built on first use -------------------------------------------------------------------

    @cached_property
    def bm25(self) -> BM25:
        if self.folder is None:   # in memory
            return BM25.build([c.text for c in self.chunks], f"BM25 index of {self.snapshot_id}")
        folder = self.folder / f"bm25-v{BM25_VERSION}"
        if (folder / "done").exists():
            return BM25.load(folder, len(self.chunks))
        with self.building():
            if (folder / "done").exists():
                return BM25.load(folder, len(self.chunks))
            index = BM25.build([c.text for c in self.chunks], f"BM25 index of {self.snapshot_id}")
            with atomic_directory(folder, replace=True) as tmp:
                index.save(tmp)
                (tmp / "done").write_text("ok\n")
        return index

    # -- dense: every chunk's vector under one model, built only when asked (`curate grade --dense`) ---

    def _dense_folder(self, model: str) -> Path:
        # the embedding cache's own key for the model (an embedded model's names its package version)
        return self.folder / "dense" / EmbeddingCache(self.folder / "dense", model).folder.name

    def dense_meta(self, model: str) -> DenseIndexMeta | None:
        """Return what an earlier `--dense` run found out about embedding this snapshot with `model`."""
        try:
            meta = DenseIndexMeta.read(self._dense_folder(model) / "meta.json")
        except (CurateError, OSError, ValueError):
            return None  # none yet, or damaged: found out again
        if meta.version != DENSE_VERSION or meta.model != model or meta.snapshot != self.snapshot_id:
            return None
        return meta

    def stored_dense(self, model: str) -> np.ndarray | None:
        """Return every chunk's vector under `model` (rows in chunk order) if they were built, else None."""
        meta = self.dense_meta(model)
        if meta is None or not meta.built or meta.chunks != self.size:
            return None
        try:
            vectors = np.load(self._dense_folder(model) / "vectors.npy", mmap_mode="r")
        except (OSError, ValueError):
            return None
        return vectors if vectors.ndim == 2 and vectors.shape[0] == self.size else None

    def _write_dense(self, meta: DenseIndexMeta, vectors: np.ndarray | None) -> None:
        with self.building(), atomic_directory(self._dense_folder(meta.model), replace=True) as tmp:
            if vectors is not None:
                np.save(tmp / "vectors.npy", vectors)
            meta.write(tmp / "meta.json")

    def dense_sample(self) -> list[str]:
        """Return the texts of up to DENSE_SAMPLE chunks spread evenly over the snapshot."""
        step = max(1, len(self.chunks) // DENSE_SAMPLE)
        return [c.text for c in self.chunks[::step][:DENSE_SAMPLE]]

    def check_dense(self, cache: EmbeddingCache, sample: list[str] | None = None, chunks: int | None = None,
                    ) -> DenseIndexMeta:
        """Return (and store) how many of a sample of chunks (default: `dense_sample`, of this index's `size`
        chunks) `cache.model` cannot read."""
        sample = self.dense_sample() if sample is None else sample
        unreadable = int(len(sample) - np.count_nonzero(cache.readable(sample)))
        meta = DenseIndexMeta(version=DENSE_VERSION, model=cache.model, snapshot=self.snapshot_id,
                              chunks=self.size if chunks is None else chunks, sampled=len(sample), unreadable=unreadable)
        self._write_dense(meta, None)
        return meta

    def build_dense(self, cache: EmbeddingCache, notify: Callable[[str], None] | None = None) -> np.ndarray:
        """Return every chunk's vector under `cache.model`, embedding them in slices (a killed build
        resumes from the slices done) with a progress bar, after saying how long it will take."""
        meta = self.dense_meta(cache.model) or self.check_dense(cache)
        texts = [c.text for c in self.chunks]
        # Slices stay under 200 texts, the size from which the cache draws a bar of its own: one bar here.
        scratch = EmbeddingCache(self.folder / "embeddings", cache.model)
        parts = [scratch.embed(texts[:DENSE_WARM_UP], "loading the model")]
        started = time.perf_counter()
        parts.append(scratch.embed(texts[DENSE_WARM_UP:DENSE_PROBE], "measuring speed"))
        seconds = time.perf_counter() - started
        probed = len(texts[DENSE_WARM_UP:DENSE_PROBE])
        if probed and seconds > 0.05:  # quicker: those were embedded by an earlier, interrupted build
            meta.chunks_per_second = round(probed / seconds, 1)
            self._write_dense(meta, None)  # an interrupted build still knows how long the whole takes
            if notify and len(texts) / meta.chunks_per_second >= DENSE_SAY_FROM:
                notify(f"embedding {len(texts):,} chunks of {self.snapshot_id} with {cache.model}: about "
                       f"{duration(len(texts) / meta.chunks_per_second)} at {meta.chunks_per_second:g} chunks/s "
                       f"(once per snapshot; later grades reuse them)")
        rest, pending = texts[DENSE_PROBE:], []
        for n, text in enumerate(progress(rest, f"embedding {self.snapshot_id}", unit="chunk")):
            pending.append(text)
            if len(pending) == DENSE_SLICE or n == len(rest) - 1:
                parts.append(scratch.embed(pending, "embedding chunks"))
                pending = []
        vectors = np.concatenate([p for p in parts if len(p)]).astype(np.float32)
        meta.built = True
        self._write_dense(meta, vectors)
        # the vectors now live in chunk order beside the meta; the scratch copy keyed by text goes
        shutil.rmtree(getattr(scratch, "folder", self.folder / "embeddings" / "-"), ignore_errors=True)
        with contextlib.suppress(OSError):
            (self.folder / "embeddings").rmdir()
        return vectors

    # -- evidence equivalence groups (written by check-dups --kb) ----------------------------------

    @property
    def groups_path(self) -> Path:
        return self.folder / "groups.json"

    @cached_property
    def copies(self) -> dict[str, list[str]]:
        """Chunk id -> every chunk id of its duplicate group (itself included) in its own scope; absent
        if unique."""
        if not self.groups_path.exists():
            return {}
        groups = ChunkGroups.read(self.groups_path).groups
        copies = {chunk_id: group.chunks for group in groups for chunk_id in group.chunks}
        if copies and self.store.manifest(self.snapshot_id).scope is not None:
            return within_scope(copies, self.chunks)
        return copies


def within_scope(copies: dict[str, list[str]], chunks: Sequence[Chunk]) -> dict[str, list[str]]:
    """Return `copies` with each chunk's copies cut to those of its own scope: chunks whose access groups,
    version, validity or supersedes differ are never interchangeable (`check-dups --kb` never joins
    them; this holds for groups from anywhere else too).

    >>> from curate.records import Scope
    >>> chunks = [Chunk(chunk_id=c, doc_id=c, text="t", text_sha256="0", scope=s)
    ...           for c, s in (("a", None), ("b", None), ("hr", Scope(groups=["hr"])))]
    >>> within_scope({"a": ["a", "b", "hr"], "b": ["a", "b", "hr"], "hr": ["a", "b", "hr"]}, chunks)
    {'a': ['a', 'b'], 'b': ['a', 'b'], 'hr': ['hr']}
    """
    if not copies or all(c.scope is None for c in chunks):
        return copies
    key = {c.chunk_id: scope_key(c.scope) for c in chunks}
    return {chunk_id: [m for m in members if key.get(m) == key.get(chunk_id)] for chunk_id, members in copies.items()}


def duration(seconds: float) -> str:
    """Return a rough duration a person reads at a glance.

    >>> duration(42), duration(1111), duration(7400)
    ('42 s', '19 min', '2.1 h')
    """
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
