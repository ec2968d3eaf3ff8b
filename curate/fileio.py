"""Atomic writes and line-numbered reading of the files users bring."""

from __future__ import annotations

import codecs
import contextlib
import errno
import hashlib
import io
import json
import math
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

import jsonlines

from curate.errors import InputError


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# mkstemp creates files readable by their owner only; written files get the usual mode.
_FILE_MODE = 0o666 & ~_umask()
_DIR_MODE = 0o777 & ~_umask()


def fsync_folder(folder: Path) -> None:
    """Flush a folder's entries (a rename into it) to disk, where the system allows it."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` so a reader sees the old file or the new one, never half; the file and
    then its folder are flushed to disk, so the new one survives a power cut once this returns."""
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
        fsync_folder(path.parent)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _lone_surrogate_message(char: str) -> str:
    return f"lone surrogate \\u{ord(char):04x} in a string (not valid Unicode)"


def _utf8(text: str) -> bytes:
    """Return `text` as UTF-8; a lone surrogate (which UTF-8 cannot encode) is a ValueError naming it."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(_lone_surrogate_message(exc.object[exc.start])) from None


def atomic_write_text(path: Path, text: str) -> None:
    """Write UTF-8 `text` atomically; text with a lone surrogate is a ValueError and writes nothing."""
    atomic_write_bytes(path, _utf8(text))


def _dumps(obj: Any) -> str:
    # allow_nan=False: NaN and Infinity are not JSON, and loads_json refuses them on the way back.
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)


def dumps_json(obj: Any) -> str:
    """Return canonical JSON: UTF-8 friendly, sorted keys, no spaces (stable for hashing).

    What could not be read back is a ValueError: NaN, Infinity, a lone surrogate.
    """
    text = _dumps(obj)
    _utf8(text)
    return text


def jsonl_bytes(records: Iterable[Any]) -> bytes:
    """Return the JSONL encoding of `records` (canonical JSON, one per line); NaN, Infinity or a lone
    surrogate is a ValueError."""
    buffer = io.StringIO(newline="\n")
    with jsonlines.Writer(buffer, dumps=_dumps) as writer:
        writer.write_all(records)
    return _utf8(buffer.getvalue())


def atomic_write_json(path: Path, obj: Any) -> None:
    """Write `obj` as indented JSON atomically; NaN, Infinity or a lone surrogate is a ValueError."""
    atomic_write_text(path, json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True, allow_nan=False) + "\n")


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
    tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}.", suffix=STALE_SUFFIX))
    os.chmod(tmp, _DIR_MODE)
    try:
        yield tmp
        for folder, _, names in os.walk(tmp):  # everything written is on disk before it takes its name
            for name in names:
                with contextlib.suppress(OSError), open(os.path.join(folder, name), "rb") as handle:
                    os.fsync(handle.fileno())
            fsync_folder(Path(folder))
        _put_in_place(tmp, final, replace)
        fsync_folder(final.parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


STALE_SUFFIX = ".tmp"


def _put_in_place(tmp: Path, final: Path, replace: bool) -> None:
    """Rename the complete folder `tmp` to `final`. With `replace`, what `final` holds is moved aside and
    removed first, as often as another command puts its own folder there in between (two commands that
    store the same sketch at once: the last complete folder stays, neither fails, none is seen half)."""
    while True:
        try:
            os.replace(tmp, final)   # a folder takes the name of an empty folder or of none
            return
        except OSError as error:
            if error.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            if not replace:
                raise FileExistsError(f"{final} already exists") from None
        old = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}.old-", suffix=STALE_SUFFIX))
        try:
            os.replace(final, old)
        except FileNotFoundError:   # another command moved it aside first
            old.rmdir()
            continue
        shutil.rmtree(old, ignore_errors=True)


def remove_stale(folder: Path, depth: int = 3) -> list[Path]:
    """Remove what a killed write left under `folder` (hidden `.NAME.*.tmp` files and folders), down
    to `depth` levels; return what was removed. Only a holder of the folder's write lock may call it:
    then no write of another command is under way there."""
    removed: list[Path] = []
    folder = Path(folder)
    if not folder.is_dir():
        return removed
    for path in list(folder.iterdir()):
        if path.name.startswith(".") and path.name.endswith(STALE_SUFFIX):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
            removed.append(path)
        elif depth > 1 and path.is_dir() and not path.is_symlink():
            removed += remove_stale(path, depth - 1)
    return removed


def create_private(path: Path, text: str) -> None:
    """Write `text` to `path` unless it exists, readable by its owner only from the first instant: under a
    temporary name opened with mode 0600, then linked to its name, which fails if another process made
    it meanwhile (that one is kept)."""
    path = Path(path)
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
    finally:
        temporary.unlink(missing_ok=True)


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


MAX_DEPTH = 100
"""Deepest nesting of arrays and objects loads_json reads: far beyond any record, and shallow enough
that nothing downstream (validation, writing) runs out of stack."""

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_NESTING_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"\s*:?|[\[\]{}]')  # a string (a key with its colon), or a bracket
_REFUSED = object()


class JSONValueError(ValueError):
    """A JSON text that holds what JSON, Unicode or Python cannot: NaN or Infinity, a number out of range
    or too long, nesting too deep, a lone surrogate, a key given twice in one object. `field` is where
    (dotted path), when known."""

    def __init__(self, message: str, field: str | None = None):
        self.message = message
        self.field = field
        super().__init__(message)


def _dotted(path: tuple) -> str | None:
    """Return a path of keys and list indices as the field names of errors spell it: `evidence[0].text`."""
    text = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path).removeprefix(".")
    # backslashreplace: a key holding a lone surrogate still prints, as \udXXX.
    return text.encode("utf-8", "backslashreplace").decode("utf-8") or None


def _path_to(value: Any, wanted: Callable[[Any], bool]) -> tuple[str | None, Any]:
    """Return (dotted path, the value or key) of the first value or key in `value` that is `wanted`,
    or (None, None). Iterative, so it never runs out of stack."""
    stack: list[tuple[tuple, Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        if wanted(node):
            return _dotted(path), node
        if isinstance(node, dict):
            for key in node:
                if wanted(key):
                    return _dotted((*path, key)), key
            stack.extend(((*path, key), item) for key, item in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend(((*path, index), item) for index, item in reversed(list(enumerate(node))))
    return None, None


def _check_depth(text: str) -> None:
    """Raise JSONValueError if arrays and objects in `text` nest deeper than MAX_DEPTH, naming the
    top-level key they are under."""
    depth, key = 0, None
    for token in _NESTING_TOKEN.finditer(text):
        mark = token.group()
        if mark in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                raise JSONValueError(f"nested too deeply (more than {MAX_DEPTH} levels of [ and {{)", field=key)
        elif mark in ("]", "}"):
            depth = max(depth - 1, 0)
        elif mark.endswith(":") and depth == 1:
            with contextlib.suppress(ValueError):
                key = _dotted((json.loads(mark[:-1].rstrip()),))


def _finite_float(number: str) -> float:
    value = float(number)
    if math.isinf(value):
        raise JSONValueError(f"{number[:40]} is out of range for a number (at most about 1.8e308)")
    return value


def _no_constant(name: str) -> Any:
    raise JSONValueError(f"{name} is not a number JSON can hold")


class _RepeatedKey(JSONValueError):
    """A key given twice in one JSON object: which value is meant cannot be told (json keeps the last)."""


def _first_repeated(pairs: list[tuple[str, Any]]) -> str | None:
    seen: set[str] = set()
    return next((key for key, _ in pairs if key in seen or seen.add(key)), None)


def _object(pairs: list[tuple[str, Any]]) -> dict:
    made = dict(pairs)
    if len(made) != len(pairs):
        raise _RepeatedKey(f"key {_dotted((_first_repeated(pairs),))!r} given twice in one object (which value is "
                           "meant cannot be told)")
    return made


# Built once: json.loads with hooks would build a decoder on every call.
_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float, object_pairs_hook=_object)


def _repeated_key(text: str) -> str | None:
    """Return the path of the first key given twice in one object of `text` (for the error message)."""
    def marked(pairs: list[tuple[str, Any]]) -> Any:
        key = _first_repeated(pairs)
        return dict(pairs) if key is None else (_REFUSED, key)   # a tuple: JSON never makes one
    try:
        value = json.loads(text, object_pairs_hook=marked, parse_constant=lambda _: None,
                           parse_float=lambda _: 0.0, parse_int=lambda _: 0)
    except ValueError:
        return None
    path, found = _path_to(value, lambda node: isinstance(node, tuple))
    return None if found is None else ".".join(p for p in (path, _dotted((found[1],))) if p)


def _refused_number(text: str) -> str | None:
    """Return the path of the first number in `text` that loads_json refuses (for the error message)."""
    limit = sys.get_int_max_str_digits()
    try:
        value = json.loads(text, parse_constant=lambda _: _REFUSED,
                           parse_float=lambda number: _REFUSED if math.isinf(float(number)) else 0.0,
                           parse_int=lambda number: _REFUSED if 0 < limit < len(number.lstrip("-")) else 0)
    except ValueError:  # bad syntax further on: the line is still named
        return None
    return _path_to(value, lambda node: node is _REFUSED)[0]


def loads_json(text: str | bytes) -> Any:
    """Return the value of one JSON text; what JSON, Unicode or Python cannot hold is a JSONValueError
    (a ValueError) naming the field: NaN and Infinity, numbers beyond the float range or with more
    than 4300 digits, nesting deeper than MAX_DEPTH, lone surrogates (\\ud800-\\udfff escapes that
    do not form a pair), a key given twice in one object. Bad syntax is a json.JSONDecodeError."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode(json.detect_encoding(text))  # strict: an encoded surrogate is refused
    if text.count("[") + text.count("{") > MAX_DEPTH:
        _check_depth(text)
    try:
        value = _DECODER.decode(text)
    except _RepeatedKey as exc:
        raise JSONValueError(exc.message, field=_repeated_key(text)) from None
    except JSONValueError as exc:
        raise JSONValueError(exc.message, field=_refused_number(text)) from None
    except RecursionError:
        raise JSONValueError("nested too deeply") from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # the one other ValueError json raises: an integer past the digit limit
        raise JSONValueError(f"a number with more than {sys.get_int_max_str_digits()} digits",
                             field=_refused_number(text)) from None
    if "\\u" in text and _SURROGATE_ESCAPE.search(text):
        field, found = _path_to(value, lambda node: isinstance(node, str) and _SURROGATE.search(node) is not None)
        if found is not None:
            raise JSONValueError(_lone_surrogate_message(_SURROGATE.search(found).group()), field=field)
    return value


