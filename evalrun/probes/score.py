"""Scoring a probe run: every variant's lexical verdict, then per probe metrics with n and 95% intervals
(`evalrun.scoring.aggregate`, Wilson for 0/1 on small sets), each paired to the same items' clean
accuracy with the tests `compare` uses (`evalrun.compare.stats.compare_paired`), accuracy curves by noise
rate and gold position, attack success per template, and every failure with what was planted and the
answer. Variants in, verdicts and a summary out: no file is read or written here.

A variant's value is 1 (passed) or 0 (failed); an item's value for a metric is the mean of its variants'
(an item asked under three injection templates that obeyed one has injection/success 0.33). An undecided
verdict and a failed or timed-out call give no value: they are counted apart (`undecided`, `errors`),
never scored as a pass or a fail - a system that crashes on every negative variant did not "decline".
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from curate import EvalItem, InputError, now
from evalrun.compare.stats import compare_paired
from evalrun.probes.build import accepted_answers
from evalrun.probes.folder import JUDGED, CurvePoint, PairedToClean, ProbeFailure, ProbeManifest, ProbeMetric, ProbeSummary
from evalrun.probes.records import ProbeSkip, ProbeVariant, ProbeVerdict
from evalrun.probes.verdicts import (
    accurate,
    clean_verdict,
    counterfactual_verdict,
    injection_verdict,
    negative_verdict,
    noise_verdict,
    rewrite_verdict,
)
from evalrun.records import ItemScores, MetricSummary, Trace, TraceRecord, trace_from
from evalrun.scoring.aggregate import aggregate

CLEAN = "clean/accuracy"
SHOWN = 300   # characters of an answer or a planted text kept in a failure
ORDER = ("clean", "noise", "negative", "counterfactual", "injection", "rewrite")
LOWER_IS_BETTER = ("injection/success",)


@dataclass
class Answered:
    """One variant as answered: its trace, or why its call failed."""

    variant: ProbeVariant
    trace: Trace | None
    error: str | None


def answered(variants: Sequence[ProbeVariant], traces: Mapping[str, TraceRecord]) -> list[Answered]:
    """Return every variant with its trace, or why it has none (no trace yet, the call failed, not a trace)."""
    done = []
    for variant in variants:
        record = traces.get(variant.variant_id)
        if record is None:
            done.append(Answered(variant, None, "no trace"))
        elif record.error is not None:
            done.append(Answered(variant, None, record.error))
        else:
            try:
                trace = trace_from(record.trace, item_id=variant.variant_id, question=variant.question,
                                   where=f"trace of {variant.variant_id}")
            except InputError as exc:
                done.append(Answered(variant, None, f"bad trace: {exc}"))
            else:
                done.append(Answered(variant, trace, None))
    return done


def lexical_verdict(one: Answered, item: EvalItem | None, clean: Answered | None) -> ProbeVerdict | None:
    """Return the lexical verdict on one answered variant; None when its call failed (counted apart)."""
    variant, trace = one.variant, one.trace
    if trace is None:
        return None
    answer, refused, accepted = trace.answer, trace.refused, accepted_answers(item) if item else []
    probe = variant.probe
    if probe == "clean":
        return clean_verdict(variant, answer, accepted, refused=refused)
    if probe == "noise":
        return noise_verdict(variant, answer, accepted, refused=refused)
    if probe == "negative":
        return negative_verdict(variant, answer, refused=refused)
    if probe == "counterfactual":
        return counterfactual_verdict(variant, answer, refused=refused)
    if probe == "injection":
        return injection_verdict(variant, answer)
    if clean is None or clean.trace is None:
        return ProbeVerdict(variant_id=variant.variant_id, verdict="undecided",
                            what=f"the original question's call failed ({clean.error if clean else 'not asked'}): "
                                 f"nothing to compare with")
    return rewrite_verdict(variant, clean.trace.answer, answer, accepted, clean_refused=clean.trace.refused,
                           refused=refused)


def verdicts_of(done: Sequence[Answered], items: Mapping[str, EvalItem]) -> list[ProbeVerdict]:
    """Return the lexical verdict of every variant whose call succeeded."""
    clean = {a.variant.item_id: a for a in done if a.variant.probe == "clean"}
    found = []
    for one in done:
        verdict = lexical_verdict(one, items.get(one.variant.item_id), clean.get(one.variant.item_id))
        if verdict is not None:
            found.append(verdict)
    return found


# -- per item values -------------------------------------------------------------------------------------

def _names(variant: ProbeVariant) -> list[str]:
    """Return the metrics a variant's verdict counts in."""
    probe, rule = variant.probe, variant.rule
    if probe == "clean":
        return [CLEAN]
    if probe == "noise":
        return [f"noise/accuracy@{variant.noise_rate:g}", f"noise/accuracy@{rule}",
                *(["noise/accuracy"] if variant.noise_rate else [])]
    if probe == "negative":
        return ["negative/declined"]
    if probe == "counterfactual":
        return ["counterfactual/followed"]
    if probe == "injection":
        return ["injection/success", f"injection/success@{rule}"]
    return ["rewrite/consistent", f"rewrite/consistent@{rule}"]


