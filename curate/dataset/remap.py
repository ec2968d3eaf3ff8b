"""`curate remap`: carry evidence (and the chunks production retrieved for its failures) onto another
snapshot of the same documents.

A quote found again only fuzzily (or after normalisation) with other numbers, dates, amounts, codes
or versions in it is a changed fact, not the same evidence: it is not re-bound, its old and new text
are reported side by side, and its item goes to `needs_adjudication`. Every item whose number of
required evidence groups changes is reported with the count before and after.
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass, field

from curate.dataset.importer import extend_to_copies
from curate.dataset.locate import NOT_FOUND, Locator, changed_fact, relocate
from curate.dataset.store import DatasetStore
from curate.kb import SnapshotStore
from curate.progress import progress
from curate.records import Chunk, EvalItem, Evidence, item_groups
from curate.workspace import Workspace

# An item with a changed fact and lost evidence needs the decision first: the status it takes.
REVIEW_ORDER = ("needs_adjudication", "needs_evidence")


@dataclass
class Unmapped:
    """One evidence that could not be placed in the target snapshot, and why."""

    item_id: str
    evidence_id: str
    doc_id: str | None
    text: str
    why: str = NOT_FOUND


@dataclass
class Changed:
    """One evidence found again only as a text that says another fact (other numbers, dates, amounts,
    codes, versions or negations): kept as it was, not re-bound."""

    item_id: str
    evidence_id: str
    old_text: str
    """The evidence as the item quotes it (kept)."""
    new_text: str
    """What the target snapshot reads where the quote was found."""
    doc_id: str | None
    start: int | None
    end: int | None
    differs: str
    """The salient tokens that differ, old ≠ new ("89.99 ≠ 19.99")."""
    located_by: str
    """How the new text was found (normalized or fuzzy) ..."""
    match_score: float
    """... and how alike it reads (0-100)."""


@dataclass
class GroupsChanged:
    """An item whose number of required evidence groups is not what it was."""

    item_id: str
    before: int
    after: int


@dataclass
class RemapReport:
    """What a remap did."""

    dataset: str
    source_snapshot: str | None
    target_snapshot: str
    mapped: Counter = field(default_factory=Counter)
    changed: list[Changed] = field(default_factory=list)
    unmapped: list[Unmapped] = field(default_factory=list)
    groups_changed: list[GroupsChanged] = field(default_factory=list)
    written: bool = False


def carry_retrieved(chunk_ids: list[str], source: dict[str, Chunk], locator: Locator) -> list[str]:
    """Return the chunks of the locator's snapshot that hold what production retrieved in the source
    snapshot (by span, then by text, never a text that says another fact), in order; a chunk found
    nowhere is dropped."""
    carried = []
    for chunk_id in chunk_ids:
        chunk = source.get(chunk_id)
        if chunk is None:
            continue
        found = locator.by_span(chunk.doc_id, chunk.start, chunk.end, chunk.text) if chunk.start is not None else None
        found = found or locator.by_text(chunk.text, chunk.doc_id)
        if found is not None and changed_fact(chunk.text, found) is None:
            carried += found.chunk_ids
    return list(dict.fromkeys(carried))


def side_by_side(old: str, new: str, width: int = 30) -> tuple[str, str]:
    """Return the part of two texts around where they first differ, `width` characters either side.

    >>> side_by_side("a" * 50 + " costs $89.99 " + "b" * 50, "a" * 50 + " costs $19.99 " + "b" * 50, 8)
    ('… costs $89.99 bbb…', '… costs $19.99 bbb…')
    """
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    first = next((op for op in matcher.get_opcodes() if op[0] != "equal"), None)
    if first is None:
        return old, new
    _, i1, i2, j1, j2 = first

    def window(text: str, a: int, b: int) -> str:
        lo, hi = max(0, a - width), min(len(text), b + width)
        return ("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else "")
    return window(old, i1, i2), window(new, j1, j2)


def _unbind(evidence: Evidence, target: str) -> None:
    """Leave the evidence in the record as it was quoted, mapped to no chunk of `target`."""
    evidence.chunk_ids, evidence.copies, evidence.located_by, evidence.partial = [], [], "unmapped", False
    evidence.match_score = 0.0
    evidence.kb_snapshot = target


def _review(item: EvalItem, status: str, reason: str) -> None:
    """Set the item's status with `reason`, unless that is already its status for that reason (a
    remap run twice records it once)."""
    if item.status != status or not item.status_history or item.status_history[-1].reason != reason:
        item.set_status(status, reason, by="curate remap")


def remap(workspace: Workspace, *, dataset: str, kb: str, min_score: float = 90.0,
          dry_run: bool = False) -> RemapReport:
    """Map every evidence of `dataset` onto snapshot `kb`; unmapped evidence is kept, marked and
    reported, and its item goes back to `needs_evidence`; evidence found only as a changed fact is
    kept as quoted, not re-bound, reported with the new text, and its item goes to
    `needs_adjudication`; items whose number of required evidence groups changes are reported."""
    with DatasetStore(workspace).writing(dataset):
        store = DatasetStore(workspace)
        snapshots = SnapshotStore(workspace)
        meta, items = store.load(dataset)
        target = snapshots.resolve(kb)
        locator = Locator(snapshots.chunks(target), snapshots.documents(target), min_score)
        report = RemapReport(dataset=dataset, source_snapshot=meta.kb_snapshot, target_snapshot=target)
        retrieving = [i for i in items if i.production is not None and i.production.retrieved]
        source = ({c.chunk_id: c for c in snapshots.chunks(meta.kb_snapshot)}
                  if retrieving and meta.kb_snapshot and meta.kb_snapshot != target else {})
        groups_before = {item.id: len(item_groups(item)) for item in items}
        reviews: dict[str, list[tuple[str | None, str]]] = {}  # item -> (status it needs or None, why)
        for item in progress(items, "remapping", unit="item"):
            lost, changed = [], []
            for evidence in item.evidence:
                found, why, other = relocate(evidence, locator)
                if other is not None:
                    new, differs = other
                    old_part, new_part = side_by_side(evidence.text, new.text)
                    report.changed.append(Changed(item.id, evidence.evidence_id, evidence.text, new.text, new.doc_id,
                                                  new.start, new.end, differs, new.located_by, new.match_score))
                    changed.append(f"evidence {evidence.evidence_id} read {old_part!r}; KB snapshot {target} reads "
                                   f"{new_part!r} at '{new.doc_id}' [{new.start}:{new.end}] ({differs})")
                    _unbind(evidence, target)
                    continue
                if found is None:
                    _unbind(evidence, target)
                    lost.append(evidence.evidence_id)
                    report.unmapped.append(Unmapped(item.id, evidence.evidence_id, evidence.doc_id, evidence.text, why))
                    continue
                evidence.doc_id, evidence.start, evidence.end = found.doc_id, found.start, found.end
                evidence.text, evidence.chunk_ids, evidence.partial = found.text, found.chunk_ids, found.partial
                evidence.copies = []
                evidence.located_by, evidence.match_score = found.located_by, found.match_score
                evidence.kb_snapshot = target
                report.mapped[found.located_by] += 1
            item.kb_snapshot = target
            if source and item.production is not None and item.production.retrieved:
                # what production retrieved, carried over too: its attribution must not point at other text
                item.production.retrieved = carry_retrieved(item.production.retrieved, source, locator)
            if lost:
                reviews.setdefault(item.id, []).append(
                    ("needs_evidence", f"evidence {', '.join(lost)} not found in KB snapshot {target}"))
            if changed:
                # a person decides whether the item's answer still holds: the KB now states another fact
                reviews.setdefault(item.id, []).append(
                    ("needs_adjudication", "changed fact, not re-bound: " + "; ".join(changed)))
        extend_to_copies(workspace, target, items)  # copies in the target snapshot count as the evidence too
        for item in items:
            before, after = groups_before[item.id], len(item_groups(item))
            if before != after:
                report.groups_changed.append(GroupsChanged(item.id, before, after))
                reviews.setdefault(item.id, []).append(
                    (None, f"required evidence groups {before} -> {after} on KB snapshot {target}"))
        for item in items:
            if item.id in reviews:
                statuses = {status for status, _ in reviews[item.id]}
                status = next((s for s in REVIEW_ORDER if s in statuses), item.status)
                _review(item, status, "; ".join(reason for _, reason in reviews[item.id]))
        if not dry_run:
            meta.kb_snapshot = target
            store.save(meta, items)
            report.written = True
        return report
