"""Atomic writes and line-numbered reading of the files users bring."""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import jsonlines

from curate.errors import InputError


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# mkstemp creates files readable by their owner only; written files get the usual mode.
_FILE_MODE = 0o666 & ~_umask()
_DIR_MODE = 0o777 & ~_umask()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` so a reader sees the old file or the new one, never half."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _FILE_MODE)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write UTF-8 `text` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def dumps_json(obj: Any) -> str:
    """Return canonical JSON: UTF-8 friendly, sorted keys, no spaces (stable for hashing)."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def jsonl_bytes(records: Iterable[Any]) -> bytes:
    """Return the JSONL encoding of `records` (canonical JSON, one per line)."""
    buffer = io.StringIO(newline="\n")
    with jsonlines.Writer(buffer, dumps=dumps_json) as writer:
        writer.write_all(records)
    return buffer.getvalue().encode("utf-8")


def atomic_write_json(path: Path, obj: Any) -> None:
    """Write `obj` as indented JSON atomically."""
    atomic_write_text(path, json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True) + "\n")


def atomic_write_jsonl(path: Path, records: Iterable[Any]) -> None:
    """Write `records` as JSONL atomically."""
    atomic_write_bytes(path, jsonl_bytes(records))


@contextlib.contextmanager
def atomic_directory(final: Path, replace: bool = False) -> Iterator[Path]:
    """Yield a temporary folder beside `final`, renamed to `final` only if the block succeeds.

    With `replace`, an existing `final` is swapped out after the new folder is complete.
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.exists() and not replace:
        raise FileExistsError(f"{final} already exists")
    tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}.", suffix=".tmp"))
    os.chmod(tmp, _DIR_MODE)
    try:
        yield tmp
        if final.exists():
            old = final.with_name(f".{final.name}.old-{os.getpid()}")
            os.replace(final, old)
            os.replace(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def sha256_bytes(data: bytes) -> str:
    """Return the hex sha256 of `data`."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """Return the hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_text(path: Path, encoding: str = "utf-8") -> str:
    """Return a file's text, or raise InputError naming the file and the first bad byte's line."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError("no such file", file=str(path)) from None
    except IsADirectoryError:
        raise InputError("is a folder, a file was expected", file=str(path)) from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        hint = " (GBK? pass --encoding gbk)" if encoding.lower().replace("-", "") == "utf8" else ""
        raise InputError(f"not valid {encoding} text at byte {exc.start}{hint}",
                         file=str(path), line=line) from None
    except LookupError:
        raise InputError(f"unknown encoding '{encoding}'", file=str(path)) from None
    return text.removeprefix("\ufeff")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON can hold")


def loads_json(text: str | bytes) -> Any:
    """Return the value of one JSON text; NaN and Infinity are refused (JSON cannot hold them)."""
    return json.loads(text, parse_constant=_no_constant)


def _json_lines(text: str, path: Path) -> Iterator[tuple[int, Any | InputError]]:
    """Yield (line number, parsed value or the InputError of a bad line) for each non-blank line.

    Only "\\n" ends a line: U+2028, U+2029 or U+0085 inside a value are text, as JSON has them.
    """
    reader = jsonlines.Reader(io.StringIO(text, newline="\n"), loads=lambda line: loads_json(line.rstrip("\r\n")))
    number = 0
    while True:
        number += 1
        try:
            value = reader.read()
        except EOFError:
            return
        except jsonlines.InvalidLineError as exc:
            if not exc.line.strip():
                continue
            cause = exc.__cause__
            detail = (f"{cause.msg} at column {cause.colno}" if isinstance(cause, json.JSONDecodeError)
                      else str(cause) if cause is not None else str(exc).split(" (line")[0])
            yield number, InputError(f"not valid JSON ({detail})", file=str(path), line=number)
            continue
        yield number, value


def iter_jsonl(path: Path, encoding: str = "utf-8") -> Iterator[tuple[int, Any]]:
    """Yield (line number, parsed object) for each non-blank line; bad JSON raises InputError."""
    for number, value in _json_lines(read_text(path, encoding), Path(path)):
        if isinstance(value, InputError):
            raise value
        yield number, value


def iter_json_objects(path: Path, encoding: str = "utf-8", text: str | None = None,
                      ) -> Iterator[tuple[int, dict | InputError]]:
    """Yield (line number, object) for each non-blank line of a JSONL file (or of `text`, already read
    from it); a line that is not valid JSON, or not a JSON object, yields its InputError instead, so
    a caller can collect every bad line."""
    for number, value in _json_lines(read_text(path, encoding) if text is None else text, Path(path)):
        if not isinstance(value, (dict, InputError)):
            value = InputError(f"each line must be a JSON object, got {type(value).__name__}",
                               file=str(path), line=number)
        yield number, value


def iter_csv(path: Path, encoding: str = "utf-8") -> Iterator[tuple[int, dict[str, str]]]:
    """Yield (line number, row dict) for each CSV row; the header is line 1."""
    text = read_text(path, encoding)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if not reader.fieldnames:
        raise InputError("empty CSV file, a header row was expected", file=str(path), line=1)
    for row in reader:
        if None in row:
            raise InputError(f"{len(row[None])} more cells than the header has",
                             file=str(path), line=reader.line_num)
        yield reader.line_num, {k: v for k, v in row.items() if k is not None}
