"""The record of an immutable release: datasets/NAME/releases/vN/manifest.json."""

from __future__ import annotations

from pydantic import Field

from curate.records.base import Record, VersionedRecord
from curate.records.checks import DatasetChecks, upgrade_checks
from curate.records.scope import ScopeSettings


class ReleaseScope(Record):
    """Who a release's items are asked by and at which moment, and the items scope leaves without usable
    evidence, computed with `curate.scope.usable_view` against the release's KB snapshot and `[scope]`
    settings (see ../shared/DESIGN.md, "Scope")."""

    by_asker: dict[str, int] = Field(
        description="Items by who asks: `role:NAME`, `groups:A,B` (sorted), `groups:[]` (may see only what everyone "
        "may), `no asker` (not known: what it may see is not checked).")
    by_moment: dict[str, int] = Field(description="Items by `as_of`: a date, a version label, or `latest`.")
    should_decline: dict[str, list[str]] = Field(
        default_factory=dict, description="Reason -> ids of the answerable items whose every evidence is unusable "
        "to their asker at their moment (forbidden, superseded, not_yet_valid, expired, later_version; an item "
        "under each of its reasons): legitimate items the system should decline, listed so a team sees them.")
    kb_groups: bool = Field(False, description="Whether any chunk of the KB snapshot has access groups.")
    unchecked: int = Field(0, description="Items that name no asker while the KB has access groups: what their "
                           "asker may see is not checked.")
    undecided: int = Field(0, description="Checks that met a date moment and a chunk with only a version label (or "
                           "the reverse): counted as holding, as they cannot be compared.")


class ReleaseManifest(VersionedRecord):
    """What an immutable release holds; `content_sha256` covers every file of the release and every
    other field of this manifest, so no part of a release can change unnoticed.

    Schema 1 hashed the data files only (`files` listed just them, and the checks were free dicts);
    such a release still loads, checked the old way (`curate.release.load`).
    """

    SCHEMA = 2
    name: str = Field(description="Dataset name.")
    version: str = Field(description="v1, v2, ...")
    parent_version: str | None = Field(None, description="The release before this one, if any.")
    created_at: str = Field(description="When the release was written (UTC).")
    message: str = Field(description="Release message (-m).")
    content_sha256: str = Field(
        description="sha256 over every file's path and sha256 (in path order), then the canonical JSON of every "
        "other field of this manifest; dataset.json records it too, at release time.")
    files: dict[str, str] = Field(
        description="sha256 of every file in the release folder but manifest.json (the data files and README.md), "
        "by path relative to the release.")
    kb_snapshot: str | None = Field(None, description="KB snapshot id the evidence refers to.")
    guideline_version: str | None = Field(None, description="Content hash of the relevance guidelines in force.")
    scope: ScopeSettings | None = Field(
        None, description="The curate.toml [scope] settings in force at release time (version order, groups, "
        "roles), which evalrun checks the release's runs with; None: none were set (natural version order, "
        "any group).")
    scope_report: ReleaseScope | None = Field(
        None, description="Askers and moments of the items and those scope leaves without usable evidence; None "
        "when no item names an asker or a moment and no chunk of the KB snapshot has a scope.")
    items: int = Field(description="Number of items released.")
    counts: dict[str, dict[str, int]] = Field(
        description="Counts by split, difficulty, qtype, source, status, language and answerable.")
    checks: DatasetChecks = Field(default_factory=DatasetChecks,
                                  description="Check results carried from the dataset, each marked `current` or not.")
    excluded: dict[str, int] = Field(default_factory=dict,
                                     description="Items left out of the release, counted by status.")
    changelog: dict[str, list[str]] = Field(
        default_factory=dict, description="Item ids added, removed and changed since the parent version.")
    skipped_damaged: list[str] = Field(
        default_factory=list, description="Newer versions passed over when this one was written, being damaged or "
        "gone, so `parent_version` is the newest intact release before them (their numbers are never used again).")
    curate_version: str = Field(description="Version of curate that wrote the release.")

    @classmethod
    def upgrade(cls, data: dict) -> dict:
        """Schema 1 kept each check as a free dict with a `clean` flag."""
        return {**data, "checks": upgrade_checks(data.get("checks") or {})}
