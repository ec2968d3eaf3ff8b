"""Hit rate at K: did any relevant evidence reach the top K."""

from __future__ import annotations

import numpy as np

from evalrun.metrics.prepare import check_cutoff


def hit_rate(gains: np.ndarray, k: int) -> np.ndarray:
    """Return Hit@k of each query: 1.0 when a relevant item is among its top k, else 0.0.

    Hit@K = 1 if R ∩ S_K is non-empty, else 0 (trec_eval's `success_K`, ranx's `hit_rate@K`).

    `gains[q, i]` is the grade of the item at rank i + 1 of query q, 0 when it is not relevant
    (see `prepare`).

    >>> gains = np.array([[0, 2, 0],
    ...                   [0, 0, 1]])
    >>> hit_rate(gains, 2).tolist()
    [1.0, 0.0]
    >>> hit_rate(gains, 3).tolist()
    [1.0, 1.0]
    """
    check_cutoff(gains, k)
    return (gains[:, :k] > 0).any(axis=1).astype(np.float64)
