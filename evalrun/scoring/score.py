"""Scoring a run folder: retrieval on the candidates and on the final context, unanswerable items
apart, lexical answer metrics always, generation through the judge, end to end, failure
attribution; per item (scores.jsonl) and aggregated (summary.json).

Nothing vanishes from a mean in silence:

- An item whose target failed (no trace, an error or timeout, a trace that is not a trace) is
  scored as a system that returned nothing: no candidates, no context, no answer (retrieval 0,
  lexical 0, no correct refusal), and counted as failed beside every metric (`failed`).
  `--exclude-errors` leaves such items out instead: each of their metrics is unscored with the
  reason.
- A trace that does not report its context (the key left out) has its context metrics unscored
  with that reason; an empty context is scored (nothing reached the model). The same for the
  candidates: a trace without the key has its candidate metrics unscored (a problem of that item,
  counted: "no candidates"), and its failure attribution is read from its context.
- A key a trace may not hold is a problem of that item, named with the field it was probably
  meant to be, and counted.
- An item whose evidence lies in documents the leakage check excluded is scored apart: under
  its own label in the summary, in neither "all" nor any subset.
- On a KB snapshot with scope, every item is scored over the evidence its asker may use at its
  moment, and every layer of its trace is checked for permission leaks and stale chunks
  (`evalrun.scoring.scope`); an item left with no usable evidence is scored as one to decline.
"""

from __future__ import annotations

import contextlib
import gc
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from curate import (
    Budget,
    CurateError,
    EvalItem,
    InputError,
    Judge,
    JudgeConfig,
    RETRIEVAL_GRADES,
    ReleaseManifest,
    Releases,
    SnapshotStore,
    Workspace,
    atomic_write_bytes,
    atomic_write_jsonl,
    item_groups,
    jsonl_bytes,
    load_release,
    retrieval_qrels,
)
from evalrun.metrics import retrieval_metrics
from evalrun.records import (
    JUDGE_SPEND,
    SCORES,
    SUMMARY,
    ItemScores,
    JudgeSpend,
    RunSummary,
    Trace,
    TraceRecord,
    judge_difference,
    read_run,
    trace_from,
    unknown_keys,
)
from evalrun.scoring.generation import METRICS as GENERATION
from evalrun.scoring.generation import ChunkIds, configured_judge, no_judge_reason, score_judged
from evalrun.scoring.judged_retrieval import RetrievalInputs, grade_run
from evalrun.scoring.lexical import METRICS as LEXICAL
from evalrun.scoring.lexical import lexical_miss, lexical_scores
from evalrun.scoring.refusal import refusal_of
from evalrun.scoring.scope import ScopeCheck, named_layers
from evalrun.scoring.summary import RETRIEVAL, item_end_to_end, summarize

LAYERS = ("candidates", "context")
NO_CONTEXT = "the trace reports no context (no 'context' key)"
NO_CANDIDATES = "the trace reports no candidates (no 'candidates' key)"
TREC_RUN = "a TREC run has no final context or answer"


def layer_ids(trace: Trace, layer: str, known: dict[str, str], excluded: set[str]) -> list[str] | None:
    """Return the chunk ids of one layer of a trace as scored: in rank order, without the chunks of
    documents the leakage check excluded; None when the trace does not report that layer."""
    passages = getattr(trace, layer)
    if passages is None:
        return None
    return [p.chunk_id for p in passages if known.get(p.chunk_id) not in excluded]


def references(item: EvalItem) -> list[str]:
    """Return every accepted answer of an item, the reference answer among them."""
    answers = list(item.answers)
    if item.reference_answer and item.reference_answer not in answers:
        answers.append(item.reference_answer)
    return [a for a in answers if a.strip()]


def read_trace(record: TraceRecord | None, item: EvalItem) -> tuple[Trace | None, str | None, list[str]]:
    """Return (the item's trace, why the target failed, unknown keys of the trace)."""
    if record is None:
        return None, "no trace", []
    if record.error is not None:
        return None, record.error, []
    try:
        trace = trace_from(record.trace, item_id=item.id, question=item.question, where=f"trace of {item.id}")
    except InputError as exc:
        return None, f"bad trace: {exc}", []
    return trace, None, unknown_keys(record.trace)


def readable_traces(run, by_id: dict[str, EvalItem]) -> dict[str, Trace]:
    """Return the traces of a run's items (`by_id`) that read as traces, by item id (a failed item has none:
    its scores say why)."""
    traces = {}
    for item_id, record in run.traces.items():
        item = by_id.get(item_id)
        trace = read_trace(record, item)[0] if item is not None else None
        if trace is not None:
            traces[item_id] = trace
    return traces


