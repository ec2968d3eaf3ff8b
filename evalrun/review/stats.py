"""Statistics behind "people check the judge": how often the judge and the people agree (`cohen_kappa`),
and the judge's means corrected by the people's reviews of a sample of the items (`ppi_mean`,
`ppi_paired_difference`), with how many reviews a narrower interval would take (`reviews_needed`).

Pure: arrays or lists in, frozen dataclasses out. Programmer errors (mismatched lengths, values that are
no finite number in the metric's range, a position reviewed twice) raise ValueError; data that simply
cannot support an estimate (too few reviews, a stratum without one) gives None and a `note` saying why.

- Agreement: Cohen's kappa of the two raters' labels (the kappa of `curate.annotate.agreement.cohen_kappa`),
  its 95% percentile bootstrap interval over the items, the Wilson interval of the raw agreement and the
  confusion table (`Agreement`).
- Prediction-powered inference (Angelopoulos, Bates, Fannjiang, Jordan, Zrnic 2023, "Prediction-powered
  inference"; power-tuned as PPI++, Angelopoulos, Duchi, Zrnic 2023): the judge's value f_i is known for
  all N items of the run, the people's value y_i for the n reviewed ones. The reviewed items are a
  stratified sample without replacement, n_h of the N_h items of stratum h (one stratum: a simple random
  sample), so that over-sampling the items where the judge seemed unsure (`evalrun.review.select`) buys
  precision without biasing the mean. With W_h = N_h / N,

      theta(lambda) = sum_h W_h * [ lambda * mean_{all in h}(f) + mean_{reviewed in h}(y - lambda * f) ]

  is unbiased for every fixed lambda: the judge's mean over all the items, corrected by the people's
  mean disagreement with it. lambda = 1 is classic PPI, lambda = 0 the people's stratified mean alone
  (`classical`). The target is the mean people would give over the population the run's items are
  drawn from (an item's expected value); over the run's own N items the interval is conservative.

  Variance. PPI's formula, sum_h W_h^2 (lambda^2 s2_f,h / N_h + s2_(y - lambda f),h / n_h), takes the
  reviewed items and the judged ones as independent samples; here the reviewed items are some of the
  judged ones. This module uses the variance of the design as it is (two-phase sampling: the N items a
  sample of the population, the reviewed ones a stratified sample of them):

      V(lambda) = sum_h W_h^2 * ( s2_(y - lambda f),h * (1 / n_h - 1 / N_h) + s2_y,h / N_h )

  (s2: sample (co)variances over the reviewed items, n_h - 1 in the denominator). The first part shrinks
  with more reviews and vanishes when every item is reviewed; the second is the items' own sampling
  variance, which no number of reviews removes. For a fixed lambda the two formulas differ by
  2 lambda Cov(f, y - lambda f) / N, which is 0 at the regression slope but not at the lambda PPI++ takes
  from PPI's formula: in simulation (1,000 items, 100 reviews drawn at random, 20,000 studies for each of
  three judges) that interval covered 94.0 to 94.5%, its standard error 2 to 4% short.

  Power tuning (PPI++): lambda minimises V, a quadratic: the stratified regression slope of y on f,
  sum_h g_h s_fy,h / sum_h g_h s_ff,h with g_h = W_h^2 (1 / n_h - 1 / N_h), clipped to [0, 1], so that
  a poor judge costs nothing (lambda -> 0: the people's own estimate). Tuned on the same reviews, lambda
  makes the plug-in V optimistic (the slope's noise, and choosing the lambda whose estimated variance is
  least: 94.0 to 94.8% over those and two stratified designs); so with lambda tuned the first part of V
  is the stratified jackknife's, lambda re-tuned in each delete-one replicate (`_jackknife_parts`), which
  equals the formula at a fixed lambda (coverage 94.8 to 95.3% over the same five).

  The 95% interval is theta +- t_{0.975, df} * sqrt(V), clipped to the range the metric can take.

Within-stratum variances (`_Design`): each stratum's own, about its own reviewed means, and only a stratum
with a single reviewed item borrows the pooled within-stratum (co)variances of the others. A variance
pooled over all the strata would be stable, but the design is heteroscedastic on purpose: the unsure
strata, where judge and people disagree most, are the over-sampled ones, so a pooled variance is mostly
theirs and is charged to the large, sure strata too (two strata, W = 0.8 / 0.2, 50 reviews each,
residual variances 0.02 / 0.25: the pooled standard error is about twice the true one). The degrees of
freedom are Welch-Satterthwaite's, df = V^2 / sum_k (c_k^2 / df_k) over the strata's parts c_k of V
(df_k = n_h - 1; the strata on the pooled variances as one part, with the pooled df): with one stratum,
n - 1.

The t quantile (`t_quantile`) is exact, from the closed form of Student's t distribution at integer
degrees of freedom (Abramowitz & Stegun 26.7.3-4) inverted by bisection, a fractional df rounded down:
scipy is no dependency of evalrun.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from evalrun.scoring.aggregate import percentile_intervals, resample_counts, wilson_interval
from evalrun.scoring.kappa import Agreement, cohen_kappa  # noqa: F401  (the review's agreement statistics)

Z95 = 1.959963984540054  # the 97.5th percentile of the standard normal
DF_CAP = 100_000  # t quantiles above this many degrees of freedom are taken at it (t - z < 2e-5 there)


# -- Student's t quantile -------------------------------------------------------------------------------

def _t_central(t: float, df: int) -> float:
    """Return P(|T| <= t) for Student's T with integer `df` >= 1 (Abramowitz & Stegun 26.7.3-4), with
    theta = atan(t / sqrt(df)), c = cos^2(theta):
    odd df: (2 / pi) * (theta + sin(theta) cos(theta) * (1 + 2/3 c + 2*4/(3*5) c^2 + ... , (df - 3) / 2 terms));
    even df: sin(theta) * (1 + 1/2 c + 1*3/(2*4) c^2 + ... , (df - 2) / 2 terms).

    >>> _t_central(1.0, 1), _t_central(math.sqrt(2), 2)   # 2 atan(1) / pi; sin(pi / 4)
    (0.5, 0.7071067811865475)
    """
    theta = math.atan(t / math.sqrt(df))
    c = math.cos(theta) ** 2
    if df % 2:
        k = np.arange(1, (df - 1) // 2)
        tail = float(np.cumprod(2 * k / (2 * k + 1) * c).sum())
        return 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * (1 + tail)) if df > 1 else 2 * theta / math.pi
    k = np.arange(1, df // 2)
    return math.sin(theta) * (1 + float(np.cumprod((2 * k - 1) / (2 * k) * c).sum()))


@lru_cache(maxsize=4096)
def _t_quantile(probability: float, df: int) -> float:
    """Return the `probability` quantile (> 0.5) of Student's t with integer `df`, by bisection."""
    central = 2 * probability - 1
    high = 1.0
    while _t_central(high, df) < central:
        high *= 2
    low = 0.0
    for _ in range(200):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        if _t_central(middle, df) < central:
            low = middle
        else:
            high = middle
    return high


