"""The judge's grades of retrieved chunks (RUN/retrieval_grades.jsonl, see `curate.records.judged`) as
Argilla suggestions: the chunks that join an item's candidate pool, the grade suggested on each
candidate slot, and the line its text shows.

People over the judge: a slot whose chunk has a person's label (the item's grade for it) keeps that
label as its suggestion; the judge's grade is then only the line in the candidate's text. Only grades
of the dataset's own KB snapshot are read (chunk ids of another snapshot cannot be mapped), and a grade
of an item or a chunk the push does not have is counted, never dropped unsaid.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from curate.annotate.markdown import markdown_escape
from curate.annotate.pool import Candidate
from curate.errors import InputError
from curate.records import RETRIEVAL_GRADES, EvalItem, JudgedGrades, JudgeSuggestion, read_judged_grades

AGENT_PREFIX = "judge:"
_AGENT_REFUSED = re.compile(r"[^A-Za-z0-9\-_:./ ]")   # argilla-server takes only these in an agent, 200 at most
CHUNK_NOT_IN_SNAPSHOT = "chunk not in snapshot"
ITEM_NOT_IN_DATASET = "item not in dataset"


def judge_agent(model: str) -> str:
    """Return the Argilla suggestion agent that names a judge model, "judge:MODEL" (a character Argilla
    refuses in an agent becomes "_").

    >>> judge_agent("qwen2.5:7b-instruct"), judge_agent("gpt-4o@2024-08")
    ('judge:qwen2.5:7b-instruct', 'judge:gpt-4o_2024-08')
    """
    return (AGENT_PREFIX + _AGENT_REFUSED.sub("_", model))[:200]


@dataclass(frozen=True)
class JudgeGrade:
    """The judge's grade of one chunk for one item, with its reason and model."""

    grade: int
    reason: str
    model: str

    def line(self) -> str:
        r"""Return the line a candidate's text shows: the judge's model, grade and reason, every text from
        the file Markdown-escaped.

        >>> JudgeGrade(2, "States the **limit**.", "m-1").line()
        'judge (m-1): 2 — States the \\*\\*limit\\*\\*.'
        """
        reason = markdown_escape(self.reason)
        return f"judge ({markdown_escape(self.model)}): {self.grade}" + (f" — {reason}" if reason else "")


@dataclass
class RunSuggestions:
    """What a run's judge grades give one push: per item, the grade of each chunk of the snapshot and the
    chunks that join its pool; and the grades not used, counted by why."""

    path: Path
    grades: dict[str, dict[str, JudgeGrade]] = field(default_factory=dict)   # item -> chunk -> grade
    joining: dict[str, list[str]] = field(default_factory=dict)             # item -> chunks joining its pool
    skipped: Counter = field(default_factory=Counter)                       # why -> grades not used
    models: set[str] = field(default_factory=set)

    def leave_out(self, item_ids: Iterable[str], why: str) -> None:
        """Count the grades of items the push does not send after all as skipped, and forget them."""
        for item_id in item_ids:
            if item_id in self.grades:
                self.skipped[why] += len(self.grades.pop(item_id))
                self.joining.pop(item_id, None)

    def for_candidates(self, item_id: str, candidates: list[Candidate],
                       copies: dict[str, list[str]]) -> dict[str, JudgeGrade]:
        """Return chunk id -> the judge's grade of each candidate it graded (a copy's grade counts: the
        judge grades a text once, and the pool shows one chunk of each duplicate group)."""
        graded = self.grades.get(item_id, {})
        found = {}
        for candidate in candidates:
            same = [candidate.chunk_id, *copies.get(candidate.chunk_id, [])]
            grade = next((graded[c] for c in same if c in graded), None)
            if grade is not None:
                found[candidate.chunk_id] = grade
        return found


def joining_chunks(record: JudgedGrades, known: set[str] | dict) -> list[str]:
    """Return the chunks the judge puts into an item's pool: its possibly missing evidence, and on an
    item with no labelled evidence the chunks graded 2, then 1 (in the file's order within a grade).

    >>> from curate.records import ChunkGrade
    >>> r = JudgedGrades(item_id="q", judge_model="m", prompt_version="p", guideline_version="g", labelled=False,
    ...                  grades=[ChunkGrade(chunk_id=c, grade=g) for c, g in (("a", 1), ("b", 0), ("c", 2))])
    >>> joining_chunks(r, {"a", "b", "c"})
    ['c', 'a']
    """
    chosen = list(record.possibly_missing)
    if not record.labelled:
        chosen += [g.chunk_id for grade in (2, 1) for g in record.grades if g.grade == grade]
    return [c for c in dict.fromkeys(chosen) if c in known]


