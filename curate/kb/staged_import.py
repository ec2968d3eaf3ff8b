"""Import on an engine: a large production JSONL file's chunks read and checked by many workers, a batch of
lines each, into the snapshot one process would write, byte for byte (its id, manifest, shard files), with the
same lines named as bad or skipped.

Production chunks come in any order: a document's chunks may sit anywhere in the file, and a chunk_id may
repeat far from its first line. So a batch's worker checks and stores its own lines (`batches/NNNNN/`: its
chunks as shard rows, their hashed lines, `layout.npz` with a 128-bit digest of each chunk_id and doc_id, each
chunk's start and line, and `summary.json` with its bad lines and how many lines it spans), and the command,
from the layouts alone:

- finds the chunk_ids repeated anywhere (the later lines are the bad ones, as one process reads them: "first on
  line N"), reading the ids of only those rows to name them; with `--skip-invalid` the batches holding them are
  read again without those lines;
- finds each chunk's neighbours in its document (`neighbour_positions`, over every batch) and writes them once
  (`neighbours.npy`) for the workers that write the shards (`curate.kb.staged`: shards cut where one process
  cuts them, each document's chunks held by other shards named as foreign).

Line numbers are counted as one process counts them: a batch ends after a newline, so a line's number is its
number in its batch plus the lines of the batches before it. A file that is not valid text is one line naming
the byte and line, as one process names it. Killed half way, the next run of the same import resumes from the
batches and shards completed.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from curate.engine import Engine, pending
from curate.errors import InputError, InvalidRecords
from curate.fileio import atomic_directory, iter_json_objects
from curate.kb.content import hashed_lines
from curate.kb.documents import IMPORTED, Part, duplicate_chunk_id, production_chunk
from curate.kb.scope_fields import ScopeReader
from curate.kb.shards import NONE, foreign_positions, shard_bounds, shard_table
from curate.kb.staged import (BATCH_BYTES, Staged, _Stage, _batch_folder, _remove_if_empty, _rows, _summary,
                              batch_record, finish_staging, plan_batches, shard_tasks, staging_folder)
from curate.locks import writing
from curate.records import Chunk
from curate.records.kb import StagedBatch, StagedLine
from curate.workspace import Workspace

def _key(text: str) -> tuple[int, int]:
    """Return a 128-bit digest of an id as two 64-bit numbers: ids that repeat are found among these."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    return int.from_bytes(digest[:8], "little"), int.from_bytes(digest[8:], "little")


def _batch_text(part: Part, encoding: str) -> tuple[str, int] | tuple[int, int]:
    """Return a batch's text and how many newlines it holds, or (the byte of the file where it stops being
    `encoding` text, the newlines before it in the batch): the command makes it a line of the file."""
    with open(part.file, "rb") as handle:
        handle.seek(part.start)
        data = handle.read(part.size())
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        return part.start + exc.start, data[:exc.start].count(b"\n")
    return (text.removeprefix("\ufeff") if part.start == 0 else text), data.count(b"\n")


def _read_batch(task: tuple[int, Part, dict[int, StagedLine]], stage: _Stage) -> None:
    """Read and check one batch of lines into its folder; `task` names the lines to leave out as repeated
    chunk_ids (their line in the batch -> their error, placed in the file)."""
    import numpy as np
    import pyarrow as pa

    number, part, repeated = task
    file = str(part.file)
    text, newlines = _batch_text(part, stage.encoding)
    chunks: list[Chunk] = []
    lines: list[int] = []
    errors: list[StagedLine] = []
    for line, record in iter_json_objects(part.file, stage.encoding, text=text) if isinstance(text, str) else ():
        if line in repeated:
            continue
        found = production_chunk(record, stage.reader, file=file, line=line)
        if isinstance(found, InputError):
            errors.append(StagedLine(line=line, message=found.message, field=found.field))
        else:
            chunks.append(found)
            lines.append(line)
    keys = [_key(c.chunk_id) + _key(c.doc_id) for c in chunks]
    with atomic_directory(_batch_folder(stage.folder, number), replace=True) as tmp:
        (tmp / "documents.jsonl").write_bytes(b"")
        (tmp / "documents.hash").write_bytes(b"")
        (tmp / "chunks.hash").write_bytes(hashed_lines(chunks))
        with pa.OSFile(str(tmp / "chunks.arrow"), "wb") as sink:
            table = shard_table(chunks, [NONE] * len(chunks), [NONE] * len(chunks))
            with pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table)
        with open(tmp / "layout.npz", "wb") as out:
            np.savez(out, keys=np.array(keys, dtype=np.uint64).reshape(-1, 4),
                     starts=np.array([NONE if c.start is None else c.start for c in chunks], dtype=np.int64),
                     lines=np.array(lines, dtype=np.int64))
        decoded = isinstance(text, str)
        batch_record(chunks, documents=0, newlines=newlines if decoded else 0, errors=errors,
                     repeated=list(repeated.values()), undecodable=None if decoded else text,
                     undecodable_newlines=0 if decoded else newlines).write(tmp / "summary.json")


