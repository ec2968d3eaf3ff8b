"""`curate remap`: carry evidence (and the chunks production retrieved for its failures) onto another
snapshot of the same documents."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from curate.dataset.importer import extend_to_copies
from curate.dataset.locate import Location, Locator
from curate.dataset.store import DatasetStore
from curate.kb import SnapshotStore
from curate.progress import progress
from curate.records import Chunk, Evidence
from curate.workspace import Workspace


@dataclass
class Unmapped:
    """One evidence that could not be placed in the target snapshot, and why."""

    item_id: str
    evidence_id: str
    doc_id: str | None
    text: str
    why: str = "its text is not in the snapshot (exact, normalised or fuzzy)"


@dataclass
class RemapReport:
    """What a remap did."""

    dataset: str
    source_snapshot: str | None
    target_snapshot: str
    mapped: Counter = field(default_factory=Counter)
    unmapped: list[Unmapped] = field(default_factory=list)
    written: bool = False


def relocate(evidence: Evidence, locator: Locator) -> tuple[Location | None, str | None]:
    """Return where `evidence` sits in the locator's snapshot (by span in its document, then by its
    text in the same document, then anywhere), or None and why it cannot be placed. A place no
    chunk holds is not a place: evidence that maps to no chunk would silently stop counting."""
    unheld = None
    attempts = []
    if evidence.doc_id is not None and evidence.start is not None and evidence.end is not None:
        attempts.append(lambda: locator.by_span(evidence.doc_id, evidence.start, evidence.end, evidence.text))
    if evidence.doc_id is not None:
        attempts.append(lambda: locator.by_text(evidence.text, evidence.doc_id))
    attempts.append(lambda: locator.by_text(evidence.text))
    for attempt in attempts:
        found = attempt()
        if found is not None and found.chunk_ids:
            return found, None
        if found is not None and unheld is None:
            unheld = f"found in '{found.doc_id}' at [{found.start}:{found.end}], but no chunk holds it"
    return None, unheld or "its text is not in the snapshot (exact, normalised or fuzzy)"


def carry_retrieved(chunk_ids: list[str], source: dict[str, Chunk], locator: Locator) -> list[str]:
    """Return the chunks of the locator's snapshot that hold what production retrieved in the source
    snapshot (by span, then by text), in order; a chunk found nowhere is dropped."""
    carried = []
    for chunk_id in chunk_ids:
        chunk = source.get(chunk_id)
        if chunk is None:
            continue
        found = locator.by_span(chunk.doc_id, chunk.start, chunk.end, chunk.text) if chunk.start is not None else None
        found = found or locator.by_text(chunk.text, chunk.doc_id)
        carried += found.chunk_ids if found is not None else []
    return list(dict.fromkeys(carried))


def remap(workspace: Workspace, *, dataset: str, kb: str, min_score: float = 90.0,
          dry_run: bool = False) -> RemapReport:
    """Map every evidence of `dataset` onto snapshot `kb`; unmapped evidence is kept, marked and
    reported, and its item goes back to `needs_evidence`."""
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
        for item in progress(items, "remapping", unit="item"):
            lost = []
            for evidence in item.evidence:
                found, why = relocate(evidence, locator)
                if found is None:
                    evidence.chunk_ids, evidence.copies, evidence.located_by, evidence.partial = [], [], "unmapped", False
                    evidence.match_score = 0.0
                    evidence.kb_snapshot = target
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
                item.set_status("needs_evidence", f"evidence {', '.join(lost)} not found in KB snapshot {target}",
                                by="curate remap")
        extend_to_copies(workspace, target, items)  # copies in the target snapshot count as the evidence too
        if not dry_run:
            meta.kb_snapshot = target
            store.save(meta, items)
            report.written = True
        return report
