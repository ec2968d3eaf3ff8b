"""Recall at K: the share of the relevant evidence found in the top K."""

from __future__ import annotations

import numpy as np

from evalrun.metrics.prepare import check_cutoff


def recall(gains: np.ndarray, n_relevant: np.ndarray, k: int) -> np.ndarray:
    """Return Recall@k of each query: relevant items in its top k over all its relevant items.

    Recall@K = |R ∩ S_K| / |R|; 0 when R is empty (such queries are not scored by
    `retrieval_metrics`; the guard only keeps the division defined).

    `gains[q, i]` is the grade of the item at rank i + 1 of query q, 0 when it is not relevant;
    `n_relevant[q]` = |R| counts every relevant item of q, retrieved or not.

    >>> gains = np.array([[2, 0, 1],
    ...                   [0, 1, 0]])
    >>> recall(gains, np.array([4, 1]), 3).tolist()  # [2/4, 1/1]
    [0.5, 1.0]
    >>> recall(gains, np.array([4, 1]), 1).tolist()  # [1/4, 0/1]
    [0.25, 0.0]
    """
    check_cutoff(gains, k)
    found = np.count_nonzero(gains[:, :k], axis=1)
    return np.divide(found, n_relevant, out=np.zeros(len(gains)), where=n_relevant > 0)