def t_quantile(probability: float, df: float) -> float:
    """Return the `probability` quantile of Student's t distribution with `df` degrees of freedom
    (0.5 < probability < 1). A fractional df (Welch-Satterthwaite's) is rounded down, which can only
    widen an interval; above DF_CAP it is taken at DF_CAP.

    >>> round(t_quantile(0.975, 1), 4), round(t_quantile(0.975, 9), 4), round(t_quantile(0.975, 99.7), 4)
    (12.7062, 2.2622, 1.9842)
    """
    if not 0.5 < probability < 1 or not df >= 1:
        raise ValueError(f"t_quantile needs 0.5 < probability < 1 and df >= 1, not {probability}, {df}")
    return _t_quantile(float(probability), int(min(df + 1e-9, DF_CAP)))  # 8.9999999999 is 9


# -- prediction-powered means ----------------------------------------------------------------------------

@dataclass(frozen=True)
class PPIEstimate:
    """A mean people would give, estimated from the judge's values on all the items and the people's on a
    reviewed sample of them; beside it the people's (stratified) mean alone."""

    estimate: float | None
    """theta(lambda_), within [low, high] (None: see `note`)."""
    ci95: tuple[float, float] | None
    """estimate +- t_{0.975, df} * se, clipped to [low, high]."""
    se: float | None
    """sqrt(reviewed_variance + items_variance)."""
    lambda_: float | None
    """The weight of the judge: power-tuned in [0, 1], or the one asked for."""
    classical: float | None
    """The people's stratified mean alone: theta(0)."""
    classical_ci95: tuple[float, float] | None
    """Its interval, the same way."""
    classical_se: float | None
    """Its standard error."""
    judge_mean: float | None
    """Mean of the judge's values over all the items (None without items)."""
    n_reviewed: int
    """Items reviewed by people."""
    n_items: int
    """Items of the run (N)."""
    df: float | None = None
    """Welch-Satterthwaite degrees of freedom of the interval (None when se == 0)."""
    reviewed_variance: float | None = None
    """The part of se^2 more reviews shrink: sum_h W_h^2 s2_(y - lambda f),h (1 / n_h - 1 / N_h), or its
    jackknife when lambda was tuned; 0 when every item is reviewed."""
    items_variance: float | None = None
    """The part of se^2 no number of reviews shrinks, the run's items being a sample themselves:
    sum_h W_h^2 s2_y,h / N_h."""
    low: float = 0.0
    """The smallest value the metric can take."""
    high: float = 1.0
    """The largest value the metric can take."""
    note: str | None = None
    """Why there is no estimate."""


