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

from .errors import InputError


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
    return "".join(dumps_json(r) + "\n" for r in records).encode("utf-8")


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


def iter_jsonl(path: Path, encoding: str = "utf-8") -> Iterator[tuple[int, Any]]:
    """Yield (line number, parsed object) for each non-blank line; bad JSON raises InputError."""
    text = read_text(path, encoding)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON ({exc.msg} at column {exc.colno})",
                             file=str(path), line=number) from None


def iter_jsonl_lenient(path: Path, encoding: str = "utf-8") -> Iterator[tuple[int, Any | InputError]]:
    """Yield (line, object) like iter_jsonl, but a bad line yields its InputError instead of raising."""
    text = read_text(path, encoding)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, InputError(f"not valid JSON ({exc.msg} at column {exc.colno})",
                                     file=str(path), line=number)


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
