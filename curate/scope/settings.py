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

from curate.records.scope import ScopeRule, ScopeSettings
from curate.scope.moment import VersionOrder


def version_order(settings: ScopeSettings) -> VersionOrder:
    """Return the order of version labels the settings declare (natural order when none)."""
    return VersionOrder(settings.versions)


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