@dataclass(frozen=True)
class _Design:
    """The stratified sample, per stratum h: weight W_h, sizes N_h and n_h, the judge's mean over all its
    items, and over its reviewed items the means of y and f and their (co)variances (divisor n_h - 1; a
    stratum with one reviewed item has the pooled ones, `pooled` marks it, `pooled_df` = sum_h (n_h - 1));
    per reviewed item, its stratum and its y and f less its stratum's means."""

    weight: np.ndarray
    size: np.ndarray
    reviewed: np.ndarray
    all_f_mean: np.ndarray
    y_mean: np.ndarray
    f_mean: np.ndarray
    yy: np.ndarray
    fy: np.ndarray
    ff: np.ndarray
    pooled: np.ndarray
    pooled_df: int
    item_stratum: np.ndarray
    dy: np.ndarray
    df: np.ndarray


def _values(name: str, values: Sequence[float] | np.ndarray, low: float, high: float) -> np.ndarray:
    """Return `values` as a 1-D float array, or raise ValueError naming the first that is no finite
    number in [low, high]."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one value per item, not an array of shape {array.shape}")
    bad = np.flatnonzero(~(np.isfinite(array) & (array >= low) & (array <= high)))
    if len(bad):
        raise ValueError(f"{name}[{bad[0]}] = {array[bad[0]]} is no finite number in [{low}, {high}]")
    return array


def _positions(reviewed: Sequence[int] | np.ndarray, people: np.ndarray) -> np.ndarray:
    """Return the reviewed positions as an integer array, or raise ValueError when they are no integers,
    are not one per people's value, or name an item twice (the sample is drawn without replacement)."""
    positions = np.asarray(reviewed)
    if positions.size == 0:
        positions = positions.astype(np.intp)
    if positions.ndim != 1 or not np.issubdtype(positions.dtype, np.integer):
        raise ValueError(f"reviewed must be item positions (integers), not {positions.dtype} "
                         f"of shape {positions.shape}")
    if len(positions) != len(people):
        raise ValueError(f"reviewed ({len(positions)} positions) and people ({len(people)} values) must match")
    seen, counts = np.unique(positions, return_counts=True)
    if (counts > 1).any():
        raise ValueError(f"reviewed names item {seen[counts > 1][0]} more than once")
    return positions.astype(np.intp)


