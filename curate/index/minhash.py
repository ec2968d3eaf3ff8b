"""Near-duplicate texts by MinHash LSH over the n-gram index's keys, in numpy."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from curate.index.ngrams import TEXT_BITS, NgramIndex

_TEXT_MASK = np.uint64((1 << TEXT_BITS) - 1)


def signatures(index: NgramIndex, count: int, permutations: int = 64, seed: int = 7) -> np.ndarray:
    """Return a (count, permutations) MinHash signature per text of the index (texts with no gram
    get all-max rows, which match nothing)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 2**63, size=permutations, dtype=np.uint64) | np.uint64(1)
    b = rng.integers(0, 2**63, size=permutations, dtype=np.uint64)
    owner = (index.keys & _TEXT_MASK).astype(np.int64)
    grams = index.keys >> np.uint64(TEXT_BITS)
    order = np.argsort(owner, kind="stable")
    owner, grams = owner[order], grams[order]
    present, starts = np.unique(owner, return_index=True)
    result = np.full((count, permutations), np.iinfo(np.uint64).max, dtype=np.uint64)
    if len(grams) == 0:
        return result
    with np.errstate(over="ignore"):
        for j in range(permutations):
            hashed = grams * a[j] + b[j]
            result[present, j] = np.minimum.reduceat(hashed, starts)
    return result


def candidate_pairs(signature: np.ndarray, bands: int = 16) -> set[tuple[int, int]]:
    """Return pairs of texts that agree on every row of at least one band."""
    rows = signature.shape[1] // bands
    pairs: set[tuple[int, int]] = set()
    empty = np.all(signature == np.iinfo(np.uint64).max, axis=1)
    for band in range(bands):
        buckets: dict[bytes, list[int]] = defaultdict(list)
        block = np.ascontiguousarray(signature[:, band * rows:(band + 1) * rows])
        for i in np.flatnonzero(~empty):
            buckets[block[i].tobytes()].append(int(i))
        for members in buckets.values():
            if 1 < len(members) <= 200:
                pairs.update((members[x], members[y]) for x in range(len(members))
                             for y in range(x + 1, len(members)))
            elif len(members) > 200:  # a huge bucket: join each to its first member only
                pairs.update((members[0], m) for m in members[1:])
    return pairs
