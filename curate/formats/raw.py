"""Items as users bring them: JSONL or CSV rows with the field names they already have, mapped to
curate's own names before their evidence is located; and curate's own item records (what `curate export
--format jsonl` and a release's data files hold), read whole by the item schema."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curate.errors import InputError, SchemaVersionError
from curate.csvfile import iter_csv
from curate.fileio import JSONValueError, iter_json_objects, loads_json
from curate.formats.hf import item_from_row
from curate.records import EvalItem

# Canonical field <- names users already have (ragas, BEIR-style exports, home-grown files).
ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "item_id", "qid", "question_id", "_id"),
    "question": ("question", "query", "user_input"),
    "reference_answer": ("reference_answer", "answer", "ground_truth", "reference"),
    "key_points": ("key_points",),
    "evidence": ("evidence",),
    "evidence_ids": ("reference_context_ids", "evidence_ids"),
    "evidence_texts": ("reference_contexts", "evidence_texts"),
    "answers": ("answers", "accepted_answers"),
    "evidence_mode": ("evidence_mode",),
    "answerable": ("answerable",),
    "qtype": ("qtype",),
    "split": ("split",),
    "tags": ("tags",),
    # the asker and the moment (curate.dataset.asker); `role`, `groups`, `version` and `date` alone are left
    # out: in exported chat logs and other tools' rows they name other things (a message's role, a
    # document's groups, a schema or app version, when a row was written)
    "asker_groups": ("asker_groups", "user_groups"),
    "asker_role": ("asker_role", "user_role"),
    "as_of": ("as_of", "asked_at", "kb_version"),
}
CANONICAL = {alias: name for name, aliases in ALIASES.items() for alias in aliases}
LIST_FIELDS = {"key_points", "evidence", "evidence_ids", "evidence_texts", "tags", "answers"}
# list cells that may also be split at ; and , (not texts, which hold commas); asker_groups cells are read
# by curate.dataset.asker, where an empty cell is an asker not given, not one in no group
SPLIT_FIELDS = {"tags", "evidence_ids"}


@dataclass
class RawItem:
    """An item as read from its file, before its evidence is located."""

    file: str
    line: int
    fields: dict[str, Any]
    extra: dict[str, Any]
    format: str
    names: dict[str, str] = field(default_factory=dict)
    record: EvalItem | None = None
    """The whole item, when the line is one of curate's own item records (see `exported_record`)."""

    def label(self, name: str) -> str:
        """Return the field name the user's file used for canonical field `name`."""
        return self.names.get(name, name)


def parse_mapping(pairs: Iterable[str], aliases: dict[str, tuple[str, ...]] = ALIASES) -> dict[str, str]:
    """Return {input field: canonical field} from `old=new` strings, `new` a canonical field of
    `aliases` (an item's by default) or one of its aliases.

    >>> parse_mapping(["q=question", "gold=reference_answer"])
    {'q': 'question', 'gold': 'reference_answer'}
    """
    canonical = {alias: name for name, names in aliases.items() for alias in (name, *names)}
    mapping = {}
    for pair in pairs:
        old, sep, new = pair.partition("=")
        if not sep or not old or not new:
            raise InputError(f"--map expects old=new, got {pair!r}", field="map")
        if new not in canonical:
            raise InputError(f"--map {pair}: '{new}' is not a known field ({', '.join(sorted(aliases))})",
                             field="map")
        mapping[old] = canonical[new]
    return mapping


def csv_list(value: str, split: bool) -> list:
    """Return a CSV cell as a list: a JSON array as given, else the cell split at ; and , (`split`: tags,
    ids) or whole; a JSON array holding what JSON cannot (NaN, a lone surrogate...) is a JSONValueError."""
    value = value.strip()
    if not value:
        return []
    if value.startswith("["):
        try:
            parsed = loads_json(value)
        except json.JSONDecodeError:  # not JSON after all: the cell is text
            parsed = None
        if isinstance(parsed, list):
            return parsed
    if split:
        return [part.strip() for part in value.replace(",", ";").split(";") if part.strip()]
    return [value]


def _bracketed(field: str | None) -> str | None:
    """Return a dotted pydantic path with its list indices in brackets, as import's other errors spell
    fields: evidence.0.grade -> evidence[0].grade."""
    return re.sub(r"\.(\d+)(?=\.|$)", r"[\1]", field) if field else field


def exported_record(record: dict, file: str, line: int) -> EvalItem | InputError:
    """Return the item a line of curate's own item records holds (a line with `schema_version`, as
    `curate export --format jsonl` writes them, or a release's data file, whose difficulty_features are
    JSON text; an older schema is brought up to date), or the InputError naming the first field that
    does not fit the item schema."""
    try:
        return item_from_row(record)
    except SchemaVersionError as exc:
        return InputError(f"written by a newer version of curate: schema {exc.found}, this version reads "
                          f"{exc.reads}", file=file, line=line, field="schema_version")
    except InputError as exc:
        return InputError(f"{exc.message} (a line with schema_version is read as curate's own item record)",
                          file=file, line=line, field=_bracketed(exc.field))


def read_raw_items(path: Path, mapping: dict[str, str] | None = None, encoding: str = "utf-8",
                   ) -> Iterable[RawItem | InputError]:
    """Yield each record of a JSONL or CSV file with its fields mapped to canonical names; a JSONL line
    with `schema_version` is one of curate's own item records, read whole (`RawItem.record`)."""
    mapping = mapping or {}
    file = str(path)
    if path.suffix.lower() == ".csv":
        fmt = "csv"
        rows: Iterable = iter_csv(path, encoding)
    elif path.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        fmt = "jsonl"
        rows = iter_json_objects(path, encoding)
    else:
        raise InputError("expected a .jsonl or .csv file (use --format beir|squad for those)", file=file)
    for line, record in rows:
        if isinstance(record, InputError):
            yield record
            continue
        if fmt == "jsonl" and "schema_version" in record:
            item = exported_record(record, file, line)
            yield item if isinstance(item, InputError) else RawItem(
                file, line, {"id": item.id, "question": item.question}, {}, fmt, record=item)
            continue
        fields: dict[str, Any] = {}
        names: dict[str, str] = {}
        extra: dict[str, Any] = {}
        error = None
        for key, value in record.items():
            name = mapping.get(key) or CANONICAL.get(key)
            if name is None:
                extra[key] = value
            elif name in fields:
                error = InputError(f"'{key}' and another field both give {name}", file=file, line=line, field=key)
            else:
                if fmt == "csv" and name in LIST_FIELDS and isinstance(value, str):
                    try:
                        value = csv_list(value, name in SPLIT_FIELDS)
                    except JSONValueError as exc:
                        error = InputError(exc.message, file=file, line=line, field=key + (exc.field or ""))
                fields[name] = value
                names[name] = key
        yield error or RawItem(file, line, fields, extra, fmt, names)