def _undecodable(path: Path, summaries: list[StagedBatch], encoding: str) -> InputError | None:
    """Return the error of the file's first byte that is not `encoding` text, as `read_text` words it."""
    for number, summary in enumerate(summaries):
        if summary.undecodable is not None:
            line = sum(s.newlines for s in summaries[:number]) + summary.undecodable_newlines + 1
            hint = " (GBK? pass --encoding gbk)" if encoding.lower().replace("-", "") == "utf8" else ""
            return InputError(f"not valid {encoding} text at byte {summary.undecodable}{hint}", file=str(path),
                              line=line)
    return None


def _repeated(path: Path, layouts: list, firsts: list[int], folder: Path) -> dict[int, dict[int, StagedLine]]:
    """Return, batch by batch, the lines whose chunk_id an earlier line holds (line in the batch -> the error,
    its line in the file)."""
    import numpy as np

    keys = np.concatenate([layout["keys"][:, :2] for layout in layouts])
    if len(keys) < 2:
        return {}
    order = np.lexsort((np.arange(len(keys)), keys[:, 1], keys[:, 0]))
    ordered = keys[order]
    repeats = (ordered[1:] == ordered[:-1]).all(axis=1)   # a row's id is its predecessor's
    same = np.flatnonzero(repeats) + 1
    if not len(same):
        return {}
    starts = np.concatenate([[0], np.cumsum([len(layout["lines"]) for layout in layouts])])
    group_first = np.maximum.accumulate(np.where(np.r_[True, ~repeats], np.arange(len(order)), 0))

    def where(position: int) -> tuple[int, int, int]:   # (batch, row, line in the file)
        batch = int(np.searchsorted(starts, position, "right")) - 1
        row = position - int(starts[batch])
        return batch, row, firsts[batch] + int(layouts[batch]["lines"][row])

    ids: dict[int, object] = {}

    def chunk_id_at(batch: int, row: int) -> str:
        if batch not in ids:
            ids[batch] = _rows(_batch_folder(folder, batch)).column("chunk_id")
        return ids[batch][row].as_py()

    found: dict[int, dict[int, StagedLine]] = {}
    for k in same.tolist():
        (b1, r1, line1), (b2, r2, line2) = where(int(order[group_first[k]])), where(int(order[k]))
        first_id, chunk_id = chunk_id_at(b1, r1), chunk_id_at(b2, r2)
        if chunk_id != first_id:   # two ids with one digest: not a repeat
            continue
        error = duplicate_chunk_id(chunk_id, line1, file=str(path), line=line2)
        found.setdefault(b2, {})[line2 - firsts[b2]] = StagedLine(line=line2, message=error.message, field=error.field)
    return found


def _errors(path: Path, summaries: list[StagedBatch], firsts: list[int],
            repeated: dict[int, dict[int, StagedLine]]) -> list[InputError]:
    """Return every bad line of the batches (and the `repeated` ids found now), in file order, as one process
    names them."""
    found = [(firsts[n] + e.line, e) for n, s in enumerate(summaries) for e in s.errors]
    found += [(e.line, e) for s in summaries for e in s.repeated]
    found += [(e.line, e) for lines in repeated.values() for e in lines.values()]
    return [InputError(e.message, file=str(path), line=line, field=e.field) for line, e in sorted(found, key=lambda f: f[0])]


