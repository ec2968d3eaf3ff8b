"""`curate check-consistency`: does each item hold together, by the judge's reading?

Per item: the reference answer answers this question; each key point is supported by its
evidence; the reference answer does not contradict the evidence; an item marked unanswerable is
not answered by any of the top retrieved chunks. With `repeat` > 1 each question is asked that
many times and a verdict that flips is reported. Unscored verdicts (timeouts, unparsable
answers, refusals, dropped connections) are counted with their reason and decide nothing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from curate.checks.consistency.prompts import CONSISTENCY, NEGATIVE
from curate.dataset import DatasetStore, items_digest
from curate.errors import InputError
from curate.index.kb_index import KBIndex
from curate.judge.client import Judge, Transport, Verdict, reason_kind
from curate.judge.config import JudgeConfig
from curate.judge.prompts import cut
from curate.records import (
    UNRELEASED_STATUSES,
    ConsistencyCheck,
    ConsistencyOutcome,
    ConsistencyReportFile,
    EvalItem,
    JudgeUsage,
)
from curate.workspace import Workspace


@dataclass
class Task:
    """One question to the judge about one item."""

    item_id: str
    check: str
    label: str          # which part of the item: "answer", "key point 2", ...
    language: str
    payload: dict


@dataclass
class Outcome:
    """The verdicts of one task over its repeats."""

    task: Task
    verdicts: list[Verdict]

    @property
    def scored(self) -> list[str]:
        return [v.output.verdict for v in self.verdicts if v.output is not None]

    @property
    def unscored(self) -> str | None:
        """The reason when no repeat was scored."""
        return None if self.scored else self.verdicts[0].unscored

    @property
    def flipped(self) -> bool:
        return len(set(self.scored)) > 1

    @property
    def flagged(self) -> bool:
        """True when most scored verdicts are the negative one (ties flag: a person should look)."""
        scored = self.scored
        negative = sum(v == NEGATIVE[self.task.check] for v in scored)
        return bool(scored) and negative * 2 >= len(scored)

    @property
    def reason(self) -> str:
        for verdict in self.verdicts:
            if verdict.output is not None and verdict.output.verdict == NEGATIVE[self.task.check]:
                return verdict.output.reason
        return next((v.output.reason for v in self.verdicts if v.output is not None), self.unscored or "")


SHOWN_PROBLEMS = 20  # usage problems kept in the record (all are counted)

# Texts shown to the judge are cut, so one long chunk cannot overflow a small model's context.
MAX_PASSAGE = 1500
MAX_PROMPT_TEXT = 6000


def _evidence_text(item: EvalItem, evidence_ids: list[str] | None = None) -> str:
    chosen = [e for e in item.evidence if e.grade > 0 and (not evidence_ids or e.evidence_id in evidence_ids)]
    return cut("\n".join(f"[{e.evidence_id}] {cut(e.text, MAX_PASSAGE)}" for e in chosen), MAX_PROMPT_TEXT)


def plan(items: list[EvalItem], retrieve=None, k: int = 5) -> list[Task]:
    """Return the judge tasks for `items`; `retrieve(questions, k)` gives [(chunk id, text)] per question."""
    tasks: list[Task] = []
    unanswerable = [i for i in items if not i.answerable]
    retrieved = retrieve([i.question for i in unanswerable], k) if (retrieve and unanswerable) else []
    chunks_of = {i.id: found for i, found in zip(unanswerable, retrieved)}
    for item in items:
        language = item.language
        if item.answerable and item.reference_answer:
            tasks.append(Task(item.id, "answers_question", "answer", language,
                              {"question": item.question, "answer": item.reference_answer}))
            evidence = _evidence_text(item)
            if evidence:
                tasks.append(Task(item.id, "answer_against_evidence", "answer", language,
                                  {"question": item.question, "answer": item.reference_answer, "evidence": evidence}))
        for n, key_point in enumerate(item.key_points, start=1):
            evidence = _evidence_text(item, key_point.evidence_ids)
            if evidence:
                tasks.append(Task(item.id, "key_point_supported", f"key point {n}", language,
                                  {"key_point": key_point.text, "evidence": evidence}))
        if not item.answerable and chunks_of.get(item.id):  # nothing retrieved: nothing can answer it
            listing = cut("\n".join(f"[{chunk_id}] {cut(text, MAX_PASSAGE)}" for chunk_id, text in chunks_of[item.id]),
                           MAX_PROMPT_TEXT)
            tasks.append(Task(item.id, "unanswerable_check", "answerability", language,
                              {"question": item.question, "chunks": listing}))
    return tasks


@dataclass
class ConsistencyReport:
    """What the check found."""

    outcomes: list[Outcome]
    flagged: dict[str, list[str]] = field(default_factory=dict)   # item id -> reasons
    unstable: dict[str, list[str]] = field(default_factory=dict)  # item id -> checks that flipped
    unscored: Counter = field(default_factory=Counter)            # reason -> tasks
    record: ConsistencyCheck | None = None
    judge: Judge | None = None

    def write(self, path) -> None:
        """Write the record with every question's outcome (check-consistency --report)."""
        ConsistencyReportFile(**self.record.model_dump(), outcomes=[ConsistencyOutcome(
            item=o.task.item_id, check=o.task.check, label=o.task.label, verdicts=o.scored, flagged=o.flagged,
            flipped=o.flipped, unscored=o.unscored, reason=o.reason) for o in self.outcomes]).write(path)


