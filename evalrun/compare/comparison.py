"""`evalrun compare BASE NEW`: every metric overall and per subset, paired over the items both runs
scored; the primary family (`evalrun.compare.family`: the few metrics declared to decide, and the
gate's rules) corrected together by Holm's method, every other row exploratory with its uncorrected
p-value and a Benjamini-Hochberg q-value; a verdict in words (`evalrun.compare.verdict`); and the
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
from curate import (
    EvalItem,
    InputError,
    NotFound,
    Releases,
    Workspace,
    load_release,
)
from evalrun.compare.comparable import Comparability, check_comparable
from evalrun.compare.flips import flip_counts, item_flips, unstable_items
from evalrun.compare.family import family_of
from evalrun.compare.quantile import paired_quantile
from evalrun.compare.stats import RESAMPLES, SWAP_RESAMPLES, PairedComparison, bh, compare_paired, holm
from evalrun.compare.records import (  # the records are read from here too
    ALPHA,
    NEGLIGIBLE_MS,
    CompareRow,
    Comparison,
    GateResult,
    TradeOff,
    Verdict,
)
from evalrun.compare.scope import compare_scope
from evalrun.compare.verdict import verdict_of
from evalrun import numbers
from evalrun.numbers import COST_PER_ITEM, LATENCY_P95, TOKENS_PER_ITEM
from evalrun.records import ItemScores, Run, scored_run
from evalrun.scoring.summary import subsets_of

# Metrics where a rise is a change for the worse.
LOWER_IS_BETTER = frozenset({"generation/hallucination_rate", "generation/key_points_contradicted",
                             "unanswerable/retrieved", LATENCY_P95, TOKENS_PER_ITEM, COST_PER_ITEM})
RETRIEVAL_LAYERS = ("candidates/", "context/")


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


def _e2e(row: ItemScores) -> dict[str, float]:
    """Return an item's tokens and cost as values of the end-to-end rows (what its trace did not report
    is absent: unknown, never 0)."""
    e2e = getattr(row, "end_to_end", None)
    if e2e is None:
        return {}
    found = {}
    if e2e.tokens is not None:
        found[TOKENS_PER_ITEM] = float(e2e.tokens)
    if e2e.cost is not None:
        found[COST_PER_ITEM] = float(e2e.cost)
    return found


def values_of(row: ItemScores) -> dict[str, float]:
    """Return an item's metric values and its end-to-end values (tokens, cost), the columns compared."""
    values = _e2e(row)
    return {**row.values, **values} if values else row.values


def latency_of(row: ItemScores) -> float | None:
    """Return an item's total latency in ms, None when it was a warm-up call, failed, or was not timed."""
    e2e = getattr(row, "end_to_end", None)
    if e2e is None or e2e.warmup or e2e.latency_ms is None or row.failed:   # a failed call is no answer's wait
        return None
    return float(e2e.latency_ms)


def metric_names(base: Run, new: Run, ks: Sequence[int], patterns: Sequence[str] = ()) -> list[str]:
    """Return the metrics both runs have (tokens and cost per item among them when both recorded them),
    at the cutoffs both used, narrowed to the globs `patterns` (each must match one); retrieval first."""
    def names(run: Run) -> set[str]:
        return {m for row in run.scores for m in (*values_of(row), *row.unscored)}
    cutoffs = {str(k) for k in ks}
    common = [m for m in names(base) & names(new)
              if not (m.startswith(RETRIEVAL_LAYERS) and "@" in m) or m.rsplit("@", 1)[1] in cutoffs]
    if _timed(base) and _timed(new):
        common.append(LATENCY_P95)
    for pattern in patterns:
        if not any(fnmatch.fnmatchcase(m, pattern) for m in common):
            raise InputError(f"no metric of both runs matches {pattern!r} (e.g. 'context/recall@*', 'lexical/*')",
                             field="metric")
    if patterns:
        common = [m for m in common if any(fnmatch.fnmatchcase(m, p) for p in patterns)]
    return sorted(common, key=metric_order)


def _timed(run: Run) -> bool:
    """Return whether a run's scores hold per-item latencies (runs scored before they were recorded do not)."""
    return any(latency_of(row) is not None for row in run.scores)


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


def warmup_note(base: Run, new: Run) -> str | None:
    """Return the line that says how many warm-up calls each run timed apart, left out of its latency."""
    said = []
    for side, run in (("BASE", base), ("NEW", new)):
        e2e = run.summary.end_to_end
        calls, timed = getattr(e2e, "warmup_calls", 0), getattr(e2e, "warmup_ms", None)
        if calls:
            said.append(f"{calls} in {side}" + (f" (slowest {numbers.ms(timed.max)})" if timed else ""))
    if not said:
        return None
    return f"Warm-up calls, timed apart and left out of latency: {', '.join(said)}"


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
    values = {i: values_of(rows[i]) for i in ids}
    return np.array([[values[i].get(name, nan) for name in names] for i in ids],
                    dtype=np.float64).reshape(len(ids), len(names))


def _row(result: PairedComparison) -> CompareRow:
    return CompareRow(metric=result.metric, subset=result.subset, n=result.n, left_out=result.left_out,
                      base=result.base_mean, new=result.new_mean, difference=result.difference, ci95=result.ci95,
                      ci_method=result.ci_method, p_value=result.p_value, test=result.test,
                      discordant=result.discordant, fell=result.fell, rose=result.rose)


