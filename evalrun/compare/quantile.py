"""A paired comparison of a quantile (p95 latency) of two runs: the difference of the runs' 95th
percentiles over the items timed in both, its paired percentile bootstrap interval, and a paired
permutation test that swaps each item's two timings at random.

The mean tests of `evalrun.compare.stats` do not fit: a p95 is not a mean of per-item differences.
Under "no change", each item's two timings are exchangeable, so swapping them leaves the
distribution of p95(new) - p95(base) unchanged; the p-value is the share of random swaps whose
|difference| reaches the observed one, (1 + reached) / (1 + resamples)."""

from __future__ import annotations

import numpy as np

from evalrun.compare.stats import SWAP_RESAMPLES, PairedComparison

QUANTILE = 95
RESAMPLES = SWAP_RESAMPLES   # each resample sorts the items: fewer than the mean tests' 10,000
HELD = 1 << 21       # entries (rows x items) of one block of resamples
SEED = 0


def _p95(values: np.ndarray) -> np.ndarray:
    """Return the 95th percentile (linear, as the run's summary) of each row."""
    return np.percentile(values, QUANTILE, axis=-1)


def paired_quantile(metric: str, base: np.ndarray, new: np.ndarray, *, left_out: int = 0,
                    resamples: int = RESAMPLES, seed: int = SEED) -> PairedComparison:
    """Return the comparison of the 95th percentiles of `new` and `base` (the items' timings, paired,
    NaN where an item is not timed in a run; those items are left out, counted in `left_out` with the
    caller's). `fell` / `rose` count the items faster / slower in NEW.

    >>> base, new = np.full(40, 100.0), np.full(40, 150.0)
    >>> c = paired_quantile("e2e/latency_p95", base, new, resamples=500)
    >>> c.n, c.difference, c.ci95, round(c.p_value, 4)   # every swap of equal pairs moves p95 less than 50 ms
    (40, 50.0, (50.0, 50.0), 0.002)
    """
    base, new = np.asarray(base, dtype=np.float64), np.asarray(new, dtype=np.float64)
    both = np.isfinite(base) & np.isfinite(new)
    left_out += int(np.count_nonzero(np.isfinite(base) ^ np.isfinite(new)))
    b, n = base[both], new[both]
    count = len(b)
    if count == 0:
        return PairedComparison(metric, "all", 0, left_out, None, None, None, None, None, None, False)
    base_q, new_q = float(_p95(b)), float(_p95(n))
    observed = new_q - base_q
    rng_boot, rng_swap = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    ci, p = None, 1.0
    if count >= 2:
        rows = max(1, HELD // count)
        diffs, reached = [], 0
        for start in range(0, resamples, rows):
            size = min(rows, resamples - start)
            picks = rng_boot.integers(0, count, size=(size, count))
            diffs.append(_p95(n[picks]) - _p95(b[picks]))
            swap = rng_swap.integers(0, 2, size=(size, count), dtype=np.int8).astype(bool)
            swapped = _p95(np.where(swap, b, n)) - _p95(np.where(swap, n, b))
            reached += int(np.count_nonzero(np.abs(swapped) >= abs(observed) - 1e-9 * (abs(observed) + 1)))
        boot = np.sort(np.concatenate(diffs))
        low, high = boot[(25 * (resamples - 1)) // 1000], boot[-((-975 * (resamples - 1)) // 1000)]
        ci = (float(low), float(high))
        p = (1 + reached) / (1 + resamples)
    return PairedComparison(metric, "all", count, left_out, base_q, new_q, observed, ci, float(p),
                            "swap_permutation" if count >= 2 else None, False, None,
                            "bootstrap" if ci else None, int(np.count_nonzero(n < b)), int(np.count_nonzero(n > b)))