def excluded_evidence(item: EvalItem, known: dict[str, str], excluded: set[str]) -> list[str]:
    """Return the excluded documents that hold a required evidence group of the item entirely
    (the system could not have retrieved that group), sorted."""
    if not excluded or not item.answerable:
        return []
    docs: set[str] = set()
    for group in item_groups(item):
        holders = {known.get(c) for c in group.chunk_ids}
        if group.chunk_ids and holders <= excluded:
            docs |= holders
    return sorted(docs)


class _Scorer:
    """Every item's retrieval, refusal and lexical scores, and what the judge needs afterwards."""

    def __init__(self, run, items: list[EvalItem], known: dict[str, str], scope: ScopeCheck):
        self.settings = run.manifest.settings
        self.scope = scope
        self.usable: dict[str, EvalItem] = {}   # each item as scored: only the evidence its asker may use
        self.ks = tuple(self.settings.ks)
        self.known = known
        self.excluded = set(run.manifest.leakage_gate.excluded_docs)
        self.rows: dict[str, ItemScores] = {}
        self.traces: dict[str, Trace] = {}      # traces that scored (failed items have none)
        self.answered: dict[str, Trace] = {}    # traces with an answer to judge
        self.refused: set[str] = set()
        self.evidence_in_context: set[str] = set()
        self.qrels: dict[str, dict] = {}
        self.groups: dict[str, dict] = {}
        self.runs: dict[str, dict[str, list[str]]] = {layer: {} for layer in LAYERS}
        self.no_layer: dict[str, dict[str, str]] = {layer: {} for layer in LAYERS}
        self.layers: dict[str, dict[str, list[str] | None]] = {}   # answerable items: their layers as scored
        self.problems: Counter = Counter()
        self.examples: dict[str, str] = {}   # kind -> the first item's problem, in full
        for item in items:
            self.rows[item.id] = self._score(item, run.traces.get(item.id))

    def _problem(self, row: ItemScores, kind: str, text: str) -> None:
        row.problems.append(text)
        self.problems[kind] += 1
        self.examples.setdefault(kind, f"{row.item_id}: {text}")

    def _score(self, item: EvalItem, record: TraceRecord | None) -> ItemScores:
        trace, failure, unknown = read_trace(record, item)
        trec = record is not None and record.kind == "trec"
        if failure is not None:
            trace = Trace(item_id=item.id, question=item.question, candidates=[], context=[])  # returned nothing
        else:
            self.traces[item.id] = trace
        named = named_layers(trace, self.known, trec)
        checked = self.scope.item(item, named)
        scope = None
        if checked is not None:   # from here on the item is scored over its usable evidence only
            view, scope = checked
            item = view.item
        self.usable[item.id] = item
        # built whole, not assigned field by field: each assignment to a record is validated again
        row = ItemScores(item_id=item.id, answerable=item.answerable, scope=scope, failed=failure,
                         attribution=(["permission_leak"] if scope is not None and scope.leaked else [])
                         + (["target_failed"] if failure is not None else []),   # a leak, a security finding, first
                         end_to_end=item_end_to_end(record, None if failure else trace, self.settings))
        if failure is not None:
            self._problem(row, failure.split(":")[0], failure)
        if scope is not None and scope.problem:
            self._problem(row, "unreadable moment", scope.problem)
        if unknown:
            self._problem(row, "unknown trace key", f"unknown trace keys (ignored): {', '.join(unknown)}")
        missing = sorted({p.chunk_id for p in (trace.candidates or []) + (trace.context or [])
                          if p.chunk_id not in self.known})
        if missing:
            self._problem(row, "unknown chunk id", f"unknown chunk ids: {', '.join(missing[:5])}")
        if trace.error:
            self._problem(row, "system error", f"system reported: {trace.error[:120]}")
        if trace.usage.problem:
            self._problem(row, "invalid usage",
                          f"usage left out of the system's tokens and cost: {trace.usage.problem}")
        row.values["success"] = 0.0 if failure or trace.error else 1.0
        apart = excluded_evidence(item, self.known, self.excluded)
        if apart:
            row.apart = f"evidence in documents the leakage check excluded: {', '.join(apart[:5])}"
        # the layers as scored: without the chunks of documents the leakage check excluded (when it excluded any)
        layers = ({layer: layer_ids(trace, layer, self.known, self.excluded) for layer in LAYERS} if self.excluded
                  else {layer: named[layer] for layer in LAYERS})
        if layers["candidates"] is None:
            self._problem(row, "no candidates", f"{NO_CANDIDATES}: its candidate metrics are unscored")
        no_context = TREC_RUN if trec else NO_CONTEXT
        refusal = None if trec else ("" if failure else refusal_of(trace, item.language))
        if item.answerable:
            self.layers[item.id] = layers
            self._retrieval(item, row, layers, {"candidates": NO_CANDIDATES, "context": no_context})
            if refusal:
                row.attribution.append("false_refusal")
                self.refused.add(item.id)
            if not trec:
                cited = ChunkIds({p.chunk_id for p in trace.context or []} | set(trace.citations), self.known)
                values, unscored = lexical_scores(None if failure else trace.answer, language=item.language,
                                                  answers=references(item), known_ids=cited,
                                                  key_points=[k.text for k in item.key_points], answerable=True)
                row.values.update(values)
                row.unscored.update(unscored)
                if failure is None and not refusal:
                    self.answered[item.id] = trace
        else:
            if layers["candidates"] is None:
                row.unscored["unanswerable/retrieved"] = NO_CANDIDATES
            else:
                row.values["unanswerable/retrieved"] = float(len(layers["candidates"]))
            if trec:
                row.unscored["unanswerable/correct_refusal"] = TREC_RUN
            else:
                row.values["unanswerable/correct_refusal"] = 1.0 if refusal else 0.0
                if refusal:
                    row.refusal = refusal
                elif failure is None:
                    row.attribution.append("false_answer")
        if trec and item.answerable:
            row.unscored.update(dict.fromkeys(LEXICAL, TREC_RUN))
        if refusal and item.answerable:
            row.refusal = refusal
        return row

    def _retrieval(self, item: EvalItem, row: ItemScores, layers: dict, unreported: dict[str, str]) -> None:
        target = retrieval_qrels(item)
        if isinstance(target, str):
            row.unscored["retrieval"] = target
            return
        grades, chunk_group = target
        self.qrels[item.id], self.groups[item.id] = grades, chunk_group
        for layer in LAYERS:
            if layers[layer] is None:
                self.no_layer[layer][item.id] = unreported[layer]
            else:
                self.runs[layer][item.id] = layers[layer]
        found = {layer: {g for c in ids for g in chunk_group.get(c, ())}
                 for layer, ids in layers.items() if ids is not None}
        context = found.get("context")
        if context is not None and not set(grades) - context:
            self.evidence_in_context.add(item.id)
        if row.failed is None:
            # without candidates, what retrieval found is read from the context: a miss there is a miss
            retrieved = found.get("candidates", context)
            if retrieved is not None and set(grades) - retrieved:
                row.attribution.append("retrieval_miss")
            elif context is not None and set(grades) - context:
                row.attribution.append("context_cut")
        points = [k for k in item.key_points if k.evidence_ids]
        if not points:
            return
        if layers["context"] is None:
            row.unscored["context/key_point_coverage"] = unreported["context"]
            return
        in_context = {e.evidence_id for e in item.evidence if set(e.chunk_ids) & set(layers["context"])}
        row.values["context/key_point_coverage"] = sum(bool(set(k.evidence_ids) & in_context)
                                                       for k in points) / len(points)

    def score_layers(self) -> None:
        """Score both layers of every item with qrels into its row."""
        settings = self.settings
        for layer in LAYERS:
            run = self.runs[layer]
            scored = retrieval_metrics({q: self.qrels[q] for q in run}, run, self.ks,
                                       groups={q: self.groups[q] for q in run},
                                       precision_denominator=settings.precision_denominator)
            for item_id, values in scored.items():
                row = self.rows[item_id]
                for name, value in values.items():
                    if value is None:
                        row.unscored[f"{layer}/{name}"] = "nothing returned: precision over returned is undefined"
                    else:
                        row.values[f"{layer}/{name}"] = float(value)
            for item_id, reason in self.no_layer[layer].items():
                for k in self.ks:
                    for metric in RETRIEVAL:
                        self.rows[item_id].unscored[f"{layer}/{metric}@{k}"] = reason

    def retrieval_inputs(self, chunk_texts: dict[str, str]) -> RetrievalInputs:
        """Return what grading the retrieved chunks needs (`evalrun.scoring.judged_retrieval`)."""
        unusable: dict[str, dict[str, str]] = {}
        for item_id, row in self.rows.items():
            if row.scope is not None:
                found = {c: f"not usable for the asker: stale ({layer})" for layer, ids in row.scope.stale.items()
                         for c in ids}
                found.update({c: f"not usable for the asker: permission leak ({layer})"
                              for layer, ids in row.scope.leaked.items() for c in ids})
                if found:
                    unusable[item_id] = found
        labels = {}
        for item_id, grades in self.qrels.items():
            labelled: dict[str, int] = {}
            for chunk_id, groups in self.groups[item_id].items():
                for group in (groups,) if isinstance(groups, str) else groups:
                    labelled[chunk_id] = max(labelled.get(chunk_id, 0), grades.get(group, 0))
            labels[item_id] = labelled
        texts = dict(chunk_texts)
        for trace in self.traces.values():   # a chunk the snapshot lacks, graded by the text the trace gave
            for passage in (trace.candidates or []) + (trace.context or []):
                if passage.text and passage.chunk_id not in texts:
                    texts[passage.chunk_id] = passage.text
        return RetrievalInputs(items=list(self.usable.values()), layers=self.layers, unusable=unusable,
                               labels=labels, texts=texts)

    def attribute_lexically(self, items: list[EvalItem]) -> None:
        """Attribute generation_miss by string match where no judge decided whether the answer is correct:
        an answered item whose evidence all reached the context, and whose answer holds no accepted answer
        and misses a key point (`lexical_miss`). Kept apart in `lexical_attribution`, with why: a lexical
        verdict is not a judged one. Hallucination needs a judge: never attributed here."""
        for item in items:
            row, trace = self.rows[item.id], self.answered.get(item.id)
            if (trace is None or item.id not in self.evidence_in_context or "generation/correctness" in row.values
                    or "generation_miss" in row.attribution):
                continue
            cited = ChunkIds({p.chunk_id for p in trace.context or []} | set(trace.citations), self.known)
            why = lexical_miss(trace.answer, answers=references(item), key_points=[k.text for k in item.key_points],
                               language=item.language, known_ids=cited)
            if why:
                row.attribution.append("generation_miss")
                row.lexical_attribution["generation_miss"] = why

    def attribute_stale(self, items: list[EvalItem], chunk_texts: dict[str, str]) -> None:
        """Attribute stale_evidence to the answers built on stale chunks (`ScopeCheck.stale_answer`), apart
        from and instead of generation_miss: such an answer is wrong for the moment asked, not for want of
        reading its context."""
        for item in items:
            row, trace = self.rows[item.id], self.traces.get(item.id)
            if row.scope is None or not (row.scope.stale.get("context") or row.scope.stale.get("citations")):
                continue   # no stale chunk reached the model or was cited: nothing to build an answer on
            if trace is None or row.failed or row.refusal or not (trace.answer or "").strip():
                continue
            usable = self.usable[item.id]
            why = self.scope.stale_answer(item, usable, trace, row.scope, chunk_texts, references(usable))
            if why:
                row.scope = row.scope.model_copy(update={"stale_answer": why})
                row.attribution = [a for a in row.attribution if a != "generation_miss"] + ["stale_evidence"]
                row.lexical_attribution.pop("generation_miss", None)

    def exclude_failed(self) -> None:
        """--exclude-errors: every metric of a failed item becomes unscored with the reason."""
        for row in self.rows.values():
            if row.failed is None:
                continue
            reason = f"target failed, left out (--exclude-errors): {row.failed[:120]}"
            for name in list(row.values):
                if name != "success":
                    row.unscored[name] = reason
                    del row.values[name]
            for name in list(row.unscored):
                row.unscored[name] = reason


