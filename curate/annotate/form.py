"""What an item looks like in Argilla, and what a submitted response means for it.

Candidate chunks are numbered 1..pool_k: field `chunk_N` shows one, question `relevance_N` grades
it 0/1/2. Key points are written one per line, ending with the numbers of the chunks that support
them in brackets, e.g. "LG-4031 means the token expired [1]" (the guidelines' convention).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from curate.fileio import dumps_json
from curate.records import EvalItem
from curate.annotate.markdown import markdown_escape
from curate.annotate.marks import RecordScope, scope_text
from curate.annotate.pool import Candidate
from curate.annotate.suggestions import JudgeGrade, judge_agent, judge_slots
from curate.dataset.asker import asker_label

ANSWERABLE, UNANSWERABLE = "answerable", "unanswerable"
_CITED = re.compile(r"\s*[\[［]\s*(\d+(?:\s*[,，、]\s*\d+)*)\s*[\]］]\s*$")


SCOPE_FIELD = "scope"
SCOPE_METADATA = ("asker", "as_of")


def settings(pool_k: int, guidelines: str, min_submitted: int = 1, scoped: bool = False):
    """Return the Argilla settings of an annotation dataset with `pool_k` candidate slots (0: only the
    answerability questions). Only the candidate fields carry Markdown (their heading) and render it;
    the question, answer and key points are shown as written, line breaks kept. `scoped` (the KB or the
    items have scope) adds the `scope` field, who asks and when, under the question, and the `asker` and
    `as_of` metadata to filter by; without scope a dataset is shaped as it always was."""
    import argilla as rg
    fields = [rg.TextField(name="question", title="Question")]
    if scoped:
        fields.append(rg.TextField(name=SCOPE_FIELD, title="Who asks, and when", required=False))
    fields += [rg.TextField(name="reference_answer", title="Reference answer", required=False),
              rg.TextField(name="key_points", title="Key points so far", required=False)]
    fields += [rg.TextField(name=f"chunk_{n}", title=f"Candidate {n}", required=False, use_markdown=True)
               for n in range(1, pool_k + 1)]
    # Required: every candidate gets a grade. In Argilla's form a click on a pre-filled suggestion
    # clears it, and an ungraded candidate would silently count as 0; now the form says it is missing.
    questions = [rg.RatingQuestion(name=f"relevance_{n}", title=f"Relevance of candidate {n} (0/1/2)",
                                   values=[0, 1, 2], required=True) for n in range(1, pool_k + 1)]
    questions += [rg.LabelQuestion(name="answerable", title="Can the knowledge base answer it?",
                                   labels=[ANSWERABLE, UNANSWERABLE]),
                  rg.TextQuestion(name="question_fixed", title="Corrected question (if needed)", required=False),
                  rg.TextQuestion(name="answer_fixed", title="Corrected reference answer (if needed)", required=False),
                  rg.TextQuestion(name="key_points_fixed", title="Key points, one per line, ending [chunk numbers]",
                                  required=False),
                  rg.TextQuestion(name="comment", title="Comment", required=False)]
    metadata = [rg.TermsMetadataProperty(name=name) for name in ("difficulty", "qtype", "source", "language", "status",
                                                                 *(SCOPE_METADATA if scoped else ()))]
    return rg.Settings(guidelines=guidelines, fields=fields, questions=questions, metadata=metadata,
                       distribution=rg.TaskDistribution(min_submitted=min_submitted))


def annotation_digest(item: EvalItem) -> str:
    """Return a hash of what annotation may change on an item: a changed hash means a local edit."""
    content = item.model_dump(mode="json", include={"question", "reference_answer", "key_points", "answerable"})
    content["evidence"] = [(e.doc_id, e.start, e.end, e.text, e.grade, e.chunk_ids) for e in item.evidence]
    return hashlib.sha256(dumps_json(content).encode("utf-8")).hexdigest()


def key_points_text(item: EvalItem, slots: list[str]) -> str:
    """Return the item's key points, one per line, with the numbers of the chunks supporting each."""
    chunk_of = {e.evidence_id: e.chunk_ids for e in item.evidence}
    lines = []
    for key_point in item.key_points:
        numbers = sorted({slots.index(c) + 1 for eid in key_point.evidence_ids for c in chunk_of.get(eid, [])
                          if c in slots})
        lines.append(key_point.text + (f" [{', '.join(map(str, numbers))}]" if numbers else ""))
    return "\n".join(lines)


def parse_key_points(text: str) -> list[tuple[str, list[int]]]:
    """Return (key point, [chunk numbers]) per non-empty line.

    >>> parse_key_points("令牌过期 [1, 2]\\nrestart needed\\n")
    [('令牌过期', [1, 2]), ('restart needed', [])]
    """
    result = []
    for line in text.splitlines():
        line = line.strip().lstrip("-•*").strip()
        if not line:
            continue
        cited = _CITED.search(line)
        numbers = [int(n) for n in re.findall(r"\d+", cited.group(1))] if cited else []
        result.append((line[:cited.start()].strip() if cited else line, numbers))
    return result


