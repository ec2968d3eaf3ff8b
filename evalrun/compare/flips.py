"""Item flips: for each 0/1 metric, the items that went from pass to fail (lost) or from fail to pass
(gained) between two runs, each with its failure attribution before and after (retrieval_miss ->
context_cut says the retriever now finds the evidence and truncation drops it).

A judged metric's flip is not always the system's: asked twice about the same answer, a judge does not
always give the same verdict. When a run was scored with `--judge-repeats`, its summary holds the judge's
own flip rate per metric (how many items changed value between repeats), and its scores say which items
did. A flip of an item the judge itself flipped is marked `judge_unstable`; and per metric, the flips are
"within the judge's own flip rate" when no more of them happened than chance would give from the judge
alone: at most the 95th percentile of Binomial(pairs compared, pooled flip rate of both runs' repeats)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import math

import numpy as np
from pydantic import Field

from curate import Record
from evalrun.records import ItemScores, JudgeAgreement


class ItemFlip(Record):
    """One item whose 0/1 metric changed between BASE and NEW."""

    metric: str = Field(description="The 0/1 metric.")
    item_id: str = Field(description="The item.")
    change: str = Field(description="lost (1 -> 0) or gained (0 -> 1).")
    base_attribution: list[str] = Field(default_factory=list, description="Where the item failed in BASE.")
    new_attribution: list[str] = Field(default_factory=list, description="Where the item failed in NEW.")
    judge_unstable: bool | None = Field(None, description="The judge itself changed this item's value when asked "
                                        "again, in either run (the flip may be the judge's); None: no repeat "
                                        "measurement of this metric.")


class FlipCount(Record):
    """The flips of one 0/1 metric, held against the judge's own flip rate where it was measured."""

    metric: str = Field(description="The 0/1 metric.")
    pairs: int = Field(description="Items compared (scored in both runs).")
    lost: int = Field(description="Items 1 -> 0.")
    gained: int = Field(description="Items 0 -> 1.")
    judge_flip_rate: float | None = Field(None, description="Share of items whose value changed when the judge was "
                                          "asked again (both runs' --judge-repeats pooled); None: not measured.")
    judge_measured: int = Field(0, description="Pairs of judgements (first, repeat) the flip rate was measured on.")
    expected_from_judge: float | None = Field(None, description="pairs x judge_flip_rate: flips the judge alone "
                                              "would make on average.")
    judge_unstable: int = Field(0, description="Flips of items the judge itself flipped on a repeat.")
    within_judge_rate: bool | None = Field(None, description="lost + gained is at most the 95th percentile of "
                                           "Binomial(pairs, judge_flip_rate): no more flips than the judge alone "
                                           "would plausibly make.")


def item_flips(ids: Sequence[str], metrics: Sequence[str], base: np.ndarray, new: np.ndarray,
               binary: Collection[str], base_attribution: Mapping[str, list[str]],
               new_attribution: Mapping[str, list[str]],
               unstable: Mapping[str, set[str] | None] | None = None) -> list[ItemFlip]:
    """Return the flips of the `binary` (0/1) metrics among `metrics`, the columns of `base` and `new`
    (items x metrics, the items `ids`, NaN = no value), by metric, lost before gained, then in the
    order of `ids`; each with the item's attribution in either run, and, for a metric in `unstable`
    (metric -> the items the judge flipped on a repeat in either run, None when not measured), whether
    the judge itself flipped it.

    >>> base, new = np.array([[1.0], [0.0], [1.0]]), np.array([[0.0], [1.0], [np.nan]])
    >>> [(f.item_id, f.change) for f in item_flips(["a", "b", "c"], ["hit"], base, new, {"hit"}, {}, {})]
    [('a', 'lost'), ('b', 'gained')]
    """
    flips, unstable = [], unstable or {}
    for j, metric in enumerate(metrics):
        if metric not in binary:
            continue
        shaky = unstable.get(metric)
        for change, before, after in (("lost", 1.0, 0.0), ("gained", 0.0, 1.0)):
            for k in np.flatnonzero((base[:, j] == before) & (new[:, j] == after)).tolist():
                item_id = ids[k]
                # built without validation: tens of thousands on a large release, from checked records
                flips.append(ItemFlip.model_construct(metric=metric, item_id=item_id, change=change,
                                                      base_attribution=list(base_attribution.get(item_id, [])),
                                                      new_attribution=list(new_attribution.get(item_id, [])),
                                                      judge_unstable=None if shaky is None else item_id in shaky))
    return flips


def unstable_items(rows: Mapping[str, ItemScores], metric: str) -> set[str] | None:
    """Return the items whose `metric` the judge changed between repeats, or None when no item of the
    run was judged more than once."""
    measured, unstable = False, set()
    for item_id, row in rows.items():
        repeats = (row.generation or {}).get("repeats") or []
        if not repeats:
            continue
        measured = True
        first = row.values.get(metric)
        if first is not None and any(values.get(metric, first) != first for values in repeats):
            unstable.add(item_id)
    return unstable if measured else None


def binomial_quantile(n: int, p: float, q: float = 0.95) -> int:
    """Return the smallest k with P(Binomial(n, p) <= k) >= q.

    >>> binomial_quantile(100, 0.05), binomial_quantile(10, 0.0), binomial_quantile(4, 1.0)
    (9, 0, 4)
    """
    if p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    log_p, log_q, total = math.log(p), math.log1p(-p), 0.0
    for k in range(n + 1):
        total += math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * log_p
                          + (n - k) * log_q)
        if total >= q:
            return k
    return n


def flip_counts(flips: Sequence[ItemFlip], pairs: Mapping[str, int],
                agreements: Sequence[Mapping[str, JudgeAgreement]]) -> list[FlipCount]:
    """Return per 0/1 metric of `pairs` (metric -> items compared) its flips, and where either run measured
    the judge's agreement on it (`agreements`: each run's summary.judge.agreement), the pooled flip rate,
    the flips it would explain, and whether the flips stay within it."""
    counts = []
    for metric, n in pairs.items():
        mine = [f for f in flips if f.metric == metric]
        lost = sum(f.change == "lost" for f in mine)
        measured = [a[metric] for a in agreements if metric in a and a[metric].compared]
        count = FlipCount(metric=metric, pairs=n, lost=lost, gained=len(mine) - lost,
                          judge_unstable=sum(bool(f.judge_unstable) for f in mine))
        if measured:
            compared, changed = sum(a.compared for a in measured), sum(a.changed for a in measured)
            rate = changed / compared
            count.judge_flip_rate, count.judge_measured = rate, compared
            count.expected_from_judge = n * rate
            count.within_judge_rate = len(mine) <= binomial_quantile(n, rate)
        counts.append(count)
    return counts
