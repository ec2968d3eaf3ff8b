"""Production logs as `curate add-failures` reads them: JSONL or CSV rows, streamed one at a time,
their field names mapped to canonical ones (`--map OLD=NEW`, as `curate import` does).

Only the fields below are read; any other field of a row is ignored and never stored (it may hold
anything). A bad value is an InputError naming the file, line and field, never the value (it may be
personal data).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from curate.errors import InputError
from curate.csvfile import stream_csv
from curate.fileio import JSONValueError, stream_json_objects
from curate.formats.raw import csv_list

# Canonical field <- names production logs already use (tracing tools, home-grown exports).
LOG_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "trace_id", "request_id", "log_id"),
    "question": ("question", "query", "user_input", "input", "prompt"),
    "answer": ("answer", "response", "output", "production_answer"),
    "retrieved_ids": ("retrieved_ids", "retrieved_chunk_ids", "chunk_ids", "context_ids", "retrieved_context_ids"),
    "contexts": ("contexts", "context", "retrieved_contexts"),
    "feedback": ("feedback", "thumbs", "vote", "reaction"),
    "rating": ("rating", "stars", "score"),
    "tags": ("tags", "labels"),
    "escalated": ("escalated", "escalated_to_human", "handoff", "human_handoff"),
    "follow_up": ("follow_up", "followup", "follow_up_question", "has_follow_up"),
    "timestamp": ("timestamp", "time", "ts", "created_at", "date"),
    "session": ("session_id", "session", "user_id", "user", "conversation_id"),
    "run_id": ("run_id",),
    # who asked and when, as `curate import` reads them (curate.dataset.asker); no bare `role` (a chat
    # message's role in most logs) and no bare `date` (the row's timestamp)
    "asker_groups": ("asker_groups", "user_groups"),
    "asker_role": ("asker_role", "user_role"),
    "as_of": ("as_of", "asked_at", "kb_version"),
}
_CANONICAL = {alias: name for name, aliases in LOG_ALIASES.items() for alias in aliases}
_LISTS = {"retrieved_ids", "contexts", "tags"}
_TRUE, _FALSE = {"1", "true", "yes", "y", "t", "是"}, {"0", "false", "no", "n", "f", "", "否"}


@dataclass
class LogRow:
    """One production row, its fields read and checked, nothing masked yet."""

    file: str
    line: int
    fields: dict[str, Any]
    names: dict[str, str]
    feedback: str | None = None
    rating: float | None = None
    tags: list[str] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)
    csv: bool = False   # an empty cell is a field not given

    def label(self, name: str) -> str:
        """Return the field name the log used for canonical field `name`."""
        return self.names.get(name, name)

    def error(self, message: str, name: str) -> InputError:
        """Return the InputError of field `name` of this row."""
        return InputError(message, file=self.file, line=self.line, field=self.label(name))

    def month(self) -> str | None:
        """Return the YYYY-MM of the row's timestamp, None without one (read only for failing rows: a
        million dates are not parsed for rows that are counted and dropped)."""
        stamp = self.fields.get("timestamp")
        if stamp is None or stamp == "":
            return None
        month = month_of(stamp)
        if month is None:
            raise self.error("must be a date or time (ISO 8601, or seconds since 1970)", "timestamp")
        return month

    def text(self, name: str) -> str | None:
        """Return a text field (a number read as text), None when absent or empty."""
        value = self.fields.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        if not isinstance(value, str):
            raise self.error(f"must be text, got {type(value).__name__}", name)
        return value.strip()

    def strings(self, name: str) -> list[str]:
        """Return a list field's texts (a lone text is a list of one)."""
        value = self.fields.get(name)
        values = [] if value is None else [value] if isinstance(value, (str, int, float)) else value
        if not isinstance(values, list) or not all(isinstance(v, (str, int, float)) and not isinstance(v, bool)
                                                   for v in values):
            raise self.error("must be a list of texts", name)
        return [str(v).strip() for v in values if str(v).strip()]


def _flag(row: LogRow, name: str) -> bool:
    value = row.fields.get(name)
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, (int, float)):
        return value != 0
    if isinstance(value, str):
        lowered = value.strip().lower()
        if name == "follow_up" and lowered not in _TRUE | _FALSE:
            return True   # the follow-up question itself
        if lowered in _TRUE | _FALSE:
            return lowered in _TRUE
    raise row.error("must be true or false", name)


def month_of(value: Any) -> str | None:
    """Return the YYYY-MM of an ISO 8601 date or time, or of seconds (or milliseconds) since 1970.

    >>> month_of("2026-11-03T10:22:00+08:00"), month_of(1794700800), month_of("03/11/2026")
    ('2026-11', '2026-11', None)
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m")
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str):
        text = value.strip()
        if text.isdigit():
            return month_of(int(text))
        try:
            return datetime.fromisoformat(text.replace("Z", "+00:00").replace(" ", "T", 1)).strftime("%Y-%m")
        except ValueError:
            return None
    return None


def _read(row: LogRow) -> LogRow:
    """Return the row with what decides whether it failed read and checked."""
    row.feedback = row.text("feedback")
    rating = row.fields.get("rating")
    if rating is not None and not (isinstance(rating, str) and not rating.strip()):
        try:
            row.rating = float(rating) if not isinstance(rating, bool) else None
        except (TypeError, ValueError):
            row.rating = None
        if row.rating is None or row.rating != row.rating:
            raise row.error("must be a number", "rating")
    row.tags = row.strings("tags")
    row.hints = [name for name in ("escalated", "follow_up") if _flag(row, name)]
    return row


def read_log(path: Path, mapping: dict[str, str], encoding: str = "utf-8") -> Iterator[LogRow | InputError]:
    """Yield each row of a production log (JSONL or CSV by extension) with its fields mapped, or the
    InputError of a bad row; the file is read a line at a time."""
    file = str(path)
    suffix = Path(path).suffix.lower()
    if suffix == ".csv":
        rows = stream_csv(path, encoding)
    elif suffix in (".jsonl", ".json", ".ndjson"):
        rows = stream_json_objects(path, encoding)
    else:
        raise InputError("expected a .jsonl or .csv production log", file=file)
    csv_file = suffix == ".csv"
    known: dict[tuple, tuple[dict[str, str], str | None]] = {}   # the keys of a row -> their mapping
    for line, record in rows:
        if isinstance(record, InputError):
            yield record
            continue
        keys = tuple(record)
        if keys not in known:
            names, clash = {}, None
            for key in keys:
                name = mapping.get(key) or _CANONICAL.get(key)
                if name is not None:
                    if name in names:
                        clash = key
                    names[name] = key
            known[keys] = (names, clash)
        names, clash = known[keys]
        if clash is not None:
            yield InputError(f"'{clash}' and another field both give {mapping.get(clash) or _CANONICAL[clash]}",
                             file=file, line=line, field=clash)
            continue
        fields = {name: record[key] for name, key in names.items()}
        try:
            if csv_file:
                for name in _LISTS & fields.keys():
                    if isinstance(fields[name], str):
                        fields[name] = csv_list(fields[name], name != "contexts")
            yield _read(LogRow(file, line, fields, names, csv=csv_file))
        except JSONValueError as exc:
            yield InputError(exc.message, file=file, line=line, field=names.get(name, name))
        except InputError as exc:
            yield exc