def read_suggestions(run_folder: Path, *, kb_snapshot: str | None, dataset: str, items: list[EvalItem],
                     pushing: set[str], known: set[str] | dict) -> RunSuggestions:
    """Return the judge's grades of a run folder for the items being pushed (`pushing`), over chunks of the
    snapshot (`known`). A run without grades, or graded against another KB snapshot, raises one line."""
    path = Path(run_folder) / RETRIEVAL_GRADES
    try:
        records = read_judged_grades(Path(run_folder))
    except InputError as exc:   # no such file: say which option named the folder
        if exc.line is not None or exc.field is not None:
            raise
        raise InputError(exc.message, file=exc.file, field="suggest-from") from None
    for record in records.values():
        if record.kb_snapshot != kb_snapshot:
            graded = "no KB snapshot" if record.kb_snapshot is None else f"KB snapshot {record.kb_snapshot}"
            raise InputError(f"graded against {graded} (item {record.item_id}), but dataset '{dataset}' is on "
                             f"{kb_snapshot}: chunk ids of another snapshot cannot be mapped; run evalrun with "
                             f"--judge-retrieval on this dataset's snapshot", file=str(path), field="kb_snapshot")
    status = {i.id: i.status for i in items}
    found = RunSuggestions(path)
    for item_id, record in records.items():
        if item_id not in status:
            found.skipped[ITEM_NOT_IN_DATASET] += len(record.grades)
            continue
        if item_id not in pushing:
            found.skipped[f"item not pushed (status {status[item_id]})"] += len(record.grades)
            continue
        if outside := sum(g.chunk_id not in known for g in record.grades):
            found.skipped[CHUNK_NOT_IN_SNAPSHOT] += outside
        grades = {g.chunk_id: JudgeGrade(g.grade, g.reason, record.judge_model) for g in record.grades
                  if g.chunk_id in known}
        if grades:
            found.grades[item_id] = grades
            found.models.add(record.judge_model)
            found.joining[item_id] = joining_chunks(record, known)
    return found


def judge_slots(candidates: list[Candidate], judged: dict[str, JudgeGrade]) -> list[JudgeSuggestion]:
    """Return the slots whose suggested grade is the judge's: those it graded that carry no person's
    label (a labelled grade stays the suggestion: people over the judge).

    >>> judge_slots([Candidate("a", "evidence", 2), Candidate("b", "judged")],
    ...             {"a": JudgeGrade(0, "", "m"), "b": JudgeGrade(2, "", "m")})
    [JudgeSuggestion(slot=2, chunk_id='b', grade=2, judge_model='m')]
    """
    return [JudgeSuggestion(slot=n, chunk_id=c.chunk_id, grade=judged[c.chunk_id].grade,
                            judge_model=judged[c.chunk_id].model)
            for n, c in enumerate(candidates, start=1) if c.grade is None and c.chunk_id in judged]


def drop_stale_suggestions(client, dataset_id, sent: dict[str, set[str]]) -> int:
    """Delete every judge's suggestion a record of `sent` (item id -> the questions the push just sent a
    suggestion for) holds on another question; return how many. Argilla upserts a suggestion per
    question, so one a push no longer sends (another run, a moved slot, --no-suggestions) would stay."""
    from curate.annotate.remote import argilla_records

    response = client.http_client.get(f"/api/v1/datasets/{dataset_id}/questions")
    response.raise_for_status()
    names = {q["id"]: q["name"] for q in response.json()["items"]}
    dropped = 0
    for record in argilla_records(client, dataset_id, include=("suggestions",)):
        item_id = str(record.get("external_id") or record["id"])
        if item_id not in sent:
            continue
        stale = [s["id"] for s in record.get("suggestions") or []
                 if (s.get("agent") or "").startswith(AGENT_PREFIX)
                 and names.get(s["question_id"]) not in sent[item_id]]
        if stale:
            client.http_client.delete(f"/api/v1/records/{record['id']}/suggestions",
                                      params={"ids": ",".join(stale)}).raise_for_status()
            dropped += len(stale)
    return dropped


@dataclass
class SuggestionsReport:
    """What a push showed of the judge's grades."""

    run: str                        # the run folder the grades came from
    models: list[str]               # the judge models that graded
    items: int = 0                  # items with a judge's grade on a candidate
    suggested: int = 0              # slots whose suggestion is the judge's grade
    under_people: int = 0           # graded slots whose suggestion stays a person's label (the grade in the text)
    joined: int = 0                 # chunks that joined a pool as "judged"
    not_shown: int = 0              # graded chunks of pushed items that are not among their candidates
    skipped: Counter = field(default_factory=Counter)   # why -> grades not used
