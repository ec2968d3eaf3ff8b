"""The `[scope]` table of curate.toml: declared versions and groups, named roles, and rules that give
documents groups and versions by path.

    [scope]
    versions = ["2025", "2026"]          # oldest first; natural order when left out
    groups = ["hr", "manager", "staff"]  # declared groups: an item or document naming another is refused
    version_field = "version"            # the document metadata field the version is read from
    [scope.roles]
    intern = []                          # may see only what everyone may
    manager = ["manager", "staff"]
    [[scope.rules]]                      # the first rule whose glob matches a document's path
    path = "hr/**"
    groups = ["hr", "manager"]
"""

from __future__ import annotations

import fnmatch
import hashlib

from pydantic import Field

from curate.fileio import dumps_json
from curate.records.base import Record
from curate.scope.moment import VersionOrder


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

    def order(self) -> VersionOrder:
        """Return the order of version labels these settings declare."""
        return VersionOrder(self.versions)

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
