"""Recall at K: the share of the relevant evidence found in the top K."""

from __future__ import annotations

import numpy as np

from evalrun.metrics.prepare import check_cutoff


def recall(gains: np.ndarray, n_relevant: np.ndarray, k: int, found: np.ndarray | None = None) -> np.ndarray:
    """Return Recall@k of each query: relevant groups found in its top k over all its relevant groups.

    Recall@K = |R ∩ S_K| / |R|; 0 when R is empty (such queries are not scored by
    `retrieval_metrics`; the guard only keeps the division defined).

    `gains[q, i]` is the grade of the item at rank i + 1 of query q, 0 when it is not relevant;
    `n_relevant[q]` = |R| counts every relevant group of q, retrieved or not. `found[q, i]`, when
    given (`RankedGrades.found`), is how many relevant groups rank i + 1 finds first: one chunk
    holding two facts finds two. Without it every relevant rank finds one.

    >>> gains = np.array([[2, 0, 1],
    ...                   [0, 1, 0]])
    >>> recall(gains, np.array([4, 1]), 3).tolist()  # [2/4, 1/1]
    [0.5, 1.0]
    >>> recall(gains, np.array([4, 1]), 1).tolist()  # [1/4, 0/1]
    [0.25, 0.0]
    >>> recall(gains, np.array([4, 1]), 1, found=np.array([[3, 0, 1], [0, 1, 0]])).tolist()  # rank 1 finds 3 of 4
    [0.75, 0.0]
    """
    check_cutoff(gains, k)
    if found is None:
        hits = np.count_nonzero(gains[:, :k], axis=1)
    else:
        check_cutoff(found, k)
        hits = found[:, :k].sum(axis=1, dtype=np.int64)
    return np.divide(hits, n_relevant, out=np.zeros(len(gains)), where=n_relevant > 0)
