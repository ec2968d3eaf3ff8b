"""Usable evidence: an item's evidence as its asker, at its moment, may use it.

Evidence none of whose chunks is usable (`ScopeIndex.reasons`) is kept, marked unusable with its
reasons, and left out of R; an answerable item left with no usable evidence is one the system should
decline (it cannot answer from the KB, or the asker has no access), scored as such, never as a
retrieval miss. Copies follow scope: each chunk of an evidence, copies included, is checked on its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from curate.records.item import EvalItem
from curate.records.scope import UnusableEvidence
from curate.scope.index import REASONS, STALE_REASONS, ScopeIndex
from curate.scope.moment import Moment, parse_moment


@dataclass
class UsableView:
    """An item as scope leaves it: evidence cut to what is usable, and what was cut."""

    item: EvalItem
    """The item with only usable evidence and chunks (answerable False when none is left)."""
    unusable: list[UnusableEvidence] = field(default_factory=list)
    """Evidence left out of R, with reasons."""
    declined_because: list[str] = field(default_factory=list)
    """When the item was answerable and no usable evidence is left: every reason, in REASONS order."""
    asker_checked: bool = True
    """False when the item names no asker: what it may see was not checked."""


def moment_of(item: EvalItem) -> Moment | None:
    """Return an item's moment (None: the latest)."""
    return None if item.as_of is None else parse_moment(item.as_of)


def usable_view(item: EvalItem, index: ScopeIndex) -> UsableView:
    """Return the item with only the evidence its asker may use at its moment.

    >>> from curate.records import Chunk, EvalItem, Evidence, Scope
    >>> index = ScopeIndex([Chunk(chunk_id="pay", doc_id="bands", text="t", text_sha256="0", scope=Scope(groups=["hr"])),
    ...                     Chunk(chunk_id="faq", doc_id="faq", text="t", text_sha256="0")])
    >>> item = EvalItem(id="q", question="?", language="en", source="human", asker_groups=["staff"],
    ...                 evidence=[Evidence(evidence_id="e1", text="band", chunk_ids=["pay"])])
    >>> view = usable_view(item, index)
    >>> view.item.answerable, view.declined_because, [(u.evidence_id, u.reasons) for u in view.unusable]
    (False, ['forbidden'], [('e1', ['forbidden'])])
    """
    moment = moment_of(item)   # read even when not needed: a moment that cannot be read is said, always
    # most evidence sits in chunks no rule says anything of: every one is usable, whoever asks and when
    if not index.scoped or not index.any_scoped(c for e in item.evidence for c in e.chunk_ids):
        return UsableView(item=item, asker_checked=item.asker_groups is not None)
    kept, unusable, trimmed = [], [], False
    for evidence in item.evidence:
        if evidence.grade < 1 or not evidence.chunk_ids:
            kept.append(evidence)
            continue
        usable, reasons = [], set()
        for chunk_id in evidence.chunk_ids:
            found = index.reasons(chunk_id, item.asker_groups, moment)
            if found:
                reasons.update(found)
            else:
                usable.append(chunk_id)
        if not usable:
            unusable.append(UnusableEvidence(evidence_id=evidence.evidence_id, chunk_ids=list(evidence.chunk_ids),
                                             reasons=[r for r in REASONS if r in reasons]))
        elif len(usable) < len(evidence.chunk_ids):
            trimmed = True
            kept.append(evidence.model_copy(update={
                "chunk_ids": usable, "copies": [c for c in evidence.copies if c in usable]}))
        else:
            kept.append(evidence)
    if not unusable and not trimmed:
        return UsableView(item=item, asker_checked=item.asker_groups is not None)
    dropped = {u.evidence_id for u in unusable}
    points = [p.model_copy(update={"evidence_ids": [e for e in p.evidence_ids if e not in dropped]})
              if dropped.intersection(p.evidence_ids) else p for p in item.key_points]
    none_left = item.answerable and bool(unusable) and not any(e.grade >= 1 for e in kept)
    found = {reason for u in unusable for reason in u.reasons}
    declined = [r for r in REASONS if r in found] if none_left else []
    view_item = item.model_copy(update={"evidence": kept, "key_points": points,
                                        "answerable": item.answerable and not none_left})
    return UsableView(item=view_item, unusable=unusable, declined_because=declined,
                      asker_checked=item.asker_groups is not None)


@dataclass(frozen=True)
class LayerCheck:
    """The chunks of one layer (candidates, context or citations) the asker may not see, and those that
    do not hold at the item's moment."""

    leaked: tuple[str, ...]
    stale: tuple[str, ...]


def check_layer(index: ScopeIndex, chunk_ids: Iterable[str], asker_groups: list[str] | None,
                moment: Moment | None) -> LayerCheck:
    """Return a layer's permission leaks and stale chunks, each chunk once, in the layer's order."""
    leaked, stale = index.check(chunk_ids, asker_groups, moment)
    return LayerCheck(tuple(leaked), tuple(stale))

