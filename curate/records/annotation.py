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
    argilla_dataset: str | None = Field(None, description="The Argilla dataset its record lives in (records with "
                                        "fewer candidates than the pool size have their own); None: the main one.")


class ArgillaTarget(Record):
    """Where a dataset's records live in Argilla (the key is never stored)."""

    api_url: str = Field(description="Argilla's URL.")
    dataset: str = Field(description="Argilla dataset name.")
    workspace: str = Field(description="Argilla workspace name.")


class AnnotationState(VersionedRecord):
    """What was pushed for one dataset."""

    SCHEMA = 3  # 3: PushedItem.argilla_dataset, push_started (schema 2 files read unchanged)
    items: dict[str, PushedItem] = Field(default_factory=dict, description="Pushed items by id.")
    argilla: ArgillaTarget | None = Field(None, description="The Argilla dataset, once pushed.")
    pool_k: int | None = Field(None, description="Candidate slots per record (fixed once pushed).")
    guideline_version: str | None = Field(None, description="Guideline version pushed with the dataset.")
    min_submitted: int = Field(1, description="Submitted answers a record needs before it is pulled.")
    push_started: str | None = Field(None, description="When a push began that has not finished (UTC): records in "
                                     "Argilla may be newer than this file until a push completes.")

    def dataset_of(self, item_id: str) -> str:
        """Return the name of the Argilla dataset a pushed item's record lives in (KeyError if never pushed)."""
        if self.argilla is None:
            raise KeyError(item_id)
        return self.items[item_id].argilla_dataset or self.argilla.dataset
