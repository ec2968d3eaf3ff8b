"""Honest aggregates: per metric per subset, n, mean and a 95% interval, the items whose target failed
counted among the n, and the unscored items counted apart by reason (never a zero, never dropped).

Intervals (`MetricSummary.ci_method`):

- wilson: a metric whose values in the subset are all exactly 0.0 or 1.0 gets the Wilson score
  interval when n < WILSON_BELOW or when every value is the same; a bootstrap of 20 successes out of
  20 would claim [1, 1], which no one can honestly say of 20 trials. n == 1 still has one.
- bootstrap: otherwise, for n >= 2, a percentile bootstrap over RESAMPLES resamples. ONE set of
  resamples of every row (items in item-id order, seeded from SEED: the same run gives the same
  intervals, whatever the order of its rows) serves "all", every subset and every metric: a subset's
  resample is the draws of its own items in a resample of every row, as `compare` pairs its subsets.
  So the intervals are paired, across metrics and across subsets, and a subset costs no draws of its
  own. A subset's draws in a resample number about, not exactly, its n (a subset of 12 items is drawn
  12 times on average), which widens a small subset's interval a little, never narrows it. A metric
  missing for some items has as each resample's mean the mean over the resampled items that have a
  value; a resample that holds none of them is left out of that metric's percentiles. The endpoints
  are the resample means just outside the 2.5th and 97.5th percentiles (no interpolation: each
  endpoint is a mean some resample had, and B = 1 - A gives exactly [1 - high(A), 1 - low(A)]).
- None: no value, or a single value that is not 0/1.

Values are kept at full precision (displays round); a mean is `math.fsum` over n. A value that is
not a finite number is unscored ("value is not a finite number"), so no mean or interval is NaN or
infinite: what cannot be computed is None.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Sequence

import numpy as np

from evalrun.records import ItemScores, MetricSummary

RESAMPLES = 1000
SEED = 20241129
Z95 = 1.959963984540054  # the 97.5th percentile of the standard normal
WILSON_BELOW = 100  # 0/1 metrics on fewer items than this get a Wilson interval
DRAWN = 1 << 16  # draws counted at once: their counts stay in cache
HELD = 1 << 20  # counts (resamples x items) held for one matrix product: 8 MB of float64; fewer, larger
# products keep BLAS's threads from waiting on each other when another process shares the cores
NOT_FINITE = "value is not a finite number"


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Return the Wilson score interval of a proportion of `successes` out of `n` (n >= 1):
    (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n), with p = successes / n.

    >>> low, high = wilson_interval(20, 20)  # low = n / (n + z²)
    >>> round(low, 4), high
    (0.8389, 1.0)
    >>> [round(x, 4) for x in wilson_interval(1, 2)]
    [0.0945, 0.9055]
    """
    p = successes / n
    z2 = z * z
    centre = p + z2 / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    scale = 1 + z2 / n
    return max(0.0, min(p, (centre - half) / scale)), min(1.0, max(p, (centre + half) / scale))


