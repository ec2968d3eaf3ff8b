"""What a report shows, gathered from a scored run folder, its release and its KB snapshot: the
headline per layer, the retrieval funnel per K, the subsets, what was not scored, the provenance,
the judge's grades of retrieved chunks (`evalrun.report.judged`), and (with a BASE run) the comparison
of `evalrun compare`.

The retrieval funnel counts, per cutoff K, the answerable items whose retrieval is scored (their
relevant evidence groups R non-empty and anchored; items scored apart left out, as in every figure):

- in candidates: every group of R is among the first K candidates (candidates/recall@K = 1);
- in context: every group of R is also among the first K chunks of the final context;
- cited: of those, the answer cites (in the trace's `citations` or inline) a chunk of R;
- answer correct: of those in context, the judge found every key point covered
  (generation/correctness = 1); unjudged items are counted apart, never as failures.

An item whose trace reports no context is counted in candidates only, and its "context not
reported" is counted beside the funnel; one whose trace reports no candidates is in no step (its
candidate metrics are unscored) and is counted below the funnel.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from curate import (
    Chunk,
    EvalItem,
    InputError,
    NotFound,
    Releases,
    SnapshotStore,
    Workspace,
    load_release,
    retrieval_qrels,
)
from evalrun.review.calibrate import Calibration, calibrate_run, has_reviews
from evalrun.review.paired import judge_corrected
from evalrun.review.records import read_reviews
from evalrun.compare.comparison import Comparison, compare_runs
from evalrun.probes.folder import ProbeRun, scored_probe_run
from evalrun.records import ItemScores, Run, Trace, scored_run
from evalrun.report.judged import JudgedInputs, read_grades
from evalrun.scope_records import LAYERS
from evalrun.scoring.scope import ScopeCheck
from evalrun.scoring.score import layer_ids, readable_traces
from evalrun.views import leak_lines, scope_lines


class ReportError(InputError):
    """A run folder, release or snapshot that a report cannot be written from."""


@dataclass
class FunnelStage:
    """One step of the retrieval funnel at one cutoff K."""

    label: str
    count: int | None          # None: not measured (the reason says why)
    reason: str | None = None


@dataclass
class Funnel:
    """The retrieval funnel at one cutoff K over the answerable items whose retrieval is scored."""

    k: int
    items: int
    stages: list[FunnelStage]
    no_context: int = 0        # traces that do not report their context (in candidates only)
    no_candidates: int = 0     # traces that do not report their candidates (in no step of the funnel)
    unjudged: Counter = field(default_factory=Counter)   # in-context items without a verdict, by reason


@dataclass
class ReportInputs:
    """A scored run with everything its report reads."""

    run: Run
    items: list[EvalItem]
    chunks: dict[str, Chunk]
    snapshot_problem: str | None     # why the snapshot's chunk texts are not available, if they are not
    traces: dict[str, Trace]         # the traces that read as traces (failed items have none)
    usable: dict[str, EvalItem] = field(default_factory=dict)   # each item with only the evidence its asker may use
    base: Run | None = None
    comparison: Comparison | None = None
    base_traces: dict[str, Trace] = field(default_factory=dict)   # BASE's traces that read as traces
    base_chunks: dict[str, Chunk] = field(default_factory=dict)   # BASE's snapshot, when not NEW's
    calibration: Calibration | None = None   # what people's reviews say of the judge, when any were pulled
    judged: JudgedInputs = field(default_factory=JudgedInputs)   # the judge's grades of retrieved chunks
    probes: ProbeRun | None = None   # a probe run shown in its own section (`evalrun report RUN --probes FOLDER`)

    @cached_property
    def base_rows(self) -> dict[str, ItemScores]:
        """Return BASE's scores of every item it scored, by item id (empty without a BASE)."""
        return {} if self.base is None else {row.item_id: row for row in self.base.scores}

    @cached_property
    def rows(self) -> dict[str, ItemScores]:
        """Return the scores of every item, by item id."""
        return {row.item_id: row for row in self.run.scores}

    @cached_property
    def targets(self) -> dict[str, tuple[dict[str, int], dict[str, str]]]:
        """Return the qrels of every item whose retrieval is scored, by item id (see `gold_chunks`): over the
        evidence its asker may use at its moment, as scoring counted it."""
        found = {}
        for item in self.items:
            target = gold_chunks(self.usable.get(item.id, item))
            if target is not None:
                found[item.id] = target
        return found


