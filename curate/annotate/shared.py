"""The Argilla plumbing another tool shares (evalrun's judge review), exported by `curate`: the SDK, a
connection, one-line errors, datasets made or brought up to date, records read and upserted, a
workspace's members, and guideline Markdown as Argilla shows it."""

from __future__ import annotations

from curate.annotate.adjudication import find_dataset
from curate.annotate.pull import _members
from curate.annotate.push import _demoted, _log, _unwrapped
from curate.annotate.remote import argilla_errors, argilla_records, ensure_dataset
from curate.annotate.state import argilla_sdk, connect

__all__ = ["argilla_errors", "argilla_markdown", "argilla_members", "argilla_records", "argilla_sdk",
           "connect_argilla", "ensure_argilla_dataset", "find_argilla_dataset", "log_records"]

connect_argilla = connect
ensure_argilla_dataset = ensure_dataset
find_argilla_dataset = find_dataset


def argilla_markdown(text: str) -> str:
    r"""Return guideline Markdown as it is to sit under a language heading in Argilla: every heading one
    level deeper, soft-wrapped lines joined (Argilla shows each line break).

    >>> argilla_markdown("# Rules\nGrade chunks,\nnot documents.")
    '## Rules\nGrade chunks, not documents.'
    """
    return _unwrapped(_demoted(text)).strip()


def argilla_members(client, workspace_id) -> dict[str, str]:
    """Return {user id: username} of an Argilla workspace's members."""
    return _members(client, workspace_id)


def log_records(target, records: list) -> None:
    """Upsert records by id into an Argilla dataset, without the SDK's own progress bar."""
    _log(target, records)
