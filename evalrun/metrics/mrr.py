"""Reciprocal rank at K: how high the first relevant item sits."""

from __future__ import annotations

import numpy as np

from evalrun.metrics.prepare import check_cutoff


def mrr(gains: np.ndarray, k: int) -> np.ndarray:
    """Return the reciprocal rank at k of each query: 1 / rank of its first relevant item, 0 past k.

    RR@K = 1 / min{i <= K : S_i in R}, or 0 when no relevant item is in S_K; the mean over queries
    is MRR@K (ranx's `mrr@K`; trec_eval's `recip_rank` has no cutoff, it equals RR@|S|).

    `gains[q, i]` is the grade of the item at rank i + 1 of query q, 0 when it is not relevant.

    >>> gains = np.array([[0, 0, 2],
    ...                   [1, 1, 0],
    ...                   [0, 0, 0]])
    >>> mrr(gains, 3).tolist()  # [1/3, 1/1, 0]
    [0.3333333333333333, 1.0, 0.0]
    >>> mrr(gains, 2).tolist()  # the first query's hit is past rank 2
    [0.0, 1.0, 0.0]
    """
    check_cutoff(gains, k)
    relevant = gains[:, :k] > 0
    first = relevant.argmax(axis=1)  # 0 as well when there is none: `any` tells them apart
    return np.where(relevant.any(axis=1), 1.0 / (first + 1), 0.0)
