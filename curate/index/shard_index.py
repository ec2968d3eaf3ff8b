"""One shard of a snapshot as the checks see it (`ShardIndex`), and the lexical stage that indexes every
shard on an engine (`build_lexical`).

A shard's view holds its own chunks (positions 0 to size - 1, snapshot position `first + i`) and after them
the chunks of its documents that other shards hold (`ShardInfo.foreign`: none when chunks are listed
document by document), so each of its chunks' neighbours and documents are whole in it. Its n-gram index
covers its own chunks only: every chunk is a candidate in exactly one shard.

A snapshot in one shard (every KB under 10,000 chunks) is its own view: `KBIndex` as it always was.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import groupby
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from curate.engine import Engine, EngineSettings, open_engine, pending
from curate.errors import CurateError
from curate.index.folded import FoldedTexts
from curate.index.kb_index import BRIDGE, LEXICAL_VERSION, KBIndex
from curate.index.ngrams import NgramIndex
from curate.kb.shards import NONE, ShardRows, foreign_positions, neighbour_positions, read_column
from curate.records import Chunk, LexicalIndexMeta
from curate.text.normalize import fold
from curate.workspace import Workspace

R = TypeVar("R")


class _ViewChunks(Sequence):
    """A shard's chunks (read from their rows when asked for) followed by its foreign chunks."""

    def __init__(self, rows: ShardRows, foreign: list[Chunk]):
        self.rows, self.foreign = rows, foreign

    def __len__(self) -> int:
        return len(self.rows) + len(self.foreign)

    def __getitem__(self, position: int) -> Chunk:
        size = len(self.rows)
        return self.rows[position] if position < size else self.foreign[position - size]


def _in_view(position: int, first: int, size: int, foreign_at: dict[int, int]) -> int | None:
    """Return where a snapshot position sits in a shard's view (its own chunks from `first`, `size` of
    them; `foreign_at` the others it holds), or None when it is not in it."""
    if first <= position < first + size:
        return position - first
    return foreign_at.get(position)


class _Neighbours(Mapping):
    """Own chunk position -> (previous, next) chunk of its document in a view, from its shard's prev and next
    columns (snapshot positions), each placed in the view when asked for. It holds no reference to the view:
    a view left behind by a task is freed at once, not at the next run of the garbage collector."""

    def __init__(self, before: list[int], after: list[int], first: int, size: int, foreign_at: dict[int, int]):
        self.before, self.after, self.place = before, after, (first, size, foreign_at)

    def __getitem__(self, position: int) -> tuple[int | None, int | None]:
        if not 0 <= position < len(self.before):
            raise KeyError(position)
        return tuple(None if g == NONE else _in_view(g, *self.place)
                     for g in (self.before[position], self.after[position]))

    def __len__(self) -> int:
        return len(self.before)

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.before)))


