"""Findings a person reviewed and accepted (`check-leakage --allow ITEM --reason ...`): each holds
while the item's question and answer and the matched chunk (or the alike item) read as they did
when it was accepted; when either changes, the acceptance lapses and the finding is open again."""

from __future__ import annotations

import getpass
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from curate.errors import InputError
from curate.index.kb_index import KBIndex
from curate.records import Chunk, EvalItem, LeakAcceptance, LeakageAcceptances, LeakFinding


def _sha256(value) -> str:
    return hashlib.sha256(json.dumps(value, ensure_ascii=False).encode("utf-8")).hexdigest()


def item_fingerprint(item: EvalItem) -> str:
    """Return the sha256 of an item's question and reference answer."""
    return _sha256([item.question, item.reference_answer])


def fingerprint(findings: Sequence[LeakFinding], by_id: dict[str, EvalItem], index: KBIndex) -> None:
    """Set each finding's item and place fingerprints (the matched chunks' texts, or the alike item)."""
    for finding in findings:
        finding.item_sha256 = item_fingerprint(by_id[finding.item_id])
        if finding.other_item is not None:
            finding.where_sha256 = item_fingerprint(by_id[finding.other_item])
        elif finding.where_sha256 is None:   # set where the finding was made (a shard's view)
            finding.where_sha256 = where_fingerprint([index.chunks[index.position[c]] for c in finding.chunk_ids])


def where_fingerprint(chunks: Sequence[Chunk]) -> str:
    """Return the fingerprint of the place a finding matched: its chunks' texts."""
    return _sha256([c.text_sha256 for c in chunks])


def load_acceptances(path: Path) -> LeakageAcceptances:
    """Return the acceptances kept at `path` (none when the file does not exist)."""
    return LeakageAcceptances.read(path) if path.exists() else LeakageAcceptances()


def _what_changed(acceptance: LeakAcceptance, finding: LeakFinding) -> str:
    changed = []
    if acceptance.item_sha256 != finding.item_sha256:
        changed.append("the item's question or answer")
    if acceptance.where_sha256 != finding.where_sha256:
        changed.append("the alike item" if finding.other_item else "the matched chunk")
    return " and ".join(changed)


def _place(record: LeakAcceptance | LeakFinding) -> tuple:
    # Chunk ids are left out: a KB chunked anew names the same place otherwise; its text decides.
    return record.item_id, record.kind, record.doc_id, record.other_item


def apply_acceptances(findings: Sequence[LeakFinding], kept: LeakageAcceptances) -> list[LeakFinding]:
    """Mark accepted each open finding an acceptance still holds for (same item, kind and document or
    alike item, same fingerprints); return those whose acceptance lapsed (left open, with what
    changed in `lapsed`)."""
    by_place: dict[tuple, list[LeakAcceptance]] = {}
    for acceptance in kept.accepted:
        by_place.setdefault(_place(acceptance), []).append(acceptance)
    lapsed = []
    for finding in findings:
        candidates = by_place.get(_place(finding), [])
        if not candidates or finding.status != "open":
            continue
        # the acceptance of this very chunk first, then any other of the same place
        candidates = sorted(candidates, key=lambda a: a.chunk_ids != finding.chunk_ids)
        holding = next((a for a in candidates if not _what_changed(a, finding)), None)
        if holding is not None:
            finding.status, finding.acceptance = "accepted", holding
            continue
        acceptance = candidates[0]
        finding.lapsed = (f"accepted by {acceptance.by} at {acceptance.at} ({acceptance.reason}); lapsed: "
                          f"{_what_changed(acceptance, finding)} changed since")
        lapsed.append(finding)
    return lapsed


def who() -> str:
    """Return the name of the person running the command (the login name), or 'unknown'."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def accept(findings: Sequence[LeakFinding], item_ids: Sequence[str], reason: str, by: str | None,
           kept: LeakageAcceptances) -> list[LeakAcceptance]:
    """Accept every open finding of the items named, with one reason; record each in `kept` (a later
    acceptance of the same finding replaces an earlier one) and return the new ones."""
    if not reason.strip():
        raise InputError("accepting a finding needs a reason (--reason TEXT)", field="reason")
    by = by or who()
    new = []
    for item_id in dict.fromkeys(item_ids):
        mine = [f for f in findings if f.item_id == item_id and f.status == "open"]
        if not mine:
            raise InputError(f"item '{item_id}' has no open leakage finding to accept", field="allow")
        for finding in mine:
            acceptance = LeakAcceptance(item_id=item_id, kind=finding.kind, doc_id=finding.doc_id,
                                        chunk_ids=finding.chunk_ids, other_item=finding.other_item,
                                        item_sha256=finding.item_sha256, where_sha256=finding.where_sha256,
                                        reason=reason.strip(), by=by)
            finding.status, finding.acceptance, finding.lapsed = "accepted", acceptance, None
            new.append(acceptance)
    keys = {a.key() for a in new}
    kept.accepted = [a for a in kept.accepted if a.key() not in keys] + new
    return new
