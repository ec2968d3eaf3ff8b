"""Character n-gram indexes in numpy: work for Chinese and English alike.

`NgramIndex` (over folded texts): each (gram, text) pair is one sorted 64-bit key, 40 bits of the
gram's hash over 24 bits of the text's position. `GramPositions` (over one long text): each gram
occurrence is one sorted key, 32 bits of the hash over 32 bits of where it starts. Looking a gram up
is a binary search; a collision costs only an extra candidate, which verification then drops.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

N = 4
TEXT_BITS = 24
MAX_TEXTS = 1 << TEXT_BITS
_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
_TEXT_MASK = np.uint64(MAX_TEXTS - 1)


def gram_hashes(codes: np.ndarray, n: int = N) -> np.ndarray:
    """Return the hash of every n-gram of a code-point array (len(codes) - n + 1 values)."""
    if len(codes) < n:
        return np.zeros(0, dtype=np.uint64)
    codes = codes.astype(np.uint64)
    count = len(codes) - n + 1
    value = np.zeros(count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k in range(n):
            value = value * _MULTIPLIER + codes[k:k + count] + np.uint64(k + 1)
        value ^= value >> np.uint64(29)
        value *= _MULTIPLIER
    return value >> np.uint64(TEXT_BITS)  # 40 bits of hash, room for the text position


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """Return the distinct values, sorted. (np.unique hashes in numpy 2.x: 16x slower on 20M keys.)"""
    if len(values) == 0:
        return values
    ordered = np.sort(values)
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


class NgramIndex:
    """Sorted (gram, text) keys over a list of folded texts."""

    def __init__(self, keys: np.ndarray, n: int = N):
        self.keys = keys
        self.n = n

    def _postings(self, grams: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return where each gram's keys start and end in `keys`: searched in the keys themselves (a gram's
        keys run from gram << TEXT_BITS to that with every text bit set), not in a copy of their grams (as
        large as the keys, and a twentieth of a second to make at a shard's 10 million)."""
        first = grams << np.uint64(TEXT_BITS)
        return (np.searchsorted(self.keys, first, side="left"),
                np.searchsorted(self.keys, first | _TEXT_MASK, side="right"))

    @classmethod
    def build(cls, texts: Sequence[str], n: int = N) -> NgramIndex:
        """Return the index of `texts` (their position in the list identifies them)."""
        if len(texts) >= MAX_TEXTS:
            raise ValueError(f"at most {MAX_TEXTS - 1} texts per index")
        lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
        codes = _codes("".join(texts))
        hashes = gram_hashes(codes, n)
        owner = np.repeat(np.arange(len(texts), dtype=np.uint64), lengths)[: len(hashes)]
        ends = np.repeat(np.cumsum(lengths), lengths)[: len(hashes)]
        inside = (np.arange(len(hashes)) + n) <= ends  # grams that do not cross into the next text
        return cls(sorted_unique((hashes[inside] << np.uint64(TEXT_BITS)) | owner[inside]), n)

    def save(self, folder: Path) -> None:
        np.save(Path(folder) / "ngram_keys.npy", self.keys)

    @classmethod
    def load(cls, folder: Path, n: int = N) -> NgramIndex:
        return cls(np.load(Path(folder) / "ngram_keys.npy"), n)

    def grams_of(self, text: str) -> np.ndarray:
        """Return the distinct gram hashes of a folded text."""
        return sorted_unique(gram_hashes(_codes(text), self.n))

    def candidates(self, text: str, min_share: float = 0.3, limit: int = 50,
                   max_postings: int = 200_000) -> list[tuple[int, float]]:
        """Return up to `limit` (text position, share of the query's grams it holds), best first,
        keeping those holding at least `min_share` of the grams."""
        grams = self.grams_of(text)
        if len(grams) == 0:
            return []
        lo, hi = self._postings(grams)
        spans = [(a, b) for a, b in zip(lo, hi) if 0 < b - a <= max_postings]
        if not spans:
            return []
        owners = np.concatenate([self.keys[a:b] for a, b in spans]) & _TEXT_MASK
        found, shared = np.unique(owners, return_counts=True)
        share = shared / len(grams)
        keep = share >= min_share
        found, share = found[keep], share[keep]
        order = np.argsort(-share, kind="stable")[:limit]
        return [(int(found[i]), float(share[i])) for i in order]

    def holders_of_rarest(self, text: str) -> np.ndarray:
        """Return the positions (in order) of the texts holding the rarest gram of a folded text: every text
        holding the whole of it is among them (none when it has no gram). One gram's postings: a run held by
        thousands of texts is looked for without counting every gram of each.

        >>> NgramIndex.build(["退款期限为十四天", "十四天内可以退款", "发票"]).holders_of_rarest("期限为十四").tolist()
        [0]
        """
        grams = self.grams_of(text)
        if len(grams) == 0:
            return np.zeros(0, dtype=np.int64)
        lo, hi = self._postings(grams)
        rarest = int(np.argmin(hi - lo))
        return (self.keys[lo[rarest]:hi[rarest]] & _TEXT_MASK).astype(np.int64)

    def candidates_many(self, texts: Sequence[str], min_share: float = 0.3, limit: int = 50,
                        max_postings: int = 200_000) -> list[list[tuple[int, float]]]:
        """Return `candidates` of each text, the same lists, looked up together: one search of every text's
        grams and one count of the (text, position) pairs they share (a shard's view answers thousands of
        questions at once).

        >>> index = NgramIndex.build(["退款期限为十四天", "十四天内可以退款", "发票"])
        >>> index.candidates_many(["退款期限是几天", "发票"], min_share=0.1) == [
        ...     index.candidates("退款期限是几天", min_share=0.1), index.candidates("发票", min_share=0.1)]
        True
        """
        asker, queried = _distinct_grams(texts, self.n)
        counts = np.bincount(asker.astype(np.int64), minlength=len(texts))
        found: list[list[tuple[int, float]]] = [[] for _ in texts]
        if not len(queried):
            return found
        distinct, back = np.unique(queried, return_inverse=True)   # each gram searched once, in order
        lo, hi = self._postings(distinct)
        lo, width = lo[back], hi[back] - lo[back]
        keep = (width > 0) & (width <= max_postings)
        lo, width, asker = lo[keep], width[keep], asker[keep]
        if not len(width):
            return found
        ends = np.cumsum(width)
        at = np.arange(ends[-1], dtype=np.int64) - np.repeat(ends - width - lo, width)   # every posting, in place
        pairs = (np.repeat(asker, width) << np.uint64(TEXT_BITS)) | (self.keys[at] & _TEXT_MASK)
        pairs, shared = np.unique(pairs, return_counts=True)
        who = (pairs >> np.uint64(TEXT_BITS)).astype(np.int64)
        share = shared / counts[who]
        keep = share >= min_share
        who, where, share = who[keep], (pairs[keep] & _TEXT_MASK).astype(np.int64), share[keep]
        order = np.lexsort((where, -share, who))   # per text: best share first, then position
        who, where, share = who[order], where[order], share[order]
        bounds = np.searchsorted(who, np.arange(len(texts) + 1))
        for n in np.flatnonzero(bounds[1:] > bounds[:-1]):
            a, b = bounds[n], min(bounds[n + 1], bounds[n] + limit)
            found[n] = [(int(p), float(s)) for p, s in zip(where[a:b], share[a:b])]
        return found


