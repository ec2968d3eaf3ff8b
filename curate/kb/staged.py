"""Ingest on an engine: a large KB's documents read and chunked by many workers, a batch each, into the
snapshot one process would write, byte for byte (its id, manifest, shard files).

Two stages, each written whole or not at all under `kb/ingesting/FINGERPRINT/` (the fingerprint of the inputs:
their files, sizes and modification times, the chunker, the scope settings, this version):

1. **Batches** of about `BATCH_BYTES` of input (whole files; a large .jsonl file cut between lines): each
   worker reads and chunks its batch and writes `batches/NNNNN/`: its documents.jsonl lines, the lines its
   documents and chunks add to the snapshot's sha256 (`documents.hash`, `chunks.hash`), its chunks as shard rows
   with their neighbours in the batch (`chunks.arrow`, Arrow uncompressed), how many chunks each document has
   and a digest of each doc_id (`layout.npz`), and what it adds to the counts (`summary.json`).
2. **Shards**: from the batches' layouts the command finds the shards one process would cut (`shard_bounds`:
   documents are listed whole, so only a document longer than half a shard crosses one); each worker writes
   one shard from the rows of the batches it spans, neighbours turned into snapshot positions
   (`chunks/part-NNNNN.parquet`, and `part-NNNNN.json`: what the manifest records of it).

The command then streams the hashed lines into the sha256 in order (documents, then chunks: never more than
a block of them at once), and stores the snapshot: documents.jsonl joined from the batches, the shards
linked in. A command killed half way keeps the batches and shards it completed: the next run of the same
ingest, on either engine, does only the rest. Two ingests of the same inputs take turns (a lock on the
folder); ingests of different inputs stage in different folders.

Bad input is reported as one process reports it: a batch that holds a bad record, or documents whose ids
repeat across batches, make the command read the documents once in its own process, which names every bad
line in file order (`read_documents`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from curate.engine import Engine, pending
from curate.errors import InputError, InvalidRecords
from curate.fileio import atomic_directory, jsonl_bytes, sha256_file
from curate.kb.content import ScopeTally, hashed_lines, scope_counts, superseded_in
from curate.kb.documents import Part, chunk_documents, read_documents, read_parts
from curate.kb.scope_fields import ScopeReader
from curate.kb.shards import (COLUMNS, FOLDER, NONE, neighbour_positions, shard_bounds, shard_name, shard_table,
                              write_table)
from curate.locks import Busy, writing
from curate.records import Chunk, ChunkerSettings, ScopeCounts
from curate.records.kb import ShardInfo, StagedBatch, StagedShard
from curate.version import __version__
from curate.workspace import Workspace

STAGING = 2   # the staged files' layout: 2, StagedBatch and StagedShard records (a folder of another is not resumed)
BATCH_BYTES = 4 << 20   # input a worker reads and chunks at once: about 8,000 chunks of 500 characters
_BLOCK = 1 << 20


def staged_from(chunk_size: int, parquet_from: int) -> int:
    """Return the bytes of input from which an ingest runs on an engine: enough for `parquet_from` chunks of
    `chunk_size` characters (a KB that small or smaller is read and chunked in the command's own process).

    >>> staged_from(500, 10_000)
    5000000
    """
    return chunk_size * parquet_from


def plan_batches(parts: Sequence[Part], batch_bytes: int = BATCH_BYTES, encoding: str = "utf-8") -> list[list[Part]]:
    """Return the parts in batches of about `batch_bytes`, in order: files whole, a larger .jsonl file cut
    between lines (in an encoding whose newline byte is never part of another character: UTF-8, GBK ...)."""
    batches: list[list[Part]] = [[]]
    held = 0
    for part in parts:
        for piece in _pieces(part, batch_bytes, encoding):
            if held >= batch_bytes:
                batches.append([])
                held = 0
            batches[-1].append(piece)
            held += piece.size()
    return [b for b in batches if b]


def _pieces(part: Part, batch_bytes: int, encoding: str) -> list[Part]:
    """Return a .jsonl file larger than `batch_bytes` as parts of about that size, each ending after a newline."""
    size = part.size()
    if part.file.suffix != ".jsonl" or size <= batch_bytes or not _cuts_at_newlines(encoding):
        return [part]
    pieces, start = [], 0
    with open(part.file, "rb") as handle:
        while start < size:
            handle.seek(min(start + batch_bytes, size))
            end = handle.tell()
            while end < size:
                block = handle.read(_BLOCK)
                newline = block.find(b"\n")
                if newline >= 0:
                    end += newline + 1
                    break
                end += len(block)
            pieces.append(Part(part.file, part.root, start, end))
            start = end
    return pieces


def _cuts_at_newlines(encoding: str) -> bool:
    """Return whether a file in `encoding` can be cut after any newline byte (UTF-8 and the East Asian
    multi-byte encodings: yes; UTF-16: no).

    >>> _cuts_at_newlines("utf-8"), _cuts_at_newlines("gbk"), _cuts_at_newlines("utf-16")
    (True, True, False)
    """
    try:
        return "\n".encode(encoding) == b"\n"
    except LookupError:
        return False


def fingerprint(parts: Sequence[Part], **settings) -> str:
    """Return the sha256 of the inputs (each file's path, size and modification time) and `settings`."""
    files = [(str(p.file.resolve()), str(p.root), p.start, p.end, p.file.stat().st_size, p.file.stat().st_mtime_ns)
             for p in parts]
    return hashlib.sha256(json.dumps([__version__, STAGING, files, settings], sort_keys=True, default=str).encode()).hexdigest()


def staging_folder(workspace: Workspace, parts: Sequence[Part], reader: ScopeReader, **settings) -> Path:
    """Return the folder an ingest or import of `parts` stages in: named by the fingerprint of the inputs, the
    scope settings and `settings`."""
    key = fingerprint(parts, scope=reader.settings.model_dump(mode="json"), names=reader.names, **settings)
    return workspace.kb_dir / "ingesting" / key[:16]


@dataclass
class _Stage:
    """What every worker of the ingest shares."""

    folder: Path
    encoding: str
    reader: ScopeReader
    chunker: ChunkerSettings
    supersedes: set[str] = field(default_factory=set)
    neighbours: Path | None = None   # the snapshot's prev and next positions, when the batches cannot give them


def _batch_folder(folder: Path, number: int) -> Path:
    return folder / "batches" / f"{number:05d}"


def _read_batch(task: tuple[int, list[Part]], stage: _Stage) -> None:
    """Read and chunk one batch into its folder."""
    import numpy as np
    import pyarrow as pa

    number, parts = task
    documents = read_parts(parts, stage.encoding, stage.reader)
    chunks = chunk_documents(documents, stage.chunker, bar=False)
    before, after = neighbour_positions(chunks)   # documents are whole in a batch
    lengths = Counter(c.doc_id for c in chunks)
    with atomic_directory(_batch_folder(stage.folder, number), replace=True) as tmp:
        (tmp / "documents.jsonl").write_bytes(jsonl_bytes(d.model_dump(mode="json") for d in documents))
        (tmp / "documents.hash").write_bytes(hashed_lines(documents))
        (tmp / "chunks.hash").write_bytes(hashed_lines(chunks))
        with pa.OSFile(str(tmp / "chunks.arrow"), "wb") as sink:   # read back by another worker: uncompressed
            table = shard_table(chunks, before, after)
            with pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table)
        with open(tmp / "layout.npz", "wb") as out:
            np.savez(out, lengths=np.array([lengths[d.doc_id] for d in documents], dtype=np.int64),
                     keys=np.array([_key(d.doc_id) for d in documents], dtype=np.uint64))
        batch_record(chunks, documents=len(documents)).write(tmp / "summary.json")


def _key(doc_id: str) -> int:
    """Return a 64-bit digest of a doc_id: ids repeated across batches are found among these."""
    return int.from_bytes(hashlib.blake2b(doc_id.encode("utf-8"), digest_size=8).digest(), "little")


def batch_record(chunks: Sequence[Chunk], **fields) -> StagedBatch:
    """Return the record of a staged batch of `chunks` (its counts and what it adds to the scope counts)."""
    tally = ScopeTally.of(chunks)
    return StagedBatch(chunks=len(chunks), characters=sum(len(c.text) for c in chunks), scoped=tally.scoped,
                       restricted=tally.restricted, groups=dict(tally.groups), versions=dict(tally.versions),
                       dated=tally.dated, supersedes=sorted(tally.supersedes), **fields)


def _tally(batch: StagedBatch) -> ScopeTally:
    return ScopeTally(batch.chunks, batch.scoped, batch.restricted, Counter(batch.groups), Counter(batch.versions),
                      batch.dated, set(batch.supersedes))


def _summary(folder: Path) -> StagedBatch:
    return StagedBatch.read(folder / "summary.json")


def _write_shard(task: tuple[int, int, list[tuple[int, int, int, int]], list[int]], stage: _Stage) -> None:
    """Write one shard of the snapshot from the rows of the batches it spans, and beside it what the manifest
    records of it and how many of its chunks are superseded (`StagedShard`)."""
    import numpy as np
    import pyarrow as pa

    number, first, pieces, foreign = task
    columns: dict[str, list] = {name: [] for name in COLUMNS}
    for batch, start, end, offset in pieces:
        table = _rows(_batch_folder(stage.folder, batch)).slice(start, end - start)
        for name in COLUMNS:
            values = table.column(name).combine_chunks()
            if name in ("prev", "next"):   # positions in the batch -> in the snapshot
                held = values.to_numpy()
                values = pa.array(np.where(held == NONE, NONE, held + offset).astype(np.int64))
            columns[name].append(values)
    if stage.neighbours is not None:
        size = sum(end - start for _, start, end, _ in pieces)
        around = np.load(stage.neighbours, mmap_mode="r")
        columns["prev"], columns["next"] = ([pa.array(np.array(around[side, first:first + size]))] for side in (0, 1))
    table = pa.Table.from_arrays([pa.concat_arrays(columns[name]) for name in COLUMNS], names=list(COLUMNS))
    path = stage.folder / shard_name(number)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    write_table(table, tmp)
    os.replace(tmp, path)
    superseded, held = superseded_in(table.column("chunk_id").to_pylist(), table.column("doc_id").to_pylist(),
                                     stage.supersedes) if stage.supersedes else (0, set())
    StagedShard(shard=ShardInfo(file=shard_name(number), chunks=table.num_rows, first=first, sha256=sha256_file(path),
                                foreign=foreign), superseded=superseded, held=sorted(held)).write(path.with_suffix(".json"))


def contiguous_foreign(ordinals: Sequence[int], bounds: Sequence[tuple[int, int]]) -> list[list[int]]:
    """Return `foreign_positions` of chunks listed document by document (`ordinals`: each chunk's document
    number, never decreasing): only a document cut by a shard's end has chunks in another shard.

    >>> contiguous_foreign([0, 0, 1, 1, 1, 1, 2], [(0, 3), (3, 5), (5, 7)])
    [[3, 4, 5], [2, 5], [2, 3, 4]]
    """
    import numpy as np

    ordinals = np.asarray(ordinals)
    split = sorted({int(ordinals[first]) for first, _ in bounds[1:] if ordinals[first] == ordinals[first - 1]})
    if not split:
        return [[] for _ in bounds]
    spans = {d: (int(np.searchsorted(ordinals, d, "left")), int(np.searchsorted(ordinals, d, "right"))) for d in split}
    found = []
    for first, end in bounds:
        own = sorted({int(ordinals[first]), int(ordinals[end - 1])} & set(split))
        found.append([p for d in own for p in range(*spans[d]) if not first <= p < end])
    return found


@dataclass
class Staged:
    """An ingest staged on an engine: what its manifest says, and `fill` to store it."""

    folder: Path
    batches: int
    documents: int
    chunks: int
    characters: int
    content_sha256: str
    scope: ScopeCounts | None
    shards: list[ShardInfo]
    small: list[Chunk] | None   # under `parquet_from` chunks: the chunks, stored in one chunks.jsonl

    def fill(self, folder: Path) -> list[ShardInfo]:
        """Write the snapshot's documents and chunks into `folder` (a snapshot folder being written); return
        its shards."""
        with open(folder / "documents.jsonl", "wb") as out:
            for number in range(self.batches):
                with open(_batch_folder(self.folder, number) / "documents.jsonl", "rb") as part:
                    shutil.copyfileobj(part, out, _BLOCK)
        if self.small is not None:
            (folder / "chunks.jsonl").write_bytes(jsonl_bytes(c.model_dump(mode="json") for c in self.small))
            return []
        (folder / FOLDER).mkdir()
        for shard in self.shards:   # linked, not moved: a store that fails leaves the staged shards whole
            try:
                os.link(self.folder / shard.file, folder / shard.file)
            except OSError:
                shutil.copyfile(self.folder / shard.file, folder / shard.file)
        return self.shards


@contextmanager
def staged_ingest(workspace: Workspace, paths: Sequence[Path], parts: Sequence[Part], *, encoding: str,
                  reader: ScopeReader, chunker: ChunkerSettings, engine: Engine, batch_bytes: int = BATCH_BYTES,
                  shard_size: int, parquet_from: int) -> Iterator[Staged]:
    """Yield the ingest of `parts` staged on `engine` (see the module docstring), holding its folder's lock;
    the staged batches and shards are removed when the block succeeds."""
    folder = staging_folder(workspace, parts, reader, encoding=encoding, chunker=chunker.model_dump(mode="json"),
                            batch_bytes=batch_bytes, shard_size=shard_size, parquet_from=parquet_from)
    try:
        with writing(folder, "an ingest of these documents", clean=[(folder, 3)]):
            stage = _Stage(folder, encoding, reader, chunker)
            batches = plan_batches(parts, batch_bytes, encoding)
            left, _ = pending(list(enumerate(batches)),
                              lambda task: (_batch_folder(folder, task[0]) / "summary.json").exists())
            try:
                engine.map(_read_batch, left, shared=stage, label="reading and chunking", unit="batch")
                staged = _combine(stage, len(batches), engine, shard_size, parquet_from)
            except (InputError, InvalidRecords):   # the input must change before it is ingested: nothing to keep
                shutil.rmtree(folder, ignore_errors=True)
                read_documents(paths, encoding, reader)   # names every bad line as one process does
                raise
            yield staged
            shutil.rmtree(folder, ignore_errors=True)
    finally:
        _remove_if_empty(folder.parent)


def _combine(stage: _Stage, count: int, engine: Engine, shard_size: int,
             parquet_from: int) -> Staged:
    """Return the staged snapshot of the batches: its shards written on `engine`, its counts and sha256."""
    import numpy as np

    folder = stage.folder
    summaries = [_summary(_batch_folder(folder, n)) for n in range(count)]
    layouts = [np.load(_batch_folder(folder, n) / "layout.npz") for n in range(count)]
    keys = np.concatenate([layout["keys"] for layout in layouts]) if layouts else np.zeros(0, np.uint64)
    if len(np.unique(keys)) != len(keys):   # a doc_id repeated in two batches
        raise InputError("a doc_id is repeated", field="doc_id")
    lengths = np.concatenate([layout["lengths"] for layout in layouts]) if layouts else np.zeros(0, np.int64)
    tasks = _shard_tasks(lengths, [s.chunks for s in summaries], shard_size)
    return finish_staging(stage, summaries, tasks, engine, int(lengths.sum()) < parquet_from)


def finish_staging(stage: _Stage, summaries: list[StagedBatch], tasks: list[tuple], engine: Engine, small: bool) -> Staged:
    """Return the staged snapshot of the batches whose `summaries` are given: its shards written on `engine`
    (`tasks`: `_write_shard`'s) unless it is `small` (then its chunks are kept for one chunks.jsonl), its counts
    and its sha256 streamed from the batches' hashed lines."""
    folder, count = stage.folder, len(summaries)
    chunks = sum(s.chunks for s in summaries)
    tally = sum((_tally(s) for s in summaries), ScopeTally())
    shards, kept = [], None
    if small:
        kept = [Chunk.model_validate_json(record) for n in range(count)
                for record in _rows(_batch_folder(folder, n)).column("record").to_pylist()]
        scope = scope_counts(kept, stage.reader.settings)
    else:
        stage.supersedes = tally.supersedes
        left, _ = pending(tasks, lambda task: (folder / shard_name(task[0])).with_suffix(".json").exists())
        engine.map(_write_shard, left, shared=stage, label="writing shards")
        done = [StagedShard.read((folder / shard_name(task[0])).with_suffix(".json")) for task in tasks]
        shards = [d.shard for d in done]
        held = set().union(*(d.held for d in done))
        scope = tally.counts(stage.reader.settings, sum(d.superseded for d in done),
                             sorted(tally.supersedes - held))
    digest = hashlib.sha256()
    for name in ("documents.hash", "chunks.hash"):
        for n in range(count):
            with open(_batch_folder(folder, n) / name, "rb") as part:
                for block in iter(lambda: part.read(_BLOCK), b""):
                    digest.update(block)
    return Staged(folder, count, sum(s.documents for s in summaries), chunks,
                  sum(s.characters for s in summaries), digest.hexdigest(), scope, shards, kept)


def _shard_tasks(lengths, batch_chunks: list[int], shard_size: int) -> list[tuple]:
    """Return a task per shard of chunks listed document by document (`lengths`: each document's chunks)."""
    import numpy as np

    ordinals = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    bounds = shard_bounds(ordinals, shard_size)
    return shard_tasks(bounds, contiguous_foreign(ordinals, bounds), batch_chunks)


def shard_tasks(bounds: Sequence[tuple[int, int]], foreign: Sequence[list[int]], batch_chunks: list[int]) -> list[tuple]:
    """Return a task per shard (`bounds`: its first and end chunk): (number, first chunk, the rows of each
    batch it spans, its foreign chunks)."""
    import numpy as np

    starts = np.concatenate([[0], np.cumsum(batch_chunks)]).tolist()
    tasks = []
    for number, ((first, end), held) in enumerate(zip(bounds, foreign)):
        pieces = [(b, max(first, starts[b]) - starts[b], min(end, starts[b + 1]) - starts[b], starts[b])
                  for b in range(len(batch_chunks)) if starts[b] < end and first < starts[b + 1]]
        tasks.append((number, first, pieces, held))
    return tasks


def _rows(folder: Path):
    """Return the table of a batch's chunks (mapped from its file, not read into memory)."""
    import pyarrow as pa

    return pa.ipc.open_file(pa.memory_map(str(folder / "chunks.arrow"))).read_all()


def left_staged(workspace: Workspace) -> list[tuple[Path, int]]:
    """Return the folders under `kb/ingesting/` that no command is writing (an ingest or import killed before
    it finished, whose inputs have changed since or that was not run again), with their size in bytes."""
    found = []
    root = workspace.kb_dir / "ingesting"
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        try:
            with writing(folder, "a staged ingest", wait=False, clean=[]):
                size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        except Busy:
            continue
        found.append((folder, size))
    return found


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass

