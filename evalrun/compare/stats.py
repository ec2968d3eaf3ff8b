"""Paired comparison of two runs of the same release: per metric per subset, the items scored in both
runs, the two means over them, their difference (new - base), a 95% paired bootstrap interval of the
difference and a two-sided paired test, so that `evalrun compare` can say whether a change is worth keeping.

Inputs are two matrices items x metrics (`base`, `new`; rows are the same items in the same order, NaN or
any non-finite value = unscored) and subsets as boolean masks or index arrays over the items. An item
scored in only one run is left out of both sides and counted (`left_out`): a difference over different
items would compare the items, not the runs.

- The test: a metric whose compared values are all exactly 0.0 or 1.0 in both runs (decided per metric per
  subset, from the data) gets McNemar's exact test, a binomial test with p = 0.5 on the discordant pairs
  (p = 1 when there are none); any other metric gets the sign-flip permutation test of the mean
  difference: under "no change" each item's difference is as likely to have either sign. It is exact
  (all 2^n sign patterns) when n <= EXACT_UP_TO, else Monte Carlo over `resamples` random patterns,
  p = (1 + #{|T*| >= |T|}) / (1 + resamples), which never says 0.
- The interval: a percentile bootstrap over `resamples` resamples of ALL the items, the same resample for
  both runs (the pairing) and for every metric and subset; a subset's resampled difference is the mean over
  its resampled compared items (a ratio, as `evalrun.scoring.aggregate` does for missing values), a
  resample that holds none of them is left out, and the endpoints are order statistics
  (`percentile_intervals`), clipped to the range of the item differences. A 0/1 metric on fewer than
  NEWCOMBE_BELOW pairs, or with no discordant pair, gets Newcombe's score interval for paired proportions
  instead (`newcombe_paired`): there the bootstrap sees a handful of distinct values and is too narrow
  (with every pair concordant it says [0, 0] on 5 items). `evalrun.scoring.aggregate` follows the same
  rule with Wilson's interval for one run's 0/1 means.
- The correction: comparing many metrics on many subsets finds "significant" changes by chance. `holm`
  (the default: it holds the family-wise error rate over all metrics x subsets compared) or `bh`
  (Benjamini-Hochberg, the false discovery rate) adjusts the p-values of the whole table at once.

Both resamplings are matrix products: a (resamples x items) block of random signs or of bootstrap counts
times the (items x columns) matrix of differences, one column per (subset, metric), zeros where an item is
not compared, in float32 and in row blocks of about HELD entries (tall blocks: BLAS keeps both cores busy
on a few large products, not on many thin ones). Products per subset over its own items only would do
fewer operations, but gathering a subset's columns of every block costs more than it saves
(benchmarks/compare_speed.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evalrun.scoring.aggregate import percentile_intervals, resample_counts, wilson_interval

RESAMPLES = 10_000
SEED = 0
EXACT_UP_TO = 16  # sign-flip tests on at most this many items enumerate all 2^n patterns
HELD = 1 << 22  # entries (rows x items) of one block of signs or counts: 16 MB of float32
NEWCOMBE_BELOW = 100  # 0/1 metrics on fewer pairs (or without a discordant pair) get Newcombe's interval
INTERVAL_ALPHA = 0.05  # the intervals are 95%: where one misses 0, the row's test should reject at 0.05
SWAP_RESAMPLES = 2_000  # the p95 latency's permutation test sorts every resample: fewer resamples
TIE = 1e-5  # |T*| within TIE * sum|d| of |T| counts as a tie (float32 sums; ties make p larger, never smaller)


@dataclass(frozen=True)
class PairedComparison:
    """One metric on one subset, compared between two runs over the items scored in both."""

    metric: str
    subset: str
    n: int
    """Items compared: scored in both runs."""
    left_out: int
    """Items of the subset scored in only one of the runs (left out of both sides)."""
    base_mean: float | None
    """Mean of the base run over the compared items (None when n == 0)."""
    new_mean: float | None
    """Mean of the new run over the compared items (None when n == 0)."""
    difference: float | None
    """new_mean - base_mean, the mean of the per-item differences (None when n == 0)."""
    ci95: tuple[float, float] | None
    """95% paired percentile bootstrap interval of the difference (None when n < 2)."""
    p_value: float | None
    """Two-sided p-value of "no change" (None when n == 0); not adjusted: see `holm`."""
    test: str | None
    """"mcnemar_exact", "sign_flip_exact", "sign_flip" (Monte Carlo), or None when n == 0."""
    binary: bool
    """Every compared value is 0.0 or 1.0 in both runs (False when n == 0)."""
    discordant: tuple[int, int] | None = None
    """For a 0/1 metric, (base 1 -> new 0, base 0 -> new 1): the pairs McNemar's test counts."""
    ci_method: str | None = None
    """"bootstrap", or "newcombe" (a 0/1 metric on fewer than NEWCOMBE_BELOW pairs, or all concordant)."""
    fell: int = 0
    """Pairs whose value is lower in the new run."""
    rose: int = 0
    """Pairs whose value is higher in the new run."""


def _masks(subsets: Mapping[str, np.ndarray], items: int) -> tuple[list[str], np.ndarray]:
    """Return (labels, items x subsets boolean matrix), "all" first (every item, unless given)."""
    labels, columns = [], []
    if "all" not in subsets:
        labels.append("all")
        columns.append(np.ones(items, dtype=bool))
    for label, chosen in subsets.items():
        chosen = np.asarray(chosen)
        if chosen.dtype == bool:
            if chosen.shape != (items,):
                raise ValueError(f"subset {label!r}: a mask of {chosen.shape} for {items} items")
            mask = chosen
        else:
            mask = np.zeros(items, dtype=bool)
            mask[chosen.astype(np.intp)] = True
        labels.append(label)
        columns.append(mask)
    return labels, np.stack(columns, axis=1) if columns else np.zeros((items, 0), dtype=bool)


def smallest_p(test: str | None, n: int, resamples: int = RESAMPLES) -> float:
    """Return the smallest two-sided p-value `test` can give on n pairs, whatever their values: 2 / 2^n for
    McNemar's exact test (every pair discordant, all one way) and for the exact sign-flip test (every
    difference of one sign: only that pattern and its mirror reach |sum|); the Monte Carlo sign-flip test
    goes no lower than that, nor than 1 / (1 + resamples). 1 when there is no pair (or no test).

    A rule on fewer pairs than it takes to get below alpha can never be met, or never be broken.

    >>> smallest_p("mcnemar_exact", 5), smallest_p("sign_flip_exact", 1), smallest_p(None, 0)
    (0.0625, 1.0, 1.0)
    >>> smallest_p("sign_flip", 40, resamples=9999)
    0.0001
    """
    if test is None or n < 1:
        return 1.0
    exact = 2.0 ** (1 - n)
    if test == "swap_permutation":   # p95 latency: at most SWAP_RESAMPLES random swaps
        return max(exact, 1.0 / (1 + min(resamples, SWAP_RESAMPLES)))
    return max(exact, 1.0 / (1 + resamples)) if test == "sign_flip" else exact


def mcnemar_exact(worse: int, better: int) -> float:
    """Return McNemar's exact two-sided p-value for `worse` (1 -> 0) and `better` (0 -> 1) discordant
    pairs: min(1, 2 P(X <= min(worse, better))), X ~ Binomial(worse + better, 1/2); 1 when none.

    >>> mcnemar_exact(7, 1)  # 2 (C(8,0) + C(8,1)) / 2^8 = 18 / 256
    0.0703125
    >>> mcnemar_exact(0, 0), mcnemar_exact(3, 3)
    (1.0, 1.0)
    """
    n, low = worse + better, min(worse, better)
    if n == 0 or 2 * low >= n:
        return 1.0
    k = np.arange(1, low + 1, dtype=np.float64)
    log_comb = np.concatenate([[0.0], np.cumsum(np.log((n - k + 1) / k))])  # log C(n, 0..low)
    top = log_comb.max()
    log_tail = top + math.log(math.fsum(np.exp(log_comb - top).tolist())) - n * math.log(2.0)
    return min(1.0, 2.0 * math.exp(log_tail))


def newcombe_paired(both: int, better: int, worse: int, n: int) -> tuple[float, float]:
    """Return Newcombe's hybrid score interval (1998, method 10) of the paired difference of proportions
    new - base, from n pairs: `both` 1 in both runs, `better` 0 -> 1, `worse` 1 -> 0 (the rest 0 in both).
    Wilson intervals (l, u) of each run's proportion are combined with the pairs' correlation phi:
    (d - sqrt((p1-l1)^2 - 2 phi (p1-l1)(u2-p2) + (u2-p2)^2), d + sqrt((u1-p1)^2 - 2 phi (u1-p1)(p2-l2) + (p2-l2)^2)),
    p1 = new's proportion, p2 = base's, phi = 0 when a margin is empty.

    >>> [round(x, 4) for x in newcombe_paired(5, 0, 0, 5)]  # all 5 pass in both: +-(1 - Wilson's low of 5/5)
    [-0.4345, 0.4345]
    >>> newcombe_paired(0, 0, 0, 3) == tuple(-x for x in reversed(newcombe_paired(0, 0, 0, 3)))
    True
    """
    neither = n - both - better - worse
    p1, p2 = (both + better) / n, (both + worse) / n
    (l1, u1), (l2, u2) = wilson_interval(both + better, n), wilson_interval(both + worse, n)
    margins = (both + better) * (worse + neither) * (both + worse) * (better + neither)
    phi = (both * neither - better * worse) / math.sqrt(margins) if margins else 0.0
    d = p1 - p2
    low = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return max(-1.0, d - low), min(1.0, d + high)


def _all_signs(n: int) -> np.ndarray:
    """Return the (2^n x n) matrix of every pattern of n signs (+1 / -1)."""
    bits = (np.arange(1 << n)[:, None] >> np.arange(n)) & 1
    return 1.0 - 2.0 * bits


def sign_flip_exact(differences: np.ndarray) -> float:
    """Return the exact two-sided sign-flip p-value of the mean of `differences` (n <= ~20):
    #{patterns s : |sum s_i d_i| >= |sum d_i|} / 2^n, over all 2^n patterns.

    >>> sign_flip_exact(np.array([1.0, 2.0, 3.0]))  # only +++ and --- reach |6|
    0.25
    """
    d = np.asarray(differences, dtype=np.float64)
    if len(d) == 0:
        return 1.0
    observed = abs(d.sum())
    flipped = np.abs(_all_signs(len(d)) @ d)
    return float(np.count_nonzero(flipped >= observed - TIE * np.abs(d).sum()) / len(flipped))


def _random_signs(rows: int, items: int, rng: np.random.Generator) -> np.ndarray:
    """Return a (rows x items) float32 matrix of independent fair signs (+1 / -1), from random bytes."""
    bits = np.unpackbits(rng.integers(0, 256, size=(rows, (items + 7) // 8), dtype=np.uint8), axis=1)
    signs = bits[:, :items].astype(np.float32)
    signs *= -2.0
    signs += 1.0
    return signs


def _sign_flip_counts(diffs: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Return, per column of `diffs` (items x columns, zeros where not compared), how many of `resamples`
    random sign patterns of the items give |sum s_i d_i| >= |sum d_i| (within TIE). One pattern of all the
    items per resample serves every column: each column's test is exact on its own."""
    items, columns = diffs.shape
    floor = (np.abs(diffs.sum(axis=0)) - TIE * np.abs(diffs).sum(axis=0)).astype(np.float32)
    d32 = diffs.astype(np.float32)
    rows = max(1, HELD // max(items, 1))
    reached = np.zeros(columns, dtype=np.int64)
    for start in range(0, resamples, rows):
        signs = _random_signs(min(rows, resamples - start), items, rng)
        reached += np.count_nonzero(np.abs(signs @ d32) >= floor, axis=0)
    return reached


def _count_blocks(items: int, rng: np.random.Generator, resamples: int) -> Iterator[np.ndarray]:
    """Yield float32 blocks of about HELD entries of the bootstrap counts matrix (`resample_counts`, so
    the same draws as `evalrun.scoring.aggregate`): products of few, tall blocks keep both cores busy."""
    rows = min(max(1, HELD // max(items, 1)), resamples)
    held, filled = np.empty((rows, items), dtype=np.float32), 0
    for counts in resample_counts(items, rng, resamples):
        done = 0
        while done < len(counts):
            taken = min(rows - filled, len(counts) - done)
            held[filled:filled + taken] = counts[done:done + taken]
            filled, done = filled + taken, done + taken
            if filled == rows:
                yield held
                held, filled = np.empty((rows, items), dtype=np.float32), 0
    if filled:
        yield held[:filled]


def _bootstrap_differences(diffs: np.ndarray, compared: np.ndarray, resamples: int,
                           rng: np.random.Generator) -> np.ndarray:
    """Return the (resamples x columns) resampled mean differences (C @ D) / (C @ M) for count blocks C of
    resamples of all the items, D = `diffs` (items x columns, 0 where not compared), M = `compared`; NaN
    for a resample without a compared item of the column."""
    columns = diffs.shape[1]
    keys: dict[bytes, int] = {}  # columns compared on the same items share one denominator
    which = np.array([keys.setdefault(np.packbits(compared[:, j]).tobytes(), len(keys)) for j in range(columns)],
                     dtype=np.intp)
    firsts = [int(np.argmax(which == k)) for k in range(len(keys))]
    stacked = np.hstack([diffs, compared[:, firsts]]).astype(np.float32)
    means = np.empty((resamples, columns))  # float64: a 0/1 difference's endpoint reads 0.055, not 0.054999
    done = 0
    with np.errstate(invalid="ignore", divide="ignore"):
        for counts in _count_blocks(len(diffs), rng, resamples):
            sums = (counts @ stacked).astype(np.float64)
            means[done:done + len(counts)] = sums[:, :columns] / sums[:, columns:][:, which]
            done += len(counts)
    return means


def compare_paired(base: np.ndarray, new: np.ndarray, metrics: Sequence[str],
                   subsets: Mapping[str, np.ndarray] | None = None, *, resamples: int = RESAMPLES,
                   seed: int = SEED, exact_up_to: int = EXACT_UP_TO) -> dict[tuple[str, str], PairedComparison]:
    """Return {(metric, subset label): PairedComparison} for every metric (the columns of `base` and `new`,
    items x metrics, NaN = unscored) on "all" (every item, unless `subsets` names its own "all") and on
    every subset (`subsets` maps a label to a boolean mask over the items or to their indices), ordered
    subset by subset, metrics in their order. Deterministic for a given `seed`.

    >>> base = np.array([[0.0, 0.2], [0.0, 0.4], [1.0, np.nan], [0.0, 0.5]])
    >>> new = np.array([[1.0, 0.3], [1.0, 0.6], [1.0, 0.9], [0.0, 0.5]])
    >>> table = compare_paired(base, new, ["hit", "f1"], {"zh": np.array([0, 1])}, resamples=200)
    >>> c = table[("f1", "all")]
    >>> (c.n, c.left_out, round(c.difference, 6), c.test, c.p_value)  # signs of (0.1, 0.2, 0): 2/8 reach 0.3
    (3, 1, 0.1, 'sign_flip_exact', 0.5)
    >>> c = table[("hit", "zh")]
    >>> (c.n, c.difference, c.test, c.discordant, c.p_value)  # 2 discordant, both 0 -> 1: 2 / 2^2
    (2, 1.0, 'mcnemar_exact', (0, 2), 0.5)
    """
    base = np.asarray(base, dtype=np.float64)
    new = np.asarray(new, dtype=np.float64)
    if base.ndim == 1:
        base, new = base[:, None], new.reshape(-1, 1)
    if base.shape != new.shape or base.shape[1] != len(metrics):
        raise ValueError(f"base {base.shape} and new {new.shape} must both be items x {len(metrics)} metrics")
    if resamples < 1 or not 0 <= exact_up_to <= 20:
        raise ValueError(f"resamples ({resamples}) must be >= 1 and exact_up_to ({exact_up_to}) in 0..20")
    items, width = base.shape
    labels, masks = _masks(subsets or {}, items)
    in_base, in_new = np.isfinite(base), np.isfinite(new)
    both = in_base & in_new
    b0, n0 = np.where(both, base, 0.0), np.where(both, new, 0.0)
    d0 = n0 - b0
    m = masks.astype(np.float64)
    # Counts and sums per (subset, metric) are products of the subset masks with items x metrics matrices.
    ns = (m.T @ both).round().astype(np.int64)
    left = (m.T @ (in_base ^ in_new)).round().astype(np.int64)
    base_sums, new_sums = m.T @ b0, m.T @ n0
    off = both & ~(((base == 0.0) | (base == 1.0)) & ((new == 0.0) | (new == 1.0)))
    binary = (m.T @ off) == 0
    worse = (m.T @ (d0 < 0)).round().astype(np.int64)
    better = (m.T @ (d0 > 0)).round().astype(np.int64)
    ones = (m.T @ (both & (base == 1.0) & (new == 1.0))).round().astype(np.int64)
    flat_n, flat_binary = ns.ravel(), binary.ravel()
    boot_rng, sign_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    # One column per (subset, metric), subset-major as the result: the differences, 0 where not compared.
    compared = masks[:, :, None] & both[:, None, :]
    diffs = np.where(compared, d0[:, None, :], 0.0).reshape(items, -1)
    compared = compared.reshape(items, -1)
    intervals: dict[int, tuple[float, float] | None] = {}
    boot = np.flatnonzero(flat_n >= 2)
    if len(boot):
        chosen = slice(None) if len(boot) == len(flat_n) else boot  # no copy of the usual whole table
        means = _bootstrap_differences(diffs[:, chosen], compared[:, chosen], resamples, boot_rng)
        lows = np.where(compared[:, chosen], diffs[:, chosen], np.inf).min(axis=0)
        highs = np.where(compared[:, chosen], diffs[:, chosen], -np.inf).max(axis=0)
        found = []
        for start in range(0, len(boot), 64):  # sorting 64 columns at a time bounds the sort's copies
            part = slice(start, start + 64)
            found += percentile_intervals(means[:, part], lows[part], highs[part])
        intervals = dict(zip(boot.tolist(), found))
        del means
    sampled = np.flatnonzero(~flat_binary & (flat_n > exact_up_to))
    reached = _sign_flip_counts(diffs[:, sampled], resamples, sign_rng) if len(sampled) else np.zeros(0)
    monte_carlo = dict(zip(sampled.tolist(), ((1 + reached) / (1 + resamples)).tolist()))

    result = {}
    for s, label in enumerate(labels):
        for j, metric in enumerate(metrics):
            col = s * width + j
            n = int(ns[s, j])
            if n == 0:
                result[(metric, label)] = PairedComparison(metric, label, 0, int(left[s, j]), None, None, None,
                                                           None, None, None, False)
                continue
            discordant, ci, ci_method = None, intervals.get(col), "bootstrap"
            if binary[s, j]:
                discordant = (int(worse[s, j]), int(better[s, j]))
                p, test = mcnemar_exact(*discordant), "mcnemar_exact"
                if n < NEWCOMBE_BELOW or sum(discordant) == 0:
                    ci, ci_method = newcombe_paired(int(ones[s, j]), discordant[1], discordant[0], n), "newcombe"
            else:
                d = diffs[compared[:, col], col]
                if n <= exact_up_to:
                    p, test = sign_flip_exact(d), "sign_flip_exact"
                else:
                    p, test = monte_carlo[col], "sign_flip"
                # on too few items for any p-value to reach 0.05 no shift is rejected: the bootstrap stays
                if ci is not None and (ci[0] > 0 or ci[1] < 0) != (p < INTERVAL_ALPHA) and \
                        smallest_p(test, n, resamples) < INTERVAL_ALPHA:
                    ci, ci_method = sign_flip_interval(d, seed=seed), "sign_flip_inverted"
            base_mean, new_mean = float(base_sums[s, j] / n), float(new_sums[s, j] / n)
            result[(metric, label)] = PairedComparison(
                metric, label, n, int(left[s, j]), base_mean, new_mean, new_mean - base_mean,
                None if ci is None else (float(ci[0]), float(ci[1])), float(p), test, bool(binary[s, j]), discordant,
                None if ci is None else ci_method, int(worse[s, j]), int(better[s, j]))
    return result


def _shift_p(d: np.ndarray, shift: float, signs: np.ndarray) -> float:
    """Return the sign-flip p-value of "the mean difference is `shift`" over the sign patterns `signs`."""
    centred = d - shift
    observed = abs(centred.sum()) - TIE * np.abs(centred).sum()
    reached = np.count_nonzero(np.abs(signs @ centred) >= observed)
    return (1 + reached) / (1 + len(signs)) if len(signs) < (1 << len(d)) else reached / len(signs)


def sign_flip_interval(differences: np.ndarray, *, resamples: int = SWAP_RESAMPLES, seed: int = SEED,
                       steps: int = 30) -> tuple[float, float]:
    """Return the 95% interval of the mean difference that the sign-flip test gives when inverted: the
    shifts s whose test of the differences minus s is not rejected at 0.05 (found by bisection, one
    set of sign patterns for every shift; every pattern when n <= EXACT_UP_TO).

    Used where the paired bootstrap and the test disagree about 0: when few items changed, all one way,
    the bootstrap's resamples rarely leave them all out and its interval misses 0 while the test
    (rightly) finds no difference; the inverted interval always agrees with the test.

    >>> d = np.array([0.5, 0.25, 0.25, 0.5] + [0.0] * 44)   # 4 of 48 items rose: p = 2 / 2^4
    >>> low, high = sign_flip_interval(d, resamples=2000)
    >>> low < 0 < high
    True
    """
    d = np.asarray(differences, dtype=np.float64)
    n = len(d)
    if n <= EXACT_UP_TO:
        signs = _all_signs(n)
    else:
        signs = _random_signs(resamples, n, np.random.default_rng(seed)).astype(np.float64)
    mean, spread = float(d.mean()), float(np.abs(d).max()) or 1.0

    def bound(direction: int) -> float:
        inside, outside = mean, mean + direction * spread
        while _shift_p(d, outside, signs) >= INTERVAL_ALPHA and abs(outside - mean) < 1e6 * spread:
            outside = mean + 2 * (outside - mean)
        for _ in range(steps):
            middle = (inside + outside) / 2
            if _shift_p(d, middle, signs) >= INTERVAL_ALPHA:
                inside = middle
            else:
                outside = middle
        return inside

    return bound(-1), bound(+1)


def holm(p_values: Sequence[float | None] | np.ndarray) -> np.ndarray:
    """Return the Holm-Bonferroni adjusted p-values (the default correction over all the metrics x
    subsets compared; it bounds the chance of any false "changed" by 0.05): sorted p_(1) <= ... <= p_(m),
    adjusted p_(k) = max over i <= k of min(1, (m - i + 1) p_(i)). None or NaN stays NaN and is not counted.

    >>> holm([0.01, 0.04, 0.03, 0.005]).tolist()  # 4 x 0.005, 3 x 0.01, max(2 x 0.03, .03), max(0.04, .06)
    [0.03, 0.06, 0.06, 0.02]
    """
    p = np.array([np.nan if x is None else x for x in p_values], dtype=np.float64)
    out = np.full(p.shape, np.nan)
    kept = np.flatnonzero(np.isfinite(p))
    order = kept[np.argsort(p[kept], kind="stable")]
    m = len(order)
    out[order] = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    return out


def bh(p_values: Sequence[float | None] | np.ndarray) -> np.ndarray:
    """Return the Benjamini-Hochberg adjusted p-values (the false discovery rate, an option beside `holm`):
    adjusted p_(k) = min over i >= k of min(1, m p_(i) / i). None or NaN stays NaN and is not counted.

    >>> bh([0.01, 0.04, 0.03, 0.005]).tolist()  # 4 x 0.005 / 1, 4 x 0.01 / 2, min(4 x .03 / 3, .04), 0.04
    [0.02, 0.04, 0.04, 0.02]
    """
    p = np.array([np.nan if x is None else x for x in p_values], dtype=np.float64)
    out = np.full(p.shape, np.nan)
    kept = np.flatnonzero(np.isfinite(p))
    order = kept[np.argsort(p[kept], kind="stable")]
    m = len(order)
    scaled = m * p[order] / np.arange(1, m + 1)
    out[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    return out
