"""Scope checks of a run (see ../shared/DESIGN.md, "Scope"): every item scored over the evidence its
asker may use at its moment (`usable_view`), and every layer of its trace checked against scope.

- Usable evidence: retrieval metrics, key-point coverage and the evidence reached count only the
  evidence whose chunks the asker may see and that holds at the item's moment. An answerable item left
  with none is scored as one the system should decline (as unanswerable items are: correct refusal,
  what was retrieved), its reasons recorded, never as a retrieval miss.
- Permission leaks: a chunk of the candidates, the context or the citations (listed, or inline in the
  answer) that the asker may not see. Checked only for items that name an asker; the others are
  counted as unchecked, never as clean. Attributed `permission_leak`.
- Stale chunks: a chunk of those layers that does not hold at the item's moment (superseded, not yet
  valid, expired, a later version). An answer built on them, one that cites a stale chunk or states a
  number, date or code found only in the stale chunks of its context (not in the rest of the context,
  the usable evidence, the accepted answers or the question), is attributed `stale_evidence`, apart
  from and instead of `generation_miss`.

Cheap by construction: one `ScopeIndex` per run, chunks looked up in dicts, and no work at all when the
snapshot has no scope.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

from curate import (
    STALE_REASONS,
    Chunk,
    CurateError,
    EvalItem,
    MomentError,
    ScopeIndex,
    ScopeSettings,
    UsableView,
    moment_of,
    salient,
    usable_view,
    version_order,
)
from evalrun.records import ItemScores, Trace
from evalrun.scope_records import LAYERS, ItemScope, LayerScope, ScopeSummary, TargetScope
from evalrun.scoring.claims import citation_markers, strip_markers
from evalrun.views import not_received_line

FILTERED_BY = ("asker_groups", "as_of")
"""The scope fields a system filters by: the asker's groups and the moment (a role only names groups)."""


@functools.lru_cache(maxsize=1 << 16)   # chunk texts, evidence and questions recur across a run's items
def facts(text: str | None) -> frozenset[str]:
    """Return the numbers, dates and codes a text states (curate's salient tokens that hold a digit).

    >>> sorted(facts("In 2025 the daily allowance is 45 EUR (code TA-7)."))
    ['2025', '45', '7']
    """
    return frozenset(token for token in salient(text or "") if any(ch.isdigit() for ch in token))


def not_received(target: TargetScope | None, items: Sequence[EvalItem]) -> list[str]:
    """Return the scope fields the items set (asker_groups, as_of) that the target is not given; none when
    what the target is given is not recorded (a run started before it was)."""
    if target is None:
        return []
    needed = [key for key in FILTERED_BY if any(getattr(item, key) is not None for item in items)]
    return [key for key in needed if key not in target.receives]


def target_note(target: TargetScope, items: Sequence[EvalItem]) -> str | None:
    """Return the line saying that the target cannot filter by scope, or None when it can (or need not)."""
    return not_received_line(target, not_received(target, items), sum(i.asker_groups is not None for i in items),
                             sum(i.as_of is not None for i in items))


def named_layers(trace: Trace, known: dict[str, str], trec: bool) -> dict[str, list[str] | None]:
    """Return every chunk id each layer of a trace names (LAYERS), in order: its candidates, its context, its
    citations (listed, or inline [id] or 【id】 in the answer); None for a layer it does not report (a TREC
    run's context and citations)."""
    def ids(passages) -> list[str] | None:
        return None if passages is None else [p.chunk_id for p in passages]
    return {"candidates": ids(trace.candidates), "context": None if trec else ids(trace.context),
            "citations": None if trec else ScopeCheck.cited(trace, known)}


