"""Whether a chunk is usable for an asker at a moment: the one rule curate and evalrun both apply.

A chunk is usable when the asker may see it (it has no groups, or shares one with the asker) and it
holds at the moment: its validity dates include a date moment, its version is not later than a
version moment, and nothing that replaces it (`supersedes` naming its document or itself) is in effect
then. With no moment (`as_of` left out) the moment is the latest: anything replaced is stale and
validity dates are not checked. A moment and a validity of different kinds (a date against a chunk
that has only a version label) cannot be compared; the chunk then counts as holding, and
`ScopeIndex.undecided` says how often that happened.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Literal

from curate.records.kb import Chunk, Scope
from curate.scope.moment import Moment, VersionOrder, parse_date, parse_moment

Reason = Literal["forbidden", "superseded", "not_yet_valid", "expired", "later_version"]
REASONS: tuple[Reason, ...] = ("forbidden", "superseded", "not_yet_valid", "expired", "later_version")
STALE_REASONS: frozenset[str] = frozenset({"superseded", "not_yet_valid", "expired", "later_version"})
"""Reasons a chunk does not hold at the moment (the others: the asker may not see it)."""


@dataclass(frozen=True)
class _Validity:
    """A chunk's validity, parsed once."""

    version: tuple | None
    valid_from: date | None
    valid_to: date | None


@dataclass(frozen=True)
class _Entry:
    groups: frozenset[str] | None
    validity: _Validity
    replaced_by: tuple[_Validity, ...]


_OPEN = _Entry(None, _Validity(None, None, None), ())


