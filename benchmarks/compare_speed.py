"""Comparison speed: `compare_paired` (every (metric, subset) column at once, as matrix products) against a
plain per-(metric, subset) numpy loop and scipy.stats.permutation_test + bootstrap, same runs, same process.

Run: `.venv/bin/python benchmarks/compare_speed.py` (options: --items, --resamples, --sample, --seed,
--no-scipy); writes benchmarks/results/compare_speed.json.

Two runs of the same synthetic release (scoring_speed's `synthesize`: 45 metrics, 0/1 and continuous,
30% of the items without the 4 lexical metrics): the base run is synthesize(seed); the new run keeps each
item's base values with probability 0.7 and takes another synthesized run's otherwise, and loses 1% of its
token_f1 values (scored in one run only). 13 subsets (difficulty 3, qtype 5, source 3, split 2) and "all".

Timed with time.perf_counter in one process, the matrices already in memory:
- ours: `compare_paired`, --resamples bootstrap resamples and sign patterns (best of 3, all 3 saved: a
  process sharing the 2 cores, such as a test suite, can make it 2-3x slower); its peak memory
  is measured apart with tracemalloc (numpy reports its buffers to it);
- loop: per (metric, subset) a bootstrap by index matrices (in blocks of rows) and a sign-flip test by a
  (resamples x n) sign matrix, McNemar by scipy.stats.binomtest, on --sample columns spread over the table,
  the time extrapolated to the whole table by the number of columns (the sampled ones are spread evenly);
- scipy (when installed): scipy.stats.permutation_test (paired: permutation_type="samples") and
  scipy.stats.bootstrap (paired, percentile) per column, on a few columns, extrapolated the same way.
The p-values and intervals of the sampled columns are compared with ours (Monte Carlo noise: ~0.005 on p).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from common import machine, print_table, save_json
from scoring_speed import synthesize

from evalrun.compare import PairedComparison, compare_paired

try:
    import scipy.stats
except ImportError:  # scipy is no dependency of evalrun: the comparison with it is skipped without it
    scipy = None

RESULTS = Path(__file__).resolve().parent / "results" / "compare_speed.json"
TARGET_S = 10.0  # two 10,000-item runs, 45 metrics, 13 subsets, 10,000 resamples, on 2 cores
FIELDS = ("difficulty", "qtype", "source", "split")


def runs(items: int, seed: int) -> tuple[np.ndarray, np.ndarray, list[str], dict[str, np.ndarray]]:
    """Return (base, new, metrics, subsets as masks): items x metrics matrices, NaN = unscored."""
    first, other = synthesize(items, seed), synthesize(items, seed + 1)
    metrics = first.metrics

    def matrix(rows) -> np.ndarray:
        return np.array([[row.values.get(m, np.nan) for m in metrics] for row in rows], dtype=np.float64)

    base, changed = matrix(first.rows), matrix(other.rows)
    rng = np.random.default_rng(seed)
    new = np.where((rng.random(items) < 0.7)[:, None], base, changed)
    new[rng.random(items) < 0.01, metrics.index("token_f1")] = np.nan
    index = {row.item_id: k for k, row in enumerate(first.rows)}
    subsets = {}
    for label, ids in sorted(first.subsets.items()):
        if label.split("=")[0] in FIELDS:
            mask = np.zeros(items, dtype=bool)
            mask[[index[i] for i in ids]] = True
            subsets[label] = mask
    return base, new, metrics, subsets


def loop_column(d: np.ndarray, binary: bool, resamples: int, rng: np.random.Generator) -> tuple[tuple, float]:
    """Return (interval, p-value) of one column's differences `d`, the straightforward way."""
    n, rows = len(d), max(1, (1 << 22) // len(d))
    means = np.concatenate([d[rng.integers(0, n, size=(min(rows, resamples - s), n))].mean(axis=1)
                            for s in range(0, resamples, rows)])
    ci = tuple(np.percentile(means, [2.5, 97.5]).tolist())
    if binary:
        worse, better = int(np.count_nonzero(d < 0)), int(np.count_nonzero(d > 0))
        p = 1.0 if worse + better == 0 else scipy.stats.binomtest(worse, worse + better).pvalue
    else:
        flipped = np.concatenate([rng.choice([-1.0, 1.0], size=(min(rows, resamples - s), n)) @ d
                                  for s in range(0, resamples, rows)])
        p = (1 + np.count_nonzero(np.abs(flipped) >= abs(d.sum()) - 1e-9)) / (1 + resamples)
    return ci, float(p)


def scipy_column(base: np.ndarray, new: np.ndarray, resamples: int, seed: int) -> tuple[tuple, float]:
    """Return (interval, p-value) of one column from scipy.stats.bootstrap and permutation_test (paired)."""
    def mean_difference(x, y, axis=-1):
        return np.mean(y - x, axis=axis)

    boot = scipy.stats.bootstrap((base, new), mean_difference, paired=True, vectorized=True, method="percentile",
                                 n_resamples=resamples, rng=np.random.default_rng(seed))
    test = scipy.stats.permutation_test((base, new), mean_difference, permutation_type="samples",
                                        vectorized=True, n_resamples=resamples, rng=np.random.default_rng(seed))
    return (float(boot.confidence_interval.low), float(boot.confidence_interval.high)), float(test.pvalue)


def reference(name: str, column, table: dict[tuple[str, str], PairedComparison], base, new, metrics, subsets,
              keys: list[tuple[str, str]]) -> dict:
    """Return the figures of `column` run on `keys`: seconds, the whole table's extrapolated seconds, and
    the max differences of its p-values and interval endpoints from ours."""
    masks = {"all": np.ones(len(base), dtype=bool), **subsets}
    started = time.perf_counter()
    found = {}
    for metric, label in keys:
        j = metrics.index(metric)
        both = masks[label] & np.isfinite(base[:, j]) & np.isfinite(new[:, j])
        found[(metric, label)] = column(base[both, j], new[both, j], table[(metric, label)].binary)
    seconds = time.perf_counter() - started
    return {"columns_timed": len(keys), "seconds_timed": round(seconds, 3),
            "seconds_whole_table": round(seconds * len(table) / len(keys), 2),
            "max_p_diff": round(max(abs(found[k][1] - table[k].p_value) for k in keys), 5),
            "max_endpoint_diff": round(max(max(abs(a - b) for a, b in zip(found[k][0], table[k].ci95))
                                           for k in keys), 5)}


def main(argv: list[str] | None = None) -> int:
    """Synthesize, time, print and save the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--sample", type=int, default=20, help="Columns timed with the per-column loop.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-scipy", action="store_true", help="Leave the scipy comparison out.")
    args = parser.parse_args(argv)
    base, new, metrics, subsets = runs(args.items, args.seed)
    loaded = os.getloadavg()  # other processes on the cores slow every figure: the results say so

    def ours():
        return compare_paired(base, new, metrics, subsets, resamples=args.resamples, seed=args.seed)

    runs_s, table = [], None
    for _ in range(3):
        started = time.perf_counter()
        table = ours()
        runs_s.append(round(time.perf_counter() - started, 3))
    best = min(runs_s)
    tracemalloc.start()
    ours()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    tests = {}
    for c in table.values():
        tests[c.test] = tests.get(c.test, 0) + 1
    keys = list(table)[:: max(1, len(table) // args.sample)][: args.sample]
    timings = [{"implementation": "ours: compare_paired", "seconds": round(best, 3), "seconds_each_run": runs_s,
                "peak_memory_mb":
                round(peak / 2**20, 1), "columns": len(table), "tests": tests}]
    if scipy is not None:
        rng = np.random.default_rng(args.seed)
        timings.append({"implementation": "loop: numpy per column",
                        **reference("loop", lambda b, n, binary: loop_column(n - b, binary, args.resamples, rng),
                                    table, base, new, metrics, subsets, keys)})
    if scipy is not None and not args.no_scipy:
        few = [k for k in keys if not table[k].binary][:3]
        timings.append({"implementation": "scipy permutation_test + bootstrap",
                        **reference("scipy", lambda b, n, binary: scipy_column(b, n, args.resamples, args.seed),
                                    table, base, new, metrics, subsets, few)})
    rows = []
    for t in timings:
        whole = t["seconds_whole_table"] if "seconds_whole_table" in t else t["seconds"]
        rows.append((t["implementation"], t.get("columns_timed", t.get("columns")), f"{t.get('seconds_timed', best):.2f}",
                     f"{whole:.2f}", f"{whole / best:.0f}x", t.get("max_p_diff", ""), t.get("max_endpoint_diff", ""),
                     f"{t['peak_memory_mb']} MB" if "peak_memory_mb" in t else "",
                     ("PASS" if best <= TARGET_S else "FAIL") if t is timings[0] else ""))
    print(f"{args.items:,} items x {len(metrics)} metrics x {len(subsets) + 1} subsets (with all) = {len(table)} "
          f"columns, {args.resamples:,} resamples; tests: {tests}; load average before: {loaded[0]:.2f}")
    print_table(("implementation", "columns timed", "seconds timed", "whole table s", "vs ours", "max |dp|",
                 "max |d ci|", "peak memory", f"<= {TARGET_S:g} s"), rows)
    save_json(RESULTS, {"benchmark": "compare_speed", "date": datetime.now(UTC).isoformat(),
                        "machine": machine(numpy=np.__version__, scipy=None if scipy is None else scipy.__version__,
                                           load_average_before=loaded, load_average_after=os.getloadavg()),
                        "items": args.items, "metrics": len(metrics), "subsets_with_all": len(subsets) + 1,
                        "resamples": args.resamples, "target_s": TARGET_S, "timings": timings})
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
