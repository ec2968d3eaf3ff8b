"""Scope records: a chunk's access groups and validity, the `[scope]` settings of curate.toml that
a release records, and evidence that scope makes unusable (the rule itself: curate.scope)."""

from __future__ import annotations

import fnmatch
import hashlib

from pydantic import Field

from curate.fileio import dumps_json
from curate.records.base import Record


class Scope(Record):
    """Who may see a chunk or document and when it holds (see ../shared/DESIGN.md, "Scope").

    Read from the metadata keys of the same names (or the `[scope]` rules of curate.toml); absent
    fields mean: everyone may see it, it holds at every moment, it replaces nothing."""

    groups: list[str] | None = Field(
        None, description="Access groups that may see it; None: everyone (an empty list is refused on input).")
    version: str | None = Field(None, description="The KB version label it belongs to (e.g. '2026').")
    valid_from: str | None = Field(None, description="First day it holds, ISO date YYYY-MM-DD.")
    valid_to: str | None = Field(None, description="Last day it holds (inclusive), ISO date YYYY-MM-DD.")
    supersedes: list[str] = Field(
        default_factory=list, description="Document (or chunk) ids it replaces while it is in effect.")

    def is_empty(self) -> bool:
        """Return True when the scope restricts nothing (the same as no scope)."""
        return (self.groups is None and self.version is None and self.valid_from is None
                and self.valid_to is None and not self.supersedes)


class ScopeRule(Record):
    """Groups (and a version) for the documents whose path matches a glob."""

    path: str = Field(description="A glob over the document's path relative to the KB source (`**` any depth).")
    groups: list[str] | None = Field(None, description="Access groups of matching documents.")
    version: str | None = Field(None, description="Version label of matching documents.")

    def matches(self, path: str) -> bool:
        """Return whether a document path (forward slashes) matches the rule's glob.

        >>> ScopeRule(path="hr/**", groups=["hr"]).matches("hr/pay/bands.md"), ScopeRule(path="*.md").matches("a/b.md")
        (True, False)
        """
        pattern = self.path.replace("\\", "/")
        if pattern.endswith("/**"):
            return path.startswith(pattern[:-2]) or fnmatch.fnmatchcase(path, pattern[:-3])
        if "**/" in pattern:
            return fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(path, pattern.replace("**/", ""))
        return fnmatch.fnmatchcase(path, pattern) and path.count("/") == pattern.count("/")


class ScopeSettings(Record):
    """The scope settings of a workspace, recorded in every release so evalrun checks with the same ones."""

    versions: list[str] = Field(default_factory=list, description="Version labels, oldest first; empty: natural order.")
    groups: list[str] | None = Field(None, description="Declared access groups; None: not declared (any is accepted).")
    version_field: str = Field("version", description="Document metadata field the version label is read from.")
    roles: dict[str, list[str]] = Field(default_factory=dict, description="Named roles and the groups each holds.")
    rules: list[ScopeRule] = Field(default_factory=list, description="Path rules, the first match applies.")

    def rule_for(self, path: str | None) -> ScopeRule | None:
        """Return the first rule matching a document path, if any."""
        if path is None:
            return None
        path = path.replace("\\", "/")
        return next((rule for rule in self.rules if rule.matches(path)), None)

    def unknown_groups(self, groups: list[str] | None) -> list[str]:
        """Return the groups of `groups` that are not declared (none when no groups are declared)."""
        if self.groups is None or not groups:
            return []
        return [g for g in groups if g not in self.groups]

    def digest(self) -> str:
        """Return a short hash of what decides usability (versions, groups, roles): two runs checked
        under different settings are not comparable."""
        data = self.model_dump(mode="json", include={"versions", "groups", "roles"})
        return hashlib.sha256(dumps_json(data).encode("utf-8")).hexdigest()[:16]


class UnusableEvidence(Record):
    """Evidence the item's asker may not use at the item's moment, and why."""

    evidence_id: str = Field(description="The evidence's id within its item.")
    reasons: list[str] = Field(description="Why: forbidden, superseded, not_yet_valid, expired, later_version.")
    chunk_ids: list[str] = Field(description="The evidence's chunks (copies included), none of them usable.")
