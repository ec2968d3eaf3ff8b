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
        retriever = bm25s.BM25()
        tokens = [tokenize(t) or ["\x00"] for t in progress(texts, description, unit="chunk")]
        retriever.index(tokens, show_progress=False)
        return cls(retriever, len(texts))

    def save(self, folder: Path) -> None:
        self.retriever.save(str(folder))

    @classmethod
    def load(cls, folder: Path, size: int) -> BM25:
        import bm25s
        return cls(bm25s.BM25.load(str(folder)), size)

    def search(self, queries: Sequence[str], k: int = 100) -> tuple[np.ndarray, np.ndarray]:
        """Return (positions, scores), each shaped (len(queries), k), best first."""
        k = min(k, self.size)
        tokens = [tokenize(q) or ["\x00"] for q in queries]
        positions, scores = self.retriever.retrieve(tokens, k=k, show_progress=False, n_threads=0)
        return np.asarray(positions), np.asarray(scores)
