"""The base of every record curate and evalrun write to disk, and the one way each is read back.

A record is a pydantic model that forbids unknown fields. A versioned record carries a
`schema_version`; reading a file written by a newer version stops with one line, and a file of an
older version is brought up to date by the record's `upgrade` before it is validated.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from curate.errors import InputError, SchemaVersionError
from curate.fileio import atomic_write_json, iter_json_objects, loads_json, read_text


def now() -> str:
    """Return the current UTC time as an ISO 8601 string (seconds)."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


class Record(BaseModel):
    """A piece of a file on disk: unknown fields are refused, assignments validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class VersionedRecord(Record):
    """A record that is a file (or a line of one) of its own, with a schema version."""

    SCHEMA: ClassVar[int] = 1
    schema_version: int = Field(1, description="Version of this record's schema; a reader refuses newer ones.")

    def model_post_init(self, context: Any) -> None:
        if "schema_version" not in self.model_fields_set:
            self.schema_version = self.SCHEMA

    @classmethod
    def upgrade(cls, data: dict) -> dict:
        """Return the fields of an older schema version brought up to this one (unchanged by default)."""
        return data

    @classmethod
    def parse(cls, data: Any, *, file: str | Path | None = None, line: int | None = None) -> Self:
        """Return the record `data` holds; a newer schema version, or a field that does not fit,
        raises one located error."""
        where = None if file is None else str(file)
        if isinstance(data, dict):
            version = data.get("schema_version", 1)
            if not isinstance(version, int) or isinstance(version, bool):
                raise InputError(f"must be a whole number, got {version!r}", file=where, line=line,
                                 field="schema_version")
            if version > cls.SCHEMA:
                raise SchemaVersionError(where if line is None else f"{where}:{line}", version, cls.SCHEMA)
            if version < cls.SCHEMA:
                data = {**cls.upgrade(dict(data)), "schema_version": cls.SCHEMA}
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise InputError.from_validation(exc, file=where, line=line) from None

    @classmethod
    def read(cls, path: Path) -> Self:
        """Return the record a JSON file holds; a missing, damaged or newer file is one line."""
        path = Path(path)
        try:
            data = loads_json(read_text(path))
        except ValueError as exc:
            raise InputError(f"damaged: not valid JSON ({str(exc).splitlines()[0][:120]})", file=str(path)) from None
        return cls.parse(data, file=path)

    def write(self, path: Path) -> None:
        """Write the record as indented JSON, atomically."""
        atomic_write_json(Path(path), self.model_dump(mode="json"))


def read_jsonl(model: type[VersionedRecord], path: Path, text: str | None = None) -> Iterator[VersionedRecord]:
    """Yield the records of a JSONL file (or of `text`, already read from it), one per non-blank line;
    a bad line raises a located error."""
    for line, value in iter_json_objects(Path(path), text=text):
        if isinstance(value, InputError):
            raise value
        yield model.parse(value, file=path, line=line)


def validate_lines(model: type[Record], path: Path) -> list:
    """Return the records of a JSONL file written by the tools, validated in one pass (fast enough for
    a snapshot of a million chunks); a bad line raises an InputError naming it."""
    path = Path(path)
    text = read_text(path)
    lines = [line for line in text.split("\n") if line.strip()]
    adapter = _list_adapter(model)
    try:
        return adapter.validate_json("[" + ",".join(lines) + "]")
    except ValidationError as exc:
        error = exc.errors()[0]
        position = error["loc"][0] if error["loc"] and isinstance(error["loc"][0], int) else None
        line = None
        if position is not None:
            line = _line_of(text, position)
        raise InputError(f"damaged: {error['msg']}", file=str(path), line=line,
                         field=".".join(map(str, error["loc"][1:])) or None) from None


_ADAPTERS: dict[type, TypeAdapter] = {}


def _list_adapter(model: type[Record]) -> TypeAdapter:
    if model not in _ADAPTERS:
        _ADAPTERS[model] = TypeAdapter(list[model])
    return _ADAPTERS[model]


def _line_of(text: str, position: int) -> int:
    """Return the 1-based line number of the `position`-th non-blank line of `text`."""
    seen = -1
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            seen += 1
            if seen == position:
                return number
    return position + 1
