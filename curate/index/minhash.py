"""Near-duplicate texts by MinHash LSH over the n-gram index's keys, in numpy."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from curate.index.ngrams import TEXT_BITS, NgramIndex, sorted_unique

_TEXT_MASK = np.uint64((1 << TEXT_BITS) - 1)
_EMPTY = np.iinfo(np.uint64).max
_MIX = np.uint64(0x9E3779B97F4A7C15)


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


def band_hashes(signature: np.ndarray, bands: int = 16) -> np.ndarray:
    """Return a (texts, bands) 64-bit hash of each band of rows of each signature (all-max for a text with no
    gram): what `band_pairs` joins, a twentieth of the signature's size, so the bands of a million chunks
    computed in many shards fit in one process. Two bands that differ share a hash by chance once in 2**64.

    >>> signature = np.array([[1, 2, 3, 4], [1, 2, 3, 5]], dtype=np.uint64)
    >>> hashed = band_hashes(signature, bands=2)
    >>> bool(hashed[0, 0] == hashed[1, 0]), bool(hashed[0, 1] == hashed[1, 1])
    (True, False)
    """
    rows = signature.shape[1] // bands
    empty = np.all(signature == _EMPTY, axis=1)
    hashed = np.zeros((len(signature), bands), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for band in range(bands):
            value = np.zeros(len(signature), dtype=np.uint64)
            for row in range(band * rows, (band + 1) * rows):
                value = (value ^ signature[:, row]) * _MIX
                value ^= value >> np.uint64(31)
            hashed[:, band] = value
    hashed[empty] = _EMPTY
    return hashed


def band_pairs(hashed: np.ndarray, keep: np.ndarray, largest: int = 200) -> np.ndarray:
    """Return the sorted distinct pairs (a < b, rows of an (n, 2) array) of kept texts that share the hash of
    at least one band: every pair of a bucket of at most `largest` texts, and in a larger one its first
    text with each other (`candidate_pairs` over the bands' hashes, in numpy).

    >>> hashed = np.array([[7, 1], [7, 2], [8, 2], [7, 2]], dtype=np.uint64)
    >>> band_pairs(hashed, np.array([True, True, True, False])).tolist()
    [[0, 1], [1, 2]]
    """
    count = len(hashed)
    found = [np.zeros(0, dtype=np.int64)]   # each pair as a * count + b
    rows = np.flatnonzero(keep & ~np.all(hashed == _EMPTY, axis=1))
    for band in range(hashed.shape[1]):
        values = hashed[rows, band]
        order = np.argsort(values, kind="stable")   # within a bucket, texts in their order
        members, values = rows[order], values[order]
        starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
        lengths = np.diff(np.r_[starts, len(values)])
        for length in np.unique(lengths[lengths > 1]):
            at = starts[lengths == length]
            if length <= largest:
                x, y = np.triu_indices(length, 1)
            else:
                x, y = np.zeros(length - 1, dtype=np.int64), np.arange(1, length)
            found.append(members[at[:, None] + x].ravel() * count + members[at[:, None] + y].ravel())
    codes = sorted_unique(np.concatenate(found))
    return np.stack([codes // max(count, 1), codes % max(count, 1)], axis=1)