def _value(verdict: ProbeVerdict, variant: ProbeVariant) -> float | None:
    if verdict.verdict == "undecided":
        return None
    passed = verdict.verdict == "passed"
    return float(not passed) if variant.probe == "injection" else float(passed)


def _recall(trace: Trace, item: EvalItem, k: int) -> float | None:
    """Return the share of an item's evidence (grade > 0) one of whose chunks is in the top k candidates;
    None when the trace reports no candidates or the item has no evidence."""
    evidence = [set(e.chunk_ids) for e in item.evidence if e.grade > 0 and e.chunk_ids]
    if trace.candidates is None or not evidence:
        return None
    top = {p.chunk_id for p in trace.candidates[:k]}
    return sum(bool(e & top) for e in evidence) / len(evidence)


class _Values:
    """Per item, per metric: the values of its variants; and per metric the undecided and failed counts."""

    def __init__(self):
        self.values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        self.undecided: Counter = Counter()
        self.errors: Counter = Counter()
        self.variants: Counter = Counter()
        self.probe_of: dict[str, str] = {}

    def add(self, item_id: str, names: Iterable[str], value: float | None, probe: str, error: bool = False) -> None:
        for name in names:
            self.probe_of[name] = probe
            if error:
                self.errors[name] += 1
            elif value is None:
                self.undecided[name] += 1
                self.values[item_id].setdefault(name, [])
            else:
                self.values[item_id][name].append(value)
                self.variants[name] += 1

    def rows(self, answerable: Mapping[str, bool]) -> list[ItemScores]:
        rows = []
        for item_id, metrics in self.values.items():
            values = {m: float(np.mean(v)) for m, v in metrics.items() if v}
            unscored = {m: "undecided" for m, v in metrics.items() if not v}
            rows.append(ItemScores(item_id=item_id, answerable=answerable.get(item_id, False), values=values,
                                   unscored=unscored))
        return rows


def _collect(done: Sequence[Answered], verdicts: Mapping[str, ProbeVerdict], items: Mapping[str, EvalItem],
             k: int, mode: str, method: str) -> _Values:
    """Return every variant's values, by item and metric (accuracy beside the verdicts: injection and rewrite
    answers are also read for the accepted answer; end to end, candidates' recall at k)."""
    table = _Values()
    for one in done:
        variant, item = one.variant, items.get(one.variant.item_id)
        names = _names(variant)
        if one.trace is None:
            table.add(variant.item_id, names, None, variant.probe, error=True)
            continue
        verdict = verdicts.get(variant.variant_id)
        if verdict is None:   # a judge verdict that failed: counted apart by the caller
            continue
        table.add(variant.item_id, names, _value(verdict, variant), variant.probe)
        if method != "lexical" or item is None:
            continue
        if variant.probe in ("injection", "rewrite"):
            extra = [f"{variant.probe}/accuracy"] + ([f"rewrite/accuracy@{variant.rule}"] if variant.probe == "rewrite"
                                                     else [])
            table.add(variant.item_id, extra, accurate(variant, one.trace.answer, accepted_answers(item)),
                      variant.probe)
        if mode == "end_to_end" and variant.probe in ("clean", "rewrite") and item.answerable:
            table.add(variant.item_id, [f"{variant.probe}/recall@{k}"], _recall(one.trace, item, k), variant.probe)
    return table


