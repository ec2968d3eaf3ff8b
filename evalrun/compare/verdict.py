"""The verdict of a comparison, in words, from the primary family alone: better (a primary metric
improved significantly and none got worse), worse (the reverse), mixed (some of each), or no
detectable difference; "no verdict" when no primary metric could be compared.

Then what a person deciding "ship it or not" reads next: each primary metric's change with its
interval and corrected p-value; what it costs (tokens, p95 latency, money per item); which subsets
moved significantly against the overall direction (exploratory: uncorrected p, with the q-value);
for judged metrics, whether the items that changed are more than the judge's own flip rate
explains; and everything that limits what the verdict may claim (not a controlled comparison, too
few items for any difference to be detected, declared metrics that could not be compared)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evalrun import numbers
from evalrun.compare.flips import binomial_quantile
from evalrun.compare.records import NEGLIGIBLE_MS, CompareRow, Comparison, Outcome, Verdict
from evalrun.compare.stats import smallest_p
from evalrun.numbers import COST_PER_ITEM, LATENCY_P95, TOKENS_PER_ITEM
from evalrun.records import JudgeAgreement

LABELS = {LATENCY_P95: "p95 latency", TOKENS_PER_ITEM: "tokens per item", COST_PER_ITEM: "cost per item"}
COSTS = (TOKENS_PER_ITEM, LATENCY_P95, COST_PER_ITEM)
TRADE_OFFS = {TOKENS_PER_ITEM: "system tokens per item", LATENCY_P95: "latency p95 total (ms)",
              COST_PER_ITEM: "system cost per item (USD)"}


def label(metric: str) -> str:
    """Return the name a person reads: the end-to-end rows in words, a metric by its name."""
    return LABELS.get(metric, metric)


def _name(row: CompareRow) -> str:
    return label(row.metric) + ("" if row.subset == "all" else f" on {row.subset}")


def change_line(row: CompareRow, family: int) -> str:
    """Return a primary row in one line: base -> new, the change, its interval, the corrected p-value, n."""
    mark = ("better" if row.better else "worse" if row.worse else
            f"significant, but under {NEGLIGIBLE_MS:g} ms: negligible" if row.negligible else "no detectable change")
    ci = numbers.interval(row.metric, row.ci95)
    relative = numbers.relative(row.base, row.new) if numbers.unit_of(row.metric) != numbers.RATE else ""
    return (f"{_name(row)}: {numbers.value(row.metric, row.base)} -> {numbers.value(row.metric, row.new)}, "
            f"{numbers.difference(row.metric, row.difference)}{f' ({relative})' if relative else ''}"
            f"{f' 95% CI {ci}' if ci else ''}, p {numbers.p_value(row.p_adjusted)} (Holm over {family}), "
            f"n {row.n:,}: {mark}")


def _sentence(outcome: Outcome, improved: list[str], worsened: list[str], family: int, n: int,
              negligible: Sequence[str] = ()) -> str:
    if outcome == "no verdict":
        return ("No verdict: no primary metric could be compared (name the metrics that decide with --primary, "
                "or [compare] primary in curate.toml)")
    if outcome == "better":
        return f"NEW is better: {', '.join(improved)} improved significantly; no primary metric got worse"
    if outcome == "worse":
        return f"NEW is worse: {', '.join(worsened)} got significantly worse; no primary metric improved"
    if outcome == "mixed":
        return f"Mixed: {', '.join(improved)} improved, but {', '.join(worsened)} got worse (all significant)"
    if negligible:
        return (f"No difference that matters on the {family} primary metrics ({n:,} items both scored): "
                f"{', '.join(negligible)} changed by under {NEGLIGIBLE_MS:g} ms")
    return f"No detectable difference on the {family} primary metrics ({n:,} items both scored)"


def _cost_lines(comparison: Comparison) -> list[str]:
    """Return what the change costs: tokens, p95 latency and money per item, from the paired rows where
    they exist (with their significance), else from the runs' summaries; what was not recorded is said."""
    parts = []
    trade = {t.measure: t for t in comparison.trade_offs}
    for metric in COSTS:
        row = comparison.row(metric)
        if row is not None and row.n:
            sig = ((f"significant, but under {NEGLIGIBLE_MS:g} ms: negligible" if row.negligible else "significant")
                   if row.significant else "not significant") + ("" if row.primary else ", exploratory")
            relative = numbers.relative(row.base, row.new)
            parts.append(f"{label(metric)} {numbers.value(metric, row.base)} -> {numbers.value(metric, row.new)}"
                         f" ({relative + ', ' if relative else ''}{sig})")
            continue
        t = trade.get(TRADE_OFFS[metric])
        if t is not None and t.base is not None and t.new is not None:
            relative = numbers.relative(t.base, t.new)
            parts.append(f"{label(metric)} {numbers.value(metric, t.base)} -> {numbers.value(metric, t.new)}"
                         f" ({relative + ', ' if relative else ''}not tested: no per-item values)")
        else:
            parts.append(f"{label(metric)} not recorded in both runs")
    warmups = comparison.warmup_note
    return ["Costs: " + "; ".join(parts)] + ([warmups] if warmups else [])