def _budget(settings, folder: Path) -> Budget | None:
    """Return the run's judge budget (None without one), starting from what the run already spent."""
    if settings.budget_usd is None and settings.budget_tokens is None:
        return None
    path = folder / JUDGE_SPEND
    spent = JudgeSpend.read(path) if path.exists() else JudgeSpend()
    return Budget(usd=settings.budget_usd, tokens=settings.budget_tokens, spent_tokens=spent.tokens,
                  spent_usd=spent.usd, on_spend=lambda b: JudgeSpend(tokens=b.spent_tokens, usd=b.spent_usd).write(path))


def _grade_retrieval(workspace: Workspace, folder: Path, scorer: _Scorer, chunk_texts: dict[str, str],
                     manifest, budget: Budget | None, given: JudgeConfig | None):
    """Grade the run's retrieved chunks through the judge (--judge-retrieval) into the scorer's rows; write
    retrieval_grades.jsonl; return the summary's judged retrieval section."""
    config, reason = no_judge_reason(workspace, manifest.settings.no_judge, given)
    judge = None if reason else Judge(config, workspace.root / "cache" / "judge", budget=budget)
    section, lines = grade_run(judge, reason, scorer.retrieval_inputs(chunk_texts), scorer.rows, manifest.settings,
                               manifest.kb_snapshot, workspace, say=_say)
    atomic_write_jsonl(Path(folder) / RETRIEVAL_GRADES, [line.model_dump(mode="json") for line in lines])
    return section


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a run is scored, as it was before when it ends.

    Scoring builds tens of thousands of small records beside the release, the traces and the chunks it
    keeps alive, and each automatic collection walks all of them: on 10,000 items that was 40% of the
    scoring time (benchmarks/scope_cost.py), for records that form no cycles to collect."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def score_run(workspace: Workspace, folder: Path,
              release: tuple[ReleaseManifest, list[EvalItem]] | None = None, judge: JudgeConfig | None = None
              ) -> RunSummary:
    """Score every trace of a run folder; write scores.jsonl and summary.json; return the summary.

    `release`: the run's release as already loaded (verified), so it is not read again; `judge`: the judge
    to ask instead of the one configured (`evalrun rejudge`; it must be the one the manifest names).
    """
    with _collector_paused():
        return _score_run(workspace, folder, release, judge)


