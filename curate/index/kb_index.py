"""KBIndex: everything the checks need about one snapshot, built once and cached on disk."""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path

import numpy as np

from curate.errors import CurateError
from curate.fileio import atomic_directory
from curate.index.bm25 import BM25
from curate.index.embeddings import EmbeddingCache
from curate.index.ngrams import NgramIndex
from curate.kb import SnapshotStore
from curate.locks import writing
from curate.records import Chunk, ChunkGroups, LexicalIndexMeta
from curate.text.normalize import fold
from curate.workspace import Workspace

LEXICAL_VERSION = 2
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

    @cached_property
    def chunks(self) -> list[Chunk]:
        return self.store.chunks(self.snapshot_id)

    @cached_property
    def position(self) -> dict[str, int]:
        """Chunk id -> position in `chunks`."""
        return {c.chunk_id: i for i, c in enumerate(self.chunks)}

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
        result = {}
        for positions in self.doc_positions.values():
            positions = sorted(positions, key=lambda i: (self.chunks[i].start if self.chunks[i].start is not None
                                                         else i, i))
            for k, i in enumerate(positions):
                result[i] = (positions[k - 1] if k else None, positions[k + 1] if k + 1 < len(positions) else None)
        return result

    # -- lexical: folded texts and the n-gram index, built together ------------------------------

    def building(self):
        """Return the context that holds this index's write lock: one command builds a part at a time,
        and the next finds it built."""
        return writing(self.folder, f"the index of {self.snapshot_id}", clean=[(self.folder, 2)])

    def _stored_lexical(self) -> tuple[list[str], NgramIndex] | None:
        folder = self.folder / "lexical"
        try:
            if LexicalIndexMeta.read(folder / "meta.json").version == LEXICAL_VERSION:
                folded = json.loads((folder / "folded.json").read_text(encoding="utf-8"))
                if len(folded) == len(self.chunks):
                    return folded, NgramIndex.load(folder)
        except (CurateError, OSError, ValueError):
            pass  # a cache that is missing or damaged is built again
        return None

    def _lexical(self) -> tuple[list[str], NgramIndex]:
        stored = self._stored_lexical()
        if stored is not None:
            return stored
        with self.building():
            return self._stored_lexical() or self._build_lexical()

    def _build_lexical(self) -> tuple[list[str], NgramIndex]:
        folder = self.folder / "lexical"
        folded = [fold(c.text) for c in self.chunks]
        # Each chunk is indexed with the start of the next chunk of its document, so a copy that
        # a chunker cut in two is still found whole by the chunk where it begins.
        following = [folded[after][:BRIDGE] if after is not None else ""
                     for _, after in (self.neighbours.get(i, (None, None)) for i in range(len(folded)))]
        ngrams = NgramIndex.build([text + tail for text, tail in zip(folded, following)])
        with atomic_directory(folder, replace=True) as tmp:
            (tmp / "folded.json").write_text(json.dumps(folded, ensure_ascii=False), encoding="utf-8")
            ngrams.save(tmp)
            LexicalIndexMeta(version=LEXICAL_VERSION, n=ngrams.n, chunks=len(folded),
                             snapshot=self.snapshot_id).write(tmp / "meta.json")
        return folded, ngrams

    @cached_property
    def lexical(self) -> tuple[list[str], NgramIndex]:
        return self._lexical()

    @property
    def folded(self) -> list[str]:
        """Folded text of every chunk (NFKC, case, white space and punctuation removed)."""
        return self.lexical[0]

    @property
    def ngrams(self) -> NgramIndex:
        return self.lexical[1]

    # -- BM25 and dense embeddings, each built on first use ----------------------------------------

    @cached_property
    def bm25(self) -> BM25:
        folder = self.folder / f"bm25-v{BM25_VERSION}"
        if (folder / "done").exists():
            return BM25.load(folder, len(self.chunks))
        with self.building():
            if (folder / "done").exists():
                return BM25.load(folder, len(self.chunks))
            index = BM25.build([c.text for c in self.chunks])
            with atomic_directory(folder, replace=True) as tmp:
                index.save(tmp)
                (tmp / "done").write_text("ok\n")
        return index

    def embeddings(self, model: str) -> np.ndarray:
        """Return the chunk embeddings (rows in chunk order) under `model`, computing them once."""
        cache = EmbeddingCache(self.folder / "embeddings", model)
        return cache.embed([c.text for c in self.chunks], description=f"embedding {self.snapshot_id}")

    # -- evidence equivalence groups (written by check-dups --kb) ----------------------------------

    @property
    def groups_path(self) -> Path:
        return self.folder / "groups.json"

    @cached_property
    def copies(self) -> dict[str, list[str]]:
        """Chunk id -> every chunk id of its duplicate group (itself included); absent if unique."""
        if not self.groups_path.exists():
            return {}
        groups = ChunkGroups.read(self.groups_path).groups
        return {chunk_id: group.chunks for group in groups for chunk_id in group.chunks}
