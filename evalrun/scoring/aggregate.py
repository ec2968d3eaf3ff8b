"""Honest aggregates: per metric, n, mean and a 95% bootstrap confidence interval, with the
unscored items counted apart by reason (never a zero, never dropped silently)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from evalrun.records import ItemScores, MetricSummary

import numpy as np

RESAMPLES = 1000
SEED = 20241129


def bootstrap_ci(values: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED) -> tuple[float, float] | None:
    """Return the 2.5th and 97.5th percentiles of the mean over bootstrap resamples (None for n < 2).

    >>> bootstrap_ci([1.0, 1.0, 1.0])
    (1.0, 1.0)
    """
    data = np.asarray(values, dtype=float)
    if len(data) < 2:
        return None
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(resamples, len(data)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return round(float(low), 6), round(float(high), 6)


def summarize_metric(values: Sequence[float | None], reasons: Sequence[str | None]) -> MetricSummary:
    """Return n, mean, ci95 over the scored values and the unscored count by reason.

    >>> summarize_metric([1.0, 0.0, None], [None, None, "judge timeout"]).unscored
    {'judge timeout': 1}
    """
    scored = [v for v in values if v is not None]
    unscored = Counter(r or "unscored" for v, r in zip(values, reasons) if v is None)
    return MetricSummary(n=len(scored), mean=round(float(np.mean(scored)), 6) if scored else None,
                         ci95=bootstrap_ci(scored), unscored=dict(unscored))


def aggregate(rows: Sequence[ItemScores], metrics: Sequence[str],
              subsets: dict[str, list[str]]) -> dict[str, dict[str, MetricSummary]]:
    """Return {subset label: {metric: summary}} for "all" and every subset value
    (`subsets` maps a subset label such as "qtype=single" to the item ids in it)."""
    by_id = {row.item_id: row for row in rows}
    result = {}
    for label, ids in [("all", list(by_id))] + sorted(subsets.items()):
        chosen = [by_id[i] for i in ids if i in by_id]
        table = {}
        for metric in metrics:
            applicable = [r for r in chosen if metric in r.values or metric in r.unscored]
            if applicable:
                table[metric] = summarize_metric([r.values.get(metric) for r in applicable],
                                                 [r.unscored.get(metric) for r in applicable])
        result[label] = table
    return result
