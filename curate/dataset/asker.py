"""The asker and the moment of an item (`asker_groups`, `asker_role`, `as_of`): read from a user's record
(`curate import`, `curate add-failures`) or carried on curate's own item records, each checked against
the workspace's `[scope]` settings; and an item's usable evidence with a bad moment named, not raised.

The rules, one place for every reader:

- `asker_groups`: a list of group names (a text is split at `;` and `,`); `[]` is an asker who may see
  only what everyone may; left out, the asker is not known and what they may see is not checked.
- `asker_role`: a role of `[scope.roles]`; it gives the groups. Given with groups, they must be the
  role's own.
- `as_of`: a date (stored as YYYY-MM-DD) or a KB version label (one of `[scope] versions` when those
  are declared); left out, the latest.
- A group not among `[scope] groups` (when declared), an unknown role, a date that is not one, an
  empty text: refused, naming the field.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date

from curate.errors import InputError
from curate.fileio import JSONValueError
from curate.formats.raw import csv_list
from curate.records import Chunk, EvalItem, ScopeSettings
from curate.scope import MomentError, ScopeIndex, UsableView, parse_moment, usable_view, version_order

ASKER_FIELDS = ("asker_groups", "asker_role", "as_of")
_SEPARATORS = re.compile(r"[;,，；]")


class AskerError(ValueError):
    """A bad asker or moment: the canonical field (with a list index, `asker_groups[1]`) and why."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field, self.message = field, message


@dataclass(frozen=True)
class Asker:
    """Who asks and when, as an item stores it."""

    groups: list[str] | None = None
    role: str | None = None
    as_of: str | None = None

    def given(self) -> bool:
        """Return whether anything of the asker or the moment is set."""
        return self.groups is not None or self.role is not None or self.as_of is not None


def _groups(value, *, empty_is_absent: bool) -> list[str] | None:
    """Return the group names a raw value gives (None: not given)."""
    if value is None:
        return None
    if isinstance(value, str):
        if not value.strip():
            if empty_is_absent:
                return None
            raise AskerError("asker_groups", "empty: leave asker_groups out when the asker is not known, or give [] "
                                             "for one who may see only what everyone may")
        if value.strip().startswith("["):   # a JSON array, as list cells of CSV files may be
            try:
                value = csv_list(value, split=False)
            except JSONValueError as exc:
                raise AskerError("asker_groups", exc.message) from None
        else:
            return list(dict.fromkeys(p.strip() for p in _SEPARATORS.split(value) if p.strip()))
    if not isinstance(value, list):
        raise AskerError("asker_groups", f"must be a list of group names, got {type(value).__name__}")
    names = []
    for n, name in enumerate(value):
        if isinstance(name, int) and not isinstance(name, bool):
            name = str(name)
        if not isinstance(name, str):
            raise AskerError(f"asker_groups[{n}]", f"must be a group name, got {type(name).__name__}")
        if not name.strip():
            raise AskerError(f"asker_groups[{n}]", "an empty group name")
        names.append(name.strip())
    return list(dict.fromkeys(names))


