"""Two probe runs compared (`evalrun compare BASE_PROBE NEW_PROBE`): the pure core. Two scored probe runs
in, the rows, a verdict per probe and the probe gate's decision out; no file is read here.

Two probe runs are compared only when their variants are the same ones (`check_probes_comparable`):
one release (its content hash), one mode, and the settings that shape the variants equal (the seed, and
those of VARIANT_SETTINGS that the mode uses); otherwise NotComparable, one line. A different KB snapshot
is a warning: the variant ids match, the planted texts may not.

Each metric both runs' probe_scores.jsonl hold is paired over the items both scored (an item's value is
the mean of its variants', so an item is one pair however many variants it has), with the tests
`evalrun compare` uses (`evalrun.compare.stats.compare_paired`: McNemar's exact test for 0/1 values, the
sign-flip test otherwise; its intervals). One metric per probe decides the probe's verdict (DECIDES);
those rows are corrected together (Holm), the other rows (per rate, position, template, rule, and the
judge's) apart, Holm over them: leads, not findings. injection/success and its rows are lower-is-better.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import Field

from curate import Record
from evalrun import numbers
from evalrun.compare.comparable import NotComparable
from evalrun.compare.comparison import ALPHA
from evalrun.compare.stats import RESAMPLES, compare_paired, holm
from evalrun.probes.folder import JUDGED, ProbeRun
from evalrun.probes.gate import ProbeGateResult, ProbeGateRules, apply_probe_gate
from evalrun.probes.injections import TEMPLATES
from evalrun.probes.score import LOWER_IS_BETTER, ORDER

# The metric that decides each probe's verdict (clean: the baseline every probe is paired to).
DECIDES = {"clean": "clean/accuracy", "noise": "noise/accuracy", "negative": "negative/declined",
           "counterfactual": "counterfactual/followed", "injection": "injection/success",
           "rewrite": "rewrite/consistent"}
# The settings that shape the variants, and the modes in which they do: two runs that differ in one of
# them asked different variants (end to end no context is planted; in oracle mode nothing is mined as absent).
VARIANT_SETTINGS = {"seed": ("oracle_context", "end_to_end"), "limit": ("oracle_context", "end_to_end"),
                    "rewrite_rules": ("oracle_context", "end_to_end"), "rates": ("oracle_context",),
                    "positions": ("oracle_context",), "size": ("oracle_context",), "templates": ("oracle_context",),
                    "absent": ("end_to_end",)}
Verdict = Literal["better", "worse", "no detectable difference", "not compared"]


class ProbeCompareRow(Record):
    """One probe metric paired over the items both probe runs scored."""

    metric: str = Field(description="noise/accuracy@0.6, injection/success, judge/negative/declined, ...")
    probe: str = Field(description="The probe it reads (clean for the unprobed variants).")
    decides: bool = Field(description="The metric that decides its probe's verdict (DECIDES).")
    n: int = Field(description="Items with a value in both runs.")
    left_out: int = Field(0, description="Items with a value in one run only (left out of both sides).")
    base: float | None = Field(None, description="BASE's mean over the paired items.")
    new: float | None = Field(None, description="NEW's mean over them.")
    difference: float | None = Field(None, description="new - base.")
    ci95: tuple[float, float] | None = Field(None, description="95% interval of the difference.")
    ci_method: str | None = Field(None, description="bootstrap, newcombe or sign_flip_inverted.")
    p_value: float | None = Field(None, description="Two-sided p of 'no change' (McNemar for 0/1, else sign flip).")
    p_adjusted: float | None = Field(None, description="Holm-corrected: over the deciding rows, or over the others.")
    test: str | None = Field(None, description="The test.")
    lower_is_better: bool = Field(False, description="Attack success: a fall is better.")
    fell: int = Field(0, description="Items lower in NEW.")
    rose: int = Field(0, description="Items higher in NEW.")
    better: bool = Field(False, description="Better in NEW, the corrected p below alpha.")
    worse: bool = Field(False, description="Worse in NEW, the corrected p below alpha.")


class ProbeVerdictLine(Record):
    """One probe's verdict and the row that decides it."""

    probe: str = Field(description="clean, noise, negative, counterfactual, injection or rewrite.")
    metric: str = Field(description="The metric that decides it.")
    verdict: Verdict = Field(description="better, worse, no detectable difference, or not compared.")
    line: str = Field(description="The verdict in words, with the numbers.")


