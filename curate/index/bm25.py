"""BM25 over a snapshot's chunks (bm25s), with jieba words for Chinese and plain words for English."""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from curate.progress import progress

_CJK_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# Chinese runs, then runs of other word characters (CJK excluded, or "2008年" would stay one token).
_RUNS = re.compile(rf"[{_CJK_RANGES}]+|[^\W_{_CJK_RANGES}]+")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
EMPTY = "\x00"   # the one token of a text without words: every chunk has at least one


def tokenize(text: str) -> list[str]:
    """Return BM25 tokens: jieba words for Chinese runs, lower-cased words for the rest.

    >>> tokenize("LG-4031 表示令牌过期")
    ['lg', '4031', '表示', '令牌', '过期']
    >>> tokenize("NBA50大巨星之一")[:2]
    ['nba50', '大']
    """
    import jieba
    jieba.setLogLevel(logging.WARNING)
    tokens: list[str] = []
    for run in _RUNS.findall(unicodedata.normalize("NFKC", text).casefold()):
        if _CJK.match(run):
            tokens.extend(w for w in jieba.lcut(run, HMM=False) if w.strip())
        else:
            tokens.append(run)
    return tokens


K1, B, METHOD = 1.5, 0.75, "lucene"   # bm25s's defaults, named: an index in shards scores with the same


class BM25:
    """A bm25s retriever whose document ids are chunk positions."""

    def __init__(self, retriever, size: int):
        self.retriever = retriever
        self.size = size

    @classmethod
    def build(cls, texts: Sequence[str], description: str = "BM25 index") -> BM25:
        """Return the index of `texts` (jieba's tokenising is most of the time: about 120,000 Chinese
        characters a second on one core), with a progress bar on a terminal."""
        import bm25s
        retriever = bm25s.BM25(k1=K1, b=B, method=METHOD)
        tokens = [tokenize(t) or [EMPTY] for t in progress(texts, description, unit="chunk")]
        retriever.index(tokens, show_progress=False)
        return cls(retriever, len(texts))

    def save(self, folder: Path) -> None:
        self.retriever.save(str(folder))

    @classmethod
    def load(cls, folder: Path, size: int) -> BM25:
        import bm25s
        return cls(bm25s.BM25.load(str(folder)), size)

    def search(self, queries: Sequence[str], k: int = 100) -> tuple[np.ndarray, np.ndarray]:
        """Return (positions, scores), each shaped (len(queries), k), best first (`top_k`: ties, the earlier
        chunk first)."""
        k = min(k, self.size)
        positions = np.zeros((len(queries), k), dtype=np.int64)
        scores = np.zeros((len(queries), k), dtype=np.float32)
        for n, query in enumerate(queries):
            positions[n], scores[n] = top_k(self.retriever.get_scores(query_tokens(query)), k)
        return positions, scores


def query_tokens(query: str) -> list[str]:
    """Return the tokens a question is searched with."""
    return tokenize(query) or [EMPTY]


def top_k(scores: np.ndarray, k: int, positions: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Return the positions and scores of the `k` best of `scores`, best first; ties, the lower position first
    (`positions` of the scores, default 0, 1, ...). bm25s's own selection leaves the order of equal scores to
    numpy's partition: an index in shards could not give the same list.

    >>> top_k(np.array([0.5, 2.0, 0.5, 1.0, 0.5], dtype=np.float32), 3)
    (array([1, 3, 0]), array([2. , 1. , 0.5], dtype=float32))
    >>> top_k(np.array([0.5, 0.5], dtype=np.float32), 2, positions=np.array([9, 4]))[0]
    array([4, 9])
    """
    positions = np.arange(len(scores), dtype=np.int64) if positions is None else np.asarray(positions, dtype=np.int64)
    k = min(k, len(scores))
    if k < len(scores):
        threshold = scores[np.argpartition(scores, len(scores) - k)[len(scores) - k:]].min()
        above = np.flatnonzero(scores > threshold)
        tied = np.flatnonzero(scores == threshold)
        chosen = np.concatenate([above, tied[np.argsort(positions[tied], kind="stable")][:k - len(above)]])
    else:
        chosen = np.arange(len(scores))
    order = chosen[np.lexsort((positions[chosen], -scores[chosen]))]
    return positions[order], scores[order]
