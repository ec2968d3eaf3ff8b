"""A snapshot's chunks in Parquet shards that many workers can read: `chunks/part-NNNNN.parquet`, at most
`SHARD_CHUNKS` chunks each, in chunk order, each named in the manifest with its chunk count, the index of
its first chunk and the sha256 of its bytes. A snapshot of fewer than `PARQUET_FROM` chunks keeps one
chunks.jsonl, as snapshots always did: it is one shard, and a small KB's commands do not load pyarrow
(measured: the bundled examples' commands 5% slower with it, 42 MB more memory).

A shard holds every chunk whole (`record`: the chunk's canonical JSON, so every field reads back exactly as
written) beside the columns a worker reads alone (`chunk_id`, `doc_id`, `text`, and `prev` / `next`: the
snapshot positions of the chunk before and after it in its document, -1 for none): a stage that needs only
the texts of one shard reads one column of one file, never the whole snapshot. A shard whose bytes no
longer match its sha256 is refused in one line when verified (`verify_shard`).

Shards end between documents: a shard closes at the last document boundary within `SHARD_CHUNKS` chunks
(unless that would leave it under half full: then a long document is cut), so a worker finds each of its
chunks' neighbours and whole documents in its own shard. Where a document's chunks are not listed
together (imported chunks in another order), the chunks of its documents that other shards hold are named
in the manifest (`ShardInfo.foreign`) and read beside it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from curate.errors import InputError, IntegrityError
from curate.fileio import sha256_file
from curate.records import Chunk
from curate.records.kb import ShardInfo

SHARD_CHUNKS = 50_000   # about 25 MB of Chinese text a shard: what one worker holds at once
PARQUET_FROM = 10_000   # chunks from which a snapshot is written in Parquet shards
FOLDER = "chunks"
COLUMNS = ("chunk_id", "doc_id", "text", "record", "prev", "next")
NONE = -1   # no neighbour, in the prev and next columns


def shard_name(number: int) -> str:
    """Return the path of shard `number` inside a snapshot folder.

    >>> shard_name(3)
    'chunks/part-00003.parquet'
    """
    return f"{FOLDER}/part-{number:05d}.parquet"


def _strings(values: Sequence[str]):
    """Return a column of strings built from its UTF-8 bytes and offsets: `pyarrow.array` on a list would
    import pandas the first time (a fifth of a second added to every command that writes a snapshot)."""
    import numpy as np
    import pyarrow as pa

    encoded = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return pa.LargeStringArray.from_buffers(len(encoded), pa.py_buffer(offsets.tobytes()),
                                            pa.py_buffer(b"".join(encoded)))


def neighbour_positions(chunks: Sequence[Chunk]) -> tuple[list[int], list[int]]:
    """Return the position of each chunk's previous and next chunk in its document (NONE at its ends), in
    the order of their offsets (of their listing where offsets are unknown).

    >>> def chunk(cid, doc, start): return Chunk(chunk_id=cid, doc_id=doc, text="t", text_sha256="0", start=start)
    >>> neighbour_positions([chunk("a2", "a", 10), chunk("b1", "b", 0), chunk("a1", "a", 0)])
    ([2, -1, -1], [-1, -1, 0])
    """
    by_doc: dict[str, list[int]] = {}
    for i, chunk in enumerate(chunks):
        by_doc.setdefault(chunk.doc_id, []).append(i)
    before, after = [NONE] * len(chunks), [NONE] * len(chunks)
    for positions in by_doc.values():
        positions.sort(key=lambda i: (chunks[i].start if chunks[i].start is not None else i, i))
        for a, b in zip(positions, positions[1:]):
            after[a], before[b] = b, a
    return before, after


def shard_bounds(doc_ids: Sequence[str], size: int = SHARD_CHUNKS) -> list[tuple[int, int]]:
    """Return (first, end) of each shard: at most `size` chunks, closed at the last document boundary that
    leaves it at least half full.

    >>> shard_bounds(["a", "a", "b", "b", "b", "c"], size=4)
    [(0, 2), (2, 6)]
    >>> shard_bounds(["a"] * 5, size=2)   # one long document is cut
    [(0, 2), (2, 4), (4, 5)]
    """
    bounds, first = [], 0
    while first < len(doc_ids):
        end = min(first + size, len(doc_ids))
        if end < len(doc_ids):
            cut = end
            while cut > first + size // 2 and doc_ids[cut] == doc_ids[cut - 1]:
                cut -= 1
            if doc_ids[cut] != doc_ids[cut - 1]:
                end = cut
        bounds.append((first, end))
        first = end
    return bounds


def foreign_positions(doc_ids: Sequence[str], bounds: Sequence[tuple[int, int]]) -> list[list[int]]:
    """Return, for each shard, the positions of the chunks of its documents that other shards hold.

    >>> foreign_positions(["a", "b", "a", "c"], [(0, 2), (2, 4)])
    [[2], [0]]
    """
    shards_of: dict[str, set[int]] = {}
    for number, (first, end) in enumerate(bounds):
        for doc_id in doc_ids[first:end]:
            shards_of.setdefault(doc_id, set()).add(number)
    split = {doc_id for doc_id, shards in shards_of.items() if len(shards) > 1}
    if not split:
        return [[] for _ in bounds]
    return [[p for p, doc_id in enumerate(doc_ids) if doc_id in split and not first <= p < end
             and number in shards_of[doc_id]] for number, (first, end) in enumerate(bounds)]


def write_shards(folder: Path, chunks: Sequence[Chunk], size: int = SHARD_CHUNKS) -> list[ShardInfo]:
    """Write `chunks` as Parquet shards of at most `size` chunks under `folder` (a snapshot folder being
    written), ending between documents, and return what the manifest records of each."""
    (folder / FOLDER).mkdir(parents=True, exist_ok=True)
    doc_ids = [c.doc_id for c in chunks]
    before, after = neighbour_positions(chunks)
    bounds = shard_bounds(doc_ids, size)
    written = []
    for number, ((first, end), foreign) in enumerate(zip(bounds, foreign_positions(doc_ids, bounds))):
        path = folder / shard_name(number)
        write_table(shard_table(chunks[first:end], before[first:end], after[first:end]), path)
        written.append(ShardInfo(file=shard_name(number), chunks=end - first, first=first, sha256=sha256_file(path),
                                 foreign=foreign))
    return written


def shard_table(chunks: Sequence[Chunk], before: Sequence[int], after: Sequence[int]):
    """Return the Arrow table of a shard's rows: `chunks` with the positions of their neighbours."""
    import numpy as np
    import pyarrow as pa

    records = [json.dumps(c.model_dump(mode="json"), ensure_ascii=False, sort_keys=True) for c in chunks]
    return pa.Table.from_arrays([_strings([c.chunk_id for c in chunks]), _strings([c.doc_id for c in chunks]),
                                 _strings([c.text for c in chunks]), _strings(records),
                                 pa.array(np.array(before, dtype=np.int64)),
                                 pa.array(np.array(after, dtype=np.int64))], names=list(COLUMNS))