class ScopeIndex:
    """The scope of every chunk of a snapshot, for answering "usable for this asker at this moment?".

    >>> from curate.records import Chunk, Scope
    >>> def chunk(cid, doc, **scope):
    ...     return Chunk(chunk_id=cid, doc_id=doc, text="t", text_sha256="0", scope=Scope(**scope) if scope else None)
    >>> index = ScopeIndex([chunk("old", "p25", version="2025"), chunk("new", "p26", version="2026", supersedes=["p25"]),
    ...                     chunk("pay", "bands", groups=["hr"]), chunk("faq", "faq")])
    >>> index.reasons("pay", ["staff"], None), index.reasons("pay", ["hr"], None), index.reasons("faq", [], None)
    (['forbidden'], [], [])
    >>> index.reasons("old", None, "2025"), index.reasons("old", None, "2026"), index.reasons("new", None, "2025")
    ([], ['superseded'], ['later_version'])
    """

    def __init__(self, chunks: Iterable[Chunk], order: VersionOrder | None = None):
        self.order = order or VersionOrder(())
        self.undecided = 0
        """How many checks met a moment and a validity of different kinds (counted as holding)."""
        rows = [(c.chunk_id, c.doc_id, c.scope if c.scope is not None and not c.scope.is_empty() else None)
                for c in chunks]
        validity = {chunk_id: self._validity(scope) for chunk_id, _, scope in rows if scope is not None}
        replacing: dict[str, list[_Validity]] = {}
        for chunk_id, _, scope in rows:
            for target in scope.supersedes if scope is not None else ():
                if validity[chunk_id] not in replacing.setdefault(target, []):
                    replacing[target].append(validity[chunk_id])
        self._entries: dict[str, _Entry] = {}
        for chunk_id, doc_id, scope in rows:
            by = tuple(dict.fromkeys(replacing.get(doc_id, []) + replacing.get(chunk_id, [])))
            if scope is not None or by:
                groups = None if scope is None or scope.groups is None else frozenset(scope.groups)
                self._entries[chunk_id] = _Entry(groups, validity.get(chunk_id, _OPEN.validity), by)
        known = {chunk_id for chunk_id, _, _ in rows} | {doc_id for _, doc_id, _ in rows}
        self.unknown_superseded = sorted(set(replacing) - known)
        """Ids named in `supersedes` that are neither a document nor a chunk of the snapshot."""
        self._holds: dict[Moment | None, dict[str, tuple[Reason | None, int]]] = {}
        # for `check`: the chunks some group restricts, who may see each, and those a moment can make stale
        self._restricted = frozenset(c for c, e in self._entries.items() if e.groups is not None)
        self._visible_to: dict[str, set[str]] = {}
        for chunk_id, entry in self._entries.items():
            for group in entry.groups or ():
                self._visible_to.setdefault(group, set()).add(chunk_id)
        self._timed = frozenset(c for c, e in self._entries.items() if e.validity != _OPEN.validity or e.replaced_by)
        self._forbidden_to: dict[frozenset[str], frozenset[str]] = {}

    def _validity(self, scope: Scope) -> _Validity:
        return _Validity(None if scope.version is None else self.order.key(scope.version),
                         None if scope.valid_from is None else parse_date(scope.valid_from),
                         None if scope.valid_to is None else parse_date(scope.valid_to))

    @property
    def scoped(self) -> bool:
        """Return whether any chunk of the snapshot has a scope (else every chunk is usable by anyone)."""
        return bool(self._entries)

    def any_scoped(self, chunk_ids: Iterable[str]) -> bool:
        """Return whether any of the chunks has a scope (or is replaced): else each is usable by anyone, always."""
        return not self._entries.keys().isdisjoint(chunk_ids)

    def may_see(self, chunk_id: str, asker_groups: Sequence[str] | None) -> bool:
        """Return whether the asker may see the chunk (an unknown asker, None, is not checked)."""
        groups = self._entries.get(chunk_id, _OPEN).groups
        return groups is None or asker_groups is None or not groups.isdisjoint(asker_groups)

    def usable(self, chunk_id: str, asker_groups: Sequence[str] | None, as_of: str | date | None = None) -> bool:
        """Return whether the asker may be given the chunk at `as_of` (a date, its text, a version label;
        None: the latest): what a RAG system filters its retrieval by, given an item's `asker_groups` and
        `as_of` as evalrun passes them. An unknown asker (None) is not checked.

        >>> from curate.records import Chunk, Scope
        >>> index = ScopeIndex([Chunk(chunk_id="pay", doc_id="pay", text="t", text_sha256="0", scope=Scope(groups=["hr"])),
        ...                     Chunk(chunk_id="p25", doc_id="p25", text="t", text_sha256="0", scope=Scope(
        ...                           valid_from="2025-01-01", valid_to="2025-12-31"))])
        >>> index.usable("pay", ["staff"]), index.usable("pay", ["hr"]), index.usable("p25", [], "2026-03-01")
        (False, True, False)
        """
        moment = parse_moment(as_of) if isinstance(as_of, str) else as_of
        return not self.reasons(chunk_id, asker_groups, moment)

    def reasons(self, chunk_id: str, asker_groups: Sequence[str] | None, moment: Moment | None) -> list[Reason]:
        """Return why the chunk is not usable for the asker at the moment (empty: it is usable)."""
        entry = self._entries.get(chunk_id, _OPEN)
        if entry is _OPEN:
            return []
        found: list[Reason] = []
        if entry.groups is not None and asker_groups is not None and entry.groups.isdisjoint(asker_groups):
            found.append("forbidden")
        stale = self._stale(chunk_id, entry, moment)[0]
        if stale:
            found.append(stale)
        return found

    def check(self, chunk_ids: Iterable[str], asker_groups: Sequence[str] | None,
              moment: Moment | None) -> tuple[list[str], list[str]]:
        """Return the chunks of `chunk_ids` the asker may not see (leaked) and those that do not hold at the
        moment (stale), each once, in order: `reasons` over a layer of a trace, in set operations (a run
        checks tens of candidates of thousands of items against a few askers and moments)."""
        ids = chunk_ids if isinstance(chunk_ids, (list, tuple)) else list(chunk_ids)
        forbidden = self._forbidden(asker_groups)
        # isdisjoint first: most layers hold no chunk the rule says anything of, and it asks in C
        leaked = list(dict.fromkeys([c for c in ids if c in forbidden])) if not forbidden.isdisjoint(ids) else []
        stale = []
        timed = dict.fromkeys([c for c in ids if c in self._timed]) if not self._timed.isdisjoint(ids) else ()
        if timed:
            holds = self._holds_at(moment)
            for chunk_id in timed:
                known = holds.get(chunk_id)
                if known is None:
                    known = self._stale(chunk_id, self._entries[chunk_id], moment, holds)
                else:
                    self.undecided += known[1]
                if known[0]:
                    stale.append(chunk_id)
        return leaked, stale

    def _forbidden(self, asker_groups: Sequence[str] | None) -> frozenset[str]:
        """Return the chunks an asker may not see (none for an unknown asker), remembered for a few hundred
        askers (a run's askers are mostly a handful of roles)."""
        if asker_groups is None or not self._restricted:
            return frozenset()
        asker = frozenset(asker_groups)
        found = self._forbidden_to.get(asker)
        if found is None:
            found = self._restricted.difference(*(self._visible_to.get(g, ()) for g in asker))
            if len(self._forbidden_to) < 256:
                self._forbidden_to[asker] = found
        return found

    def _holds_at(self, moment: Moment | None) -> dict[str, tuple[Reason | None, int]]:
        """Return what is remembered of the chunks at one moment: chunk id -> (why it does not hold, or None;
        the checks that met the other kind of validity)."""
        holds = self._holds.get(moment)
        if holds is None:
            holds = self._holds[moment] = {}
        return holds

    def _stale(self, chunk_id: str, entry: _Entry, moment: Moment | None,
               holds: dict[str, tuple[Reason | None, int]] | None = None) -> tuple[Reason | None, int]:
        """Return why the chunk does not hold at the moment (its own validity first, then what replaces it;
        None when it holds) and how many checks met the other kind of validity. Remembered per moment: a
        run asks the same few moments of the same chunks thousands of times."""
        holds = self._holds_at(moment) if holds is None else holds
        known = holds.get(chunk_id)
        if known is not None:
            self.undecided += known[1]   # a remembered check that could not be decided counts again
            return known
        before = self.undecided
        why = self._outside(entry.validity, moment)
        if why is None and any(self._outside(by, moment) is None for by in entry.replaced_by):
            why = "superseded"
        known = holds[chunk_id] = (why, self.undecided - before)
        return known

    def _outside(self, validity: _Validity, moment: Moment | None) -> Reason | None:
        """Return why a validity does not hold at a moment, or None when it holds (or cannot be told)."""
        if moment is None:
            return None
        if isinstance(moment, date):
            if validity.valid_from is None and validity.valid_to is None:
                if validity.version is not None:
                    self.undecided += 1
                return None
            if validity.valid_from is not None and moment < validity.valid_from:
                return "not_yet_valid"
            if validity.valid_to is not None and moment > validity.valid_to:
                return "expired"
            return None
        if validity.version is None:
            if validity.valid_from is not None or validity.valid_to is not None:
                self.undecided += 1
            return None
        return "later_version" if validity.version > self.order.key(moment) else None
