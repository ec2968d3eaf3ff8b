"""Reading the TOML files users write (curate.toml, a gate file): one located line for every way such a
file can be bad: bytes that are not UTF-8, bad syntax, nesting deep enough to exhaust the parser's stack.
A UTF-8 byte order mark (Windows editors write one) is not text and is read past."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from curate.errors import InputError
from curate.fileio import MAX_DEPTH, read_text

_WHERE = re.compile(r"\(at line (\d+), column \d+\)")
# What can hold a bracket that is not one: a string of any of TOML's four kinds, or a comment.
_NOT_BRACKETS = re.compile(r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*',
                           re.DOTALL)


def _too_deep(text: str) -> int | None:
    """Return the line on which arrays and inline tables first nest deeper than MAX_DEPTH, or None.
    Iterative over the text (the parser itself recurses, and a few thousand brackets overflow it)."""
    depth = 0
    position = 0
    for found in (*_NOT_BRACKETS.finditer(text), None):
        end = found.start() if found else len(text)
        for offset, char in enumerate(text[position:end], start=position):
            if char in "[{":
                depth += 1
                if depth > MAX_DEPTH:
                    return text.count("\n", 0, offset) + 1
            elif char in "]}":
                depth = max(depth - 1, 0)
        position = found.end() if found else end
    return None


def _depth(value: Any) -> int:
    """Return how deep tables and arrays nest in a parsed TOML value (iteratively)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            stack.extend((child, depth + 1) for child in node.values())
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node)
        else:
            deepest = max(deepest, depth)
            continue
        deepest = max(deepest, depth + 1)
    return deepest


def _deepest_line(text: str) -> int:
    """Return the line that nests deepest by itself: the most dots of a dotted key, brackets and braces."""
    plain = _NOT_BRACKETS.sub(lambda found: "\n" * found.group().count("\n"), text)
    return max(enumerate(plain.split("\n"), start=1), key=lambda line: sum(map(line[1].count, ".[{")))[0]


def loads_toml(text: str, file: str | None) -> dict[str, Any]:
    """Return the TOML `text` parsed; bad syntax, or tables and arrays nested deeper than MAX_DEPTH levels
    (brackets, braces or dotted keys: `[a.b.c]`), is an InputError naming `file` and the line."""
    deep = f"nested too deeply (more than {MAX_DEPTH} levels of tables and arrays)"
    if text.count("[") + text.count("{") > MAX_DEPTH and (line := _too_deep(text)) is not None:
        raise InputError(deep, file=file, line=line)
    try:
        data = tomllib.loads(text.removeprefix("\ufeff"))
    except tomllib.TOMLDecodeError as exc:
        where = _WHERE.search(str(exc))
        message = str(exc).replace(where.group(0), "").strip() if where else str(exc)
        raise InputError(f"not valid TOML: {message}", file=file, line=int(where.group(1)) if where else None) from None
    except RecursionError:  # the scan above counts what the parser nests; should they ever disagree
        raise InputError(deep, file=file, line=_deepest_line(text)) from None
    if text.count(".") + text.count("[") + text.count("{") > MAX_DEPTH and _depth(data) > MAX_DEPTH:
        raise InputError(deep, file=file, line=_deepest_line(text))   # dotted keys nest without a bracket
    return data


def read_toml(path: Path) -> tuple[str, dict[str, Any]]:
    """Return (the text, the parsed TOML) of the file at `path`; a file that cannot be read, is not UTF-8
    (the first bad byte's line is named) or is not valid TOML is an InputError."""
    try:
        text = read_text(Path(path))
    except OSError as exc:   # read_text names a missing file and a folder itself
        raise InputError(f"cannot be read: {exc.strerror or exc}", file=str(path)) from None
    except InputError as exc:  # TOML is UTF-8 by definition: no --encoding to suggest
        message = exc.message.replace(" (GBK? pass --encoding gbk)", " (TOML files are UTF-8: save it as UTF-8)")
        raise InputError(message, file=exc.file, line=exc.line, field=exc.field) from None
    return text, loads_toml(text, str(path))