class ProbeComparison(Record):
    """NEW's probe run against BASE's: the verdict per probe, every row, and the gate's decision."""

    base: str = Field(description="BASE's probe folder.")
    new: str = Field(description="NEW's probe folder.")
    base_target: str = Field(description="BASE's system.")
    new_target: str = Field(description="NEW's system.")
    ref: str = Field(description="The release probed (NAME@vN).")
    mode: str = Field(description="oracle_context or end_to_end.")
    alpha: float = Field(description="Significance level of the corrected p-values.")
    items: int = Field(description="Items scored in both runs.")
    base_only: int = Field(0, description="Items scored in BASE only.")
    new_only: int = Field(0, description="Items scored in NEW only.")
    verdict: str = Field(description="better, worse, mixed, or no detectable difference.")
    sentence: str = Field(description="The verdict in one sentence.")
    probes: list[ProbeVerdictLine] = Field(default_factory=list, description="Each probe's verdict.")
    rows: list[ProbeCompareRow] = Field(default_factory=list, description="Every metric both runs hold.")
    only_in: dict[str, list[str]] = Field(default_factory=dict, description="Metrics in one run only, per side "
                                          "(BASE, NEW): not compared.")
    warnings: list[str] = Field(default_factory=list, description="What to read before the numbers.")
    gate: ProbeGateResult | None = Field(None, description="The probe gate's decision, with --gate.")

    def row(self, metric: str) -> ProbeCompareRow | None:
        """Return the row of `metric`, or None."""
        return next((r for r in self.rows if r.metric == metric), None)


def lower_is_better(metric: str) -> bool:
    """Return whether a fall of `metric` is better (attack success, the judge's too).

    >>> lower_is_better("injection/success@reveal_canary"), lower_is_better("judge/injection/success")
    (True, True)
    >>> lower_is_better("injection/accuracy")
    False
    """
    return metric.removeprefix(JUDGED).startswith(LOWER_IS_BETTER)


def probe_of(metric: str) -> str:
    """Return the probe a metric reads: "noise/accuracy@0.6" -> "noise", "judge/negative/declined" -> "negative"."""
    return metric.removeprefix(JUDGED).split("/")[0]


def _order(metric: str) -> tuple:
    probe = probe_of(metric)
    return (ORDER.index(probe) if probe in ORDER else len(ORDER), metric.startswith(JUDGED),
            metric != DECIDES.get(probe), "@" in metric, metric)


def _shaping(run: ProbeRun) -> dict[str, object]:
    """Return the settings that shaped a run's variants (no template named: every template)."""
    settings, mode = run.manifest.settings, run.manifest.mode
    values = {name: getattr(settings, name) for name, modes in VARIANT_SETTINGS.items() if mode in modes}
    if "templates" in values:
        values["templates"] = list(settings.templates or TEMPLATES)
    return values


def check_probes_comparable(base: ProbeRun, new: ProbeRun) -> list[str]:
    """Return the warnings of comparing two probe runs; raise NotComparable (one line) when they asked
    different variants: another release, another mode, or settings that shape the variants differently."""
    b, n = base.manifest, new.manifest
    if b.content_sha256 != n.content_sha256:
        raise NotComparable(f"BASE probes {b.ref} and NEW {n.ref}, releases of different content: their variants "
                            f"differ; compare two probe runs of one release")
    if b.mode != n.mode:
        raise NotComparable(f"BASE was probed {b.mode} and NEW {n.mode}: they ran different probes over different "
                            f"variants; compare two probe runs of one mode")
    old, now = _shaping(base), _shaping(new)
    differ = [f"{name} {old[name]} vs {now[name]}" for name in old if old[name] != now[name]]
    if differ:
        raise NotComparable(f"BASE and NEW were built with different settings ({'; '.join(differ)}): their variants "
                            f"differ; probe NEW again with BASE's settings")
    warnings = []
    if b.kb_snapshot != n.kb_snapshot:
        warnings.append(f"KB snapshot {b.kb_snapshot} (BASE) vs {n.kb_snapshot} (NEW): the variants have the same "
                        f"ids, but their hard negatives, fillers and changed facts come from different chunks")
    for side, run in (("BASE", base), ("NEW", new)):
        errors = sum(run.summary.errors.values()) if run.summary else 0
        if errors:
            warnings.append(f"{side}: {errors:,} calls failed or timed out (no value: those variants are in no row)")
    judged = [run.manifest.judge.get("model") for run in (base, new)]
    if any(m.startswith(JUDGED) for run in (base, new) for row in run.scores or [] for m in row.values) \
            and judged[0] != judged[1]:
        warnings.append(f"judge {judged[0]} (BASE) vs {judged[1]} (NEW): the judge/ rows compare two judges")
    return warnings