class ScopeCheck:
    """The scope rule of one run: an index of its snapshot's chunks under the release's [scope] settings,
    built once; `scoped` False (no chunk has a scope) and every method has nothing to do."""

    def __init__(self, chunks: Sequence[Chunk], settings: ScopeSettings | None, snapshot: str | None = None):
        settings = settings or ScopeSettings()
        facts.cache_clear()   # remembered within one run's scoring, not across runs
        self.digest = settings.digest()
        self.access_groups = any(c.scope is not None and c.scope.groups for c in chunks)
        try:
            self.index = ScopeIndex(chunks, version_order(settings))
        except MomentError as exc:
            raise CurateError(f"KB snapshot {snapshot} does not fit the release's [scope] settings: {exc}") from None
        self.scoped = self.index.scoped
        self._clean: dict[tuple, ItemScope] = {}   # (asker checked, layers unreported) -> the record of a clean item
        self.undecided: list[str] = []
        """Items of which a check met a date moment and a version-only chunk (or the reverse)."""

    def item(self, item: EvalItem, layers: dict[str, list[str] | None]) -> tuple[UsableView, ItemScope] | None:
        """Return the item as its asker may use its evidence at its moment, and its scope checks: what the
        asker may not use, each layer's leaks and stale chunks (`layers`: every chunk id each layer of the
        trace names, `named_layers`; None for a layer the trace does not report: unreported, not clean);
        None when the KB has no scope. A moment that cannot be read is the item's problem: only what the
        asker may see is then applied."""
        if not self.scoped:
            return None
        before = self.index.undecided
        view, problem = self._view(item)
        moment = None if problem else moment_of(item)
        # check_layer's rule once over every chunk the trace names; then each layer keeps its own, in order
        named: list[str] = []
        for ids in layers.values():
            named += ids or ()
        leaked, stale = self.index.check(named, item.asker_groups, moment)
        unreported = tuple(layer for layer in LAYERS if layers[layer] is None)
        if problem:
            stale = []
        checked = item.asker_groups is not None
        if not (leaked or stale or problem or view.unusable):   # most items: one shared record says it
            found = self._clean.get((checked, unreported))
            if found is None:
                found = self._clean[checked, unreported] = ItemScope(asker_checked=checked, unreported=list(unreported))
        else:
            found = ItemScope(asker_checked=checked, declined_because=list(view.declined_because),
                              unusable=list(view.unusable), problem=problem, unreported=list(unreported),
                              leaked=self._per_layer(leaked, layers), stale=self._per_layer(stale, layers))
        if self.index.undecided > before:
            self.undecided.append(item.id)
        return view, found

    @staticmethod
    def _per_layer(flagged: list[str], layers: dict[str, list[str] | None]) -> dict[str, list[str]]:
        """Return {layer: the flagged chunks it holds, each once, in its order}, for the layers holding any."""
        if not flagged:
            return {}
        hit = set(flagged)
        kept = {layer: [c for c in dict.fromkeys(ids) if c in hit] if ids else [] for layer, ids in layers.items()}
        return {layer: ids for layer, ids in kept.items() if ids}

    def _view(self, item: EvalItem) -> tuple[UsableView, str | None]:
        """Return the item's usable view, and why its moment cannot be read (then only access is applied)."""
        try:
            return usable_view(item, self.index), None
        except MomentError as exc:
            problem = f"its moment as_of {item.as_of!r} cannot be read ({exc}): stale chunks not checked"
            return usable_view(item.model_copy(update={"as_of": None}), self.index), problem

    def usable(self, item: EvalItem) -> EvalItem:
        """Return the item with only the evidence its asker may use at its moment (itself when the KB has no
        scope): what a report marks as gold, as scoring counted it."""
        return self._view(item)[0].item if self.scoped else item

    @staticmethod
    def cited(trace: Trace, known: dict[str, str]) -> list[str]:
        """Return every chunk the answer cites: listed in the trace, and inline ([id] or 【id】) in the answer."""
        answer = trace.answer or ""
        inline = [m[2] for m in citation_markers(answer, known)] if ("[" in answer or "【" in answer) else []
        return list(trace.citations) + inline

    def reasons(self, chunk_id: str, item: EvalItem) -> list[str]:
        """Return why a chunk does not hold at the item's moment (its stale reasons), for saying so."""
        counted = self.index.undecided   # asked again to be named, not a check of its own
        found = [r for r in self.index.reasons(chunk_id, item.asker_groups, moment_of(item)) if r in STALE_REASONS]
        self.index.undecided = counted
        return found

    def stale_answer(self, item: EvalItem, usable: EvalItem, trace: Trace, scope: ItemScope,
                     texts: dict[str, str], references: Iterable[str]) -> str | None:
        """Return why the answer is built on stale chunks, or None: it cites a stale chunk, or states a
        number, date or code (`facts`) found only in the stale chunks of its context, in neither the other
        context chunks, the usable evidence, the accepted answers, the key points nor the question."""
        cited = scope.stale.get("citations")
        if cited:
            return f"cites stale chunk {cited[0]} ({', '.join(self.reasons(cited[0], item))})" + (
                f" and {len(cited) - 1} more" if len(cited) > 1 else "")
        stale = scope.stale.get("context")
        if not stale or not trace.answer:
            return None
        answer = strip_markers(trace.answer, texts)
        if not any(ch.isdigit() for ch in answer):   # states no number, date or code (full-width digits are digits)
            return None
        stated = facts(answer) - facts(item.question)
        if not stated:
            return None
        in_stale: dict[str, str] = {}
        for chunk_id in stale:
            for fact in facts(texts.get(chunk_id)) & stated:
                in_stale.setdefault(fact, chunk_id)
        if not in_stale:
            return None
        stale_set = set(stale)
        holding = set().union(*(facts(texts.get(p.chunk_id)) for p in trace.context or ()
                                if p.chunk_id not in stale_set),
                              *(facts(e.text) for e in usable.evidence if e.grade >= 1),
                              *(facts(r) for r in references), *(facts(k.text) for k in usable.key_points))
        only = sorted(set(in_stale) - holding)
        if not only:
            return None
        where = in_stale[only[0]]
        return (f"states {', '.join(only)}, found only in stale chunk {where} of its context "
                f"({', '.join(self.reasons(where, item))})")

    def summary(self, rows: Sequence[ItemScores], items: Sequence[EvalItem], target: TargetScope | None) -> ScopeSummary:
        """Return the run's scope section: leaks and stale chunks per layer, askers checked and not, the items
        declined for want of usable evidence, and whether the target could be told the scope."""
        askers = sum(i.asker_groups is not None for i in items)
        fields = dict(scoped=self.scoped, access_groups=self.access_groups, settings_digest=self.digest,
                      askers=askers, unchecked=len(items) - askers, moments=sum(i.as_of is not None for i in items),
                      target=target, not_received=not_received(target, items))
        if not self.scoped:
            return ScopeSummary(**fields)
        # one pass over the rows, in plain lists: the record is built once at the end
        declined: dict[str, int] = {}
        declined_items, leak_items, stale_answers = [], [], []
        leaks = {layer: _Tally() for layer in LAYERS}
        stale = {layer: _Tally() for layer in LAYERS}
        clean_leaks = clean_stale = 0
        for row in rows:
            scope = row.scope
            if scope is None:
                continue
            if scope.declined_because:
                declined_items.append(row.item_id)
                for reason in scope.declined_because:
                    declined[reason] = declined.get(reason, 0) + 1
            if scope.stale_answer:
                stale_answers.append(row.item_id)
            if scope.asker_checked and scope.leaked:
                leak_items.append(row.item_id)
            if not (scope.leaked or scope.stale or scope.unreported):   # most items: checked in every layer, clean
                clean_leaks += scope.asker_checked
                clean_stale += not scope.problem
                continue
            for tallies, found, counted in ((leaks, scope.leaked, scope.asker_checked),
                                            (stale, scope.stale, not scope.problem)):
                if not counted:
                    continue
                for layer, tally in tallies.items():
                    if layer in scope.unreported:
                        continue
                    tally.checked += 1
                    if layer in found:
                        tally.found(row.item_id, found[layer])
        for tallies, clean in ((leaks, clean_leaks), (stale, clean_stale)):
            for tally in tallies.values():
                tally.checked += clean
        if self.access_groups:
            fields.update(permission_leaks={layer: tally.layer() for layer, tally in leaks.items()},
                          permission_leak_items=leak_items)
        return ScopeSummary(**fields, declined=declined, declined_items=declined_items,
                            stale={layer: tally.layer() for layer, tally in stale.items()},
                            stale_evidence_items=stale_answers, undecided=len(self.undecided),
                            unknown_superseded=list(self.index.unknown_superseded))


class _Tally:
    """One layer's leaks (or stale chunks) counted over the items whose layer was checked."""

    def __init__(self):
        self.checked, self.chunks, self.item_ids = 0, 0, []

    def found(self, item_id: str, chunk_ids: list[str]) -> None:
        """Count one checked item's chunks found in the layer (`checked` is counted by the caller)."""
        if chunk_ids:
            self.chunks += len(chunk_ids)
            self.item_ids.append(item_id)

    def layer(self) -> LayerScope:
        return LayerScope(checked=self.checked, items=len(self.item_ids), chunks=self.chunks, item_ids=self.item_ids)