def read_inputs(folder: Path, workspace: Workspace, vs: Path | None = None,
                probes: Path | None = None) -> ReportInputs:
    """Return the scored run in `folder`, its release's items, its KB snapshot's chunks, with `vs` the
    comparison against that BASE run, and with `probes` that scored probe run; one line when any of them
    cannot be read."""
    run = scored_run(folder)
    base = scored_run(vs) if vs is not None else None
    probe_run = scored_probe_run(probes) if probes is not None else None
    manifest = run.manifest
    try:
        release, items = load_release(Releases(workspace, manifest.dataset).path(manifest.version))
    except (NotFound, OSError) as exc:
        raise ReportError(f"the release {manifest.ref} of run {folder} cannot be read from workspace "
                          f"{workspace.root}: {exc}") from None
    chunks: dict[str, Chunk] = {}
    problem = None
    try:
        chunks = {c.chunk_id: c for c in SnapshotStore(workspace).chunks(manifest.kb_snapshot)}
    except (NotFound, OSError) as exc:
        problem = f"KB snapshot {manifest.kb_snapshot} cannot be read ({exc}): chunk texts come from the traces only"
    by_id = {item.id: item for item in items}
    traces = readable_traces(run, by_id)
    check = ScopeCheck(list(chunks.values()), release.scope, manifest.kb_snapshot)
    usable = {item.id: check.usable(item) for item in items} if check.scoped else {}
    comparison, base_traces, base_chunks = None, {}, {}
    if base is not None:
        comparison = compare_runs(base, run, items=items)
        comparison.judge_corrected = judge_corrected(base, run, read_reviews(base.folder), read_reviews(run.folder))
        base_traces = readable_traces(base, by_id)
        if base.manifest.kb_snapshot != manifest.kb_snapshot:
            with contextlib.suppress(NotFound, OSError):   # then BASE's passages show the texts its traces hold
                base_chunks = {c.chunk_id: c for c in SnapshotStore(workspace).chunks(base.manifest.kb_snapshot)}
    calibration = calibrate_run(workspace, folder) if has_reviews(folder) else None
    return ReportInputs(run=run, items=items, chunks=chunks, snapshot_problem=problem, traces=traces, usable=usable,
                        base=base, comparison=comparison, base_traces=base_traces, base_chunks=base_chunks,
                        calibration=calibration, judged=read_grades(folder, run.summary.judged_retrieval),
                        probes=probe_run)


def gold_chunks(item: EvalItem) -> tuple[dict[str, int], dict[str, tuple[str, ...]]] | None:
    """Return an item's qrels ({group: grade}, {chunk id: the groups it finds}), or None when its
    retrieval is not scored."""
    target = retrieval_qrels(item) if item.answerable else None
    return None if target is None or isinstance(target, str) else target


def cited_ids(trace: Trace, row: ItemScores) -> set[str]:
    """Return the chunk ids an answer cites: listed in the trace, and inline (as the judge read them)."""
    cited = set(trace.citations)
    for verdict in (row.generation or {}).get("citation_verdicts", []):
        cited.add(verdict["chunk_id"])
    return cited


def _reached(inputs: ReportInputs, item: EvalItem, known: dict[str, str], excluded: set[str]):
    """Return, for an answerable item whose retrieval is scored, (qrels, first rank at which every
    relevant group is among the candidates, the same in the context (None: not reported), whether a
    relevant chunk is cited, its correctness or why it has none); None for any other item."""
    row, target = inputs.rows.get(item.id), inputs.targets.get(item.id)
    if row is None or row.apart or target is None:
        return None
    grades, chunk_group = target
    trace = inputs.traces.get(item.id)
    if trace is None or row.failed:
        trace = Trace(item_id=item.id, question=item.question, candidates=[], context=[])   # returned nothing

    def depth(ids: list[str] | None) -> float | None:
        """Return the rank at which the last relevant group first appears (inf: never)."""
        if ids is None:
            return None
        wanted, seen = set(grades), set()
        if not wanted:
            return 0
        for rank, chunk_id in enumerate(ids, 1):
            held = chunk_group.get(chunk_id)
            if held:
                seen.update(held)
                if seen >= wanted:
                    return rank
        return float("inf")

    correct = row.values.get("generation/correctness")
    return (depth(layer_ids(trace, "candidates", known, excluded)), depth(layer_ids(trace, "context", known, excluded)),
            bool(cited_ids(trace, row) & set(chunk_group)),
            correct if correct is not None else row.unscored.get("generation/correctness", "no verdict"))