def write_table(table, path: Path) -> None:
    """Write a shard's table as Parquet (its bytes depend only on its rows)."""
    import pyarrow.parquet as pq

    pq.write_table(table, path, compression="zstd")


def read_shard(path: Path) -> list[Chunk]:
    """Return the chunks of one shard, in order; a damaged shard is one line naming it (and the row and
    field). Each row is validated from its UTF-8 bytes as Parquet holds them: no Python string of the
    records is made, so a worker holds the shard's chunks and little more."""
    return list(ShardRows(path))


class ShardRows:
    """The chunks of one shard, each validated from its row only when first asked for (a stage that looks at
    a few hundred chunks of a shard does not read fifty thousand)."""

    def __init__(self, path: Path):
        import numpy as np
        import pyarrow.parquet as pq

        self.path = path
        try:
            column = pq.ParquetFile(path).read(columns=["record"]).column("record").combine_chunks()
        except (OSError, ValueError, KeyError) as exc:   # pyarrow's ArrowInvalid is a ValueError
            raise InputError(f"damaged Parquet shard: {exc}", file=str(path)) from None
        _, offsets, data = column.buffers()
        wide = str(column.type) == "large_string"
        self._bounds = np.frombuffer(offsets, dtype=np.int64 if wide else np.int32)[
            column.offset:column.offset + len(column) + 1]
        self._data = memoryview(data) if data is not None else memoryview(b"")
        self._read: dict[int, Chunk] = {}

    def __len__(self) -> int:
        return len(self._bounds) - 1

    def __getitem__(self, row: int) -> Chunk:
        chunk = self._read.get(row)
        if chunk is None:
            if not 0 <= row < len(self):
                raise IndexError(row)
            try:
                chunk = Chunk.model_validate_json(bytes(self._data[self._bounds[row]:self._bounds[row + 1]]))
            except ValidationError as exc:
                error = exc.errors()[0]
                field = ".".join(map(str, error["loc"])) or None
                raise InputError(f"row {row + 1}: damaged: {error['msg']}", file=str(self.path), field=field) from None
            self._read[row] = chunk
        return chunk

    def __iter__(self):
        return (self[row] for row in range(len(self)))


def read_column(path: Path, column: str) -> list:
    """Return one column of a shard (`chunk_id`, `doc_id`, `text`, `prev` or `next`) without reading the
    others."""
    import pyarrow.parquet as pq

    if column not in COLUMNS:
        raise ValueError(f"no column {column!r} in a shard: {', '.join(COLUMNS)}")
    try:
        return pq.ParquetFile(path).read(columns=[column]).column(column).to_pylist()
    except KeyError:
        raise InputError(f"damaged Parquet shard: no column {column} (written before shards named it?)",
                         file=str(path)) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"damaged Parquet shard: {exc}", file=str(path)) from None


def verify_shard(folder: Path, shard: ShardInfo) -> None:
    """Raise IntegrityError when a shard's bytes are not those its manifest names."""
    path = folder / shard.file
    if not path.is_file():
        raise IntegrityError(f"missing shard {path}")
    found = sha256_file(path)
    if found != shard.sha256:
        raise IntegrityError(f"{path} changed since it was written (sha256 {found[:12]}..., the manifest says "
                             f"{shard.sha256[:12]}...)")
