"""Turning submitted Argilla answers into labels on an item: evidence spans with grades, key
points, answerability, corrected texts; or, where annotators disagree, adjudication.

What is a dispute follows the guideline (§10): only a **grade** (any difference, 1 against 2
included: the grade is what nDCG and the relevant set are computed from) or **answerability**
differing between annotators sends an item to adjudication. Everything else is merged:

- key points citing the same chunks and saying the same thing in other words are one key point,
  worded as the longest of them (the most complete statement; ties go to the first annotator by
  name); key points only one annotator wrote are kept too (see `merge_key_points`);
- differing corrections of the question or the reference answer decide nothing: the question
  keeps the correction closest to the original wording (§6: keep the user's wording), the answer
  the longest (§7: complete), and every differing version is written into the item's status
  history and the pull report for a person to see;
- comments are collected, never compared.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from rapidfuzz import fuzz

from curate.records import Chunk, EvalItem, Evidence, KeyPoint, evidence_groups
from curate.text.normalize import canonical, fold
from curate.annotate.form import UNANSWERABLE, Answer, parse_key_points

# Two key points citing the same chunks (and agreeing on their numbers) are one when their folded
# texts have fuzz.ratio >= SAME_KEY_POINT, or their words (Chinese: character pairs) a Dice overlap >=
# SAME_WORDS (the same words reordered). Measured on paraphrases: "访问令牌已过期" / "访问令牌过期了"
# (ratio 86), "The access token has expired" / "Access token expired" (86), "LG-4031 means the API key
# lacks the route's required scope" / "LG-4031: the API key does not have the scope the route
# requires" (68), "The old key stays valid for 24 hours after rotation" / "After rotation the old key
# keeps working for 24 hours" (ratio 49, words 0.80); against two facts from one chunk, at most ratio
# 50 and words 0.44 ("企业版可以调高限额" / "企业版可以使用单点登录"). Reordered Chinese paraphrases
# ("只有管理员可以运行升级命令" / "升级命令仅限管理员执行": 33, 0.45) stay two key points, both kept and
# noted: a duplicate key point costs less than a lost one.
SAME_KEY_POINT = 60
SAME_WORDS = 0.7
_WORD = re.compile(r"[^\W_]+")
_HAN = re.compile(r"([\u3400-\u9fff\uf900-\ufaff]+)")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_NOTE_PREFIX = {"question": "question ", "answer": "reference answer ", "key_points": "key point "}


@dataclass
class Applied:
    """What pulling did to one item."""

    item_id: str
    outcome: str          # "labelled", "needs_adjudication"
    detail: str
    adjudicated_by: list[str] = field(default_factory=list)   # who settled it, when adjudicated
    notes: list[str] = field(default_factory=list)            # merged or differing texts, for a person to see


def disputes(answers: list[Answer], slots: list[str]) -> list[str]:
    """Return what the answers disagree on, one line each: a graded slot, or answerability (an answer
    without an answerability label has no say on it); an empty list means they agree.

    >>> disputes([Answer("ann", {1: 2, 2: 1}), Answer("bo", {1: 2, 2: 2})], ["c1", "c2"])
    ['candidate 2 (c2): ann 1, bo 2']
    >>> disputes([Answer("ann", {1: 2}, key_points="a [1]"), Answer("bo", {1: 2}, key_points="b [1]")], ["c1"])
    []
    """
    found = []
    for n, chunk_id in enumerate(slots, start=1):
        grades = {a.user: a.grade(n) for a in answers}
        if len(set(grades.values())) > 1:
            found.append(f"candidate {n} ({chunk_id}): " + ", ".join(f"{u} {g}" for u, g in grades.items()))
    labels = {a.user: a.answerable for a in answers if a.answerable is not None}
    if len(set(labels.values())) > 1:
        found.append("answerable: " + ", ".join(f"{u} {v}" for u, v in labels.items()))
    return found


def _same_key_point(a: tuple[str, list[int]], b: tuple[str, list[int]]) -> bool:
    """Return whether two key points are one: the same folded text, or similar text with the same
    cited chunks whose numbers agree (one's numbers all in the other: "raises it to 30 s" and "raises
    it from 15 to 30 seconds" agree; 600 and 6000 requests are two facts)."""
    folded_a, folded_b = fold(a[0]), fold(b[0])
    if folded_a == folded_b:
        return True
    numbers_a, numbers_b = set(_NUMBER.findall(canonical(a[0]))), set(_NUMBER.findall(canonical(b[0])))
    if set(a[1]) != set(b[1]) or not (numbers_a <= numbers_b or numbers_b <= numbers_a):
        return False
    return fuzz.ratio(folded_a, folded_b) >= SAME_KEY_POINT or _word_overlap(a[0], b[0]) >= SAME_WORDS


def _words(text: str) -> Counter:
    """Return the words of a text, lower-cased, with each run of Chinese characters as its pairs.

    >>> sorted(_words("LG-4031 表示令牌"))
    ['4031', 'lg', '令牌', '示令', '表示']
    """
    words: Counter = Counter()
    for token in _WORD.findall(canonical(text)):
        for part in filter(None, _HAN.split(token)):
            words.update([part[i:i + 2] for i in range(max(1, len(part) - 1))] if _HAN.fullmatch(part) else [part])
    return words


def _word_overlap(a: str, b: str) -> float:
    """Return the Dice coefficient of two texts' words: 2 |A ∩ B| / (|A| + |B|), as multisets.

    >>> _word_overlap("The access token has expired", "Access token expired")
    0.75
    """
    x, y = _words(a), _words(b)
    total = sum(x.values()) + sum(y.values())
    return 2 * sum((x & y).values()) / total if total else 0.0


def merge_key_points(answers: list[Answer]) -> tuple[list[tuple[str, list[int]]], list[str]]:
    """Return the key points of several answers merged (text, cited chunk numbers), and notes on what
    was merged or kept from one annotator only.

    Each annotator's key point joins the most similar one already gathered from another annotator
    (one-to-one, see `_same_key_point`), or is added. A merged key point takes the longest wording and
    the chunks any of its versions cite. Answers that left the key points empty have no say.

    >>> merged, notes = merge_key_points([Answer("ann", key_points="访问令牌已过期 [1]\\n需要重新登录 [2]"),
    ...                                   Answer("bo", key_points="访问令牌过期了 [1]\\n需要重新登录 [2]")])
    >>> merged
    [('访问令牌已过期', [1]), ('需要重新登录', [2])]
    """
    groups: list[dict] = []   # {"versions": [(user, text, numbers)], "numbers": set}
    for answer in answers:
        if not (answer.key_points or "").strip():
            continue
        for text, numbers in parse_key_points(answer.key_points):
            best, best_score = None, -1.0
            for g, group in enumerate(groups):
                if any(user == answer.user for user, _, _ in group["versions"]):
                    continue   # one-to-one: an annotator's key points never merge with each other
                _, first_text, first_numbers = group["versions"][0]
                if _same_key_point((first_text, first_numbers), (text, numbers)):
                    score = fuzz.ratio(fold(first_text), fold(text))
                    if score > best_score:
                        best, best_score = g, score
            if best is None:
                groups.append({"versions": [(answer.user, text, numbers)], "numbers": set(numbers)})
            else:
                groups[best]["versions"].append((answer.user, text, numbers))
                groups[best]["numbers"].update(numbers)
    writers = {a.user for a in answers if (a.key_points or "").strip()}
    merged, notes = [], []
    for group in groups:
        versions = group["versions"]
        # the longest wording; on a tie, the first annotator's (answers come sorted by user)
        text = max(versions, key=lambda v: len(v[1]))[1]
        merged.append((text, sorted(group["numbers"])))
        texts = {fold(v[1]) for v in versions}
        if len(texts) > 1:
            notes.append(f"key point merged as '{text}': " + " | ".join(f"{u}: {t}" for u, t, _ in versions))
        if len(writers) > 1 and len(versions) < len(writers):
            notes.append(f"key point from {', '.join(u for u, _, _ in versions)} only: '{text}'")
    return merged, notes


def key_points_line(text: str, numbers: list[int]) -> str:
    """Return a key point as the form writes it: text, then the cited chunk numbers in brackets."""
    return text + (f" [{', '.join(map(str, numbers))}]" if numbers else "")


def _correction(answers: list[Answer], name: str, original: str | None) -> tuple[str | None, list[str]]:
    """Return the correction of `name` ("question" or "answer") to keep, and a note when they differ:
    the one closest to the original question, the longest answer."""
    given = [(a.user, getattr(a, name).strip()) for a in answers if (getattr(a, name) or "").strip()]
    if not given:
        return None, []
    if len({fold(text) for _, text in given}) == 1:
        return given[0][1], []
    if name == "question":
        kept = max(given, key=lambda g: fuzz.ratio(fold(original or ""), fold(g[1])))[1]
        why = "closest to the original"
    else:
        kept = max(given, key=lambda g: len(g[1]))[1]
        why = "the longest"
    label = "question" if name == "question" else "reference answer"
    return kept, [f"{label} corrections differ, kept {why}: " + " | ".join(f"{u}: {t}" for u, t in given)]


def merged_answer(answers: list[Answer], item: EvalItem, user: str = "merged") -> tuple[Answer, list[str]]:
    """Return one answer standing for answers that agree on grades and answerability: their grades and
    label, the key points merged, one correction of each text kept; and notes on what differed."""
    labels = [a.answerable for a in answers if a.answerable is not None]
    points, notes = merge_key_points(answers)
    question, question_notes = _correction(answers, "question", item.question)
    answer, answer_notes = _correction(answers, "answer", item.reference_answer)
    grades = {n: g for a in answers for n, g in a.grades.items()}
    merged = Answer(user, grades=grades, answerable=labels[0] if labels else None, question=question,
                    answer=answer, key_points="\n".join(key_points_line(t, n) for t, n in points) or None)
    return merged, notes + question_notes + answer_notes


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
    if item.answerable and item.qtype in (None, "unanswerable"):
        # an item that had no evidence (a production failure) or was unanswerable gets the qtype an
        # import would give it from its labelled evidence
        groups = len(evidence_groups(item.evidence, item.key_points))
        item.qtype = "multi_evidence" if groups > 1 else "single" if groups else item.qtype


def _decision(annotators: list[Answer], decisions: list[Answer], item: EvalItem) -> tuple[Answer, list[str]]:
    """Return the answer an adjudication settles on: the adjudicators' grades and label; their texts
    where they wrote any, else the annotators' merged ones."""
    decided, notes = merged_answer(decisions, item, user=", ".join(a.user for a in decisions))
    from_annotators, annotator_notes = merged_answer(annotators, item)
    for name in ("question", "answer", "key_points"):
        if not (getattr(decided, name) or "").strip():
            setattr(decided, name, getattr(from_annotators, name))
            notes += [n for n in annotator_notes if n.startswith(_NOTE_PREFIX[name])]
    return decided, notes


def apply_answers(item: EvalItem, answers: list[Answer], slots: list[str], chunks: dict[str, Chunk],
                  copies: dict[str, list[str]], snapshot: str, guideline_version: str | None,
                  decisions: list[Answer] | None = None) -> Applied:
    """Apply the annotators' `answers` where they agree on grades and answerability (merging the rest)
    and mark the item labelled; where they disagree, apply the adjudicators' `decisions` if there are
    any (and they agree among themselves), else mark the item needs_adjudication with every answer shown.
    Decisions are never read on an item the annotators agree on."""
    users = ", ".join(a.user for a in answers)
    differing = disputes(answers, slots)
    adjudicated_by: list[str] = []
    if differing and decisions:
        split = disputes(decisions, slots)
        if split:
            differing = differing + ["adjudicators disagree too: " + "; ".join(split)]
        else:
            adjudicated_by = [a.user for a in decisions]
    if differing and not adjudicated_by:
        detail = "annotators disagree: " + "; ".join(differing)
        if item.status != "needs_adjudication" or item.status_history[-1].reason != detail:
            item.set_status("needs_adjudication", detail, by="curate annotate pull")
        return Applied(item.id, "needs_adjudication", detail)
    if adjudicated_by:
        chosen, notes = _decision(answers, decisions, item)
        detail = f"adjudicated by {', '.join(adjudicated_by)} (annotators: {users}; disputed: {'; '.join(differing)})"
    else:
        chosen, notes = merged_answer(answers, item)
        detail = f"labelled by {users}" + (" (in agreement)" if len(answers) > 1 else "")
    apply_answer(item, chosen, slots, chunks, copies, snapshot)
    comments = [f"{a.user}: {a.comment.strip()}" for a in answers + (decisions if adjudicated_by else [])
                if (a.comment or "").strip()]
    if comments:
        detail += "; comments: " + " | ".join(comments)
    if notes:
        detail += "; " + "; ".join(notes)
    item.guideline_version = guideline_version
    item.set_status("labelled", detail, by=", ".join(adjudicated_by) or "curate annotate pull")
    return Applied(item.id, "labelled", detail, adjudicated_by=adjudicated_by, notes=notes)
