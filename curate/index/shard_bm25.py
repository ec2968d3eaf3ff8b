"""BM25 over a snapshot in shards (`ShardBM25`): the ranks, scores and top k of one BM25 index of every chunk
(`curate.index.bm25`), with no process holding more than one shard's terms.

Each shard's worker counts its own chunks' tokens once and stores them beside its index (`TermIndexMeta`:
per token, the chunks holding it and how often, and every chunk's length); a killed count resumes from the
shards counted. A search sums the snapshot's statistics first (chunks, tokens, and the document frequency
of each question token: a pass over the shards' stored counts), then every shard scores the questions with
them and returns its own top k, merged into the snapshot's.

Scores are bit-identical to the one index's: bm25s stores each (chunk, token) weight as float32 of
float32(idf) x tfc, computed in float64 from the same document frequency, chunk count, chunk length and
average length (`bm25s.scoring`'s own functions compute both), and a question's score of a chunk adds those
weights in float32 in the order of the question's tokens, here as there. Ties are ordered by chunk (`top_k`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from curate.engine import Engine, pending
from curate.errors import CurateError
from curate.fileio import atomic_directory
from curate.index.bm25 import B, EMPTY, K1, METHOD, query_tokens, tokenize, top_k
from curate.index.kb_index import BM25_VERSION, KBIndex
from curate.index.shard_index import ShardIndex, map_views, shard_views
from curate.kb.shards import read_column
from curate.records.kb import TermIndexMeta

BLOCK = 1_000   # questions searched per pass over the shards: each shard's top k of a block is held at once
_ARRAYS = ("indptr", "docs", "tf", "lengths")


class TermIndex:
    """One shard's BM25 terms: per token (`vocab`: token -> number), the chunks holding it (`docs`, in
    `indptr` ranges) and how often (`tf`), and every chunk's length in tokens."""

    def __init__(self, vocab: dict[str, int], indptr: np.ndarray, docs: np.ndarray, tf: np.ndarray,
                 lengths: np.ndarray):
        self.vocab, self.indptr, self.docs, self.tf, self.lengths = vocab, indptr, docs, tf, lengths

    @classmethod
    def count(cls, texts: Sequence[str]) -> TermIndex:
        """Return the terms of `texts`, tokenised as the one index tokenises them.

        >>> terms = TermIndex.count(["refund refund policy", "policy"])
        >>> terms.vocab, terms.lengths.tolist(), terms.tf.tolist()
        ({'refund': 0, 'policy': 1}, [3, 1], [2.0, 1.0, 1.0])
        """
        vocab: dict[str, int] = {}
        rows, tokens, counts, lengths = [], [], [], []
        for row, text in enumerate(texts):
            found = tokenize(text) or [EMPTY]
            lengths.append(len(found))
            for token, count in Counter(found).items():
                rows.append(row)
                tokens.append(vocab.setdefault(token, len(vocab)))
                counts.append(count)
        token_of = np.array(tokens, dtype=np.int64)
        order = np.argsort(token_of, kind="stable")
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(token_of, minlength=len(vocab)), out=indptr[1:])
        return cls(vocab, indptr, np.array(rows, dtype=np.int32)[order], np.array(counts, dtype=np.float32)[order],
                   np.array(lengths, dtype=np.int64))

    def frequency(self, token: str) -> int:
        """Return how many of the shard's chunks hold `token`."""
        number = self.vocab.get(token)
        return 0 if number is None else int(self.indptr[number + 1] - self.indptr[number])

    def weights(self, token: str, idf: np.float32, average: np.float64) -> tuple[np.ndarray, np.ndarray]:
        """Return the chunks holding `token` and its weight in each: bm25s's float32(idf x tfc)."""
        from bm25s.scoring import _select_tfc_scorer

        number = self.vocab[token]
        span = slice(int(self.indptr[number]), int(self.indptr[number + 1]))
        docs = self.docs[span]
        tfc = _select_tfc_scorer(METHOD)(tf_array=self.tf[span], l_d=self.lengths[docs], l_avg=average, k1=K1, b=B)
        return docs, (np.full(len(docs), idf, dtype=np.float32) * tfc).astype(np.float32)

    def scores(self, tokens: Sequence[str], idf: dict[str, np.float32], average: np.float64,
               held: dict[str, tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """Return every chunk's float32 score for a question's tokens, added in their order as bm25s adds them
        (`held`: the weights of tokens already met, kept for the next question)."""
        scores = np.zeros(len(self.lengths), dtype=np.float32)
        for token in tokens:
            if token in self.vocab:
                if token not in held:
                    held[token] = self.weights(token, idf[token], average)
                np.add.at(scores, *held[token])
        return scores

    def save(self, folder: Path, meta: TermIndexMeta) -> None:
        (folder / "vocab.json").write_text(json.dumps(list(self.vocab), ensure_ascii=False), encoding="utf-8")
        for name in _ARRAYS:
            np.save(folder / f"{name}.npy", getattr(self, name))
        meta.write(folder / "meta.json")

    @classmethod
    def load(cls, folder: Path) -> TermIndex:
        tokens = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
        arrays = [np.load(folder / f"{name}.npy", allow_pickle=False) for name in _ARRAYS]
        return cls(dict(zip(tokens, range(len(tokens)))), *arrays)


def _folder(view: ShardIndex) -> Path:
    return view.folder / f"bm25-v{BM25_VERSION}"


def stored_meta(view: ShardIndex) -> TermIndexMeta | None:
    """Return the meta of a shard's stored terms, or None when they are missing, damaged or of another version."""
    try:
        meta = TermIndexMeta.read(_folder(view) / "meta.json")
    except (CurateError, OSError, ValueError):
        return None
    ok = meta.version == BM25_VERSION and meta.chunks == view.size and meta.snapshot == view.snapshot_id
    return meta if ok else None


def _terms(view: ShardIndex) -> TermIndex:
    """Return a shard's terms: the stored ones, else counted and stored."""
    if stored_meta(view) is not None:
        try:
            return TermIndex.load(_folder(view))
        except (OSError, ValueError):
            pass   # damaged: counted again
    terms = TermIndex.count(read_column(view.path, "text"))
    meta = TermIndexMeta(version=BM25_VERSION, snapshot=view.snapshot_id, chunks=view.size,
                         tokens=int(terms.lengths.sum()))
    with atomic_directory(_folder(view), replace=True) as tmp:
        terms.save(tmp, meta)
    return terms


def _count_shard(task: tuple) -> int:
    return len(_terms(ShardIndex(*task)).lengths)


def build_terms(index: KBIndex, engine: Engine) -> tuple[int, int]:
    """Count the BM25 terms of every shard of a snapshot not counted yet, on `engine`; return (shards counted,
    shards found counted)."""
    tasks = [(index.workspace, index.snapshot_id, n) for n in range(shard_views(index))]
    left, done = pending(tasks, lambda task: stored_meta(ShardIndex(*task)) is not None)
    engine.map(_count_shard, left, label=f"BM25 terms of {index.snapshot_id}")
    return len(left), done


def _frequencies(view: ShardIndex, tokens: list[str]) -> tuple[int, int, list[int]]:
    """Return a shard's (chunks, tokens, document frequency of each of `tokens`)."""
    terms = _terms(view)
    return len(terms.lengths), int(terms.lengths.sum()), [terms.frequency(t) for t in tokens]


def _search_shard(view: ShardIndex, shared: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Return a shard's own top k of each question (snapshot positions, scores), best first."""
    questions, idf, average, k = shared
    terms = _terms(view)
    k = min(k, len(terms.lengths))
    positions = np.zeros((len(questions), k), dtype=np.int64)
    scores = np.zeros((len(questions), k), dtype=np.float32)
    held: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for n, tokens in enumerate(questions):
        found, scores[n] = top_k(terms.scores(tokens, idf, average, held), k)
        positions[n] = found + view.first
    return positions, scores


class ShardBM25:
    """BM25 over the shards of a snapshot on an engine: `search` as `BM25.search` over every chunk."""

    def __init__(self, index: KBIndex, engine: Engine):
        self.index, self.engine = index, engine

    def statistics(self, tokens: Sequence[str]) -> tuple[int, np.float64, dict[str, np.float32]]:
        """Return the snapshot's chunk count, average chunk length and the idf of each of `tokens` it holds,
        summed from every shard's counts (counted first where they are not stored)."""
        from bm25s.scoring import _select_idf_scorer

        build_terms(self.index, self.engine)
        tokens = sorted(set(tokens))
        counts = map_views(self.index, self.engine, _frequencies, tokens,
                           f"BM25 statistics of {self.index.snapshot_id}")
        chunks = sum(c for c, _, _ in counts)
        total = sum(t for _, t, _ in counts)
        frequency = [sum(column) for column in zip(*(f for _, _, f in counts))] if counts else []
        idf_of = _select_idf_scorer(METHOD)
        # as bm25s: the mean of the lengths (an exact sum in float64) and each idf rounded to float32
        idf = {t: np.float32(idf_of(df, N=chunks)) for t, df in zip(tokens, frequency) if df}
        return chunks, np.float64(total) / chunks, idf

    def search(self, queries: Sequence[str], k: int = 100) -> tuple[np.ndarray, np.ndarray]:
        """Return (positions, scores), each shaped (len(queries), k), best first: those of one index of every
        chunk, ties the earlier chunk first."""
        questions = [query_tokens(q) for q in queries]
        chunks, average, idf = self.statistics([t for tokens in questions for t in tokens])
        k = min(k, chunks)
        positions = np.zeros((len(queries), k), dtype=np.int64)
        scores = np.zeros((len(queries), k), dtype=np.float32)
        for start in range(0, len(questions), BLOCK):
            block = questions[start:start + BLOCK]
            found = map_views(self.index, self.engine, _search_shard, (block, idf, average, k),
                              f"BM25 search of {self.index.snapshot_id}")
            every_position = np.concatenate([p for p, _ in found], axis=1)
            every_score = np.concatenate([s for _, s in found], axis=1)
            for n in range(len(block)):
                positions[start + n], scores[start + n] = top_k(every_score[n], k, every_position[n])
        return positions, scores
