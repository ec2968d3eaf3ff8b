"""Moments and versions: the date or KB version label a question is asked at, and the order of versions.

A moment is a date when it reads as one (2026-03-01, 2026-03-01T09:00:00Z, 2026/3/1, 2026年3月1日);
anything else (`2026`, `v3`, `2026-H1`) is a version label. Something that looks like a date but is not
one (2026-13-01) is refused rather than read as a label.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from datetime import date

_DATE = re.compile(r"^\s*(\d{4})\s*(?:[-/.]|年)\s*(\d{1,2})\s*(?:[-/.]|月)\s*(\d{1,2})\s*日?(?:[T ].*)?\s*$")
_NUMBER = re.compile(r"(\d+)")

Moment = date | str
"""A date, or a KB version label."""


class MomentError(ValueError):
    """A moment or a validity date that looks like a date and is not one."""


def parse_date(text: str) -> date:
    """Return the date `text` writes; anything that is not a whole date raises MomentError.

    >>> parse_date("2026-03-01"), parse_date("2026年3月1日"), parse_date("2026/3/1 09:00")
    (datetime.date(2026, 3, 1), datetime.date(2026, 3, 1), datetime.date(2026, 3, 1))
    """
    match = _DATE.match(str(text))
    if not match:
        raise MomentError(f"{text!r} is not a date (write YYYY-MM-DD)")
    year, month, day = (int(part) for part in match.groups())
    try:
        return date(year, month, day)
    except ValueError as exc:
        raise MomentError(f"{text!r} is not a date: {exc}") from None


@functools.lru_cache(maxsize=4096)   # a run reads the same few moments for thousands of items
def parse_moment(text: str) -> Moment:
    """Return the moment `text` names: a date when it reads as one, else the version label itself.

    >>> parse_moment("2026-03-01"), parse_moment("2026"), parse_moment(" v3 ")
    (datetime.date(2026, 3, 1), '2026', 'v3')
    >>> parse_moment("2026-13-01")
    Traceback (most recent call last):
    curate.scope.moment.MomentError: '2026-13-01' is not a date: month must be in 1..12
    """
    text = str(text).strip()
    if not text:
        raise MomentError("an empty moment (leave as_of out for the latest)")
    if _DATE.match(text):
        return parse_date(text)
    if re.match(r"^\d{4}-\d{1,2}-\d{1,2}\b", text) or re.match(r"^\d{4}-\d{1,2}$", text):
        raise MomentError(f"{text!r} is not a date (write YYYY-MM-DD) nor a version label")
    return text


class VersionOrder:
    """The order of KB version labels: the declared one (curate.toml `[scope] versions`, oldest first)
    or, when none is declared, natural order (numbers compared as numbers: v2 < v10).

    >>> VersionOrder(()).key("v10") > VersionOrder(()).key("v2")
    True
    >>> VersionOrder(["2025", "2026"]).key("2027")
    Traceback (most recent call last):
    curate.scope.moment.MomentError: version '2027' is not among the declared versions (2025, 2026)
    """

    def __init__(self, declared: Sequence[str]):
        self.declared = tuple(declared)
        self._position = {label: i for i, label in enumerate(self.declared)}

    def key(self, label: str) -> tuple:
        """Return a sort key of a version label; an undeclared label when versions are declared raises."""
        if self.declared:
            if label not in self._position:
                raise MomentError(f"version {label!r} is not among the declared versions ({', '.join(self.declared)})")
            return (self._position[label],)
        return tuple((0, int(part)) if part.isdigit() else (1, part.casefold())
                     for part in _NUMBER.split(label) if part)