def resample_counts(n: int, rng: np.random.Generator, resamples: int = RESAMPLES) -> Iterator[np.ndarray]:
    """Yield blocks of the counts matrix of `resamples` bootstrap resamples of n items: row r, column i
    is how many times resample r drew item i (each row sums to n); blocks of about HELD entries.

    >>> blocks = list(resample_counts(3, np.random.default_rng(0), resamples=4))
    >>> np.vstack(blocks).sum(axis=1).tolist()
    [3.0, 3.0, 3.0, 3.0]
    """
    drawn = max(1, DRAWN // max(n, 1))  # resamples drawn at once, fixed by n: the same draws every time
    held = max(1, HELD // max(n, 1) // drawn) * drawn
    for start in range(0, resamples, held):
        counts = np.empty((min(held, resamples - start), n))
        for row in range(0, len(counts), drawn):
            size = min(drawn, len(counts) - row)
            draws = rng.integers(0, n, size=(size, n))
            draws += (np.arange(size) * n)[:, None]  # resample r's draws land in bins r*n .. r*n + n-1
            counts[row:row + size] = np.bincount(draws.ravel(), minlength=size * n).reshape(size, n)
        yield counts


def _bootstrap_columns(values: np.ndarray, valued: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the columns of one matrix product, [V * mask | one mask per distinct mask], and for each
    metric the index of its mask among the masks (metrics valued on the same items share one)."""
    metrics = values.shape[1]
    masks: dict[bytes, int] = {}
    which = np.array([masks.setdefault(np.packbits(valued[:, j]).tobytes(), len(masks)) for j in range(metrics)],
                     dtype=np.intp)
    firsts = [int(np.argmax(which == k)) for k in range(len(masks))]
    return np.hstack([np.where(valued, values, 0.0), valued[:, firsts].astype(np.float64)]), which


def resampled_means(values: np.ndarray, valued: np.ndarray, rng: np.random.Generator,
                    resamples: int = RESAMPLES,
                    parts: dict[str, tuple[np.ndarray, np.ndarray]] | None = None) -> dict[str, np.ndarray]:
    """Return {part: (resamples x metrics) means}, over the same resamples of the items (the rows of
    `values`, items x metrics; `valued` marks the values), of each part's metrics over its items:
    `parts` maps a label to (item positions, metric columns), by default {"all": every item and
    metric}. A mean is (C @ (V * mask)) / (C @ mask) with C the counts of the part's items; NaN for a
    resample that drew no item of the part with a value.

    >>> values = np.array([[1.0, 0.0], [0.0, 0.0], [0.5, 1.0]])
    >>> valued = np.array([[True, True], [True, False], [True, True]])
    >>> means = resampled_means(values, valued, np.random.default_rng(0), resamples=200)["all"]
    >>> bool(np.all((means >= 0) & (means <= 1) | np.isnan(means)))
    True
    """
    n, metrics = values.shape
    if parts is None:
        parts = {"all": (np.arange(n), np.arange(metrics))}
    prepared = {}
    for label, (items, columns) in parts.items():
        whole = len(items) == n  # positions are sorted and distinct: every item, no gather needed
        stacked, which = _bootstrap_columns(values[np.ix_(items, columns)], valued[np.ix_(items, columns)])
        prepared[label] = (None if whole else items, stacked, which, np.empty((resamples, len(columns))))
    done = 0
    with np.errstate(invalid="ignore", divide="ignore"):
        for counts in resample_counts(n, rng, resamples):
            for items, stacked, which, means in prepared.values():
                sums = (counts if items is None else counts[:, items]) @ stacked
                width = means.shape[1]
                means[done:done + len(counts)] = sums[:, :width] / sums[:, width:][:, which]
            done += len(counts)
    return {label: means for label, (_, _, _, means) in prepared.items()}


def percentile_intervals(means: np.ndarray, lows: np.ndarray, highs: np.ndarray) -> list[tuple[float, float] | None]:
    """Return, for each column of `means` (resamples x metrics), the order statistics floor(0.025 (k-1))
    and ceil(0.975 (k-1)) of its k finite means (NaN left out; 0-based), the resample means just outside
    the 2.5th and 97.5th percentiles, clipped to [low, high], the range of the column's values (None
    when no mean is finite).

    >>> column = np.array([[0.1 * k] for k in range(41)] + [[np.nan]])  # k = 41: indices 1 and 39
    >>> [tuple(round(x, 6) for x in ci) for ci in percentile_intervals(column, np.zeros(1), np.full(1, 10.0))]
    [(0.1, 3.9)]
    """
    finite = np.isfinite(means)
    kept = finite.sum(axis=0)
    ordered = np.sort(np.where(finite, means, np.inf), axis=0)
    below = (25 * (kept - 1)) // 1000  # in integers, so no rounding can move an index by one
    above = -((-975 * (kept - 1)) // 1000)
    columns = np.arange(means.shape[1])
    lo = ordered[np.maximum(below, 0), columns]
    hi = ordered[np.maximum(above, 0), columns]
    return [(max(float(lo[j]), float(lows[j])), min(float(hi[j]), float(highs[j]))) if kept[j] else None
            for j in columns]


def _mean(values: list[float]) -> float | None:
    """Return fsum(values) / n, or None when it is no finite number."""
    try:
        mean = math.fsum(values) / len(values)
    except (OverflowError, ZeroDivisionError):
        return None
    return mean if math.isfinite(mean) else None


class _Table:
    """The rows as matrices (items x metrics), items in item-id order: values, which are valued, the
    unscored reason's code (-1: none), and which items' targets failed."""

    def __init__(self, rows: Sequence[ItemScores], metrics: Sequence[str]):
        by_id = {row.item_id: row for row in rows}
        self.ids = sorted(by_id)
        self.index = {item_id: k for k, item_id in enumerate(self.ids)}
        ordered = [by_id[item_id] for item_id in self.ids]
        shape = (len(ordered), len(metrics))
        # map over the bound dict methods keeps the lookups in C; a missing value (None) becomes NaN
        self.values = np.array([list(map(row.values.get, metrics)) for row in ordered], dtype=np.float64)
        self.valued = np.array([list(map(row.values.__contains__, metrics)) for row in ordered], dtype=bool)
        self.values, self.valued = self.values.reshape(shape), self.valued.reshape(shape)
        self.failed = np.array([row.failed is not None for row in ordered], dtype=bool)
        self.codes = np.full(shape, -1, dtype=np.int32)
        code: dict[str, int] = {}
        column = {name: j for j, name in enumerate(metrics)}
        for k, row in enumerate(ordered):
            for name, reason in row.unscored.items():
                j = column.get(name)
                if j is not None and not self.valued[k, j]:  # a value wins over a reason
                    self.codes[k, j] = code.setdefault(reason or "unscored", len(code))
        bad = self.valued & ~np.isfinite(self.values)
        if bad.any():
            self.codes[bad] = code.setdefault(NOT_FINITE, len(code))
            self.valued[bad] = False
        self.values[~self.valued] = 0.0
        self.reasons = sorted(code, key=code.get)


class _Part:
    """One label's items (positions in the table) and what its summaries need: per metric n, the
    failed items among them, the unscored counts by reason, the range of the values, and which
    metrics get a Wilson interval and which a bootstrap (`boot`, the columns resampled)."""

    def __init__(self, table: _Table, items: np.ndarray, metrics: Sequence[str]):
        self.items = items
        values, valued, codes = table.values[items], table.valued[items], table.codes[items]
        self.values, self.valued = values, valued
        self.ns = valued.sum(axis=0)
        self.failed = (valued & table.failed[items][:, None]).sum(axis=0)
        reasons = len(table.reasons)
        found = codes >= 0
        counts = np.bincount((np.nonzero(found)[1] * reasons + codes[found]), minlength=len(metrics) * reasons)
        counts = counts.reshape(len(metrics), reasons)
        self.unscored = {int(j): {table.reasons[r]: int(counts[j, r]) for r in np.flatnonzero(counts[j])}
                         for j in np.flatnonzero(counts.any(axis=1))}
        binary = ~(valued & (values != 0.0) & (values != 1.0)).any(axis=0)
        self.lows = np.where(valued, values, np.inf).min(axis=0, initial=np.inf)
        self.highs = np.where(valued, values, -np.inf).max(axis=0, initial=-np.inf)
        self.wilson = binary & (self.ns >= 1) & ((self.ns < WILSON_BELOW) | (self.lows == self.highs))
        self.bootstrap = ~self.wilson & (self.ns >= 2)
        self.boot = np.flatnonzero(self.bootstrap)

    def summaries(self, metrics: Sequence[str], means: np.ndarray | None) -> dict[str, MetricSummary]:
        """Return {metric: summary}, `means` the resampled means of the `boot` columns."""
        intervals: dict[int, tuple[float, float] | None] = {}
        if means is not None:
            found = percentile_intervals(means, self.lows[self.boot], self.highs[self.boot])
            intervals = dict(zip(self.boot.tolist(), found))
        result = {}
        for j, metric in enumerate(metrics):
            n = int(self.ns[j])
            if not n and j not in self.unscored:
                continue  # the metric does not apply to these items
            scored = self.values[self.valued[:, j], j]
            mean = _mean(scored.tolist()) if n else None
            ci, method = None, None
            if mean is not None and self.wilson[j]:
                ci, method = wilson_interval(int(np.count_nonzero(scored)), n), "wilson"
            elif mean is not None and self.bootstrap[j]:
                ci = intervals[j]
                method = "bootstrap" if ci else None
            result[metric] = MetricSummary(n=n, mean=mean, ci95=ci, ci_method=method, failed=int(self.failed[j]),
                                           unscored=dict(self.unscored.get(j, {})))
        return result


def aggregate(rows: Sequence[ItemScores], metrics: Sequence[str], subsets: dict[str, list[str]],
              overall: Sequence[str] | None = None) -> dict[str, dict[str, MetricSummary]]:
    """Return {subset label: {metric: summary}} for "all" and every subset, sorted by label (`subsets`
    maps a label such as "qtype=single" to its item ids; ids without a row are left out). "all" is
    every row, or the rows of the ids `overall` names. A metric is in a subset's table when one of
    its items has a value or a reason it has none. Every label's bootstrap intervals come from the
    same resamples of every row.

    >>> rows = [ItemScores(item_id=f"i{k}", answerable=True, values={"hit": float(k % 2)}) for k in range(4)]
    >>> table = aggregate(rows, ["hit"], {"qtype=single": ["i0", "i1"]})
    >>> list(table), table["all"]["hit"].mean, table["all"]["hit"].ci_method
    (['all', 'qtype=single'], 0.5, 'wilson')
    """
    table = _Table(rows, metrics)

    def positions(ids: Sequence[str]) -> np.ndarray:
        return np.unique(np.array([table.index[i] for i in ids if i in table.index], dtype=np.intp))

    everything = np.arange(len(table.ids)) if overall is None else positions(overall)
    parts = {"all": _Part(table, everything, metrics)}
    for label, ids in sorted(subsets.items()):
        parts[label] = _Part(table, positions(ids), metrics)
    resampled = {label: (part.items, part.boot) for label, part in parts.items() if len(part.boot)}
    means = {}
    if resampled:
        means = resampled_means(table.values, table.valued, np.random.default_rng(SEED), parts=resampled)
    return {label: part.summaries(metrics, means.get(label)) for label, part in parts.items()}
