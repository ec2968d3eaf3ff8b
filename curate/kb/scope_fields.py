"""Scope as teams keep it: the `groups`, `version`, `valid_from`, `valid_to` and `supersedes` of a document
or chunk, read from its metadata, its top-level fields or its Markdown front matter, and from the path
rules of curate.toml `[scope]`, each value checked where it is written.

A field is taken, field by field, from the chunk's own metadata, else its document's (metadata or front
matter), else the first `[[scope.rules]]` whose glob matches the doc_id. The keys read into `scope` leave
`metadata`: each fact has one place. The version label is read from `[scope] version_field` (`version`
unless set: `year` when a team keeps it there). A few names that can mean nothing else are read too
(`SCOPE_ALIASES`); a mapping ({"acl": "groups"}, the CLI's `--map acl=groups`) reads a team's own names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from curate.errors import InputError
from curate.records.scope import Scope, ScopeSettings
from curate.scope.moment import MomentError, parse_date

SCOPE_FIELDS = ("groups", "version", "valid_from", "valid_to", "supersedes")
# Names read as scope fields without a --map: only those that cannot mean something else. Left out on
# purpose: acl (often users or permissions, not groups), tenant, roles, visibility, year (a publication
# year is no version), effective_date and expires (a start or an end? inclusive or not?).
SCOPE_ALIASES: dict[str, tuple[str, ...]] = {
    "groups": ("access_groups", "allowed_groups"),
    "version": ("kb_version",),
    "valid_from": ("effective_from",),
    "valid_to": ("valid_until", "effective_to", "effective_until"),
    "supersedes": ("replaces",),
}
# ASCII and full-width commas, and the Chinese enumeration comma: "人事部、财务部" is two groups
_SEPARATORS = re.compile(r"[,，、]")


def scope_mapping(mapping: Mapping[str, str] | None) -> dict[str, str]:
    """Return {a team's field name: scope field} with every target a scope field (an alias names its
    field); a target that is none is an InputError on `map`.

    >>> scope_mapping({"acl": "groups", "effective_date": "effective_from"})
    {'acl': 'groups', 'effective_date': 'valid_from'}
    """
    known = {name: field for field, aliases in SCOPE_ALIASES.items() for name in (field, *aliases)}
    for old, new in (mapping or {}).items():
        if new not in known:
            raise InputError(f"{old}={new}: '{new}' is not a scope field ({', '.join(SCOPE_FIELDS)})", field="map")
    return {old: known[new] for old, new in (mapping or {}).items()}


@dataclass(frozen=True)
class Given:
    """One scope field as a record gives it, checked: where it came from, for errors."""

    value: object
    label: str
    """The field as the user's file names it: `groups`, `metadata.acl`, `valid_to`."""
    line: int | None


Layer = dict[str, Given]
"""The scope fields one source gives (a chunk's, a document's, a path rule's)."""