def _distinct_grams(texts: Sequence[str], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (text number, gram hash) of each distinct gram of each text, hashed all at once."""
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    hashes = gram_hashes(_codes("".join(texts)), n)
    owner = np.repeat(np.arange(len(texts), dtype=np.uint64), lengths)[: len(hashes)]
    ends = np.repeat(np.cumsum(lengths), lengths)[: len(hashes)]
    inside = (np.arange(len(hashes)) + n) <= ends   # grams that do not cross into the next text
    pairs = sorted_unique((owner[inside] << np.uint64(40)) | hashes[inside])
    return pairs >> np.uint64(40), pairs & np.uint64((1 << 40) - 1)


POSITION_BITS = 32
# Share of a dense-stretch bound that GramPositions.dense may give up to skip the query's most common
# grams ("the", "ion", "的是"): a quarter keeps nearly all the pruning for a third of the work.
COMMON_SHARE = 0.25
_POSITION_MASK = np.uint64((1 << POSITION_BITS) - 1)


class GramPositions:
    """Where each n-gram of one text starts: sorted keys, 32 bits of the gram's hash over 32 bits of
    its position (texts up to 4G characters)."""

    def __init__(self, keys: np.ndarray, n: int = N):
        self.keys = keys
        self.n = n

    @classmethod
    def build(cls, text: str, n: int = N) -> GramPositions:
        """Return the positions of every n-gram of `text`."""
        if len(text) >= 1 << POSITION_BITS:
            raise ValueError(f"at most {(1 << POSITION_BITS) - 1} characters per index")
        hashes = gram_hashes(_codes(text), n) >> np.uint64(40 - POSITION_BITS)
        return cls(np.sort((hashes << np.uint64(POSITION_BITS)) | np.arange(len(hashes), dtype=np.uint64)), n)

    def dense(self, query: str, width: int, at_least: int) -> np.ndarray:
        """Return, sorted, the positions p (each where one of the query's grams starts) for which the
        grams starting within [p, p + width) may hold `at_least` (>= 1) of the query's grams, each
        gram counted at most as often as the query holds it.

        Lossless: for every stretch [s, s + width) that holds that many, the first of the query's
        grams in it (at most `width` after s) is returned; a position is left out only when the
        capped count from it is surely below `at_least`. That count is bounded from above by all the
        occurrences of the query's grams in the stretch, less those whose c-th earlier occurrence of
        the same gram lies in the stretch's first half-width (c being the query's count of it): those
        cannot be among the first c of their gram in the stretch. The query's most common grams are
        not looked up at all while that lowers `at_least` by at most COMMON_SHARE: a gram left out
        adds at most its query count c to the capped count, so `at_least` is lowered by c.

        >>> index = GramPositions.build("xxabcdxxxxabxxcd", n=2)
        >>> index.dense("abcd", width=3, at_least=3).tolist(), index.dense("abcd", width=3, at_least=2).tolist()
        ([2], [2, 3])
        >>> GramPositions.build("abababab", n=2).dense("abx", width=4, at_least=2).tolist()  # "ab" counts once
        []
        """
        if at_least < 1:
            raise ValueError(f"at_least must be at least 1, got {at_least}")
        grams, counts = np.unique(gram_hashes(_codes(query), self.n) >> np.uint64(40 - POSITION_BITS),
                                  return_counts=True)
        lo = np.searchsorted(self.keys, grams << np.uint64(POSITION_BITS))
        hi = np.searchsorted(self.keys, (grams + np.uint64(1)) << np.uint64(POSITION_BITS))
        common_first = np.argsort(lo - hi, kind="stable")
        floor = max(1, math.ceil(at_least * (1 - COMMON_SHARE)))
        skipped = 0
        while skipped < len(common_first) and at_least - counts[common_first[skipped]] >= floor:
            at_least -= int(counts[common_first[skipped]])
            skipped += 1
        half = width // 2
        occurrences, repeats = [], []
        for a, b, count in zip(lo[common_first[skipped:]], hi[common_first[skipped:]], counts[common_first[skipped:]]):
            if b <= a:
                continue
            at = (self.keys[a:b] & _POSITION_MASK).astype(np.int64)    # sorted: keys are (gram, position)
            occurrences.append(at)
            if len(at) > count:
                earlier = at[:-count]                                  # the count-th earlier occurrence
                repeats.append(earlier[at[count:] - earlier <= half])
        if not occurrences:
            return np.zeros(0, dtype=np.int64)
        starts = np.sort(np.concatenate(occurrences))
        inside = np.searchsorted(starts, starts + width) - np.arange(len(starts))
        if repeats:
            earlier = np.sort(np.concatenate(repeats))
            inside -= np.searchsorted(earlier, starts + half) - np.searchsorted(earlier, starts)
        return starts[inside >= at_least]
