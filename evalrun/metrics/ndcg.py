"""nDCG at K with graded relevance and linear gains, as trec_eval computes it."""

from __future__ import annotations

import numpy as np

from evalrun.metrics.prepare import check_cutoff


def ndcg(gains: np.ndarray, ideal_gains: np.ndarray, k: int) -> np.ndarray:
    """Return nDCG@k of each query: its DCG@k over the DCG@k of the ideal ranking.

    DCG@K = sum over i = 1..K of grade_i / log2(i + 1), with the grade itself as the gain (linear,
    Järvelin and Kekäläinen; trec_eval's `ndcg_cut_K`, ranx's `ndcg@K`; not the 2^grade - 1 of
    Burges). IDCG@K is the same sum over the query's relevant grades sorted best first.
    nDCG@K = DCG@K / IDCG@K, and 0 when IDCG@K is 0 (no relevant item).

    `gains[q, i]` is the grade of the item at rank i + 1 of query q, 0 when it is not relevant;
    `ideal_gains[q]` holds q's relevant grades, best first, padded with 0.

    >>> gains = np.array([[0, 1, 2]])
    >>> ideal = np.array([[2, 1, 0]])
    >>> dcg = 1 / np.log2(3) + 2 / np.log2(4)
    >>> idcg = 2 / np.log2(2) + 1 / np.log2(3)
    >>> bool(np.isclose(ndcg(gains, ideal, 3)[0], dcg / idcg, rtol=0, atol=1e-15))
    True
    >>> ndcg(gains, ideal, 1).tolist()  # DCG@1 = 0
    [0.0]
    """
    check_cutoff(gains, k)
    check_cutoff(ideal_gains, k)
    discounts = np.log2(np.arange(2, k + 2, dtype=np.float64))
    dcg = (gains[:, :k] / discounts).sum(axis=1)
    idcg = (ideal_gains[:, :k] / discounts).sum(axis=1)
    return np.divide(dcg, idcg, out=np.zeros(len(gains)), where=idcg > 0)
