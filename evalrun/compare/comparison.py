"""`evalrun compare BASE NEW`: every metric overall and per subset, paired over the items both runs
scored, with the p-values corrected (Holm) for the number of metrics x subsets compared; and the
end-to-end trade-offs (latency, tokens, cost) side by side.

A row compares one metric on one subset ("all" or "difficulty=hard", ...) over the items whose
metric has a value in BOTH runs (n); an item with a value in one run only, or unscored in either,
is left out of that row and counted (`left_out`). Items scored apart (their evidence in documents
the leakage check excluded) are in no row, as in the runs' own summaries.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from pydantic import Field

from curate import (
    EvalItem,
    InputError,
    NotFound,
    Record,
    Releases,
    Workspace,
    load_release,
)
from evalrun.compare.comparable import Comparability, check_comparable
from evalrun.compare.flips import FlipCount, ItemFlip, flip_counts, item_flips, unstable_items
from evalrun.compare.stats import RESAMPLES, bh, compare_paired, holm
from evalrun.records import Run, scored_run
from evalrun.scoring.summary import subsets_of

ALPHA = 0.05
CORRECTION = "holm"
CORRECTIONS = ("holm", "bh")
# Metrics where a rise is a change for the worse.
LOWER_IS_BETTER = frozenset({"generation/hallucination_rate", "generation/key_points_contradicted",
                             "unanswerable/retrieved"})
RETRIEVAL_LAYERS = ("candidates/", "context/")


class CompareRow(Record):
    """One metric on one subset, paired over the items both runs scored."""

    metric: str = Field(description="The metric.")
    subset: str = Field(description="'all', or a subset label such as 'difficulty=hard'.")
    n: int = Field(description="Items with a value in both runs (the pairs compared).")
    left_out: int = Field(description="Items of the subset with a value in one run only (left out of both sides).")
    base: float | None = Field(None, description="BASE's mean over the n pairs.")
    new: float | None = Field(None, description="NEW's mean over the n pairs.")
    difference: float | None = Field(None, description="Mean of NEW - BASE over the pairs.")
    ci95: tuple[float, float] | None = Field(None, description="95% interval of the difference (see ci_method).")
    ci_method: str | None = Field(None, description="bootstrap (paired percentile bootstrap), or newcombe: Newcombe's "
                                  "score interval for paired proportions, for a 0/1 metric on fewer than 100 pairs or "
                                  "without a discordant pair, where the bootstrap is too narrow.")
    p_value: float | None = Field(None, description="Paired test's p-value (see test).")
    p_adjusted: float | None = Field(None, description="p-value corrected (Holm, or BH) over every row compared.")
    test: str | None = Field(None, description="mcnemar_exact (0/1 values), sign_flip_exact or sign_flip (a "
                             "Monte Carlo permutation test of the mean difference).")
    discordant: tuple[int, int] | None = Field(None, description="0/1 metrics: items that went 1 -> 0, and 0 -> 1.")
    fell: int = Field(0, description="Pairs whose value is lower in NEW.")
    rose: int = Field(0, description="Pairs whose value is higher in NEW.")
    significant: bool = Field(False, description="p_adjusted below alpha.")
    worse: bool = Field(False, description="Significant and in the worse direction (a fall; a rise for the "
                        "metrics where lower is better).")


class TradeOff(Record):
    """One end-to-end measure of both runs side by side."""

    measure: str = Field(description="e.g. 'latency p95 total (ms)', 'system cost per item (USD)'.")
    base: float | None = Field(None, description="BASE's value.")
    new: float | None = Field(None, description="NEW's value.")
    change: float | None = Field(None, description="Relative change (NEW - BASE) / BASE, when BASE is not 0.")


class GateResult(Record):
    """What the gate decided: every rule checked, and the ones that failed, one line each."""

    source: str = Field(description="Where the rules came from.")
    passed: bool = Field(description="Every rule held (and none was unable to fail, unless --allow-weak-rules).")
    checked: list[str] = Field(default_factory=list, description="Every rule checked, one line each.")
    failed: list[str] = Field(default_factory=list, description="The rules that failed, one line each.")
    weak: list[str] = Field(default_factory=list, description="Guards that could not have failed whatever NEW did "
                            "(too few pairs for any p-value to get below alpha after the correction), one line "
                            "each; they fail the gate unless --allow-weak-rules.")


class Comparison(Record):
    """A comparison of NEW against BASE, as `evalrun compare --json` prints it."""

    base: str = Field(description="BASE's run folder.")
    new: str = Field(description="NEW's run folder.")
    base_target: str = Field(description="BASE's system under test.")
    new_target: str = Field(description="NEW's system under test.")
    correction: str = Field(CORRECTION, description="How p-values are corrected for the rows compared.")
    alpha: float = Field(ALPHA, description="Significance level of p_adjusted.")
    compared: int = Field(0, description="Rows with a p-value: the number Holm corrects for.")
    resamples: int = Field(RESAMPLES, description="Resamples of the bootstrap and of the Monte Carlo sign-flip test "
                           "(whose p-value is never below 1 / (1 + resamples)).")
    items: int = Field(description="Items both runs scored.")
    base_only: list[str] = Field(default_factory=list, description="Items only BASE scored.")
    new_only: list[str] = Field(default_factory=list, description="Items only NEW scored.")
    apart: int = Field(0, description="Items scored apart in either run, in no row.")
    subsets: bool = Field(True, description="False when the release could not be read: 'all' only.")
    warnings: list[str] = Field(default_factory=list, description="Lines to read before any number.")
    uncontrolled: list[str] = Field(default_factory=list, description="What differs besides the system; empty "
                                    "for a controlled comparison.")
    new_diagnostic: bool = Field(False, description="NEW is an --oracle-context run (never the NEW side of a gate).")
    rows: list[CompareRow] = Field(default_factory=list, description="Every metric x subset compared.")
    trade_offs: list[TradeOff] = Field(default_factory=list, description="Latency, tokens and cost side by side.")
    flips: list[ItemFlip] = Field(default_factory=list, description="Per 0/1 metric, the items that went from pass "
                                  "to fail and back, with their attribution before and after.")
    flip_counts: list[FlipCount] = Field(default_factory=list, description="Per 0/1 metric, its flips, held against "
                                         "the judge's own flip rate where a run measured it (--judge-repeats).")
    gate: GateResult | None = Field(None, description="The gate's verdict, when the comparison was held to one "
                                    "(--gate); None otherwise.")

    def row(self, metric: str, subset: str = "all") -> CompareRow | None:
        """Return the row of one metric on one subset, if it was compared."""
        return next((r for r in self.rows if r.metric == metric and r.subset == subset), None)


def release_items(workspace: Workspace | None, run: Run) -> list[EvalItem] | None:
    """Return the items of the release a run evaluated, or None when it cannot be read from the workspace
    (the comparison then has 'all' only, and says so)."""
    if workspace is None:
        return None
    try:
        _, items = load_release(Releases(workspace, run.manifest.dataset).path(run.manifest.version))
    except (NotFound, OSError):
        return None
    return items


def metric_order(name: str) -> tuple:
    """Sort key: retrieval by metric, K and layer first, then the other metrics by name."""
    if name.startswith(RETRIEVAL_LAYERS) and "@" in name:
        layer, rest = name.split("/", 1)
        metric, k = rest.split("@", 1)
        return (0, metric, int(k) if k.isdigit() else 0, layer)
    return (1, name, 0, "")


def metric_names(base: Run, new: Run, ks: Sequence[int], patterns: Sequence[str] = ()) -> list[str]:
    """Return the metrics both runs have, at the cutoffs both used, narrowed to the globs `patterns`
    (each must match one); retrieval first."""
    def names(run: Run) -> set[str]:
        return {m for row in run.scores for m in (*row.values, *row.unscored)}
    cutoffs = {str(k) for k in ks}
    common = [m for m in names(base) & names(new)
              if not (m.startswith(RETRIEVAL_LAYERS) and "@" in m) or m.rsplit("@", 1)[1] in cutoffs]
    for pattern in patterns:
        if not any(fnmatch.fnmatchcase(m, pattern) for m in common):
            raise InputError(f"no metric of both runs matches {pattern!r} (e.g. 'context/recall@*', 'lexical/*')",
                             field="metric")
    if patterns:
        common = [m for m in common if any(fnmatch.fnmatchcase(m, p) for p in patterns)]
    return sorted(common, key=metric_order)


def _trade_offs(base: Run, new: Run) -> list[TradeOff]:
    """Return latency p50/p95 per stage, tokens and cost per item, the system's and the judge's apart."""
    def change(a, b):
        return (b - a) / a if a not in (None, 0) and b is not None else None

    rows = []
    b, n = base.summary, new.summary
    for stage in sorted(set(b.end_to_end.latency_ms) | set(n.end_to_end.latency_ms)):
        lb, ln = b.end_to_end.latency_ms.get(stage), n.end_to_end.latency_ms.get(stage)
        for quantile in ("p50", "p95"):
            vb, vn = getattr(lb, quantile, None), getattr(ln, quantile, None)
            rows.append(TradeOff(measure=f"latency {quantile} {stage} (ms)", base=vb, new=vn, change=change(vb, vn)))

    def per_item(run: Run, value, left_out: int = 0):
        counted = run.summary.items - left_out   # items whose usage was no count or cost are in no sum
        return None if value is None or counted <= 0 else value / counted

    def tokens_per_item(run: Run):
        e2e = run.summary.end_to_end
        total = sum(e2e.system_tokens.values())
        if e2e.usage_reported is None:   # scored before the reports were counted: no token at all is none
            return per_item(run, total or None, e2e.usage_left_out)
        return total / e2e.usage_reported if e2e.usage_reported else None   # none reported: unknown, not 0

    rows.append(TradeOff(measure="system tokens per item", base=tokens_per_item(base), new=tokens_per_item(new),
                         change=change(tokens_per_item(base), tokens_per_item(new))))
    pairs = [
             ("system cost per item (USD)", b.end_to_end.system_cost, n.end_to_end.system_cost, True),
             ("judge tokens per item", b.judge and b.judge.prompt_tokens + b.judge.completion_tokens,
              n.judge and n.judge.prompt_tokens + n.judge.completion_tokens, False),
             ("judge cost per item (USD)", b.judge and b.judge.cost, n.judge and n.judge.cost, False)]
    for measure, vb, vn, system in pairs:
        vb = per_item(base, vb, b.end_to_end.usage_left_out if system else 0)
        vn = per_item(new, vn, n.end_to_end.usage_left_out if system else 0)
        rows.append(TradeOff(measure=measure, base=vb, new=vn, change=change(vb, vn)))
    return rows


def usage_warnings(base: Run, new: Run) -> list[str]:
    """Return a line for each run whose usage, the system's or the judge's, was partly left out as no
    count or cost: its trade-offs are over what could be counted."""
    lines = []
    for side, run in (("BASE", base), ("NEW", new)):
        left_out = run.summary.end_to_end.usage_left_out
        if left_out:
            lines.append(f"{side}: {left_out} items' usage is no count or cost (negative, NaN, text): the system's "
                         f"tokens and cost per item are over the other {run.summary.items - left_out} items")
        judge = run.summary.judge
        if judge is not None and judge.usage_left_out:
            lines.append(f"{side}: {judge.usage_left_out} judge replies reported a usage that is no token count: "
                         f"left out of the judge's tokens and cost")
    return lines


def _matrix(rows: dict, ids: Sequence[str], names: Sequence[str]) -> np.ndarray:
    """Return the items x metrics values of one run, NaN where an item has no value."""
    nan = float("nan")
    return np.array([[rows[i].values.get(name, nan) for name in names] for i in ids],
                    dtype=np.float64).reshape(len(ids), len(names))


def compare_runs(base: Run, new: Run, *, items: list[EvalItem] | None = None, metrics: Sequence[str] = (),
                 alpha: float = ALPHA, correction: str = CORRECTION, checked: Comparability | None = None,
                 resamples: int = RESAMPLES) -> Comparison:
    """Return the comparison of the scored run `new` against `base`: every metric (or those matching
    the globs `metrics`) on "all" and on every subset of the release's `items` (None: "all" only),
    paired over the items both scored, the p-values corrected (`correction`: holm or bh) over every
    row with a p-value."""
    checked = checked or check_comparable(base, new)
    names = metric_names(base, new, checked.ks, metrics)
    rows_of = [{row.item_id: row for row in run.scores} for run in (base, new)]
    apart = {i for rows in rows_of for i, row in rows.items() if row.apart}
    ids = [i for i in checked.items if i not in apart]
    position = {item_id: k for k, item_id in enumerate(ids)}
    subsets = {}
    if items is not None:
        for label, members in sorted(subsets_of(items).items()):
            chosen = [position[i] for i in members if i in position]
            if chosen:
                subsets[label] = np.array(chosen, dtype=np.intp)
    base_values, new_values = _matrix(rows_of[0], ids, names), _matrix(rows_of[1], ids, names)
    table = compare_paired(base_values, new_values, names, subsets, resamples=resamples) if ids and names else {}
    rows = []
    for result in table.values():
        if result.n == 0 and result.left_out == 0:
            continue  # the metric does not apply to this subset's items (e.g. retrieval on unanswerable ones)
        rows.append(CompareRow(metric=result.metric, subset=result.subset, n=result.n, left_out=result.left_out,
                               base=result.base_mean, new=result.new_mean, difference=result.difference,
                               ci95=result.ci95, ci_method=result.ci_method, p_value=result.p_value, test=result.test,
                               discordant=result.discordant, fell=result.fell, rose=result.rose))
    rows.sort(key=lambda r: (r.subset != "all", r.subset, metric_order(r.metric)))
    tested = [r for r in rows if r.p_value is not None]
    adjust = holm if correction == "holm" else bh
    for row, adjusted in zip(tested, adjust([r.p_value for r in tested]).tolist()):
        row.p_adjusted = adjusted
        row.significant = adjusted < alpha
        falls = row.difference > 0 if row.metric in LOWER_IS_BETTER else row.difference < 0
        row.worse = row.significant and falls
    binary = {r.metric: r.n for r in rows if r.subset == "all" and r.test == "mcnemar_exact"}
    unstable = {}
    for metric in binary:
        measured = [u for u in (unstable_items(r, metric) for r in rows_of) if u is not None]
        unstable[metric] = set().union(*measured) if measured else None
    flips = item_flips(ids, names, base_values, new_values, binary,
                       *({i: row.attribution for i, row in r.items() if row.attribution} for r in rows_of),
                       unstable=unstable)
    agreements = [run.summary.judge.agreement if run.summary.judge else {} for run in (base, new)]
    return Comparison(base=str(base.folder), new=str(new.folder), base_target=base.manifest.target,
                      new_target=new.manifest.target, correction=correction, alpha=alpha, compared=len(tested),
                      resamples=resamples,
                      items=len(checked.items), base_only=checked.base_only, new_only=checked.new_only,
                      apart=len(apart), subsets=items is not None,
                      warnings=list(checked.warnings) + usage_warnings(base, new),
                      uncontrolled=checked.uncontrolled, new_diagnostic=checked.new_diagnostic, rows=rows,
                      trade_offs=_trade_offs(base, new), flips=flips,
                      flip_counts=flip_counts(flips, binary, agreements))
