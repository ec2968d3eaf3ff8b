"""Scoring speed: `aggregate` (one resample matrix per subset, shared by its metrics) against the previous
per-metric bootstrap and scipy.stats.bootstrap, same synthetic scores, same process, intervals compared.

Run: `.venv/bin/python benchmarks/scoring_speed.py` (options: --items, --seed, --no-scipy);
writes benchmarks/results/scoring_speed.json.

Synthetic scores (deterministic, --seed): --items rows (1,000, 3,000 and 10,000) of `ItemScores` with
45 metrics: candidates/ and context/ x hit_rate, recall, precision, mrr, ndcg x @1, 3, 5, 10 (40; hit_rate
is 0/1), success (0/1), and exact_match (0/1), token_f1, rouge_l, refusal_accuracy (0/1), unscored with a
reason for 30% of the items. 2% of the targets failed. Subsets as `subsets_of` makes them: difficulty
(3 values), qtype (5), source (3), split (2) and tags (3 on 20% of the items each, one on 0.5%, where
0/1 metrics get Wilson intervals): 17 subsets and "all", every item in "all", one value of each field
and its tags.

Timed with time.perf_counter in one process, the rows already in memory:
- ours: `aggregate` (best of 3);
- reference: the previous implementation, kept below as `reference_aggregate`: per metric per subset a
  fresh `rng.integers` (resamples x n) index matrix, values rounded to 6 places (once: it is slow);
- scipy (when installed): `scipy.stats.bootstrap`, percentile method, per metric per subset (once).
The intervals are compared with the reference's: the max |difference| of the endpoints, apart for those
ours computes by the bootstrap (resampling noise: ~0.01, more on the rare tag's few items; also shown as a
share of the reference interval's width) and by Wilson's formula (0/1 metrics on small subsets or with all
values equal, where the reference bootstraps and may claim [1, 1]).

More steps (the whole scoring, `score_run`) are timed by adding a function to TIMINGS: it takes the
workload and the options and returns `Timing`s, which the table and the JSON report alike.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from common import machine, print_table, save_json

from evalrun.records import ItemScores, MetricSummary
from evalrun.scoring.aggregate import RESAMPLES, SEED, aggregate

try:
    import scipy.stats
except ImportError:  # scipy is no dependency of evalrun: the comparison is skipped without it
    scipy = None

RESULTS = Path(__file__).resolve().parent / "results" / "scoring_speed.json"
TARGET_S = 2.0  # aggregation of 10,000 items (of the 10 s the whole scoring step may take on 2 cores)
REPEATS = 3
KS = (1, 3, 5, 10)
RETRIEVAL = ("hit_rate", "recall", "precision", "mrr", "ndcg")
LEXICAL = ("exact_match", "token_f1", "rouge_l", "refusal_accuracy")
METRICS = [f"{layer}/{name}@{k}" for layer in ("candidates", "context") for name in RETRIEVAL for k in KS]
METRICS += ["success", *LEXICAL]
FIELDS = {"difficulty": ("easy", "medium", "hard"), "qtype": ("single", "multi", "compare", "numeric", "none"),
          "source": ("human", "synthetic", "imported"), "split": ("dev", "test")}
TAGS = {"multi-hop": 0.2, "zh": 0.2, "table": 0.2, "rare": 0.005}  # tag: share of the items


# -- the workload ---------------------------------------------------------------------------------

@dataclass
class Workload:
    """What scoring has once the traces are scored: one row per item, the metric names, the subsets."""

    rows: list[ItemScores]
    metrics: list[str]
    subsets: dict[str, list[str]]


def _retrieval(rng: np.random.Generator, items: int, depth: int) -> dict[str, np.ndarray]:
    """Return {metric@K: values} for `items` queries with 1-3 relevant chunks each, every one retrieved
    at its own rank within the first `depth` with probability 0.7 (else never)."""
    relevant = rng.integers(1, 4, size=items)
    distinct = rng.random((items, depth)).argsort(axis=1)[:, :3] + 1
    ranks = np.where(rng.random((items, 3)) < 0.7, distinct, 10**6)
    ranks = np.where(np.arange(3) < relevant[:, None], ranks, 10**6)
    first = ranks.min(axis=1)
    values = {}
    for k in KS:
        found = (ranks <= k).sum(axis=1)
        gains = np.where(ranks <= k, 1 / np.log2(ranks + 1.0), 0.0).sum(axis=1)
        ideal = np.array([sum(1 / np.log2(r + 2.0) for r in range(min(g, k))) for g in range(4)])[relevant]
        values[f"hit_rate@{k}"] = (found > 0).astype(float)
        values[f"recall@{k}"] = found / relevant
        values[f"precision@{k}"] = found / k
        values[f"mrr@{k}"] = np.where(first <= k, 1 / first, 0.0)
        values[f"ndcg@{k}"] = gains / ideal
    return values


def synthesize(items: int, seed: int) -> Workload:
    """Return `items` rows of scores, as scoring makes them, with the subsets `subsets_of` would make."""
    rng = np.random.default_rng(seed)
    columns = {f"candidates/{k}": v for k, v in _retrieval(rng, items, 20).items()}
    columns |= {f"context/{k}": v for k, v in _retrieval(rng, items, 8).items()}
    failed = rng.random(items) < 0.02
    columns["success"] = (~failed & (rng.random(items) < 0.8)).astype(float)
    columns["exact_match"] = (rng.random(items) < 0.35).astype(float)
    columns["token_f1"] = np.clip(rng.beta(2, 2, size=items), 0, 1)
    columns["rouge_l"] = np.clip(rng.beta(2, 3, size=items), 0, 1)
    columns["refusal_accuracy"] = (rng.random(items) < 0.9).astype(float)
    lexical_missing = rng.random(items) < 0.3
    listed = {name: column.tolist() for name, column in columns.items()}
    rows, subsets = [], {}
    choices = {name: rng.integers(0, len(values), size=items) for name, values in FIELDS.items()}
    tagged = rng.random((items, len(TAGS))) < np.array(list(TAGS.values()))
    for i in range(items):
        item_id = f"i{i:05d}"
        values = {name: listed[name][i] for name in METRICS}
        unscored = {}
        if lexical_missing[i]:
            for name in LEXICAL:
                del values[name]
                unscored[name] = "no reference answer"
        rows.append(ItemScores(item_id=item_id, answerable=not lexical_missing[i], values=values, unscored=unscored,
                               failed="target timed out" if failed[i] else None))
        for name, options in FIELDS.items():
            subsets.setdefault(f"{name}={options[choices[name][i]]}", []).append(item_id)
        for t, tag in enumerate(TAGS):
            if tagged[i, t]:
                subsets.setdefault(f"tag={tag}", []).append(item_id)
    return Workload(rows, list(METRICS), subsets)


# -- the previous implementation, kept as the reference ---------------------------------------------

def _reference_ci(values: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED) -> tuple[float, float] | None:
    data = np.asarray(values, dtype=float)
    if len(data) < 2:
        return None
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(resamples, len(data)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return round(float(low), 6), round(float(high), 6)


def _reference_metric(values: Sequence[float | None], reasons: Sequence[str | None]) -> MetricSummary:
    scored = [v for v in values if v is not None]
    unscored = Counter(r or "unscored" for v, r in zip(values, reasons) if v is None)
    return MetricSummary(n=len(scored), mean=round(float(np.mean(scored)), 6) if scored else None,
                         ci95=_reference_ci(scored), unscored=dict(unscored))


def reference_aggregate(rows: Sequence[ItemScores], metrics: Sequence[str],
                        subsets: dict[str, list[str]]) -> dict[str, dict[str, MetricSummary]]:
    """Return the aggregates as evalrun computed them before shared resamples (a bootstrap per metric
    per subset, each with its own index matrix)."""
    by_id = {row.item_id: row for row in rows}
    result = {}
    for label, ids in [("all", list(by_id))] + sorted(subsets.items()):
        chosen = [by_id[i] for i in ids if i in by_id]
        table = {}
        for metric in metrics:
            applicable = [r for r in chosen if metric in r.values or metric in r.unscored]
            if applicable:
                table[metric] = _reference_metric([r.values.get(metric) for r in applicable],
                                                  [r.unscored.get(metric) for r in applicable])
        result[label] = table
    return result


def scipy_aggregate(rows: Sequence[ItemScores], metrics: Sequence[str],
                    subsets: dict[str, list[str]]) -> dict[str, dict[str, tuple[float, float] | None]]:
    """Return {label: {metric: interval}} from scipy.stats.bootstrap (percentile), per metric per subset."""
    by_id = {row.item_id: row for row in rows}
    result = {}
    for label, ids in [("all", list(by_id))] + sorted(subsets.items()):
        chosen = [by_id[i] for i in ids if i in by_id]
        table = {}
        for metric in metrics:
            data = np.array([r.values[metric] for r in chosen if metric in r.values])
            if len(data) >= 2:
                found = scipy.stats.bootstrap((data,), np.mean, n_resamples=RESAMPLES, method="percentile",
                                              vectorized=True, rng=np.random.default_rng(SEED))
                table[metric] = (float(found.confidence_interval.low), float(found.confidence_interval.high))
        result[label] = table
    return result


# -- timings ---------------------------------------------------------------------------------------

@dataclass
class Timing:
    """One implementation of one step timed on one workload."""

    step: str
    implementation: str
    items: int
    seconds: float
    figures: dict = field(default_factory=dict)  # what else it measured: differences from the reference, ...


def timed(function: Callable, *args, repeats: int = 1):
    """Return (fastest seconds over `repeats` runs, result of the last run)."""
    best, result = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        result = function(*args)
        best = min(best, time.perf_counter() - started)
    return best, result


def _differences(ours: dict[str, dict[str, MetricSummary]], theirs: dict[str, dict], interval) -> dict:
    """Return, by our ci_method, the max |difference| of interval endpoints from theirs, also as a share
    of their interval's width; the max |difference| of means (when they have means); the counts compared."""
    gaps: dict[str, float] = {}  # a method with nothing compared has no figure (None), not 0
    shares: dict[str, float] = {}
    compared: Counter = Counter()
    mean_gap = None
    for label, table in ours.items():
        for metric, summary in table.items():
            other = theirs.get(label, {}).get(metric)
            theirs_ci = interval(other)
            if isinstance(other, MetricSummary) and summary.mean is not None and other.mean is not None:
                mean_gap = max(mean_gap or 0.0, abs(summary.mean - other.mean))
            if summary.ci95 and theirs_ci:
                method = summary.ci_method
                gap = max(abs(summary.ci95[0] - theirs_ci[0]), abs(summary.ci95[1] - theirs_ci[1]))
                gaps[method] = max(gaps.get(method, 0.0), gap)
                if theirs_ci[1] > theirs_ci[0]:
                    shares[method] = max(shares.get(method, 0.0), gap / (theirs_ci[1] - theirs_ci[0]))
                compared[method] += 1
    return {"max_endpoint_diff_bootstrap": gaps.get("bootstrap"), "max_endpoint_diff_wilson": gaps.get("wilson"),
            "max_endpoint_diff_share_of_width_bootstrap": shares.get("bootstrap"),
            "intervals_compared": dict(compared), "max_mean_diff": mean_gap}


def time_aggregation(workload: Workload, args: argparse.Namespace) -> list[Timing]:
    """Return the timings of `aggregate`, the reference and scipy on the workload."""
    items = len(workload.rows)
    data = (workload.rows, workload.metrics, workload.subsets)
    seconds, ours = timed(aggregate, *data, repeats=REPEATS)
    methods = Counter(s.ci_method or "none" for table in ours.values() for s in table.values())
    timings = [Timing("aggregate", "ours: shared resamples", items, seconds,
                      {"labels": len(ours), "metrics": len(workload.metrics), "ci_methods": dict(methods)})]
    seconds, reference = timed(reference_aggregate, *data)
    timings.append(Timing("aggregate", "reference: per-metric bootstrap", items, seconds,
                          _differences(ours, reference, lambda s: s.ci95 if s else None)))
    if scipy is not None and not args.no_scipy:
        seconds, found = timed(scipy_aggregate, *data)
        timings.append(Timing("aggregate", "scipy.stats.bootstrap", items, seconds,
                              _differences(ours, found, lambda ci: ci)))
    return timings


TIMINGS: list[Callable[[Workload, argparse.Namespace], list[Timing]]] = [time_aggregation]


def main(argv: list[str] | None = None) -> int:
    """Synthesize, time, print and save the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", default="1000,3000,10000", help="Comma-separated numbers of items.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-scipy", action="store_true", help="Leave scipy.stats.bootstrap out.")
    args = parser.parse_args(argv)
    loaded = os.getloadavg()  # other processes on the cores slow every figure: the results say so
    timings = []
    for items in (int(n) for n in args.items.split(",")):
        workload = synthesize(items, args.seed)
        for timing in TIMINGS:
            timings.extend(timing(workload, args))
    rows = []
    for t in timings:
        ours = next(o for o in timings if o.step == t.step and o.items == t.items)
        diff = t.figures.get("max_endpoint_diff_bootstrap")
        share = t.figures.get("max_endpoint_diff_share_of_width_bootstrap")
        wilson = t.figures.get("max_endpoint_diff_wilson")
        met = "" if t is not ours or t.items < 10_000 else "PASS" if t.seconds <= TARGET_S else "FAIL"
        rows.append((t.step, t.implementation, f"{t.items:,}", f"{t.seconds:.3f}", f"{t.seconds / ours.seconds:.1f}x",
                     "" if diff is None else f"{diff:.4f}" + ("" if share is None else f" ({share:.0%})"),
                     "" if wilson is None else f"{wilson:.4f}",
                     met))
    print(f"{len(METRICS)} metrics, {len(FIELDS)} fields and {len(TAGS)} tags, {RESAMPLES} resamples; "
          f"|d|: max difference of interval endpoints from ours, by our method (share of their width)")
    print_table(("step", "implementation", "items", "seconds", "vs ours", "|d| bootstrap", "|d| wilson",
                 f"10,000 in <= {TARGET_S:g} s"), rows, left=2)
    save_json(RESULTS, {"benchmark": "scoring_speed", "date": datetime.now(timezone.utc).isoformat(),
                        "machine": machine(scipy=None if scipy is None else scipy.__version__,
                                           numpy=np.__version__, load_average_before=loaded,
                                           load_average_after=os.getloadavg()),
                        "metrics": len(METRICS), "resamples": RESAMPLES, "target_s_per_10000": TARGET_S,
                        "timings": [{"step": t.step, "implementation": t.implementation, "items": t.items,
                                     "seconds": round(t.seconds, 4), **t.figures} for t in timings]})
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