def _neighbours(layouts: list, folder: Path) -> tuple[Path, list[int]]:
    """Write each chunk's previous and next chunk in its document (`neighbour_positions` over every batch) to
    `neighbours.npy`; return it and each chunk's document number (numbers that are equal where documents are)."""
    import numpy as np

    docs = np.concatenate([layout["keys"][:, 2:] for layout in layouts])
    starts = np.concatenate([layout["starts"] for layout in layouts])
    positions = np.arange(len(docs), dtype=np.int64)
    within = np.where(starts == NONE, positions, starts)   # a chunk without offsets: its listing
    order = np.lexsort((positions, within, docs[:, 1], docs[:, 0]))
    same = (docs[order[1:]] == docs[order[:-1]]).all(axis=1)
    around = np.full((2, len(docs)), NONE, dtype=np.int64)
    around[1, order[:-1][same]] = order[1:][same]
    around[0, order[1:][same]] = order[:-1][same]
    group = np.cumsum(np.r_[True, ~same]) - 1
    ordinals = np.empty(len(docs), dtype=np.int64)
    ordinals[order] = group
    path = folder / "neighbours.npy"
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, around)
    tmp.replace(path)
    return path, ordinals.tolist()


@contextmanager
def staged_import(workspace: Workspace, path: Path, *, encoding: str, reader: ScopeReader, engine: Engine,
                  skip_invalid: bool, batch_bytes: int = BATCH_BYTES, shard_size: int,
                  parquet_from: int) -> Iterator[tuple[Staged, list[InputError]]]:
    """Yield the import of the production chunks at `path` staged on `engine` (see the module docstring) and
    the lines skipped, holding its folder's lock; bad lines raise InvalidRecords unless `skip_invalid`. The
    staged batches and shards are removed when the block succeeds, or when the input must change."""
    import numpy as np

    part = Part(Path(path), Path(path).parent)
    batches = plan_batches([part], batch_bytes, encoding)
    folder = staging_folder(workspace, [p for batch in batches for p in batch], reader, kind="import",
                            encoding=encoding, batch_bytes=batch_bytes, shard_size=shard_size, parquet_from=parquet_from)
    try:
        with writing(folder, "an import of this file", clean=[(folder, 3)]):
            stage = _Stage(folder, encoding, reader, IMPORTED)
            tasks = [(n, pieces[0], {}) for n, pieces in enumerate(batches)]
            left, _ = pending(tasks, lambda task: (_batch_folder(folder, task[0]) / "summary.json").exists())
            engine.map(_read_batch, left, shared=stage, label="reading and checking", unit="batch")
            summaries = [_summary(_batch_folder(folder, n)) for n in range(len(batches))]
            try:
                bad = _undecodable(part.file, summaries, encoding)
                if bad is not None:
                    raise bad
                firsts = np.concatenate([[0], np.cumsum([s.newlines for s in summaries])]).tolist()
                layouts = [np.load(_batch_folder(folder, n) / "layout.npz") for n in range(len(batches))]
                repeated = _repeated(part.file, layouts, firsts, folder)
                skipped = _errors(part.file, summaries, firsts, repeated)
                if skipped and not skip_invalid:
                    raise InvalidRecords(skipped)
            except (InputError, InvalidRecords):
                shutil.rmtree(folder, ignore_errors=True)
                raise
            if repeated:   # read again without the repeated lines (kept in the batch's summary as skipped)
                again = [(n, batches[n][0], {**{e.line - firsts[n]: e for e in summaries[n].repeated}, **lines})
                         for n, lines in repeated.items()]
                engine.map(_read_batch, again, shared=stage, label="reading again", unit="batch")
                summaries = [_summary(_batch_folder(folder, n)) for n in range(len(batches))]
                layouts = [np.load(_batch_folder(folder, n) / "layout.npz") for n in range(len(batches))]
            chunks = sum(s.chunks for s in summaries)
            if not chunks:
                shutil.rmtree(folder, ignore_errors=True)
                raise InputError("no chunks: the input holds no text", field="text")
            small = chunks < parquet_from
            tasks = []
            if not small:
                stage.neighbours, ordinals = _neighbours(layouts, folder)
                bounds = shard_bounds(ordinals, shard_size)
                tasks = shard_tasks(bounds, foreign_positions(ordinals, bounds), [s.chunks for s in summaries])
            yield finish_staging(stage, summaries, tasks, engine, small), skipped
            shutil.rmtree(folder, ignore_errors=True)
    finally:
        _remove_if_empty(folder.parent)