class ShardIndex(KBIndex):
    """The index of shard `number` of a snapshot, under kb/index/<snapshot id>/shards/part-NNNNN/."""

    def __init__(self, workspace: Workspace, snapshot_id: str, number: int):
        super().__init__(workspace, snapshot_id)
        info = self.store.shards(snapshot_id)[number]
        self.number, self.first, self.size = number, info.first, info.chunks
        self.path = self.store.root / snapshot_id / info.file
        self.folder = workspace.kb_dir / "index" / snapshot_id / "shards" / f"part-{number:05d}"
        self.foreign = info.foreign if info.foreign is not None else _layout(self.store, snapshot_id)[1][number]

    def global_position(self, position: int) -> int:
        return self.first + position if position < self.size else self.foreign[position - self.size]

    @cached_property
    def view_position(self) -> dict[int, int]:
        """Snapshot position -> position in this view, for the foreign chunks (the own ones are offset)."""
        return {g: self.size + k for k, g in enumerate(self.foreign)}

    def in_view(self, position: int) -> int | None:
        return _in_view(position, self.first, self.size, self.view_position)

    @cached_property
    def foreign_chunks(self) -> list[Chunk]:
        """The chunks of this shard's documents that other shards hold, each of those shards read once."""
        shards = self.store.shards(self.snapshot_id)
        firsts = [s.first for s in shards]
        held: dict[int, tuple[Chunk, ...]] = {}
        foreign = []
        for g in self.foreign:
            number = bisect.bisect_right(firsts, g) - 1
            if number not in held:
                held[number] = self.store.shard_chunks(self.snapshot_id, number)
            foreign.append(held[number][g - firsts[number]])
        return foreign

    @cached_property
    def chunks(self) -> _ViewChunks:
        """The view's chunks: its shard's record column is read the first time a chunk is asked for (a pass
        that needs only ids, documents and texts never reads it)."""
        return _ViewChunks(ShardRows(self.path), self.foreign_chunks)

    @cached_property
    def doc_ids(self) -> list[str]:
        return read_column(self.path, "doc_id") + [c.doc_id for c in self.foreign_chunks]

    def doc_of(self, position: int) -> str:
        return self.doc_ids[position]

    @cached_property
    def position(self) -> dict[str, int]:
        ids = read_column(self.path, "chunk_id") + [c.chunk_id for c in self.foreign_chunks]
        return dict(zip(ids, range(len(ids))))

    @cached_property
    def doc_positions(self) -> dict[str, list[int]]:
        by_doc: dict[str, list[int]] = {}
        # in snapshot order: the own chunks are, the foreign ones are placed among them
        order = sorted(range(len(self.doc_ids)), key=self.global_position) if self.foreign else range(self.size)
        for doc_id, run in groupby(order, key=self.doc_ids.__getitem__):   # a document's chunks run together
            by_doc.setdefault(doc_id, []).extend(run)
        return by_doc

    @cached_property
    def neighbours(self) -> Mapping[int, tuple[int | None, int | None]]:
        """Own chunk position -> (previous, next) chunk of its document in this view."""
        try:
            before, after = read_column(self.path, "prev"), read_column(self.path, "next")
        except CurateError:   # written before shards named neighbours
            layout = _layout(self.store, self.snapshot_id)[0]
            before, after = ([layout[k][g] for g in range(self.first, self.first + self.size)] for k in (0, 1))
        return _Neighbours(before, after, self.first, self.size, self.view_position)

    def same_text(self, texts: set[str]) -> list[int]:
        return self.folded.positions_of(texts, below=self.size)

    def own_texts(self) -> list[str]:
        return read_column(self.path, "text")

    # -- lexical: this shard's folded texts and n-gram index ---------------------------------------

    @cached_property
    def folded(self) -> FoldedTexts:
        """Folded text of every chunk of the view: the stored ones read a text at a time (a pass that reads
        texts does not load the n-gram keys), the foreign ones folded."""
        own = self._stored_folded()
        if own is None:   # missing or damaged: built again
            own = FoldedTexts.of(self.lexical[0][:self.size])
        return own.followed_by(fold(c.text) for c in self.foreign_chunks)

    @cached_property
    def ngrams(self) -> NgramIndex:
        """The 4-gram index of this shard's own chunks, read alone when stored."""
        try:
            if self.lexical_done:
                return NgramIndex.load(self.folder / "lexical")
        except (OSError, ValueError):
            pass   # damaged: built again
        return self.lexical[1]

    def _stored_lexical(self) -> tuple[Sequence[str], NgramIndex] | None:
        stored = super()._stored_lexical()
        return None if stored is None else (stored[0].followed_by(fold(c.text) for c in self.foreign_chunks),
                                            stored[1])

    def _lexical_of_chunks(self) -> tuple[list[str], NgramIndex]:
        folded = [fold(text) for text in read_column(self.path, "text")] + [fold(c.text) for c in self.foreign_chunks]
        following = [folded[after][:BRIDGE] if after is not None else ""
                     for _, after in (self.neighbours[i] for i in range(self.size))]
        return folded, NgramIndex.build([folded[i] + following[i] for i in range(self.size)])

    def _save_lexical(self, tmp: Path, folded: list[str], ngrams: NgramIndex) -> None:
        super()._save_lexical(tmp, folded[:self.size], ngrams)

    @property
    def lexical_done(self) -> bool:
        """Return whether this shard's lexical index is stored (a resumed build skips it)."""
        try:
            meta = LexicalIndexMeta.read(self.folder / "lexical" / "meta.json")
        except (CurateError, OSError, ValueError):
            return False
        return meta.version == LEXICAL_VERSION and meta.chunks == self.size


def _layout(store, snapshot_id: str) -> tuple[tuple[list[int], list[int]], list[list[int]]]:
    """Neighbours and foreign chunks of a snapshot whose shards were written before they were recorded:
    found out by reading every chunk once."""
    chunks = store.chunks(snapshot_id)
    shards = store.shards(snapshot_id)
    bounds = [(s.first, s.first + s.chunks) for s in shards]
    return neighbour_positions(chunks), foreign_positions([c.doc_id for c in chunks], bounds)


def shard_views(index: KBIndex) -> int:
    """Return how many shard views a snapshot's checks run over (1: the index is its own view)."""
    if index.folder is None:
        return 1
    return index.store.shard_count(index.snapshot_id)


def _index_shard(task: tuple[Workspace, str, int]) -> int:
    view = ShardIndex(*task)
    return len(view.lexical[0])


def build_lexical(index: KBIndex, engine: Engine) -> tuple[int, int]:
    """Build the lexical index of every shard of a snapshot not built yet, on `engine`; return (shards
    built, shards found built). A killed build resumes from the shards it completed."""
    count = shard_views(index)
    if count == 1:
        index.lexical
        return 0, 1
    tasks = [(index.workspace, index.snapshot_id, n) for n in range(count)]
    left, done = pending(tasks, lambda task: ShardIndex(*task).lexical_done)
    engine.map(_index_shard, left, label=f"indexing {index.snapshot_id}")
    return len(left), done


def map_views(index: KBIndex, engine: Engine | None, fn: Callable[[KBIndex, Any], R], shared: Any,
              label: str) -> list[R]:
    """Return fn(view, shared) of each view of a snapshot in shard order: of the index itself when it is one
    view (in this process), else of each shard's `ShardIndex` on `engine` (a stage that reads the shards'
    lexical indexes builds them first: `build_lexical`)."""
    count = shard_views(index)
    if count == 1:
        return [fn(index, shared)]
    tasks = [((index.workspace, index.snapshot_id, number), fn) for number in range(count)]
    return engine.map(_on_view, tasks, shared=shared, label=label)


def _on_view(task: tuple, shared: Any = None) -> Any:
    (workspace, snapshot_id, number), fn = task
    return fn(ShardIndex(workspace, snapshot_id, number), shared)


@contextmanager
def engine_for(index: KBIndex, settings: EngineSettings) -> Iterator[Engine | None]:
    """Open the engine `settings` name for a snapshot in many shards (None for one view: no worker starts),
    closed on leaving."""
    if shard_views(index) == 1:
        yield None
        return
    running = open_engine(settings, max(s.chunks for s in index.store.shards(index.snapshot_id)))
    try:
        yield running
    finally:
        running.close()