def _score_run(workspace: Workspace, folder: Path, release: tuple[ReleaseManifest, list[EvalItem]] | None,
               given: JudgeConfig | None = None) -> RunSummary:
    run = read_run(folder)
    manifest = run.manifest
    judge_now = configured_judge(workspace, manifest.settings.no_judge, given)
    if changed := judge_difference(manifest.judge, judge_now):   # the manifest and summary name one judge
        raise CurateError(f"{folder} is scored by the judge its manifest names, and the judge configured now "
                          f"differs ({changed}): configure that judge again, or run into a new --out")
    if release is None:
        release = load_release(Releases(workspace, manifest.dataset).path(manifest.version))
    items = release[1]
    snapshot_chunks = SnapshotStore(workspace).chunks(manifest.kb_snapshot)
    known = {c.chunk_id: c.doc_id for c in snapshot_chunks}
    scope = ScopeCheck(snapshot_chunks, release[0].scope, manifest.kb_snapshot)
    scorer = _Scorer(run, items, known, scope)
    scorer.score_layers()
    chunk_texts = {c.chunk_id: c.text for c in snapshot_chunks}
    usable = [scorer.usable[i.id] for i in items]   # what each asker may use at its moment
    settings = manifest.settings
    budget = _budget(settings, Path(folder))
    judged_retrieval = None
    if settings.judge_retrieval:
        judged_retrieval = _grade_retrieval(workspace, folder, scorer, chunk_texts, manifest, budget, given)
    judge = score_judged(workspace, scorer.rows, usable, scorer.answered, chunk_texts, scorer.evidence_in_context,
                         settings.judge_repeats, problems=scorer.problems,
                         no_judge=settings.no_judge, given=given, budget=budget)
    for item in usable:
        row = scorer.rows[item.id]
        if not item.answerable or not (row.failed or item.id in scorer.refused):
            continue
        if judge.status == "scored" and item.key_points:
            # A refusal or a failure covers no key point: certain without asking the judge.
            row.values["generation/completeness"] = row.values["generation/correctness"] = 0.0
        if row.failed:
            for name in GENERATION:
                if name not in row.values:
                    row.unscored.setdefault(name, "target failed: no answer to judge")
    scorer.attribute_lexically(usable)
    scorer.attribute_stale(items, chunk_texts)
    if manifest.settings.exclude_errors:
        scorer.exclude_failed()
    ordered = [scorer.rows[i.id] for i in items]
    failed_ms = {r.item_id: r.elapsed_ms for r in run.traces.values()
                 if r.error is not None and r.elapsed_ms is not None}
    warmup = {r.item_id for r in run.traces.values() if r.warmup}
    summary = summarize(ordered, items, scorer.traces, manifest, scorer.problems, failed_ms, warmup)
    summary.problem_examples = {kind: scorer.examples[kind] for kind in summary.problems if kind in scorer.examples}
    summary.judge = judge
    summary.judged_retrieval = judged_retrieval
    summary.layers["generation"] = judge.status
    summary.scope = scope.summary(ordered, items, manifest.target_scope)
    atomic_write_bytes(Path(folder) / SCORES, jsonl_bytes(r.model_dump(mode="json", exclude_none=True)
                                                          for r in ordered))
    summary.write(Path(folder) / SUMMARY)
    return summary
