"""Kept candidates as dataset items: their evidence located as `curate import` locates a quote (by its
document span, then its text), on the user's own chunk ids, so a passage two overlapping chunks hold
lists both. An item is `source: synthetic`, a draft a person must review, with its type and its
generation record; its id is fixed by the candidate, so a second run adds nothing twice. When the KB
has scope, an item is asked by the groups and at the moment its evidence holds for.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from curate.dataset.build import build_item
from curate.dataset.locate import Locator
from curate.errors import InputError
from curate.formats.raw import RawItem
from curate.records import EvalItem, Scope, ScopeSettings
from curate.records.generated import Candidate

CLOSED_BOOK_TAG = "closed-book"
"""The tag of a kept question a model answered without retrieval (--keep-closed-book): its own subset."""
REVIEW = ("generated ({method}): a person must confirm its evidence and near misses and accept, edit or "
          "reject the question")


def item_id(candidate: Candidate, snapshot_id: str) -> str:
    """Return the item id of a candidate: 'syn-' and 10 hex digits of its id and the snapshot's."""
    digest = hashlib.sha256(f"{snapshot_id}:{candidate.candidate_id}".encode("utf-8")).hexdigest()
    return "syn-" + digest[:10]


def raw_item(candidate: Candidate, file: str, line: int, scope: Scope | None = None) -> RawItem:
    """Return the import record of a candidate: question, answer, evidence by span and text, key points;
    and, when its evidence's chunk has a `scope`, the asker and moment it holds for: the chunk's groups
    as the asker's, its first valid day (else its version) as the moment. A question about the 2025
    rule is asked as of 2025, where that rule is usable evidence, not stale."""
    evidence = []
    for e in candidate.evidence:
        entry = {"doc_id": e.passage.doc_id, "text": e.passage.text, "grade": e.grade}
        if e.passage.start is not None and e.passage.end is not None:
            entry |= {"start": e.passage.start, "end": e.passage.end}
        evidence.append(entry)
    fields = {"question": candidate.question, "evidence": evidence, "qtype": candidate.qtype,
              "answerable": candidate.answerable,
              "key_points": [{"text": k.text, "evidence_ids": k.evidence_ids} for k in candidate.key_points]}
    if candidate.reference_answer:
        fields["reference_answer"] = candidate.reference_answer
    closed_book = candidate.filters.get("closed_book")
    if closed_book is not None and closed_book.passed is False:   # kept by --keep-closed-book: tagged
        fields["tags"] = [CLOSED_BOOK_TAG]
    if scope is not None and scope.groups:
        fields["asker_groups"] = list(scope.groups)
    if scope is not None and (scope.valid_from or scope.version):
        fields["as_of"] = scope.valid_from or scope.version
    return RawItem(file=file, line=line, fields=fields, extra={}, format="generated")


def to_item(candidate: Candidate, *, locator: Locator, snapshot_id: str, file: str, line: int,
            copies: Mapping[str, Sequence[str]], settings: ScopeSettings | None = None) -> EvalItem:
    """Return the item of a kept candidate (InputError when its evidence cannot be located: said, and
    the candidate is not added)."""
    relevant = [e for e in candidate.evidence if e.grade > 0]
    chunk = locator.chunks.get(relevant[0].passage.chunk_id) if relevant else None
    raw = raw_item(candidate, file, line, chunk.scope if chunk is not None else None)
    item = build_item(raw, source="synthetic", locator=locator, kb_snapshot=snapshot_id,
                      item_id=item_id(candidate, snapshot_id), copies=copies, scope=settings)
    item.generation = candidate.generation
    item.status_history = []
    item.set_status("draft", REVIEW.format(method=candidate.generation.method), by="curate generate")
    return item


def to_items(kept: Sequence[Candidate], *, locator: Locator, snapshot_id: str, file: str,
             copies: Mapping[str, Sequence[str]], settings: ScopeSettings | None = None
             ) -> tuple[list[EvalItem], dict[str, str]]:
    """Return the items of the kept candidates, and {candidate id: why} for those that could not be made."""
    items, failed = [], {}
    for line, candidate in enumerate(kept, start=1):
        try:
            items.append(to_item(candidate, locator=locator, snapshot_id=snapshot_id, file=file, line=line,
                                 copies=copies, settings=settings))
        except InputError as error:
            failed[candidate.candidate_id] = str(error)
    return items, failed
