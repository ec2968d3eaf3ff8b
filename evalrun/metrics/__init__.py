"""Retrieval metrics of evalrun: Hit@K, Recall@K, Precision@K, MRR@K and nDCG@K per query.

`retrieval_metrics` takes Python dicts and returns {query id: {metric name: value}}, the names
spelt as ranx spells them (`hit_rate@5`, `recall@5`, `precision@5`, `mrr@10`, `ndcg@10`). Under
it, `prepare` turns the dicts into arrays once and one small function per metric (hit_rate.py,
recall.py, precision.py, mrr.py, ndcg.py) computes every query at once with numpy;
`metric_arrays` runs them all and keeps the per-query arrays, for callers that aggregate.

Which queries are scored: those in the run whose qrels hold at least one grade >= 1. The others
(no relevant evidence: unanswerable items, or items nobody labelled; or absent from the run)
are left out of the result, as trec_eval leaves them out; the caller reports them apart.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from evalrun.metrics.hit_rate import hit_rate
from evalrun.metrics.mrr import mrr
from evalrun.metrics.ndcg import ndcg
from evalrun.metrics.precision import precision
from evalrun.metrics.prepare import MetricInputError, RankedGrades, prepare
from evalrun.metrics.recall import recall

__all__ = ["METRICS", "MetricInputError", "RankedGrades", "hit_rate", "mean_metrics", "metric_arrays", "mrr",
           "ndcg", "precision", "prepare", "recall", "retrieval_metrics"]

METRICS = ("hit_rate", "recall", "precision", "mrr", "ndcg")
PRECISION_DENOMINATORS = ("k", "returned")


def retrieval_metrics(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Sequence[str]],
                      ks: Iterable[int] = (1, 3, 5, 10), precision_denominator: str = "k",
                      groups: Mapping[str, Mapping[str, str]] | None = None) -> dict[str, dict[str, float | None]]:
    """Return {query id: {metric@K: value}} for every scored query, every metric and every K.

    - `qrels`: {query id: {group id: grade}}, grade 0, 1 or 2; R = the groups with grade >= 1.
    - `run`: {query id: [retrieved ids, best first]}.
    - `groups`: {query id: {retrieved id: group id, or a tuple of group ids}}; the run's ids are
      mapped to the evidence groups they find (an unmapped id stands for itself; a chunk holding
      two required facts finds two groups). S_K = the first K ranks; a rank finds every group no
      higher rank found. Recall@K and Hit@K count every group found in S_K; a rank is relevant for
      precision and MRR when it finds at least one new group, and its nDCG gain is the best grade
      among those (a second copy of one evidence never counts twice, and it takes the rank it was
      given). Where each id finds at most one group these are trec_eval's and ranx's values.
    - `precision_denominator`: "k" divides |R ∩ S_K| by K (trec_eval, ranx: returning fewer
      than K items costs precision); "returned" divides by min(K, |S|), and a query that
      returned nothing then gets None for precision@K (undefined, not 0).

    A query is scored when it is in `run` and has at least one relevant group; other queries are
    left out of the result (an empty list in `run` is scored: it retrieved nothing). The inputs
    are not changed. Every value is a float in [0, 1] except that None.

    >>> qrels = {"q1": {"e1": 2, "e2": 1}, "q2": {"e3": 1}, "q3": {"e4": 0}}
    >>> run = {"q1": ["c9", "e1", "e1-copy", "e2"], "q2": ["c8", "c9"], "q3": ["e4"]}
    >>> scores = retrieval_metrics(qrels, run, ks=(2,), groups={"q1": {"e1-copy": "e1"}})
    >>> list(scores)  # q3 has no relevant evidence
    ['q1', 'q2']
    >>> scores["q1"]["recall@2"], scores["q1"]["precision@2"], scores["q1"]["mrr@2"]  # S_2 = c9 e1
    (0.5, 0.5, 0.5)
    >>> retrieval_metrics(qrels, run, ks=(4,), groups={"q1": {"e1-copy": "e1"}})["q1"]["precision@4"]  # c9 e1 (e1) e2
    0.5
    >>> both = retrieval_metrics({"q": {"e1": 2, "e2": 1}}, {"q": ["c1", "c9"]}, ks=(1, 2),
    ...                          groups={"q": {"c1": ("e1", "e2")}})["q"]   # c1 holds both facts
    >>> both["recall@1"], both["precision@1"], both["precision@2"], both["ndcg@1"]
    (1.0, 1.0, 0.5, 1.0)
    >>> sorted(scores["q1"])
    ['hit_rate@2', 'mrr@2', 'ndcg@2', 'precision@2', 'recall@2']
    """
    ks = check_ks(ks)
    arrays = prepare(qrels, run, max(ks), groups)
    columns = metric_arrays(arrays, ks, precision_denominator)
    names = list(columns)
    table = np.column_stack([columns[name] for name in names]).tolist() if arrays.query_ids else []
    if precision_denominator == "returned":
        undefined = [names.index(f"precision@{k}") for k in ks]
        for row in np.flatnonzero(arrays.n_returned == 0).tolist():
            for column in undefined:
                table[row][column] = None
    return {query_id: dict(zip(names, values)) for query_id, values in zip(arrays.query_ids, table)}


def metric_arrays(arrays: RankedGrades, ks: Iterable[int] = (1, 3, 5, 10),
                  precision_denominator: str = "k") -> dict[str, np.ndarray]:
    """Return {metric@K: float array with one value per query of `arrays`}, metric by metric.

    The fast path under `retrieval_metrics`; precision@K is NaN where it is undefined (the
    "returned" rule and a query that returned nothing).

    >>> arrays = prepare({"q1": {"e1": 1}}, {"q1": ["c1", "e1"]}, max_k=2)
    >>> {name: values.tolist() for name, values in metric_arrays(arrays, ks=(2,)).items()}
    {'hit_rate@2': [1.0], 'recall@2': [1.0], 'precision@2': [0.5], 'mrr@2': [0.5], 'ndcg@2': [0.6309297535714575]}
    """
    ks = check_ks(ks)
    if precision_denominator not in PRECISION_DENOMINATORS:
        raise MetricInputError(f"must be one of {', '.join(PRECISION_DENOMINATORS)}, not {precision_denominator!r}",
                               field="precision_denominator")
    n_returned = arrays.n_returned if precision_denominator == "returned" else None
    gains = arrays.gains
    columns: dict[str, np.ndarray] = {}
    columns.update((f"hit_rate@{k}", hit_rate(gains, k)) for k in ks)
    columns.update((f"recall@{k}", recall(gains, arrays.n_relevant, k, arrays.found)) for k in ks)
    columns.update((f"precision@{k}", precision(gains, k, n_returned)) for k in ks)
    columns.update((f"mrr@{k}", mrr(gains, k)) for k in ks)
    columns.update((f"ndcg@{k}", ndcg(gains, arrays.ideal_gains, k)) for k in ks)
    return columns


def mean_metrics(scores: Mapping[str, Mapping[str, float | None]]) -> dict[str, float | None]:
    """Return {metric@K: mean over the queries of `scores`}, None values left out of the mean.

    A metric with no value at all has mean None. The number of queries behind each mean is the
    caller's to report (len(scores), less the Nones).

    >>> mean_metrics({"q1": {"recall@5": 1.0, "precision@5": None}, "q2": {"recall@5": 0.5, "precision@5": 0.2}})
    {'recall@5': 0.75, 'precision@5': 0.2}
    """
    names = dict.fromkeys(name for values in scores.values() for name in values)
    means: dict[str, float | None] = {}
    for name in names:
        values = [v[name] for v in scores.values() if v.get(name) is not None]
        means[name] = math.fsum(values) / len(values) if values else None
    return means


def check_ks(ks: Iterable[int]) -> tuple[int, ...]:
    """Return the cutoffs sorted, without repeats; raise MetricInputError unless each is an int >= 1."""
    try:
        ks = tuple(ks)
    except TypeError:
        raise MetricInputError(f"expected cutoffs such as (1, 3, 5, 10), not {ks!r}", field="ks") from None
    if not ks or any(isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1 for k in ks):
        raise MetricInputError(f"cutoffs are whole numbers >= 1, not {ks!r}", field="ks")
    return tuple(sorted({int(k) for k in ks}))
