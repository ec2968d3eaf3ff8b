"""Precision at K: the share of the top K that is relevant."""

from __future__ import annotations

import numpy as np

from evalrun.metrics.prepare import check_cutoff


def precision(gains: np.ndarray, k: int, n_returned: np.ndarray | None = None) -> np.ndarray:
    """Return Precision@k of each query: relevant items in its top k over the denominator.

    Two rules for a query that returned fewer than K items:

    - `n_returned=None` (the default, trec_eval's `P_K` and ranx's `precision@K`):
      Precision@K = |R ∩ S_K| / K. The missing ranks count as misses, so a system is not
      rewarded for returning less.
    - `n_returned` given (|S| per query, every rank returned): Precision@K = |R ∩ S_K| / min(K, |S|),
      the share of what was actually returned (ranx's `precision` and trec_eval's `set_P` on
      S_K). A query that returned nothing has no such share: its value is NaN ("undefined",
      never 0).

    `gains[q, i]` is the grade of the item at rank i + 1 of query q, 0 when it is not relevant.

    >>> gains = np.array([[2, 0, 1],
    ...                   [1, 0, 0],
    ...                   [0, 0, 0]])
    >>> precision(gains, 3).tolist()  # [2/3, 1/3, 0/3]
    [0.6666666666666666, 0.3333333333333333, 0.0]
    >>> precision(gains, 3, n_returned=np.array([3, 1, 0])).tolist()  # [2/3, 1/1, 0/0]
    [0.6666666666666666, 1.0, nan]
    """
    check_cutoff(gains, k)
    found = np.count_nonzero(gains[:, :k], axis=1)
    if n_returned is None:
        return found / k
    denominator = np.minimum(n_returned, k)
    return np.divide(found, denominator, out=np.full(len(gains), np.nan), where=denominator > 0)
