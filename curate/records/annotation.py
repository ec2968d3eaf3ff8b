"""The local record of what was pushed to Argilla: datasets/NAME/annotation.json."""

from __future__ import annotations

from pydantic import Field

from curate.records.base import Record, VersionedRecord


class PushedItem(Record):
    """One item as it was pushed: its candidate slots and the digest of its labels then."""

    slots: list[str] = Field(description="Chunk id of each candidate slot, slot 1 first.")
    digest: str = Field(description="Hash of what annotation may change, at push time (a change means a local edit).")
    pushed_at: str = Field(description="When it was last pushed (UTC).")
    applied: str | None = Field(None, description="Signature of the answers last applied, if any.")


class ArgillaTarget(Record):
    """Where a dataset's records live in Argilla (the key is never stored)."""

    api_url: str = Field(description="Argilla's URL.")
    dataset: str = Field(description="Argilla dataset name.")
    workspace: str = Field(description="Argilla workspace name.")


class AnnotationState(VersionedRecord):
    """What was pushed for one dataset."""

    SCHEMA = 2
    items: dict[str, PushedItem] = Field(default_factory=dict, description="Pushed items by id.")
    argilla: ArgillaTarget | None = Field(None, description="The Argilla dataset, once pushed.")
    pool_k: int | None = Field(None, description="Candidate slots per record (fixed once pushed).")
    guideline_version: str | None = Field(None, description="Guideline version pushed with the dataset.")
    min_submitted: int = Field(1, description="Submitted answers a record needs before it is pulled.")