class ScopeReader:
    """Reads and checks the scope fields of records under one workspace's `[scope]` settings and `--map`."""

    def __init__(self, settings: ScopeSettings | None = None, mapping: Mapping[str, str] | None = None):
        self.settings = settings or ScopeSettings()
        names = {name: name for name in SCOPE_FIELDS if name != "version"}
        names[self.settings.version_field] = "version"
        for field, aliases in SCOPE_ALIASES.items():
            for alias in aliases:
                names.setdefault(alias, field)
        names.update(scope_mapping(mapping))
        self.names = names
        """{name a record may use: the scope field it gives}."""

    def take(self, values: Mapping[str, object], *, file: str, line: int | None, prefix: str = "",
             lines: Mapping[str, int] | None = None, skip: Iterable[str] = ()) -> tuple[Layer, dict]:
        """Return the scope fields `values` gives, checked, and the other keys (the metadata left).

        `prefix` names where the keys sit (`metadata.`); `lines` gives a line per key (front matter);
        `skip` are the record's own fields (doc_id, text ...). A null value is absent; two names of one
        field with different values are an error."""
        if values.keys().isdisjoint(self.names):   # the common case, an unscoped record: nothing to read
            return {}, dict(values)
        layer: Layer = {}
        rest = {}
        for key, value in values.items():
            field = self.names.get(key) if key not in skip else None
            if field is None:
                rest[key] = value
                continue
            if value is None:
                continue
            at = lines.get(key, line) if lines is not None else line
            label = prefix + key
            given = Given(self._checked(field, value, label, file, at), label, at)
            if field in layer and layer[field].value != given.value:
                raise InputError(f"'{layer[field].label}' and '{label}' both give {field}, differently "
                                 f"({_show(layer[field].value)} / {_show(given.value)})",
                                 file=file, line=at, field=label)
            layer.setdefault(field, given)
        return layer, rest

    def joined(self, top: Layer, metadata: Layer, *, file: str, line: int | None) -> Layer:
        """Return the fields a record gives at its top level and in its metadata; one field given in
        both, differently, is an error naming it."""
        for field, given in top.items():
            other = metadata.get(field)
            if other is not None and other.value != given.value:
                raise InputError(f"given at the top level ({_show(given.value)}) and in metadata "
                                 f"({_show(other.value)}) differently: keep one", file=file, line=line, field=field)
        return {**metadata, **top}

    def rule_layer(self, doc_id: str) -> Layer:
        """Return the groups and version of the first `[[scope.rules]]` whose glob matches `doc_id`."""
        if not self.settings.rules:
            return {}
        rule = self.settings.rule_for(doc_id)
        if rule is None:
            return {}
        label = f"[[scope.rules]] path = {rule.path!r}"
        layer = {}
        if rule.groups is not None:
            layer["groups"] = Given(list(rule.groups), label, None)
        if rule.version is not None:
            layer["version"] = Given(rule.version, label, None)
        return layer

    def scope(self, *layers: Layer, file: str, line: int | None) -> Scope | None:
        """Return the scope the layers give, the first layer's fields over the next's (None when it
        restricts nothing); a `valid_to` before the `valid_from` is an error naming `valid_to`."""
        merged: Layer = {}
        for layer in layers:
            for field, given in layer.items():
                merged.setdefault(field, given)
        if not merged:
            return None
        start, end = merged.get("valid_from"), merged.get("valid_to")
        if start is not None and end is not None and end.value < start.value:
            raise InputError(f"{end.value} is before valid_from {start.value}", file=file,
                             line=end.line if end.line is not None else line, field=end.label)
        scope = Scope(**{field: given.value for field, given in merged.items()})
        return None if scope.is_empty() else scope

    # -- one value each ---------------------------------------------------------------------------------

    def _checked(self, field: str, value: object, label: str, file: str, line: int | None) -> object:
        """Return a scope field's value in the form `Scope` holds, or raise an InputError naming it."""
        def bad(message: str) -> InputError:
            read_as = f" (read as {field})" if label.rpartition(".")[2] != field else ""
            return InputError(message + read_as, file=file, line=line, field=label)
        if field == "groups":
            return self._groups(value, bad)
        if field == "version":
            return self._version(value, bad)
        if field in ("valid_from", "valid_to"):
            return _date(value, bad)
        return _supersedes(value, bad)

    def _groups(self, value: object, bad) -> list[str]:
        if isinstance(value, str):
            names = [part.strip() for part in _SEPARATORS.split(value)]
        elif isinstance(value, list):
            if not all(_name_like(v) for v in value):
                raise bad("must be a list of group names")
            names = [str(v).strip() for v in value]
        elif _name_like(value):
            names = [str(value)]
        else:
            raise bad(f"must be a list of group names (or names separated by commas), got {_show(value)}")
        if not names or names == [""]:
            raise bad("an empty list of groups says neither who may see it nor that everyone may: leave the field "
                      "out for everyone")
        if "" in names:
            raise bad(f"holds an empty group name ({_show(value)})")
        names = list(dict.fromkeys(names))
        unknown = self.settings.unknown_groups(names)
        if unknown:
            raise bad(f"group {unknown[0]!r} is not declared in curate.toml [scope] groups "
                      f"({', '.join(self.settings.groups or [])})")
        return names

    def _version(self, value: object, bad) -> str:
        if isinstance(value, float):
            raise bad(f"a version label is text: write it in quotes (as a number, {value!r} may not be what "
                      "was written: 3.10 reads 3.1)")
        if not _name_like(value) or not str(value).strip():
            raise bad(f"must be a version label, got {_show(value)}")
        label = str(value).strip()
        if self.settings.versions and label not in self.settings.versions:
            raise bad(f"version {label!r} is not among curate.toml [scope] versions "
                      f"({', '.join(self.settings.versions)})")
        return label


