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


def read_scope_settings(workspace) -> ScopeSettings:
    """Return the `[scope]` settings of a workspace's curate.toml (defaults when there is none); a value
    that does not fit is an InputError naming curate.toml, its line and the dotted key."""
    table = workspace.config().get("scope", {})
    if not isinstance(table, dict):
        raise workspace.setting_error("must be a table, [scope]", "scope")
    unknown = sorted(set(table) - set(ScopeSettings.model_fields))
    if unknown:
        raise workspace.setting_error(f"unknown setting (known: {', '.join(ScopeSettings.model_fields)})",
                                      "scope", unknown[0])
    for key in ("versions", "groups"):
        value = table.get(key)
        if value is not None and not _names(value):
            raise workspace.setting_error("must be a list of non-empty names, e.g. [\"2025\", \"2026\"]", "scope", key)
    if len(set(table.get("versions", []))) != len(table.get("versions", [])):
        raise workspace.setting_error("names a version twice", "scope", "versions")
    field = table.get("version_field", "version")
    if not isinstance(field, str) or not field.strip():
        raise workspace.setting_error("must be a metadata field name", "scope", "version_field")
    roles = table.get("roles", {})
    if not isinstance(roles, dict):
        raise workspace.setting_error("must be a table of role = [groups]", "scope", "roles")
    for role, groups in roles.items():
        if not isinstance(groups, list) or not all(isinstance(g, str) and g.strip() for g in groups):
            raise workspace.setting_error("must be a list of group names ([] : only what everyone may see)",
                                          "scope", "roles", role)
    settings_groups = table.get("groups")
    rules = table.get("rules", [])
    if not isinstance(rules, list) or not all(isinstance(r, dict) for r in rules):
        raise workspace.setting_error("must be an array of tables, [[scope.rules]] with path and groups", "scope", "rules")
    for rule in rules:
        if not isinstance(rule.get("path"), str) or not rule["path"].strip():
            raise workspace.setting_error("each rule needs a path glob, e.g. path = \"hr/**\"", "scope", "rules")
        if set(rule) - {"path", "groups", "version"}:
            raise workspace.setting_error(f"unknown rule setting {sorted(set(rule) - {'path', 'groups', 'version'})[0]!r} "
                                          "(known: path, groups, version)", "scope", "rules")
        if "groups" in rule and not _names(rule["groups"]):
            raise workspace.setting_error("must be a non-empty list of group names (leave it out for everyone)",
                                          "scope", "rules")
        if "version" in rule and (not isinstance(rule["version"], str) or not rule["version"].strip()):
            raise workspace.setting_error("must be a version label", "scope", "rules")
    settings = ScopeSettings(versions=table.get("versions", []), groups=settings_groups, version_field=field.strip(),
                             roles={role: list(groups) for role, groups in roles.items()},
                             rules=[ScopeRule(**rule) for rule in rules])
    for role, groups in settings.roles.items():
        if settings.unknown_groups(groups):
            raise workspace.setting_error(f"names an undeclared group {settings.unknown_groups(groups)[0]!r} "
                                          f"([scope] groups: {', '.join(settings.groups or [])})", "scope", "roles", role)
    for rule in settings.rules:
        if settings.unknown_groups(rule.groups):
            raise workspace.setting_error(f"names an undeclared group {settings.unknown_groups(rule.groups)[0]!r}",
                                          "scope", "rules")
        if rule.version is not None and settings.versions and rule.version not in settings.versions:
            raise workspace.setting_error(f"names an undeclared version {rule.version!r}", "scope", "rules")
    return settings


def _names(value) -> bool:
    """Return whether `value` is a non-empty list of non-empty strings."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) and v.strip() for v in value)