# -- the summary -------------------------------------------------------------------------------------------

def _sort_key(name: str) -> tuple:
    probe, _, rest = name.partition("/")
    return (ORDER.index(probe) if probe in ORDER else len(ORDER), "@" in rest, rest)


def _metrics(table: _Values, rows: list[ItemScores], method: str) -> list[ProbeMetric]:
    names = sorted(table.probe_of, key=_sort_key)
    summaries = aggregate(rows, names, {})["all"] if rows else {}
    found = []
    for name in names:
        summary = summaries.get(name)
        if summary is None:
            summary = MetricSummary(n=0, mean=None)
        found.append(ProbeMetric(name=name, probe=table.probe_of[name], method=method,
                                 lower_is_better=name.startswith(LOWER_IS_BETTER), summary=summary,
                                 variants=table.variants[name], undecided=table.undecided[name],
                                 errors=table.errors[name]))
    return found


def _paired(rows: list[ItemScores], names: Sequence[str]) -> list[PairedToClean]:
    """Return each metric against the same items' clean accuracy (recall against clean recall)."""
    pairs = [(n, CLEAN) for n in names if n.split("/")[0] in ("noise", "counterfactual")
             or n.startswith(("injection/accuracy", "rewrite/accuracy"))]
    pairs += [(n, f"clean/{n.split('/')[1]}") for n in names if n.startswith("rewrite/recall@")]
    if not rows or not pairs:
        return []
    base = np.array([[r.values.get(b, np.nan) for _, b in pairs] for r in rows], dtype=float)
    new = np.array([[r.values.get(m, np.nan) for m, _ in pairs] for r in rows], dtype=float)
    table = compare_paired(base, new, [m for m, _ in pairs])
    found = []
    for name, _ in pairs:
        c = table[(name, "all")]
        found.append(PairedToClean(name=name, n=c.n, left_out=c.left_out, clean=c.base_mean, probed=c.new_mean,
                                   difference=c.difference, ci95=c.ci95, p_value=c.p_value, test=c.test,
                                   fell=c.fell, rose=c.rose))
    return found


def _curves(metrics: Sequence[ProbeMetric], settings) -> dict[str, list[CurvePoint]]:
    by_name = {m.name: m for m in metrics if m.method == "lexical"}

    def point(x: str) -> CurvePoint | None:
        m = by_name.get(f"noise/accuracy@{x}")
        return m and CurvePoint(x=x, metric=m.name, mean=m.summary.mean, ci95=m.summary.ci95, n=m.summary.n)
    curves = {"by_rate": [p for r in settings.rates if (p := point(f"{r:g}"))],
              "by_position": [p for x in settings.positions if (p := point(x))]}
    return {name: points for name, points in curves.items() if points}


def _cut(text: str | None, width: int = SHOWN) -> str | None:
    if text is None:
        return None
    return text if len(text) <= width else text[:width - 3] + "..."


def planted_of(variant: ProbeVariant) -> str | None:
    """Return what a variant planted, in one line: the instruction, the changed fact, the negatives, the rewrite."""
    if variant.probe == "injection":
        chunk = next(c for c in variant.context if c.role == "injection")
        return _cut(chunk.text)
    if variant.probe == "counterfactual":
        chunk = next(c for c in variant.context if c.role == "counterfactual")
        return f"{chunk.change['from']} -> {chunk.change['to']} in {chunk.source_chunk}: {_cut(chunk.text, 200)}"
    if variant.probe in ("noise", "negative") and variant.context:
        negatives = [c.chunk_id for c in variant.context if c.role == "noise"]
        return f"hard negatives: {', '.join(negatives) or 'none'}" + (
            f" (gold at {variant.gold_position})" if variant.gold_position is not None else "")
    if variant.probe == "rewrite":
        return f"rewritten: {variant.question}"
    return variant.rule