def _date(value: object, bad) -> str:
    """Return a validity date as YYYY-MM-DD."""
    if not isinstance(value, str):
        raise bad(f"must be a date, YYYY-MM-DD, got {_show(value)}")
    try:
        return parse_date(value).isoformat()
    except MomentError as exc:
        raise bad(str(exc)) from None


def _supersedes(value: object, bad) -> list[str]:
    """Return the ids a document or chunk replaces: a list of ids, or one id."""
    if isinstance(value, str) and value.strip():
        return [value.strip()]
    if isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value):
        return list(dict.fromkeys(v.strip() for v in value))
    raise bad(f"must be a list of document or chunk ids, got {_show(value)}")


def _name_like(value: object) -> bool:
    """Return whether a value can be a name: text, or a whole number (a tenant id, a year)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _show(value: object) -> str:
    """Return a value as the user wrote it, short."""
    text = repr(value) if not isinstance(value, str) else f"'{value}'"
    return text if len(text) <= 60 else text[:59] + "…"


# -- how two scopes differ (copies never join chunks whose scopes differ) ---------------------------------

def scope_key(scope: Scope | None) -> tuple | None:
    """Return what decides whether two chunks' scopes are one (None: everyone, always); the order of
    groups and supersedes does not matter."""
    if scope is None or scope.is_empty():
        return None
    return (None if scope.groups is None else frozenset(scope.groups), scope.version, scope.valid_from,
            scope.valid_to, frozenset(scope.supersedes))


def scope_difference(a: Scope | None, b: Scope | None) -> str | None:
    """Return how two scopes differ, in a few words, or None when they are one.

    >>> scope_difference(Scope(groups=["hr"]), None)
    'groups hr ≠ everyone'
    >>> scope_difference(Scope(version="2025", valid_to="2025-12-31"), Scope(version="2026", valid_from="2026-01-01"))
    'version 2025 ≠ 2026; valid to 2025-12-31 ≠ from 2026-01-01'
    """
    if scope_key(a) == scope_key(b):
        return None
    a, b = a or Scope(), b or Scope()
    found = []
    if (None if a.groups is None else set(a.groups)) != (None if b.groups is None else set(b.groups)):
        found.append(f"groups {_groups_text(a)} ≠ {_groups_text(b)}")
    if a.version != b.version:
        found.append(f"version {a.version or 'none'} ≠ {b.version or 'none'}")
    if (a.valid_from, a.valid_to) != (b.valid_from, b.valid_to):
        found.append(f"valid {validity_text(a)} ≠ {validity_text(b)}")
    if set(a.supersedes) != set(b.supersedes):
        found.append(f"supersedes {', '.join(a.supersedes) or 'nothing'} ≠ {', '.join(b.supersedes) or 'nothing'}")
    return "; ".join(found)


def _groups_text(scope: Scope) -> str:
    return "everyone" if scope.groups is None else ", ".join(scope.groups)


def validity_text(scope: Scope) -> str:
    """Return a scope's validity dates in words: 'from 2026-01-01 to 2026-12-31', 'always'."""
    parts = [f"from {scope.valid_from}"] if scope.valid_from else []
    parts += [f"to {scope.valid_to}"] if scope.valid_to else []
    return " ".join(parts) or "always"