def _bm25_retriever(workspace: Workspace, snapshot_id: str | None):
    if snapshot_id is None:
        return None
    index = KBIndex(workspace, snapshot_id)

    def retrieve(questions: list[str], k: int) -> list[list[tuple[str, str]]]:
        positions, scores = index.bm25.search(questions, k)
        return [[(index.chunks[p].chunk_id, index.chunks[p].text) for p, s in zip(row, row_scores) if s > 0]
                for row, row_scores in zip(positions, scores)]
    return retrieve


def check_consistency(workspace: Workspace, *, dataset: str, config: JudgeConfig, repeat: int = 1, k: int = 5,
                      transport: Transport | None = None) -> ConsistencyReport:
    """Judge every live item of `dataset`; flagged items get `needs_rewrite` with the reasons."""
    with DatasetStore(workspace).writing(dataset):
        if repeat < 1:
            raise InputError("--repeat must be at least 1", field="repeat")
        store = DatasetStore(workspace)
        meta, items = store.load(dataset)
        live = [i for i in items if i.status not in UNRELEASED_STATUSES]
        tasks = plan(live, _bm25_retriever(workspace, meta.kb_snapshot), k)
        judge = Judge(config, workspace.root / "cache" / "judge", transport)
        requests = [(CONSISTENCY.get(t.check, t.language), t.payload, r) for t in tasks for r in range(repeat)]
        verdicts = judge.ask_many(requests, "checking consistency")
        outcomes = [Outcome(t, verdicts[n * repeat:(n + 1) * repeat]) for n, t in enumerate(tasks)]
        report = ConsistencyReport(outcomes, judge=judge)
        for outcome in outcomes:
            task = outcome.task
            if outcome.unscored:
                report.unscored[reason_kind(outcome.unscored)] += 1
            if outcome.flagged:
                report.flagged.setdefault(task.item_id, []).append(f"{task.check} ({task.label}): {outcome.reason}")
            if outcome.flipped:
                report.unstable.setdefault(task.item_id, []).append(f"{task.check} ({task.label})")
        for item in live:
            if item.id in report.flagged:
                reason = "consistency: " + "; ".join(report.flagged[item.id])
                if item.status != "needs_rewrite" or item.status_history[-1].reason != reason:
                    item.set_status("needs_rewrite", reason, by="curate check-consistency")
        stats = judge.stats
        usage_problems = [f"{o.task.item_id} ({o.task.check}, {o.task.label}): {v.usage_problem}"
                          for o in outcomes for v in o.verdicts if v.usage_problem]
        chosen = [i for i in items if i.status not in UNRELEASED_STATUSES]
        unscored = sum(report.unscored.values())
        outcome = "findings" if report.flagged or report.unstable else "incomplete" if unscored else "clean"
        report.record = ConsistencyCheck(
            kb_snapshot=meta.kb_snapshot, items_sha256=items_digest(chosen, ignore=ConsistencyCheck.IGNORES),
            outcome=outcome,
            judge=config.public(), prompt_versions=CONSISTENCY.versions(), items=len(live), tasks=len(tasks),
            flagged=sorted(report.flagged), unstable=sorted(report.unstable), unscored=dict(report.unscored),
            counts={"flagged": len(report.flagged), "unstable": len(report.unstable), "unscored": unscored},
            settings={"repeat": repeat, "k": k},
            usage=JudgeUsage(requests=stats.requests, cache_hits=stats.cache_hits, prompt_tokens=stats.prompt_tokens,
                             completion_tokens=stats.completion_tokens, cost_usd=stats.cost,
                             usage_left_out=stats.usage_left_out, usage_problems=usage_problems[:SHOWN_PROBLEMS]))
        meta.checks.consistency = report.record
        store.save(meta, items)
        return report