def _text(value, field: str, *, empty_is_absent: bool) -> str | None:
    """Return a role or moment as text (None: not given); a whole number is read as text (as_of 2026)."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise AskerError(field, f"must be text, got {type(value).__name__}")
    if not value.strip():
        if empty_is_absent:
            return None
        raise AskerError(field, f"empty: leave {field} out" + (" for the latest" if field == "as_of" else ""))
    return value.strip()


def _named(what: str, value, show: bool) -> str:
    """Return `what` followed by the value quoted, or `what` alone when values are not shown."""
    return f"{what} {value!r}" if show else what


def check_moment(text: str, settings: ScopeSettings, show_values: bool = True) -> str:
    """Return a moment as an item stores it: a date as YYYY-MM-DD, a version label as written (one of
    `[scope] versions` when those are declared); `show_values` False keeps the text out of the error.

    >>> check_moment("2026年3月1日", ScopeSettings()), check_moment("v3", ScopeSettings())
    ('2026-03-01', 'v3')
    """
    try:
        moment = parse_moment(text)
    except MomentError as exc:
        said = exc if show_values else "looks like a date and is not one"
        raise AskerError("as_of", f"{said} (as_of is a date, YYYY-MM-DD, or a KB version label)") from None
    if isinstance(moment, date):
        return moment.isoformat()
    if settings.versions and moment not in settings.versions:
        raise AskerError("as_of", f"{_named('version', moment, show_values)} is not among the versions of "
                                  f"curate.toml [scope] ({', '.join(settings.versions)})")
    return moment


def asker_of(groups, role, as_of, settings: ScopeSettings, *, empty_is_absent: bool = False,
             show_values: bool = True) -> Asker:
    """Return the asker and moment three raw values give, checked against `settings`; raise AskerError
    naming the field. `empty_is_absent`: an empty text means "not given" (a CSV cell), not a mistake;
    `show_values` False keeps the values out of the errors (a production log's may be personal data).

    >>> settings = ScopeSettings(groups=["hr", "manager", "staff"], roles={"manager": ["manager", "staff"]})
    >>> asker_of("hr;manager", None, "2026-03-01", settings)
    Asker(groups=['hr', 'manager'], role=None, as_of='2026-03-01')
    >>> asker_of(None, "manager", None, settings).groups
    ['manager', 'staff']
    """
    names = _groups(groups, empty_is_absent=empty_is_absent)
    role = _text(role, "asker_role", empty_is_absent=empty_is_absent)
    moment = _text(as_of, "as_of", empty_is_absent=empty_is_absent)
    if role is not None:
        if role not in settings.roles:
            known = ", ".join(sorted(settings.roles))
            raise AskerError("asker_role", f"{_named('unknown role', role, show_values)} " + (
                f"(roles of curate.toml [scope.roles]: {known})" if known else "(curate.toml defines no [scope.roles])"))
        own = settings.roles[role]
        if names is None:
            names = list(own)
        elif set(names) != set(own):
            given = f"{', '.join(names) or '[]'} are " if show_values else ""
            raise AskerError("asker_groups", f"{given}not the groups of role {role!r} ({', '.join(own) or '[]'}): "
                                             f"give the role or the groups")
    unknown = settings.unknown_groups(names)
    if unknown:
        raise AskerError("asker_groups", f"{_named('undeclared group', unknown[0], show_values)} (groups of "
                                         f"curate.toml [scope]: {', '.join(settings.groups or [])})")
    return Asker(names, role, None if moment is None else check_moment(moment, settings, show_values))


def read_asker(fields: dict, settings: ScopeSettings, label: Callable[[str], str], *, file: str, line: int,
               empty_is_absent: bool = False, show_values: bool = True) -> Asker:
    """Return the asker and moment of a record's canonical `fields`; a bad one is an InputError naming
    the file, the line and the field as the record called it (`label`), and the value unless not
    `show_values`."""
    try:
        return asker_of(fields.get("asker_groups"), fields.get("asker_role"), fields.get("as_of"), settings,
                        empty_is_absent=empty_is_absent, show_values=show_values)
    except AskerError as exc:
        name, bracket, rest = exc.field.partition("[")
        raise InputError(exc.message, file=file, line=line, field=label(name) + bracket + rest) from None


def checked_item(item: EvalItem, settings: ScopeSettings, *, file: str | None = None,
                 line: int | None = None) -> EvalItem:
    """Return `item` with its asker and moment checked against `settings` (a date moment written as
    YYYY-MM-DD); raise InputError naming the field."""
    if not names_scope(item):
        return item
    try:
        asker = asker_of(item.asker_groups, item.asker_role, item.as_of, settings)
    except AskerError as exc:
        raise InputError(exc.message, file=file, line=line, field=exc.field) from None
    if (asker.groups, asker.role, asker.as_of) != (item.asker_groups, item.asker_role, item.as_of):
        item = item.model_copy(update={"asker_groups": asker.groups, "as_of": asker.as_of})
    return item


def names_scope(item: EvalItem) -> bool:
    """Return whether an item names an asker or a moment."""
    return item.asker_groups is not None or item.asker_role is not None or item.as_of is not None


def asker_label(item: EvalItem) -> str:
    """Return who asks, as reports count items: `role:NAME`, `groups:A,B`, `groups:[]` or `no asker`.

    >>> asker_label(EvalItem(id="q", question="?", language="en", source="human", asker_groups=["staff", "hr"]))
    'groups:hr,staff'
    """
    if item.asker_role is not None:
        return f"role:{item.asker_role}"
    if item.asker_groups is None:
        return "no asker"
    return "groups:" + (",".join(sorted(item.asker_groups)) or "[]")


def scope_key(item: EvalItem) -> tuple:
    """Return what makes two askings of one question different samples: the asker's groups and the moment."""
    return (None if item.asker_groups is None else tuple(sorted(set(item.asker_groups))), item.as_of)


def scope_index(chunks: Iterable[Chunk], settings: ScopeSettings, snapshot_id: str | None = None) -> ScopeIndex:
    """Return the scope of a snapshot's chunks under the settings' version order; a chunk version the
    settings do not declare is an InputError naming curate.toml's [scope] versions."""
    chunks = list(chunks)
    if not any(c.scope is not None for c in chunks):
        chunks = []   # nothing scoped: an empty index answers the same, without a pass over every chunk
    try:
        return ScopeIndex(chunks, version_order(settings))
    except MomentError as exc:
        where = f"KB snapshot {snapshot_id}: " if snapshot_id else ""
        raise InputError(f"{where}{exc}: add it to [scope] versions, or re-ingest the KB", file="curate.toml",
                         field="scope.versions") from None


def view(item: EvalItem, index: ScopeIndex) -> UsableView:
    """Return `usable_view` of an item; a moment the settings cannot place (a version declared since
    the item was imported is not among them) is an InputError naming the item."""
    try:
        return usable_view(item, index)
    except MomentError as exc:
        raise InputError(f"item {item.id}: {exc}", field="as_of") from None


def checked_defaults(asker: dict[str, object] | None, settings: ScopeSettings) -> dict[str, object]:
    """Return the default asker and moment given for the records that name none (`--asker-role`,
    `--asker-groups`, `--as-of`: keys asker_role, asker_groups, as_of; unset ones left out), checked once
    against the settings: a bad one is an InputError naming its option."""
    given = {key: value for key, value in (asker or {}).items() if value is not None}
    if not given:
        return {}
    unknown = sorted(set(given) - set(ASKER_FIELDS))
    if unknown:
        raise InputError(f"unknown default {unknown[0]!r} (known: {', '.join(ASKER_FIELDS)})", field=unknown[0])
    try:
        asker_of(given.get("asker_groups"), given.get("asker_role"), given.get("as_of"), settings)
    except AskerError as exc:   # named as the option it came from: field '--asker-role'
        raise InputError(exc.message, field="--" + exc.field.split("[")[0].replace("_", "-")) from None
    return given


def with_defaults(fields: dict, defaults: dict[str, object]) -> None:
    """Give a record's fields the default asker (asker_groups or asker_role) when it names none, and the
    default moment when it gives none; what the record says wins (in place)."""
    if not defaults:
        return
    if all(fields.get(key) in (None, "") for key in ("asker_groups", "asker_role")):
        fields.update({key: defaults[key] for key in ("asker_groups", "asker_role") if key in defaults})
    if fields.get("as_of") in (None, "") and "as_of" in defaults:
        fields["as_of"] = defaults["as_of"]