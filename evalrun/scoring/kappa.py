"""Cohen's kappa of two raters' labels of the same items, with a bootstrap interval and their confusion
table: how the judge agrees with people (`evalrun.review`) and with the labelled evidence
(`evalrun.scoring.judged_retrieval`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evalrun.scoring.aggregate import percentile_intervals, resample_counts, wilson_interval

KAPPA_RESAMPLES = 2000
SEED = 20241129


@dataclass(frozen=True)
class Agreement:
    """How the judge's labels and the people's agree on the same items."""

    n: int
    """Items labelled by both."""
    agreed: int
    """Items given the same label by both."""
    agreement: float | None
    """agreed / n, the raw agreement p_o (None when n == 0)."""
    agreement_ci95: tuple[float, float] | None
    """Wilson score interval of the raw agreement (None when n == 0)."""
    expected: float | None
    """p_e, the agreement expected by chance from each rater's own label frequencies (None when n == 0)."""
    kappa: float | None
    """Cohen's kappa, (p_o - p_e) / (1 - p_e); None when undefined (see `note`)."""
    ci95: tuple[float, float] | None
    """95% percentile bootstrap interval of kappa over the items, within [-1, 1], holding kappa."""
    labels: tuple[str, ...]
    """The labels: those given first, then any other seen, sorted."""
    confusion: dict[str, dict[str, int]]
    """judge's label -> person's label -> items, every label in `labels` order."""
    note: str | None = None
    """Why kappa or its interval is None."""


def _label_order(judge: Sequence[str], person: Sequence[str], labels: Sequence[str] | None) -> tuple[str, ...]:
    """Return the labels given (in their order), then any other label either rater used, sorted."""
    given = tuple(labels or ())
    if len(set(given)) != len(given):
        raise ValueError(f"labels {list(given)} name a label twice")
    return given + tuple(sorted(set(judge).union(person).difference(given)))


def kappas(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return p_o, p_e and kappa of each K x K count table in `tables` (..., K, K): p_o = trace / n,
    p_e = sum_k rows_k * columns_k / n^2, kappa = (p_o - p_e) / (1 - p_e), NaN where p_e = 1 or n = 0.

    >>> [round(float(x), 12) for x in kappas(np.array([[20, 5], [10, 15]]))]  # the textbook table
    [0.7, 0.5, 0.4]
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        n = tables.sum(axis=(-2, -1))
        observed = np.trace(tables, axis1=-2, axis2=-1) / n
        expected = (tables.sum(axis=-1) * tables.sum(axis=-2)).sum(axis=-1) / (n * n)
        kappa = np.where(expected < 1.0, (observed - expected) / (1.0 - expected), np.nan)
    return observed, expected, kappa


def cohen_kappa(judge: Sequence[str], person: Sequence[str], labels: Sequence[str] | None = None, *,
                resamples: int = KAPPA_RESAMPLES, seed: int = SEED) -> Agreement:
    """Return Cohen's kappa of the judge's and the people's labels of the same items (item i: `judge[i]`,
    `person[i]`), its 95% interval and their confusion table. Deterministic for a given `seed`.

    kappa = (p_o - p_e) / (1 - p_e): p_o the share of items labelled alike, p_e = sum_k (judge's share of
    label k) * (people's share of label k). It is undefined (None, with a note) without items, or when
    p_e = 1: both raters gave every item one and the same label, and agreement by chance explains it all.

    The interval is a percentile bootstrap over the items (`resamples` resamples, `resample_counts` as
    `evalrun.scoring.aggregate` draws them; a resample whose kappa is undefined is left out; endpoints
    from `percentile_intervals`), widened if need be to hold kappa. Chosen over the large-sample
    standard error of Fleiss, Cohen & Everitt (1969) because a good judge puts kappa near 1, where its
    sampling distribution is skewed: the symmetric normal interval runs past 1 (clipped, it says too
    little about the lower end, the end that matters); the bootstrap follows the skew and needs no
    formula per table shape. Like any interval from the sample alone it is [1, 1] when every item
    agrees: read it with `agreement_ci95` (Wilson), which is honest there.

    >>> a = cohen_kappa(["yes"] * 25 + ["no"] * 25, ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15)
    >>> a.n, a.agreed, a.agreement, a.expected, round(a.kappa, 12), a.labels
    (50, 35, 0.7, 0.5, 0.4, ('no', 'yes'))
    >>> a.confusion
    {'no': {'no': 15, 'yes': 10}, 'yes': {'no': 5, 'yes': 20}}
    >>> low, high = a.ci95
    >>> -1 <= low < a.kappa < high <= 1
    True
    >>> cohen_kappa(["yes", "yes"], ["yes", "yes"], labels=["yes", "no"]).note
    "both gave every item the label 'yes': agreement by chance is 1, kappa is undefined"
    """
    if len(judge) != len(person):
        raise ValueError(f"judge ({len(judge)} labels) and person ({len(person)} labels) must label the same items")
    order = _label_order(judge, person, labels)
    index = {label: k for k, label in enumerate(order)}
    size, n = len(order), len(judge)
    cells = np.array([index[j] * size + index[p] for j, p in zip(judge, person)], dtype=np.intp)
    table = np.bincount(cells, minlength=size * size).reshape(size, size)
    confusion = {j: {p: int(table[a, b]) for b, p in enumerate(order)} for a, j in enumerate(order)}
    agreed = int(np.trace(table))
    if n == 0:
        return Agreement(0, 0, None, None, None, None, None, order, confusion, "no items")
    observed, expected, kappa = (float(x) for x in kappas(table))
    common = dict(n=n, agreed=agreed, agreement=agreed / n, agreement_ci95=wilson_interval(agreed, n),
                  expected=expected, labels=order, confusion=confusion)
    if math.isnan(kappa):
        only = order[int(np.argmax(table.diagonal()))]
        return Agreement(**common, kappa=None, ci95=None,
                         note=f"both gave every item the label {only!r}: agreement by chance is 1, kappa is undefined")
    one_hot = np.zeros((n, size * size))
    one_hot[np.arange(n), cells] = 1.0
    tables = np.vstack([counts @ one_hot for counts in resample_counts(n, np.random.default_rng(seed), resamples)])
    found = percentile_intervals(kappas(tables.reshape(-1, size, size))[2][:, None], np.array([-1.0]),
                                 np.array([1.0]))[0]
    if found is None:
        return Agreement(**common, kappa=kappa, ci95=None, note="no resample has a defined kappa")
    return Agreement(**common, kappa=kappa, ci95=(min(found[0], kappa), max(found[1], kappa)))