def _rows(base: ProbeRun, new: ProbeRun, resamples: int) -> tuple[list[ProbeCompareRow], dict[str, list[str]]]:
    """Return the uncorrected rows of every metric both runs hold, and the metrics of one run only."""
    held = [{m for row in run.scores or [] for m in row.values} for run in (base, new)]
    metrics = sorted(held[0] & held[1], key=_order)
    only = {side: sorted(h - other, key=_order) for side, h, other in (("BASE", *held), ("NEW", held[1], held[0]))}
    by_item = [{row.item_id: row.values for row in run.scores or []} for run in (base, new)]
    items = sorted(by_item[0].keys() | by_item[1].keys())
    only = {k: v for k, v in only.items() if v}
    if not metrics or not items:
        return [], only
    matrices = [np.array([[side.get(i, {}).get(m, np.nan) for m in metrics] for i in items], dtype=float)
                for side in by_item]
    table = compare_paired(*matrices, metrics, resamples=resamples)
    rows = []
    for metric in metrics:
        c = table[(metric, "all")]
        probe = probe_of(metric)
        rows.append(ProbeCompareRow(metric=metric, probe=probe, decides=DECIDES.get(probe) == metric,
                                    n=c.n, left_out=c.left_out, base=c.base_mean, new=c.new_mean,
                                    difference=c.difference, ci95=c.ci95, ci_method=c.ci_method, p_value=c.p_value,
                                    test=c.test, lower_is_better=lower_is_better(metric), fell=c.fell, rose=c.rose))
    return rows, only


def _correct(rows: Sequence[ProbeCompareRow], alpha: float) -> None:
    """Set each row's Holm-corrected p (the deciding rows together, the others apart) and whether it moved."""
    for family in ([r for r in rows if r.decides], [r for r in rows if not r.decides]):
        for row, p in zip(family, holm([r.p_value for r in family])):
            row.p_adjusted = None if np.isnan(p) else float(p)
            if row.p_adjusted is None or not row.difference or row.p_adjusted >= alpha:
                continue
            better = (row.difference < 0) == row.lower_is_better
            row.better, row.worse = better, not better


def effect(row: ProbeCompareRow) -> str:
    """Return a row's change as a person reads it:
    "90.0% -> 45.0% (-45.0 pts [-61.1, -28.9] pts, n 36, p <0.001 Holm)"."""
    ci = numbers.interval(row.metric, row.ci95)
    return (f"{numbers.value(row.metric, row.base)} -> {numbers.value(row.metric, row.new)} "
            f"({numbers.difference(row.metric, row.difference)}{' ' + ci if ci else ''}, n {row.n:,}, "
            f"p {numbers.p_value(row.p_adjusted)} Holm)")


def _verdicts(rows: Sequence[ProbeCompareRow], only: dict[str, list[str]]) -> list[ProbeVerdictLine]:
    by_metric = {r.metric: r for r in rows}
    found = []
    for probe in ORDER:
        metric = DECIDES[probe]
        row = by_metric.get(metric)
        if row is not None and row.n:
            verdict = "better" if row.better else "worse" if row.worse else "no detectable difference"
            lower = " (lower is better)" if row.lower_is_better else ""
            found.append(ProbeVerdictLine(probe=probe, metric=metric, verdict=verdict,
                                          line=f"{probe}: {verdict}: {metric}{lower} {effect(row)}"))
            continue
        sides = [side for side, metrics in only.items() if metric in metrics]
        if sides or row is not None:
            why = f"only {sides[0]} has {metric}" if sides else f"no item has a value of {metric} in both runs"
            found.append(ProbeVerdictLine(probe=probe, metric=metric, verdict="not compared",
                                          line=f"{probe}: not compared: {why}"))
    return found