def _paired_rows(rows_of: list[dict], ids: list[str], names: list[str], subsets: dict,
                 resamples: int) -> tuple[list[CompareRow], np.ndarray, np.ndarray]:
    """Return every row compared (metric x subset; p95 latency on "all" only), and both runs' values."""
    means = [n for n in names if n != LATENCY_P95]
    base_values, new_values = _matrix(rows_of[0], ids, means), _matrix(rows_of[1], ids, means)
    table = compare_paired(base_values, new_values, means, subsets, resamples=resamples) if ids and means else {}
    # a metric that does not apply to a subset's items (retrieval on unanswerable ones) has no row there
    rows = [_row(r) for r in table.values() if r.n or r.left_out]
    if LATENCY_P95 in names and ids:
        timings = [np.array([latency_of(r[i]) for i in ids], dtype=np.float64) for r in rows_of]   # None: NaN
        rows.append(_row(paired_quantile(LATENCY_P95, *timings, resamples=min(resamples, SWAP_RESAMPLES))))
    rows.sort(key=lambda r: (r.subset != "all", r.subset, metric_order(r.metric)))
    return rows, base_values, new_values


def _decide(rows: list[CompareRow], family, alpha: float) -> None:
    """Set each row's corrected p-value: Holm over the primary family, Benjamini-Hochberg q-values over
    the exploratory rows; significant, better and worse from them."""
    primary = [r for r in rows if r.p_value is not None and (r.metric, r.subset) in family]
    explored = [r for r in rows if r.p_value is not None and (r.metric, r.subset) not in family]
    for row, adjusted in zip(primary, holm([r.p_value for r in primary]).tolist()):
        row.primary, row.p_adjusted, row.significant = True, adjusted, adjusted < alpha
    for row, q in zip(explored, bh([r.p_value for r in explored]).tolist()):
        row.q_value, row.significant = q, q < alpha
    for row in primary + explored:
        rises = row.difference > 0
        good = not rises if row.metric in LOWER_IS_BETTER else rises
        row.negligible = row.significant and row.metric == LATENCY_P95 and abs(row.difference) < NEGLIGIBLE_MS
        counted = row.significant and row.difference != 0 and not row.negligible
        row.better = counted and good
        row.worse = counted and not good


def compare_runs(base: Run, new: Run, *, items: list[EvalItem] | None = None, metrics: Sequence[str] = (),
                 primary: Sequence[str] = (), primary_source: str = "--primary",
                 gate: Sequence[tuple[Sequence[str], str]] = (), alpha: float = ALPHA,
                 checked: Comparability | None = None, resamples: int = RESAMPLES) -> Comparison:
    """Return the comparison of the scored run `new` against `base`: every metric on "all" and on every
    subset of the release's `items` (None: "all" only), paired over the items both scored; the primary
    family (the globs `primary`, from `primary_source`, else the default list; joined by the `gate`'s
    (metric globs, subset) rules) Holm-corrected together, every other row exploratory with a BH q-value;
    `metrics` (globs) narrows the exploratory rows, never the family; and the verdict."""
    checked = checked or check_comparable(base, new)
    every = metric_names(base, new, checked.ks)
    shown = set(metric_names(base, new, checked.ks, metrics)) if metrics else set(every)
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
    rows, base_values, new_values = _paired_rows(rows_of, ids, every, subsets, resamples)
    tested = [(r.metric, r.subset) for r in rows if r.p_value is not None]
    family = family_of(every, tested, checked.ks, declared=primary, source=primary_source, gate=gate)
    rows = [r for r in rows if r.metric in shown or r.metric in family.metrics or (r.metric, r.subset) in family]
    _decide(rows, family, alpha)
    means = [n for n in every if n != LATENCY_P95]
    binary = {r.metric: r.n for r in rows if r.subset == "all" and r.test == "mcnemar_exact"}
    unstable = {}
    for metric in binary:
        measured = [u for u in (unstable_items(r, metric) for r in rows_of) if u is not None]
        unstable[metric] = set().union(*measured) if measured else None
    flips = item_flips(ids, means, base_values, new_values, binary,
                       *({i: row.attribution for i, row in r.items() if row.attribution} for r in rows_of),
                       unstable=unstable)
    agreements = [run.summary.judge.agreement if run.summary.judge else {} for run in (base, new)]
    source = family.source + (" + gate" if gate else "")
    comparison = Comparison(
        base=str(base.folder), new=str(new.folder), base_target=base.manifest.target,
        new_target=new.manifest.target, alpha=alpha, primary_source=source,
        family=[m if s == "all" else f"{m} on {s}" for m, s in family.rows], family_missing=family.missing,
        family_notes=family.notes, compared=sum(r.primary for r in rows),
        exploratory=sum(r.q_value is not None for r in rows), resamples=resamples,
        items=len(checked.items), base_only=checked.base_only, new_only=checked.new_only,
        apart=len(apart), subsets=items is not None,
        warnings=list(checked.warnings) + usage_warnings(base, new),
        uncontrolled=checked.uncontrolled, new_diagnostic=checked.new_diagnostic, rows=rows,
        trade_offs=_trade_offs(base, new), warmup_note=warmup_note(base, new), flips=flips,
        flip_counts=flip_counts(flips, binary, agreements), scope=compare_scope(base, new))
    comparison.verdict = verdict_of(comparison, agreements)
    return comparison
