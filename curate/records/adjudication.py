"""The local record of disputed items sent to Argilla for adjudication: datasets/NAME/adjudication.json."""

from __future__ import annotations

from pydantic import Field

from curate.records.base import Record, VersionedRecord


class AdjudicationItem(Record):
    """One disputed item as it stands in the adjudication dataset."""

    digest: str = Field(description="Hash of what its adjudication record shows (a change means it is logged again).")
    pushed_at: str = Field(description="When its adjudication record was last written (UTC).")
    disputed: list[str] = Field(default_factory=list, description="What the annotators disagreed on, one line each.")
    settled_by: list[str] = Field(default_factory=list, description="Who settled it, once settled.")
    settled_at: str | None = Field(None, description="When a pull applied the settlement (UTC).")


class AdjudicationState(VersionedRecord):
    """Where a dataset's disputed items are adjudicated in Argilla, and which were settled by whom."""

    SCHEMA = 1
    dataset: str | None = Field(None, description="Argilla dataset holding the disputes, once created.")
    workspace: str | None = Field(None, description="Its Argilla workspace (the one of the annotation dataset).")
    items: dict[str, AdjudicationItem] = Field(default_factory=dict, description="Disputed items by id.")