def record(item: EvalItem, candidates: list[Candidate], texts: dict[str, tuple[str, str]], origin: str,
           scope: RecordScope | None = None, judged: dict[str, JudgeGrade] | None = None):
    """Return the Argilla record of an item: its fields, its metadata and the labels it already has as
    suggestions (`texts` maps chunk id -> (title, text)). With `scope`, who asks and when, and a mark
    on each candidate the asker may not use at that moment, saying why. With `judged` (chunk id -> the
    judge's grade), each graded candidate shows the judge's line above its text, and the judge's grade
    is the suggestion of every slot without a person's label (`judge_slots`)."""
    judged = judged or {}
    import argilla as rg
    slots = [c.chunk_id for c in candidates]
    fields = {"question": item.question}
    marks = scope.marks(item, slots) if scope is not None else {}
    if scope is not None and scope.has_field:
        fields[SCOPE_FIELD] = scope_text(item)
    if item.reference_answer:
        fields["reference_answer"] = item.reference_answer
    if item.key_points:
        fields["key_points"] = key_points_text(item, slots)
    for n, candidate in enumerate(candidates, start=1):
        title, text = texts[candidate.chunk_id]
        code = f"`{candidate.chunk_id}`" if "`" not in candidate.chunk_id else markdown_escape(candidate.chunk_id)
        heading = f"**{markdown_escape(title)}** · {code}" if title.strip() else code
        marked = f"{marks[candidate.chunk_id]}\n\n" if candidate.chunk_id in marks else ""
        judge = f"> {judged[candidate.chunk_id].line()}\n\n" if candidate.chunk_id in judged else ""
        fields[f"chunk_{n}"] = f"{heading}\n\n{marked}{judge}{text}"
    suggestions = [rg.Suggestion(question_name=f"relevance_{n}", value=c.grade, agent=origin)
                   for n, c in enumerate(candidates, start=1) if c.grade is not None]
    suggestions += [rg.Suggestion(question_name=f"relevance_{s.slot}", value=s.grade,
                                  agent=judge_agent(s.judge_model)) for s in judge_slots(candidates, judged)]
    suggestions.append(rg.Suggestion(question_name="answerable", value=ANSWERABLE if item.answerable else UNANSWERABLE,
                                     agent=origin))
    if item.key_points:
        suggestions.append(rg.Suggestion(question_name="key_points_fixed", value=fields["key_points"], agent=origin))
    metadata = {"difficulty": item.difficulty or "ungraded", "qtype": item.qtype or "none", "source": item.source,
                "language": item.language, "status": item.status}
    if scope is not None:
        metadata.update(asker=asker_label(item), as_of=item.as_of or "latest")
    return rg.Record(id=item.id, fields=fields, metadata=metadata, suggestions=suggestions)


@dataclass
class Answer:
    """One annotator's submitted answer to one record."""

    user: str
    grades: dict[int, int] = field(default_factory=dict)   # slot number -> grade (graded slots only)
    answerable: str | None = None
    question: str | None = None
    answer: str | None = None
    key_points: str | None = None
    comment: str | None = None

    def grade(self, slot: int) -> int:
        """Return the grade of a slot; a slot left ungraded in a submitted answer is 0 (not evidence)."""
        return self.grades.get(slot, 0)


def discarded_by(responses: list[dict], usernames: dict[str, str]) -> list[str]:
    """Return the users who discarded a record (Argilla's Discard: for a generated question, a person
    rejecting it), sorted."""
    return sorted(usernames.get(str(r.get("user_id")), str(r.get("user_id"))) for r in responses
                  if r.get("status") == "discarded")


def answers_of(responses: list[dict], usernames: dict[str, str]) -> list[Answer]:
    """Return the submitted answers of a record, one per user, from its responses as the Argilla
    API returns them ({"user_id", "status", "values": {question: {"value": ...}}}); a discarded
    response, with or without values, is not an answer."""
    answers = []
    for response in responses:
        if response.get("status") != "submitted":
            continue
        user = usernames.get(str(response.get("user_id")), str(response.get("user_id")))
        answer = Answer(user)
        for name, holder in (response.get("values") or {}).items():
            value = holder.get("value") if isinstance(holder, dict) else None
            if name.startswith("relevance_") and value is not None:
                answer.grades[int(name.split("_")[1])] = int(value)
            elif name == "answerable":
                answer.answerable = value
            elif name in ("question_fixed", "answer_fixed", "key_points_fixed", "comment"):
                setattr(answer, {"question_fixed": "question", "answer_fixed": "answer",
                                 "key_points_fixed": "key_points", "comment": "comment"}[name], value)
        answers.append(answer)
    return sorted(answers, key=lambda a: a.user)
