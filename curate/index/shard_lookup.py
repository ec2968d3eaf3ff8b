"""The few chunks of a snapshot in shards that a stage needs, read from the shards on an engine: chunks named by
id (`chunks_named`, and their documents: `doc_ids_of`), the documents it holds (`documents_held`), texts at
snapshot positions (`texts_at`), the chunks that supersede some documents or chunks (`superseding`). Each
shard's worker reads one column of its own shard (and validates only the rows asked for), so the process asking
holds what it asked for, never the snapshot."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from curate.engine import Engine
from curate.index.kb_index import KBIndex
from curate.index.shard_index import ShardIndex, map_views, shard_views
from curate.kb.shards import read_column
from curate.records import Chunk

# in a shard's record column (canonical JSON, keys sorted): a chunk whose scope supersedes something
_SUPERSEDES = '"supersedes": ["'


def chunks_named(index: KBIndex, engine: Engine, chunk_ids: Iterable[str]) -> dict[str, tuple[int, Chunk]]:
    """Return chunk id -> (snapshot position, chunk) of the named chunks the snapshot holds."""
    found = map_views(index, engine, _named, sorted(set(chunk_ids)), f"reading chunks of {index.snapshot_id}")
    return {chunk.chunk_id: (position, chunk) for part in found for position, chunk in part}


def _named(view: ShardIndex, chunk_ids: list[str]) -> list[tuple[int, Chunk]]:
    wanted = set(chunk_ids)
    return [(view.first + row, view.chunks[row]) for row, chunk_id in enumerate(read_column(view.path, "chunk_id"))
            if chunk_id in wanted]


def doc_ids_of(index: KBIndex, engine: Engine, chunk_ids: Iterable[str]) -> dict[str, str]:
    """Return chunk id -> doc_id of the named chunks the snapshot holds (one index: from its chunks)."""
    wanted = set(chunk_ids)
    if shard_views(index) == 1:
        return {c: index.chunks[index.position[c]].doc_id for c in wanted if c in index.position}
    return {chunk_id: chunk.doc_id for chunk_id, (_, chunk) in chunks_named(index, engine, wanted).items()}


def documents_held(index: KBIndex, engine: Engine, doc_ids: Iterable[str]) -> set[str]:
    """Return those of `doc_ids` the snapshot has chunks of (one index: from its documents' positions)."""
    wanted = set(doc_ids)
    if shard_views(index) == 1:
        return {d for d in wanted if d in index.doc_positions}
    return set().union(*map_views(index, engine, _held, wanted, f"reading documents of {index.snapshot_id}"))


def _held(view: ShardIndex, doc_ids: set[str]) -> set[str]:
    return set(read_column(view.path, "doc_id")) & doc_ids


def texts_at(index: KBIndex, engine: Engine, positions: Iterable[int]) -> dict[int, str]:
    """Return snapshot position -> text of the chunks at `positions`."""
    wanted = np.unique(np.fromiter(positions, dtype=np.int64))
    found = map_views(index, engine, _texts, wanted, f"reading chunk texts of {index.snapshot_id}")
    return {position: text for part in found for position, text in part.items()}


def _texts(view: ShardIndex, positions: np.ndarray) -> dict[int, str]:
    mine = positions[np.searchsorted(positions, view.first):np.searchsorted(positions, view.first + view.size)]
    if not len(mine):
        return {}
    column = read_column(view.path, "text")
    return {p: column[p - view.first] for p in mine.tolist()}


def superseding(index: KBIndex, engine: Engine, targets: Iterable[str]) -> list[tuple[int, Chunk]]:
    """Return (snapshot position, chunk) of every chunk whose scope supersedes one of `targets` (document or
    chunk ids), in snapshot order."""
    found = map_views(index, engine, _superseding, sorted(set(targets)), f"reading scopes of {index.snapshot_id}")
    return [pair for part in found for pair in part]


def _superseding(view: ShardIndex, targets: list[str]) -> list[tuple[int, Chunk]]:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    wanted = set(targets)
    records = pq.ParquetFile(view.path).read(columns=["record"]).column("record")
    rows = np.flatnonzero(pc.match_substring(records, _SUPERSEDES).to_numpy(zero_copy_only=False))
    chunks = [(view.first + row, view.chunks[row]) for row in rows.tolist()]
    return [(p, c) for p, c in chunks if c.scope is not None and not wanted.isdisjoint(c.scope.supersedes)]
