"""Errors of the curate library; the CLI turns each into one line for the user."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class CurateError(Exception):
    """Base of every error the curate library raises on purpose."""

    def __reduce__(self):
        # whole across processes (a shard's worker raises, the command reports): the default pickling
        # calls the class again with `args` alone, which loses an InputError's file and field and
        # fails for errors built from other arguments
        return _rebuilt, (type(self), self.args, self.__dict__)


def _rebuilt(cls: type, args: tuple, state: dict) -> CurateError:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class InputError(CurateError):
    """Bad user input, located by file, line and field where those are known."""

    def __init__(self, message: str, *, file: str | None = None,
                 line: int | None = None, field: str | None = None):
        self.message = message
        self.file = file
        self.line = line
        self.field = field
        super().__init__(self.located())

    def located(self) -> str:
        """Return the message prefixed with `file:line: field:` as far as known."""
        where = ""
        if self.file:
            where = str(self.file)
            if self.line is not None:
                where += f":{self.line}"
            where += ": "
        if self.field:
            where += f"field '{self.field}': "
        return where + self.message

    @classmethod
    def from_validation(cls, exc: ValidationError, *, file: str | None = None, line: int | None = None,
                        prefix: str = "") -> InputError:
        """Return the first problem of a pydantic ValidationError, located by file, line and field
        (`prefix` goes before the field path, e.g. the name the user's file gave the record)."""
        error = exc.errors()[0]
        path = ".".join(map(str, error["loc"]))
        field = ".".join(p for p in (prefix, path) if p) or None
        return cls(error["msg"], file=file, line=line, field=field)


class InvalidRecords(CurateError):
    """Several bad input records; nothing was written."""

    def __init__(self, errors: list[InputError], skippable: bool = True):
        self.errors = errors
        self.skippable = skippable
        """Whether the command can import the valid records and skip these (--skip-invalid)."""
        first = errors[0].located()
        hint = "; --skip-invalid imports the valid ones" if skippable else ""
        more = f" (and {len(errors) - 1} more{hint})" if len(errors) > 1 else ""
        super().__init__(first + more)


class SchemaVersionError(CurateError):
    """A file written by a newer version of the tools than this one."""

    def __init__(self, file: str | None, found: int, reads: int):
        self.file, self.found, self.reads = file, found, reads
        where = f"{file}: " if file else ""
        super().__init__(f"{where}written by a newer version: schema {found}, this version reads {reads}")


class WorkspaceError(CurateError):
    """No workspace, or a workspace in a state the command cannot use."""


class NotFound(CurateError):
    """A named KB snapshot, dataset or release does not exist."""


class IntegrityError(CurateError):
    """A release or snapshot whose content no longer matches its recorded hash."""
