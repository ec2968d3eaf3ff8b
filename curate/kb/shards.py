"""A snapshot's chunks in Parquet shards that many workers can read: `chunks/part-NNNNN.parquet`, at most
`SHARD_CHUNKS` chunks each, in chunk order, each named in the manifest with its chunk count, the index of
its first chunk and the sha256 of its bytes. A snapshot of fewer than `PARQUET_FROM` chunks keeps one
chunks.jsonl, as snapshots always did: it is one shard, and a small KB's commands do not load pyarrow
(measured: the bundled examples' commands 5% slower with it, 42 MB more memory).

A shard holds every chunk whole (`record`: the chunk's canonical JSON, so every field reads back exactly as
written) beside the columns a worker reads alone (`chunk_id`, `doc_id`, `text`): a stage that needs only
the texts of one shard reads one column of one file, never the whole snapshot. A shard whose bytes no
longer match its sha256 is refused in one line when verified (`verify_shard`).
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
COLUMNS = ("chunk_id", "doc_id", "text", "record")


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


def write_shards(folder: Path, chunks: Sequence[Chunk], size: int = SHARD_CHUNKS) -> list[ShardInfo]:
    """Write `chunks` as Parquet shards of at most `size` chunks under `folder` (a snapshot folder being
    written) and return what the manifest records of each."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    (folder / FOLDER).mkdir(parents=True, exist_ok=True)
    written = []
    for number, first in enumerate(range(0, len(chunks), size)):
        part = chunks[first:first + size]
        records = [json.dumps(c.model_dump(mode="json"), ensure_ascii=False, sort_keys=True) for c in part]
        table = pa.Table.from_arrays([_strings([c.chunk_id for c in part]), _strings([c.doc_id for c in part]),
                                      _strings([c.text for c in part]), _strings(records)], names=list(COLUMNS))
        path = folder / shard_name(number)
        pq.write_table(table, path, compression="zstd")
        written.append(ShardInfo(file=shard_name(number), chunks=len(part), first=first, sha256=sha256_file(path)))
    return written


def read_shard(path: Path) -> list[Chunk]:
    """Return the chunks of one shard, in order; a damaged shard is one line naming it (and the row and
    field). Each row is validated from its UTF-8 bytes as Parquet holds them: no Python string of the
    records is made, so a worker holds the shard's chunks and little more."""
    import numpy as np
    import pyarrow.parquet as pq

    try:
        column = pq.ParquetFile(path).read(columns=["record"]).column("record").combine_chunks()
    except (OSError, ValueError, KeyError) as exc:   # pyarrow's ArrowInvalid is a ValueError
        raise InputError(f"damaged Parquet shard: {exc}", file=str(path)) from None
    _, offsets, data = column.buffers()
    width = 8 if str(column.type) == "large_string" else 4
    bounds = np.frombuffer(offsets, dtype=np.int64 if width == 8 else np.int32)[column.offset:column.offset + len(column) + 1]
    raw = memoryview(data) if data is not None else memoryview(b"")
    chunks = []
    for row in range(len(column)):
        try:
            chunks.append(Chunk.model_validate_json(bytes(raw[bounds[row]:bounds[row + 1]])))
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(map(str, error["loc"])) or None
            raise InputError(f"row {row + 1}: damaged: {error['msg']}", file=str(path), field=field) from None
    return chunks


def read_column(path: Path, column: str) -> list:
    """Return one column of a shard (`chunk_id`, `doc_id` or `text`) without reading the others."""
    import pyarrow.parquet as pq

    if column not in COLUMNS:
        raise ValueError(f"no column {column!r} in a shard: {', '.join(COLUMNS)}")
    try:
        return pq.ParquetFile(path).read(columns=[column]).column(column).to_pylist()
    except (OSError, ValueError, KeyError) as exc:
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