def _against(comparison: Comparison, primary: Sequence[CompareRow]) -> list[str]:
    """Return the subsets whose change of a primary metric goes significantly (uncorrected p < alpha,
    exploratory) against the metric's overall change."""
    if not comparison.subsets:
        return ["Subsets: not compared (the release could not be read from the workspace)"]
    lines, quiet = [], 0
    for overall in primary:
        if overall.subset != "all" or not overall.difference:
            continue
        for row in comparison.rows:
            if row.metric != overall.metric or row.subset == "all" or not row.difference or \
                    (row.difference > 0) == (overall.difference > 0):
                continue
            if row.p_value is not None and row.p_value < comparison.alpha:
                lines.append(f"Against the overall direction: {label(row.metric)} on {row.subset} "
                             f"{numbers.difference(row.metric, row.difference)} "
                             f"{numbers.interval(row.metric, row.ci95)} (n {row.n:,}, p {numbers.p_value(row.p_value)}"
                             f" uncorrected, q {numbers.p_value(row.q_value)}; exploratory)")
            else:
                quiet += 1
    if not lines:
        lines.append(f"No subset moved significantly against the overall direction (exploratory, p < "
                     f"{comparison.alpha:g} uncorrected){f'; {quiet} moved the other way within noise' if quiet else ''}")
    return lines


def _judge_lines(primary: Sequence[CompareRow], agreements: Sequence[Mapping[str, JudgeAgreement]]) -> list[str]:
    """Return, per judged primary metric, its changed items held against the judge's own flip rate."""
    lines = []
    for row in primary:
        if not row.metric.startswith("generation/") or row.subset != "all" or not row.n:
            continue
        changed = row.fell + row.rose
        measured = [a[row.metric] for a in agreements if row.metric in a and a[row.metric].compared]
        if not measured:
            lines.append(f"Judge: {row.metric} changed on {changed} of {row.n} items; the judge's own flip rate was "
                         f"not measured (`evalrun run --judge-repeats 2`), so part of it may be the judge's")
            continue
        compared, flipped = sum(a.compared for a in measured), sum(a.changed for a in measured)
        rate = flipped / compared
        bound = binomial_quantile(row.n, rate)
        said = ("more than the judge's own flip rate explains" if changed > bound
                else "within the judge's own flip rate: the judge alone could have made these changes")
        lines.append(f"Judge: {row.metric} changed on {changed} of {row.n} items, {said} (asked again, the judge "
                     f"changes {numbers.percent(rate)} of its verdicts: about {row.n * rate:.1f} items expected, at "
                     f"most {bound} by chance)")
    return lines


def _caveats(comparison: Comparison, primary: Sequence[CompareRow]) -> list[str]:
    lines = []
    if comparison.uncontrolled:
        lines.append("Not a controlled comparison (" + "; ".join(comparison.uncontrolled) + "): the verdict is about "
                     "everything that changed, not the system alone")
    if comparison.new_diagnostic:
        lines.append("NEW is a diagnostic --oracle-context run: its answers saw the verified evidence")
    lines += [f"Declared primary {line}" for line in comparison.family_missing]
    family = len(primary)
    if primary and all(family * smallest_p(r.test, r.n, comparison.resamples) >= comparison.alpha for r in primary):
        lines.append(f"Too few items to detect anything: on {max(r.n for r in primary)} pairs no p-value can get "
                     f"below {comparison.alpha:g} once corrected over {family} primary metrics")
    return lines


def verdict_of(comparison: Comparison, agreements: Sequence[Mapping[str, JudgeAgreement]] = ()) -> Verdict:
    """Return the verdict of `comparison` from its primary rows (`agreements`: each run's
    summary.judge.agreement, for the judge's own flip rate)."""
    primary = [r for r in comparison.rows if r.primary]
    improved = [_name(r) for r in primary if r.better]
    worsened = [_name(r) for r in primary if r.worse]
    outcome: Outcome = ("no verdict" if not primary else "mixed" if improved and worsened else
                        "better" if improved else "worse" if worsened else "no detectable difference")
    family = len(primary)
    ordered = sorted(primary, key=lambda r: (not r.significant, r.subset != "all"))
    negligible = [_name(r) for r in primary if r.negligible]
    return Verdict(outcome=outcome, sentence=_sentence(outcome, improved, worsened, family, comparison.items,
                                                       negligible),
                   improved=improved, worsened=worsened,
                   unchanged=[_name(r) for r in primary if not r.significant],
                   changes=[change_line(r, family) for r in ordered], costs=_cost_lines(comparison),
                   against=_against(comparison, primary), judge=_judge_lines(primary, agreements),
                   caveats=_caveats(comparison, primary))