def _json_lines(text: str | TextIO, path: Path) -> Iterator[tuple[int, Any | InputError]]:
    """Yield (line number, parsed value or the InputError of a bad line) for each non-blank line of
    `text` (or of a stream opened with newline="\\n").

    Only "\\n" ends a line: U+2028, U+2029 or U+0085 inside a value are text, as JSON has them.
    """
    stream = io.StringIO(text, newline="\n") if isinstance(text, str) else text
    reader = jsonlines.Reader(stream, loads=lambda line: loads_json(line.rstrip("\r\n")))
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
            if isinstance(cause, JSONValueError):
                yield number, InputError(cause.message, file=str(path), line=number, field=cause.field)
                continue
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


@contextlib.contextmanager
def open_text(path: Path, encoding: str, newline: str) -> Iterator[TextIO]:
    """Open a text file for streaming; a missing file, a folder, an unknown encoding or bytes that are
    not `encoding` raise InputError naming the file (and the line, for bad bytes)."""
    path = Path(path)
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise InputError(f"unknown encoding '{encoding}'", file=str(path)) from None
    name = "utf-8-sig" if codecs.lookup(encoding).name == "utf-8" else encoding   # a BOM is not text
    try:
        handle = open(path, encoding=name, newline=newline)
    except FileNotFoundError:
        raise InputError("no such file", file=str(path)) from None
    except IsADirectoryError:
        raise InputError("is a folder, a file was expected", file=str(path)) from None
    with handle:
        try:
            yield handle
        except UnicodeDecodeError:
            read_text(path, encoding)   # says where, from the bytes
            raise


def stream_json_objects(path: Path, encoding: str = "utf-8") -> Iterator[tuple[int, dict | InputError]]:
    """Yield what `iter_json_objects` yields, reading the file a line at a time (memory does not grow
    with the file)."""
    with open_text(path, encoding, "\n") as handle:
        for number, value in _json_lines(handle, Path(path)):
            if not isinstance(value, (dict, InputError)):
                value = InputError(f"each line must be a JSON object, got {type(value).__name__}",
                                   file=str(path), line=number)
            yield number, value
