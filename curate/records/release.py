"""The record of an immutable release: datasets/NAME/releases/vN/manifest.json."""

from __future__ import annotations

from pydantic import Field

from curate.records.base import VersionedRecord
from curate.records.checks import DatasetChecks, upgrade_checks


class ReleaseManifest(VersionedRecord):
    """What an immutable release holds; `content_sha256` covers every data file."""

    SCHEMA = 2
    name: str = Field(description="Dataset name.")
    version: str = Field(description="v1, v2, ...")
    parent_version: str | None = Field(None, description="The release before this one, if any.")
    created_at: str = Field(description="When the release was written (UTC).")
    message: str = Field(description="Release message (-m).")
    content_sha256: str = Field(description="sha256 over the data files' paths and bytes, in path order.")
    files: dict[str, str] = Field(description="sha256 of each data file, by path relative to the release.")
    kb_snapshot: str | None = Field(None, description="KB snapshot id the evidence refers to.")
    guideline_version: str | None = Field(None, description="Content hash of the relevance guidelines in force.")
    items: int = Field(description="Number of items released.")
    counts: dict[str, dict[str, int]] = Field(
        description="Counts by split, difficulty, qtype, source, status, language and answerable.")
    checks: DatasetChecks = Field(default_factory=DatasetChecks,
                                  description="Check results carried from the dataset, each marked `current` or not.")
    excluded: dict[str, int] = Field(default_factory=dict,
                                     description="Items left out of the release, counted by status.")
    changelog: dict[str, list[str]] = Field(
        default_factory=dict, description="Item ids added, removed and changed since the parent version.")
    curate_version: str = Field(description="Version of curate that wrote the release.")

    @classmethod
    def upgrade(cls, data: dict) -> dict:
        """Schema 1 kept each check as a free dict with a `clean` flag."""
        return {**data, "checks": upgrade_checks(data.get("checks") or {})}