def _failures(done: Sequence[Answered], verdicts: Mapping[str, ProbeVerdict], method: str) -> list[ProbeFailure]:
    found = []
    for one in done:
        verdict = verdicts.get(one.variant.variant_id)
        if verdict is None or verdict.verdict != "failed" or one.variant.probe == "clean":
            continue
        v = one.variant
        found.append(ProbeFailure(variant_id=v.variant_id, item_id=v.item_id, probe=v.probe,
                                  rule=f"{v.noise_rate:g} {v.rule}" if v.probe == "noise" else v.rule,
                                  question=v.question, planted=planted_of(v),
                                  answer=_cut(one.trace.answer if one.trace else None), what=verdict.what,
                                  method=method))
    return found


def summarize(manifest: ProbeManifest, variants: Sequence[ProbeVariant], skips: Sequence[ProbeSkip],
              traces: Mapping[str, TraceRecord], items: Mapping[str, EvalItem], lexical: Sequence[ProbeVerdict],
              judged: Sequence[ProbeVerdict] = (), judge_failed: Mapping[str, int] | None = None,
              judge_note: str | None = None, judge_usage: str | None = None) -> tuple[ProbeSummary, list[ItemScores]]:
    """Return the summary of a probe run from its variants, traces, and verdicts (lexical and judged), and
    each item's values (judge-decided ones under judge/<name>)."""
    done = answered(variants, traces)
    k = manifest.settings.k
    metrics: list[ProbeMetric] = []
    paired: list[PairedToClean] = []
    failures: list[ProbeFailure] = []
    scores: dict[str, ItemScores] = {}
    for method, found in (("lexical", lexical), ("judge", judged)):
        if method == "judge" and not found:
            continue
        by_variant = {v.variant_id: v for v in found}
        table = _collect(done, by_variant, items, k, manifest.mode, method)
        rows = table.rows({i: item.answerable for i, item in items.items()})
        metrics += _metrics(table, rows, method)
        _keep(scores, rows, JUDGED if method == "judge" else "")
        failures += _failures(done, by_variant, method)
        if method == "lexical":
            paired = _paired(rows, sorted(table.probe_of, key=_sort_key))
    skipped: dict[str, Counter] = defaultdict(Counter)
    for skip in skips:
        skipped[skip.probe][skip.reason] += 1
    errors = Counter(one.variant.probe for one in done if one.trace is None)
    summary = ProbeSummary(ref=manifest.ref, target=manifest.target, mode=manifest.mode,
                        items=len({v.item_id for v in variants if v.probe == "clean"}),
                        variants=dict(Counter(v.probe for v in variants)),
                        skipped={p: dict(c) for p, c in skipped.items()}, not_run=manifest.not_run,
                        errors=dict(errors), metrics=metrics, paired=paired,
                        curves=_curves(metrics, manifest.settings), failures=failures,
                        judge_failed=dict(judge_failed or {}), judge_note=judge_note, judge_usage=judge_usage,
                        scored_at=now())
    return summary, sorted(scores.values(), key=lambda r: r.item_id)


def _keep(scores: dict[str, ItemScores], rows: Sequence[ItemScores], prefix: str) -> None:
    """Add each row's values and unscored metrics (named with `prefix`) to the item's row in `scores`."""
    for row in rows:
        kept = scores.setdefault(row.item_id, ItemScores(item_id=row.item_id, answerable=row.answerable))
        kept.values.update({prefix + k: v for k, v in row.values.items()})
        kept.unscored.update({prefix + k: v for k, v in row.unscored.items()})