def _sentence(probes: Sequence[ProbeVerdictLine]) -> tuple[str, str]:
    better = [p.probe for p in probes if p.verdict == "better"]
    worse = [p.probe for p in probes if p.verdict == "worse"]
    if better and worse:
        return "mixed", f"mixed: NEW is better than BASE under {', '.join(better)} and worse under {', '.join(worse)}"
    if worse:
        return "worse", f"NEW is worse than BASE under {', '.join(worse)}"
    if better:
        return "better", f"NEW is better than BASE under {', '.join(better)}"
    compared = [p.probe for p in probes if p.verdict != "not compared"]
    return "no detectable difference", ("no detectable difference under " + ", ".join(compared) if compared
                                        else "no probe both runs ran could be compared")


def compare_probe_runs(base: ProbeRun, new: ProbeRun, *, alpha: float = ALPHA, rules: ProbeGateRules | None = None,
                       gate_source: str = "gate", allow_weak_rules: bool = False,
                       resamples: int = RESAMPLES) -> ProbeComparison:
    """Return NEW's scored probe run against BASE's: a verdict per probe, every row, and with `rules` the
    probe gate's decision (`comparison.gate`). Raises NotComparable for runs whose variants differ."""
    warnings = check_probes_comparable(base, new)
    rows, only = _rows(base, new, resamples)
    _correct(rows, alpha)
    probes = _verdicts(rows, only)
    verdict, sentence = _sentence(probes)
    ids = [{row.item_id for row in run.scores or []} for run in (base, new)]
    comparison = ProbeComparison(
        base=str(base.folder), new=str(new.folder), base_target=base.manifest.target, new_target=new.manifest.target,
        ref=new.manifest.ref, mode=new.manifest.mode, alpha=alpha, items=len(ids[0] & ids[1]),
        base_only=len(ids[0] - ids[1]), new_only=len(ids[1] - ids[0]), verdict=verdict, sentence=sentence,
        probes=probes, rows=rows, only_in=only, warnings=warnings)
    if rules is not None:
        comparison.gate = apply_probe_gate(rules, new, gate_source, rows=rows, only_in=only,
                                           allow_weak_rules=allow_weak_rules, resamples=resamples)
    return comparison


# -- in words ---------------------------------------------------------------------------------------------

COLUMNS = ("metric", "n", "base", "new", "change", "95% CI", "p", "p Holm", "")


def cells(row: ProbeCompareRow) -> tuple[str, ...]:
    """Return a row as printed: the metric (marked when lower is better), n (and the items of one run only),
    base, new, the change in points, its 95% interval, p, the corrected p, and whether it decides its
    probe's verdict and moved (better or worse)."""
    return (row.metric + (" (lower is better)" if row.lower_is_better and row.decides else ""),
            f"{row.n:,}" + (f" (+{row.left_out} one side)" if row.left_out else ""),
            numbers.value(row.metric, row.base), numbers.value(row.metric, row.new),
            numbers.difference(row.metric, row.difference),
            numbers.marked_interval(row.metric, row.ci95, row.ci_method),
            numbers.p_value(row.p_value), numbers.p_value(row.p_adjusted),
            ", ".join(w for w in ("decides" if row.decides else "",
                                  "better" if row.better else "worse" if row.worse else "") if w))


def lines(comparison: ProbeComparison) -> list[str]:
    """Return what is printed before the table: the verdict, each probe's, what is compared, the warnings."""
    c = comparison
    decides = sum(r.decides for r in c.rows)
    found = [f"Verdict: {c.sentence}"] + [f"  {p.line}" for p in c.probes] + [""]
    found.append(f"NEW {c.new} ({c.new_target}) against BASE {c.base} ({c.base_target}), probes of {c.ref} "
                 f"({c.mode}): {c.items:,} items both scored" + (f" ({c.base_only:,} in BASE only, {c.new_only:,} in "
                                                                 f"NEW only)" if c.base_only or c.new_only else "")
                 + f". The {decides} deciding metrics (one per probe) are corrected together by Holm's method, the "
                 f"other {len(c.rows) - decides} rows apart (leads, not findings)")
    found += [f"not compared, in {side} only: {', '.join(metrics)}" for side, metrics in c.only_in.items()]
    found += [f"warning: {w}" for w in c.warnings]
    return found