def funnels(inputs: ReportInputs) -> list[Funnel]:
    """Return the retrieval funnel at every K of the run (see the module's docstring for each step)."""
    run = inputs.run
    known = {chunk_id: chunk.doc_id for chunk_id, chunk in inputs.chunks.items()}
    excluded = set(run.manifest.leakage_gate.excluded_docs)
    found = [_reached(inputs, item, known, excluded) for item in inputs.items]
    no_candidates = sum(r is not None and r[0] is None for r in found)
    reached = [r for r in found if r is not None and r[0] is not None]
    judged = any(isinstance(r[3], float) for r in reached)
    cites = any(trace.citations for trace in inputs.traces.values()) or any(
        (row.generation or {}).get("citation_verdicts") for row in inputs.rows.values())
    judge_status = run.summary.judge.status if run.summary.judge else run.summary.layers.get("generation")
    result = []
    for k in run.manifest.settings.ks:
        counts, no_context, unjudged = Counter(), 0, Counter()
        for candidates, context, cited, correct in reached:
            if candidates > k:
                continue
            counts["candidates"] += 1
            if context is None:
                no_context += 1
                continue
            if context > k:
                continue
            counts["context"] += 1
            counts["cited"] += cited
            if isinstance(correct, float):
                counts["correct"] += correct == 1.0
            else:
                unjudged[correct] += 1
        stages = [FunnelStage("evidence in candidates", counts["candidates"]),
                  FunnelStage("in context", counts["context"]),
                  FunnelStage("cited by the answer", counts["cited"] if cites else None,
                              None if cites else "not measured: no answer of this run cites a chunk"),
                  FunnelStage("answer correct (judge)", counts["correct"] if judged else None,
                              None if judged else f"not judged: {judge_status or 'no judge'}")]
        result.append(Funnel(k=k, items=len(reached), stages=stages, no_context=no_context, unjudged=unjudged,
                             no_candidates=no_candidates))
    return result


def page_language(items: list[EvalItem]) -> str:
    """Return the page's language: zh when most items are Chinese, else en (Chromium picks CJK glyphs by lang).

    >>> page_language([])
    'en'
    """
    languages = Counter(item.language for item in items)
    return "zh" if languages and languages["zh"] * 2 > sum(languages.values()) else "en"


def unscored_reasons(inputs: ReportInputs) -> list[tuple[str, str, int]]:
    """Return (metric, reason, items) for every metric left without a value on "all", most items first."""
    overall = inputs.run.summary.metrics.get("all", {})
    found = [(metric, reason, n) for metric, summary in overall.items() for reason, n in summary.unscored.items()]
    return sorted(found, key=lambda row: (-row[2], row[0], row[1]))


def headline_metric(inputs: ReportInputs) -> str:
    """Return the metric the item table and the subset bars start on: context recall at K = 5, or the
    largest K when the run has no 5."""
    ks = inputs.run.manifest.settings.ks
    return f"context/recall@{5 if 5 in ks else max(ks)}"


@dataclass
class LeakPanel:
    """What the report shows first of scope: the finding in one line (`alarm`: a leak, or leaks that
    could not be checked), per layer the items and chunks, every leaked chunk with its item's asker and
    the chunk's own groups, and the other scope lines (stale chunks, declined items, ...)."""

    headline: str | None
    alarm: bool
    layers: list[str]
    leaks: list[tuple[str, str, str, str, str]]   # item, asker groups, layer, chunk, the chunk's groups
    notes: list[str]


def leak_panel(inputs: ReportInputs) -> LeakPanel | None:
    """Return the report's scope panel, or None when there is nothing to say (the run was scored before scope
    was checked, or its KB has no scope and no item names an asker or a moment)."""
    scope = inputs.run.summary.scope
    lines = leak_lines(scope, shown=5)
    notes = scope_lines(scope)
    if not lines and not notes:
        return None
    askers = {item.id: item.asker_groups for item in inputs.items}
    leaks = []
    for row in inputs.run.scores:
        for layer in LAYERS:
            for chunk_id in (row.scope.leaked.get(layer, []) if row.scope is not None else []):
                chunk = inputs.chunks.get(chunk_id)
                groups = chunk.scope.groups if chunk is not None and chunk.scope is not None else None
                leaks.append((row.item_id, ", ".join(askers.get(row.item_id) or []) or "(no group)", layer, chunk_id,
                              ", ".join(groups or []) or "unknown"))
    headline = lines[0] if lines else None
    return LeakPanel(headline=headline, alarm=bool(headline and headline.startswith("PERMISSION LEAKS")), layers=lines[1:],
                     leaks=leaks, notes=notes)
