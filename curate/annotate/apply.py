"""Turning submitted Argilla answers into labels on an item: evidence spans with grades, key
points, answerability, corrected texts; or, where annotators disagree, adjudication."""

from __future__ import annotations

from dataclasses import dataclass

from curate.records import Chunk, EvalItem, Evidence, KeyPoint
from curate.text.normalize import fold
from curate.annotate.form import UNANSWERABLE, Answer, parse_key_points


@dataclass
class Applied:
    """What pulling did to one item."""

    item_id: str
    outcome: str          # "labelled", "needs_adjudication"
    detail: str


def disagreements(answers: list[Answer], slots: list[str]) -> list[str]:
    """Return how the answers differ: per graded slot, answerability, and differing corrections."""
    found = []
    for n, chunk_id in enumerate(slots, start=1):
        grades = {a.user: a.grade(n) for a in answers}
        if len(set(grades.values())) > 1:
            found.append(f"candidate {n} ({chunk_id}): " + ", ".join(f"{u} {g}" for u, g in grades.items()))
    labels = {a.user: a.answerable for a in answers}
    if len(set(labels.values())) > 1:
        found.append("answerable: " + ", ".join(f"{u} {v}" for u, v in labels.items()))
    for name in ("question", "answer", "key_points"):
        given = {a.user: getattr(a, name) for a in answers if (getattr(a, name) or "").strip()}
        if len({fold(v) for v in given.values()}) > 1:
            found.append(f"{name}: " + " | ".join(f"{u}: {v.strip()[:60]}" for u, v in given.items()))
    return found


def _evidence_for(item: EvalItem, chunk: Chunk, grade: int, copies: list[str], snapshot: str) -> None:
    """Set the grade of the item's evidence held by `chunk`, or add the chunk as evidence."""
    holders = [e for e in item.evidence if chunk.chunk_id in e.chunk_ids]
    for evidence in holders:
        evidence.grade = grade
    if not holders and grade > 0:
        used = {e.evidence_id for e in item.evidence}
        number = len(item.evidence) + 1
        while f"e{number}" in used:
            number += 1
        item.evidence.append(Evidence(
            evidence_id=f"e{number}", doc_id=chunk.doc_id, start=chunk.start, end=chunk.end, text=chunk.text,
            grade=grade, chunk_ids=copies or [chunk.chunk_id], kb_snapshot=snapshot, located_by="chunk_id"))


def apply_answer(item: EvalItem, answer: Answer, slots: list[str], chunks: dict[str, Chunk],
                 copies: dict[str, list[str]], snapshot: str) -> None:
    """Write one (agreed or adjudicated) answer onto the item."""
    for n, chunk_id in enumerate(slots, start=1):
        if chunk_id in chunks:
            _evidence_for(item, chunks[chunk_id], answer.grade(n), copies.get(chunk_id, []), snapshot)
    if answer.answerable is not None:
        item.answerable = answer.answerable != UNANSWERABLE
        if not item.answerable:
            item.qtype = "unanswerable"
    if (answer.question or "").strip():
        item.question = answer.question.strip()
    if (answer.answer or "").strip():
        item.reference_answer = answer.answer.strip()
    if (answer.key_points or "").strip():
        points = []
        for text, numbers in parse_key_points(answer.key_points):
            cited = {slots[k - 1] for k in numbers if 1 <= k <= len(slots)}
            ids = [e.evidence_id for e in item.evidence if cited.intersection(e.chunk_ids)]
            points.append(KeyPoint(text=text, evidence_ids=ids))
        item.key_points = points


def apply_answers(item: EvalItem, answers: list[Answer], slots: list[str], chunks: dict[str, Chunk],
                  copies: dict[str, list[str]], snapshot: str, guideline_version: str | None,
                  adjudicator: str | None = None) -> Applied:
    """Apply agreeing answers (or the adjudicator's) and mark the item labelled; send disagreeing
    ones to adjudication with every answer shown."""
    users = ", ".join(a.user for a in answers)
    decisive = [a for a in answers if a.user == adjudicator]
    if decisive:
        apply_answer(item, decisive[0], slots, chunks, copies, snapshot)
        detail = f"adjudicated by {adjudicator} (annotators: {users})"
    else:
        differing = disagreements(answers, slots)
        if differing:
            detail = "annotators disagree: " + "; ".join(differing)
            if item.status != "needs_adjudication" or item.status_history[-1].reason != detail:
                item.set_status("needs_adjudication", detail, by="curate annotate pull")
            return Applied(item.id, "needs_adjudication", detail)
        apply_answer(item, answers[0], slots, chunks, copies, snapshot)
        detail = f"labelled by {users}" + (" (in agreement)" if len(answers) > 1 else "")
    comments = [f"{a.user}: {a.comment.strip()}" for a in answers if (a.comment or "").strip()]
    if comments:
        detail += "; comments: " + " | ".join(comments)
    item.guideline_version = guideline_version
    item.set_status("labelled", detail, by="curate annotate pull")
    return Applied(item.id, "labelled", detail)