def _stratum_index(strata: Sequence[Hashable] | np.ndarray | None, items: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the strata's labels (sorted) and each item's stratum number; one stratum when None."""
    if strata is None:
        return np.array(["all"]), np.zeros(items, dtype=np.intp)
    if len(strata) != items:
        raise ValueError(f"strata ({len(strata)} labels) must give one stratum per judged item ({items})")
    labels, index = np.unique(np.asarray(strata), return_inverse=True)
    return labels, index.reshape(-1).astype(np.intp)


def _design(f: np.ndarray, positions: np.ndarray, y: np.ndarray, labels: np.ndarray,
            stratum: np.ndarray) -> _Design | str:
    """Return the design's per-stratum summaries, or a note saying why it supports no estimate."""
    count = len(labels)
    size = np.bincount(stratum, minlength=count)
    where = stratum[positions]
    reviewed = np.bincount(where, minlength=count)
    if (reviewed == 0).any():
        h = int(np.argmax(reviewed == 0))
        return f"stratum {labels[h]!s} has {size[h]} items and none reviewed: its mean cannot be estimated"
    if not (reviewed >= 2).any():
        return "no stratum has 2 reviewed items: there is no within-stratum variance"
    all_f_mean = np.bincount(stratum, f, count) / size
    fr = f[positions]
    y_mean, f_mean = np.bincount(where, y, count) / reviewed, np.bincount(where, fr, count) / reviewed
    dy, df = y - y_mean[where], fr - f_mean[where]
    pooled = reviewed == 1
    pooled_df = int((reviewed - 1).sum())
    # a stratum with one reviewed item has no variance of its own: it borrows the others' pooled one
    yy, fy, ff = (np.where(pooled, sums.sum() / pooled_df, sums / np.maximum(reviewed - 1, 1))
                  for sums in (np.bincount(where, a * b, count) for a, b in ((dy, dy), (df, dy), (df, df))))
    return _Design(size / len(f), size, reviewed, all_f_mean, y_mean, f_mean, yy, fy, ff, pooled, pooled_df,
                   where, dy, df)


def _slope(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    """Return b / a clipped to [0, 1], 0 where a <= 0."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(a > 0, np.clip(b / a, 0.0, 1.0), 0.0)


def _tuned(design: _Design) -> float:
    """Return the lambda in [0, 1] that minimises V(lambda): b / a clipped, with g_h = W_h^2 (1 / n_h - 1 / N_h),
    a = sum_h g_h s_ff,h and b = sum_h g_h s_fy,h (a stratified regression slope of y on f); 0 when a == 0
    (the judge's values do not vary, or every item was reviewed: lambda changes nothing)."""
    g = design.weight ** 2 * (1 / design.reviewed - 1 / design.size)
    return float(_slope((g * design.ff).sum(), (g * design.fy).sum()))


def _jackknife_parts(design: _Design) -> np.ndarray:
    """Return, per stratum, the stratified jackknife variance of theta(lambda^) over the reviewed items,
    lambda re-tuned in every replicate: (1 - n_h / N_h) (n_h - 1) / n_h * sum_{i in h} (theta_(i) - mean_h)^2,
    theta_(i) the estimate without reviewed item i. At a fixed lambda it is exactly the formula's
    W_h^2 (1 / n_h - 1 / N_h) s2_(y - lambda f),h; with lambda tuned on the same reviews it also counts
    what the tuning adds (its noise, and its choosing the lambda whose estimated variance is smallest).
    A stratum with one reviewed item keeps the formula, on the pooled variances; a replicate leaving a
    stratum one item takes the pooled (co)variances for it."""
    w, n, size, h = design.weight, design.reviewed, design.size, design.item_stratum
    g = w ** 2 * (1 / n - 1 / size)
    a, b = float((g * design.ff).sum()), float((g * design.fy).sum())
    own = ~design.pooled
    pooled_ff = float((design.ff * (n - 1))[own].sum() / design.pooled_df)
    pooled_fy = float((design.fy * (n - 1))[own].sum() / design.pooled_df)
    kept = own[h]  # items of strata with 2 or more reviews: their replicates exist
    h, dy, df, ni = h[kept], design.dy[kept], design.df[kept], n[h[kept]]
    # without item i, stratum h's moments: sums less the item's (deviations from the full means, which
    # move by -d_i / (n_h - 1)), over n_h - 2
    left = ni - 1
    correction = ni / np.maximum(left, 1)
    ff_i = np.where(left >= 2, (design.ff[h] * left - df * df * correction) / np.maximum(left - 1, 1), pooled_ff)
    fy_i = np.where(left >= 2, (design.fy[h] * left - df * dy * correction) / np.maximum(left - 1, 1), pooled_fy)
    g_i = w[h] ** 2 * (1 / left - 1 / size[h])
    lambda_i = _slope(a - g[h] * design.ff[h] + g_i * ff_i, b - g[h] * design.fy[h] + g_i * fy_i)
    base = float((w * design.y_mean).sum())
    judge_gap = float((w * (design.all_f_mean - design.f_mean)).sum())
    theta_i = base - w[h] * dy / left + lambda_i * (judge_gap + w[h] * df / left)
    count = len(n)
    centred = theta_i - (np.bincount(h, theta_i, count) / np.maximum(n, 1))[h]
    parts = (1 - n / size) * (n - 1) / n * np.bincount(h, centred ** 2, count)
    if design.pooled.any():
        lambda_ = _slope(a, b)
        residual = np.maximum(design.yy - 2 * lambda_ * design.fy + lambda_ ** 2 * design.ff, 0.0)
        parts = np.where(design.pooled, g * residual, parts)
    return parts


def _fit(design: _Design, lambda_: float, tuned: bool) -> tuple[float, float, float, float | None]:
    """Return theta(lambda), the part of its variance more reviews would shrink (the formula's, or the
    jackknife's when lambda was `tuned` on these reviews), the part they would not, and the
    Welch-Satterthwaite df of their sum (None when it is 0)."""
    w, w2 = design.weight, design.weight ** 2
    theta = float((w * (lambda_ * design.all_f_mean + design.y_mean - lambda_ * design.f_mean)).sum())
    if tuned:
        shrinking = _jackknife_parts(design)
    else:
        residual = np.maximum(design.yy - 2 * lambda_ * design.fy + lambda_ ** 2 * design.ff, 0.0)
        shrinking = w2 * residual * (1 / design.reviewed - 1 / design.size)
    staying = w2 * design.yy / design.size
    parts = shrinking + staying
    own = ~design.pooled
    components = np.concatenate([parts[own], [parts[design.pooled].sum()]])
    dfs = np.concatenate([design.reviewed[own] - 1, [max(design.pooled_df, 1)]])
    total = float(components.sum())
    df = total ** 2 / float((components ** 2 / dfs).sum()) if total > 0 else None
    return theta, float(shrinking.sum()), float(staying.sum()), df


def _interval(theta: float, variance: float, df: float | None, low: float, high: float) -> tuple[float, float]:
    """Return theta +- t_{0.975, df} * sqrt(variance), clipped to [low, high] (theta itself inside)."""
    half = t_quantile(0.975, df) * math.sqrt(variance) if df is not None else 0.0
    return max(low, min(theta, theta - half)), min(high, max(theta, theta + half))


def ppi_mean(judged: Sequence[float] | np.ndarray, reviewed: Sequence[int] | np.ndarray,
             people: Sequence[float] | np.ndarray, *, strata: Sequence[Hashable] | np.ndarray | None = None,
             lambda_: float | None = None, low: float = 0.0, high: float = 1.0) -> PPIEstimate:
    """Return the prediction-powered estimate of the mean people would give, with its 95% interval, and
    beside it the people's stratified mean alone (formulas in the module's docstring).

    `judged`: the judge's value of every item of the run (N); `reviewed`: the positions in `judged` of
    the items people reviewed, and `people`: their values, in the same order; `strata`: each item's
    stratum (None: the reviewed items are a simple random sample); `lambda_`: the judge's weight (None:
    power-tuned; 1.0: classic PPI); [low, high]: the range the metric can take. An estimate outside the
    range is moved to its nearer end (the truth is in the range: that only brings it closer).

    None, with a note, when the data cannot support an estimate: fewer than 2 reviewed items, a reviewed
    position that is no item of the run, a stratum with no reviewed item, or no stratum with two.

    >>> judged = [1, 0, 1, 1, 0, 1, 0, 1, 1, 1]  # mean 0.7; people disagree on item 1 of the 4 reviewed
    >>> e = ppi_mean(judged, [0, 1, 2, 3], [1, 1, 1, 1], lambda_=1.0)
    >>> e.estimate, e.judge_mean, e.classical  # 0.7 + (0 + 1 + 0 + 0) / 4; the people: all 1
    (0.95, 0.7, 1.0)
    >>> round(e.se ** 2, 12) == 0.25 * (1 / 4 - 1 / 10) + 0 / 10  # s2_(y - f) (1 / n - 1 / N) + s2_y / N
    True
    >>> ppi_mean(judged, [0], [1]).note
    'fewer than 2 reviewed items (1)'
    """
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"the metric's range [{low}, {high}] must be finite and not empty")
    if lambda_ is not None and not 0.0 <= lambda_ <= 1.0:
        raise ValueError(f"lambda_ ({lambda_}) must be in [0, 1] or None (power-tuned)")
    f = _values("judged", judged, low, high)
    y = _values("people", people, low, high)
    positions = _positions(reviewed, y)
    labels, stratum = _stratum_index(strata, len(f))
    judge_mean = float(f.mean()) if len(f) else None
    empty = dict(estimate=None, ci95=None, se=None, lambda_=None, classical=None, classical_ci95=None,
                 classical_se=None, judge_mean=judge_mean, n_reviewed=len(y), n_items=len(f), low=low, high=high)
    outside = positions[(positions < 0) | (positions >= len(f))]
    if len(outside):
        return PPIEstimate(**empty, note=f"reviewed position {outside[0]} is no item of the run (0..{len(f) - 1})")
    if len(y) < 2:
        return PPIEstimate(**empty, note=f"fewer than 2 reviewed items ({len(y)})")
    design = _design(f, positions, y, labels, stratum)
    if isinstance(design, str):
        return PPIEstimate(**empty, note=design)
    weight = _tuned(design) if lambda_ is None else float(lambda_)
    theta, reviewed_variance, items_variance, df = _fit(design, weight, tuned=lambda_ is None)
    classical, classical_shrinking, classical_staying, classical_df = _fit(design, 0.0, tuned=False)
    classical_variance = classical_shrinking + classical_staying
    theta, classical = min(high, max(low, theta)), min(high, max(low, classical))
    return PPIEstimate(
        estimate=theta, ci95=_interval(theta, reviewed_variance + items_variance, df, low, high),
        se=math.sqrt(reviewed_variance + items_variance), lambda_=weight, classical=classical,
        classical_ci95=_interval(classical, classical_variance, classical_df, low, high),
        classical_se=math.sqrt(classical_variance), judge_mean=judge_mean, n_reviewed=len(y), n_items=len(f),
        df=df, reviewed_variance=reviewed_variance, items_variance=items_variance, low=low, high=high)


def ppi_paired_difference(base_judged: Sequence[float] | np.ndarray, new_judged: Sequence[float] | np.ndarray,
                          reviewed: Sequence[int] | np.ndarray, base_people: Sequence[float] | np.ndarray,
                          new_people: Sequence[float] | np.ndarray, *,
                          strata: Sequence[Hashable] | np.ndarray | None = None, lambda_: float | None = None,
                          low: float = 0.0, high: float = 1.0) -> PPIEstimate:
    """Return the prediction-powered estimate of mean(new) - mean(base) as people would judge it: two
    runs over the same items (same order), the same items reviewed in both; `ppi_mean` of the per-item
    differences d_i = new_i - base_i (the judge's for every item, the people's for the reviewed ones),
    whose range is [low - high, high - low]. The pairing is what makes it precise: each item's own
    difficulty cancels.

    >>> e = ppi_paired_difference([0, 0, 1, 1], [1, 0, 1, 1], [0, 1], [0, 0], [1, 1], lambda_=1.0)
    >>> e.estimate, e.judge_mean, (e.low, e.high)  # 1/4 + ((1 - 1) + (1 - 0)) / 2
    (0.75, 0.25, (-1.0, 1.0))
    """
    base, new = _values("base_judged", base_judged, low, high), _values("new_judged", new_judged, low, high)
    base_y, new_y = _values("base_people", base_people, low, high), _values("new_people", new_people, low, high)
    if len(base) != len(new) or len(base_y) != len(new_y):
        raise ValueError(f"base and new must hold the same items: judged {len(base)} and {len(new)}, "
                         f"people {len(base_y)} and {len(new_y)}")
    return ppi_mean(new - base, reviewed, new_y - base_y, strata=strata, lambda_=lambda_, low=low - high,
                    high=high - low)


def reviews_needed(estimate: PPIEstimate, width: float) -> int | None:
    """Return how many reviewed items in all (at most the run's N, allocated to the strata as now) would
    bring the full width of the 95% interval down to `width`: the smallest n with

        2 * t_{0.975, (df + 1) n / n0 - 1} * sqrt(S + R * (n0 / n) * (N - n) / (N - n0)) <= width,

    R and S the estimate's `reviewed_variance` and `items_variance` at the n0 reviews made (R's
    1 / n_h - 1 / N_h scaled to n reviews: exact for one stratum or a proportional allocation). None when
    no number can (or there is no estimate): S, the items' own sampling variance, does not shrink with
    reviews, and reviewing all N items still leaves 2 * t * sqrt(S) wider than `width`. lambda stays as it
    is and the clipping to the metric's range is left aside. Never fewer than 2.

    >>> e = ppi_mean([1, 0] * 50, range(10), [1, 1, 0, 0, 1, 0, 1, 0, 1, 1], lambda_=0.0)  # s2_y = 4 / 15
    >>> round(e.ci95[1] - e.ci95[0], 3), reviews_needed(e, 0.25)  # V(n) = s2_y / n, df = n - 1
    (0.739, 68)
    >>> reviews_needed(e, 0.2) is None  # all 100 items: 2 * t_99 * sqrt(4 / 15 / 100) = 0.205
    True
    """
    if estimate.se is None or not width > 0:
        return None
    if estimate.df is None:
        return 2
    reviewed, items = estimate.reviewed_variance or 0.0, estimate.items_variance or 0.0
    n0, everything = estimate.n_reviewed, estimate.n_items

    def full_width(n: int) -> float:
        shrinking = reviewed * n0 * (everything - n) / (n * (everything - n0)) if n0 < everything else 0.0
        return 2 * t_quantile(0.975, max(1.0, (estimate.df + 1) * n / n0 - 1)) * math.sqrt(items + shrinking)

    if full_width(everything) > width:
        return None
    low, high = 1, everything  # the width falls as n grows: the smallest n that reaches `width`
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if full_width(middle) > width else (low, middle)
    return max(2, high)
