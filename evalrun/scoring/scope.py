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


def facts(text: str | None) -> set[str]:
    """Return the numbers, dates and codes a text states (curate's salient tokens that hold a digit).

    >>> sorted(facts("In 2025 the daily allowance is 45 EUR (code TA-7)."))
    ['2025', '45', '7']
    """
    return {token for token in salient(text or "") if any(ch.isdigit() for ch in token)}


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


def _ids(passages) -> list[str] | None:
    return None if passages is None else [p.chunk_id for p in passages]


class ScopeCheck:
    """The scope rule of one run: an index of its snapshot's chunks under the release's [scope] settings,
    built once; `scoped` False (no chunk has a scope) and every method has nothing to do."""

    def __init__(self, chunks: Sequence[Chunk], settings: ScopeSettings | None, snapshot: str | None = None):
        settings = settings or ScopeSettings()
        self.digest = settings.digest()
        self.access_groups = any(c.scope is not None and c.scope.groups for c in chunks)
        try:
            self.index = ScopeIndex(chunks, version_order(settings))
        except MomentError as exc:
            raise CurateError(f"KB snapshot {snapshot} does not fit the release's [scope] settings: {exc}") from None
        self.scoped = self.index.scoped
        replaced = {target for c in chunks if c.scope is not None for target in c.scope.supersedes}
        # the chunks the rule can say anything of: those with a scope, and those something replaces; any
        # other chunk is usable by anyone at any moment, and is not looked up at all
        self.restricted = frozenset(c.chunk_id for c in chunks if (c.scope is not None and not c.scope.is_empty())
                                    or c.chunk_id in replaced or c.doc_id in replaced)
        self.undecided: list[str] = []
        """Items of which a check met a date moment and a version-only chunk (or the reverse)."""

    def item(self, item: EvalItem, trace: Trace, known: dict[str, str], trec: bool
             ) -> tuple[UsableView, ItemScope] | None:
        """Return the item as its asker may use its evidence at its moment, and its scope checks: what the
        asker may not use, each layer's leaks and stale chunks (a layer the trace does not report is
        unreported, not clean); None when the KB has no scope. A moment that cannot be read is the item's
        problem: only what the asker may see is then applied."""
        if not self.scoped:
            return None
        before = self.index.undecided
        view, problem = self._view(item)
        found = ItemScope(asker_checked=item.asker_groups is not None, declined_because=list(view.declined_because),
                          unusable=list(view.unusable), problem=problem)
        moment = None if problem else moment_of(item)
        layers = {"candidates": _ids(trace.candidates), "context": None if trec else _ids(trace.context),
                  "citations": None if trec else self._cited(trace, known)}
        # ScopeIndex.reasons (check_layer's rule) once per restricted chunk of the item, whatever layers hold
        # it: the other chunks can neither leak nor be stale
        reasons: dict[str, list[str]] = {}
        for layer in LAYERS:
            ids = layers[layer]
            if ids is None:
                found.unreported.append(layer)
                continue
            leaked, stale = [], []
            for chunk_id in dict.fromkeys(c for c in ids if c in self.restricted):
                why = reasons.get(chunk_id)
                if why is None:
                    why = reasons[chunk_id] = self.index.reasons(chunk_id, item.asker_groups, moment)
                if "forbidden" in why:
                    leaked.append(chunk_id)
                if not problem and STALE_REASONS.intersection(why):
                    stale.append(chunk_id)
            if leaked:
                found.leaked[layer] = leaked
            if stale:
                found.stale[layer] = stale
        if self.index.undecided > before:
            self.undecided.append(item.id)
        return view, found

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
    def _cited(trace: Trace, known: dict[str, str]) -> list[str]:
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
        stated = facts(strip_markers(trace.answer, texts)) - facts(item.question)
        if not stated:
            return None
        in_stale: dict[str, str] = {}
        for chunk_id in stale:
            for fact in facts(texts.get(chunk_id)) & stated:
                in_stale.setdefault(fact, chunk_id)
        if not in_stale:
            return None
        stale_set = set(stale)
        holding = set().union(*(facts(texts.get(p.chunk_id)) for p in trace.context or () if p.chunk_id not in stale_set),
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
        summary = ScopeSummary(scoped=self.scoped, access_groups=self.access_groups, settings_digest=self.digest,
                               askers=askers, unchecked=len(items) - askers,
                               moments=sum(i.as_of is not None for i in items), target=target,
                               not_received=not_received(target, items))
        if not self.scoped:
            return summary
        scoped = [row for row in rows if row.scope is not None]
        for row in scoped:
            for reason in row.scope.declined_because:
                summary.declined[reason] = summary.declined.get(reason, 0) + 1
        summary.declined_items = [row.item_id for row in scoped if row.scope.declined_because]
        if self.access_groups:
            checked = [row for row in scoped if row.scope.asker_checked]
            summary.permission_leaks = {layer: _layer(checked, layer, "leaked") for layer in LAYERS}
            summary.permission_leak_items = [row.item_id for row in checked if row.scope.leaked]
        summary.stale = {layer: _layer([r for r in scoped if not r.scope.problem], layer, "stale") for layer in LAYERS}
        summary.stale_evidence_items = [row.item_id for row in scoped if row.scope.stale_answer]
        summary.undecided = len(self.undecided)
        summary.unknown_superseded = list(self.index.unknown_superseded)
        return summary


def _layer(rows: Sequence[ItemScores], layer: str, kind: str) -> LayerScope:
    """Return one layer's leaks (kind "leaked") or stale chunks ("stale") over the rows checked."""
    checked = [row for row in rows if layer not in row.scope.unreported]
    hit = [row for row in checked if getattr(row.scope, kind).get(layer)]
    return LayerScope(checked=len(checked), items=len(hit), chunks=sum(len(getattr(r.scope, kind)[layer]) for r in hit),
                      item_ids=[row.item_id for row in hit])
