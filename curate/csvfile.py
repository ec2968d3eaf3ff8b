"""Reading users' CSV files: rows numbered by the line they start on, a header checked, and a quote left
open (or text after a closing quote) named by the line the quoted field opened on and its column (the csv
module alone would merge the lines up to the next quote into one field)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from curate.errors import InputError
from curate.fileio import open_text, read_text

CSV_FIELD_MAX = 64 << 20


def _csv_rows(stream: TextIO, path: Path, encoding: str) -> Iterator[tuple[int, list[str]]]:
    """Yield (line the row starts on, cells) for each non-blank CSV row of `stream` (opened with
    newline=""); a quote left open, or text after a closing quote, is an InputError naming the line the
    quoted field opened on and its column (the csv module alone would merge the lines up to the next
    quote into one field)."""
    # the csv module's own limit (128 KB a field) refused a 600 KB question that JSONL takes; 64 MB
    # still stops a quote left open from reading a whole log into one field
    csv.field_size_limit(max(csv.field_size_limit(), CSV_FIELD_MAX))
    reader = csv.reader(stream, strict=True)
    header: list[str] | None = None
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:   # the file is read whole only to say where
            raise _csv_error(read_text(path, encoding), start, header, str(path), exc) from None
        if row:
            header = header or row
            yield start, row


def _csv_error(text: str, start: int, header: list[str] | None, file: str, exc: csv.Error) -> InputError:
    """Return the InputError of the row starting on line `start` that the csv module refused."""
    lines = io.StringIO(text, newline="").readlines()  # the same lines the csv reader counts
    problem = _quote_problem("".join(lines[start - 1:]), start)
    if problem is None:
        return InputError(f"not valid CSV ({exc})", file=file, line=start)
    opened, column, closed = problem
    field = header[column] if header and column < len(header) else None
    where = "" if field else f" (column {column + 1})"
    if closed is None:
        message = f"unterminated quote: this quoted field{where} runs to the end of the file"
    elif closed > opened:
        message = (f"unterminated quote: this quoted field{where} runs on to line {closed}, where text follows "
                   f"its closing quote (a quote inside a quoted field is written \"\")")
    else:
        message = f"text after the closing quote{where} (a quote inside a quoted field is written \"\")"
    return InputError(message, file=file, line=opened, field=field)


def _line_breaks(text: str) -> int:
    return text.count("\n") + text.count("\r") - text.count("\r\n")


def _quote_problem(rest: str, line: int) -> tuple[int, int, int | None] | None:
    """Return (line the quote opened on, column index, line of its closing quote or None if it never
    closes) for the first quoted field of the row opening `rest` (on `line`) that is not closed by a
    quote followed by a comma or a line end; None if the row has no such field."""
    column, at_field_start, i = 0, True, 0
    while i < len(rest):
        char = rest[i]
        if char == '"' and at_field_start:
            opened, i = line, i + 1
            while True:
                close = rest.find('"', i)
                if close < 0:
                    return opened, column, None
                line += _line_breaks(rest[i:close])
                if rest.startswith('""', close):
                    i = close + 2
                    continue
                i = close + 1
                break
            if i < len(rest) and rest[i] not in ",\r\n":
                return opened, column, line
            at_field_start = False
            continue
        if char in "\r\n":
            return None
        if char == ",":
            column += 1
        at_field_start = char == ","
        i += 1
    return None


def _checked_header(header: list[str], file: str) -> list[str]:
    """Return a CSV header; an empty or repeated name is an InputError."""
    seen: set[str] = set()
    for index, name in enumerate(header):
        if not name.strip():
            raise InputError(f"column {index + 1} has no name in the header", file=file, line=1)
        if name in seen:
            raise InputError("named twice in the header", file=file, line=1, field=name)
        seen.add(name)
    return header


def iter_csv(path: Path, encoding: str = "utf-8") -> Iterator[tuple[int, dict[str, str | None]]]:
    """Yield (line the row starts on, row dict) for each CSV row; the header is line 1, and a cell the
    row lacks is None. A header with a repeated or empty name, a row with more cells than the header,
    or a quote left open is an InputError."""
    yield from _csv_dicts(_csv_rows(io.StringIO(read_text(path, encoding), newline=""), Path(path), encoding),
                          str(path))


def _csv_dicts(rows: Iterator[tuple[int, list[str]]], file: str) -> Iterator[tuple[int, dict[str, str | None]]]:
    """Yield (line, row dict) for the rows after the header (see `iter_csv`)."""
    first = next(rows, None)
    if first is None:
        raise InputError("empty CSV file, a header row was expected", file=file, line=1)
    if first[0] != 1:
        raise InputError("blank line where the header row was expected", file=file, line=1)
    header = _checked_header(first[1], file)
    for line, cells in rows:
        if len(cells) > len(header):
            raise InputError(f"{len(cells) - len(header)} more cells than the header has", file=file, line=line)
        yield line, dict(zip(header, cells + [None] * (len(header) - len(cells)), strict=True))


def stream_csv(path: Path, encoding: str = "utf-8") -> Iterator[tuple[int, dict[str, str | None]]]:
    """Yield what `iter_csv` yields, reading the file a row at a time (memory does not grow with the
    file); a bad row is located as `iter_csv` locates it."""
    with open_text(path, encoding, "") as handle:
        yield from _csv_dicts(_csv_rows(handle, Path(path), encoding), str(path))
