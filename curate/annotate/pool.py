"""The candidate pool an annotator grades for one question: its labelled evidence, the chunks
production retrieved when it failed on the question (`curate add-failures`), the chunks the judge
put forward (`annotate push --suggest-from`: possibly missing evidence, or on an item with no labelled
evidence what it graded 2 then 1), the top of BM25 retrieval over the KB, and near-miss neighbours
of the evidence (chunks that read like it), one chunk per duplicate group, at most `pool_k`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from curate.index.kb_index import KBIndex
from curate.records import EvalItem

NEAR_MISSES_PER_EVIDENCE = 2


@dataclass(frozen=True)
class Candidate:
    """One chunk shown for grading, why it is there, and the grade already known for it."""

    chunk_id: str
    origin: str               # "evidence", "retrieved" (by production), "judged", "bm25" or "near_miss"
    grade: int | None = None  # the item's current grade for this chunk, if labelled


def _near_misses(index: KBIndex, position: int, skip: set[int]) -> list[int]:
    """Return chunks whose folded text shares many 4-grams with the chunk at `position`."""
    found = index.ngrams.candidates(index.folded[position], min_share=0.3, limit=10)
    return [p for p, _ in found if p not in skip][:NEAR_MISSES_PER_EVIDENCE]


def candidate_pools(index: KBIndex, items: Sequence[EvalItem], pool_k: int = 8,
                    judged: Mapping[str, Sequence[str]] | None = None) -> dict[str, list[Candidate]]:
    """Return each item's candidates: evidence first, then what production retrieved, then the chunks
    `judged` puts forward for it (item id -> chunk ids, in order), then BM25 results and near misses in
    turn."""
    copies = index.copies
    retrieved, scores = index.bm25.search([i.question for i in items], k=pool_k) if items else ([], [])
    pools: dict[str, list[Candidate]] = {}
    for row, item in enumerate(items):
        pool: list[Candidate] = []
        shown: set[str] = set()

        def add(chunk_id: str, origin: str, grade: int | None = None) -> None:
            group = copies.get(chunk_id, [chunk_id])
            if len(pool) < pool_k and not shown.intersection(group):
                shown.update(group)
                pool.append(Candidate(chunk_id, origin, grade))

        evidence_positions = []
        for evidence in item.evidence:
            for chunk_id in evidence.chunk_ids[:1] if not evidence.partial else evidence.chunk_ids:
                if chunk_id in index.position:
                    add(chunk_id, "evidence", evidence.grade)
                    evidence_positions.append(index.position[chunk_id])
        if item.production is not None:   # what production retrieved for the question it failed on: half
            # the pool at most, as the right chunk is often one it missed (BM25 and near misses fill the rest)
            for chunk_id in item.production.retrieved[:max(1, pool_k // 2)]:
                if chunk_id in index.position:
                    add(chunk_id, "retrieved")
        for chunk_id in (judged or {}).get(item.id, ()):
            if chunk_id in index.position:
                add(chunk_id, "judged")
        skip = set(evidence_positions)
        near = [p for position in evidence_positions for p in _near_misses(index, position, skip)]
        bm25 = [int(p) for p, s in zip(retrieved[row], scores[row]) if s > 0]
        for k in range(max(len(near), len(bm25))):
            if k < len(bm25):
                add(index.chunks[bm25[k]].chunk_id, "bm25")
            if k < len(near):
                add(index.chunks[near[k]].chunk_id, "near_miss")
        pools[item.id] = pool
    return pools


def keep_slots(pool: list[Candidate], slots: list[str]) -> list[Candidate]:
    """Return the pool in the slot order it was pushed in before, when it holds the same chunks: the
    answers an Argilla record already holds are by slot number, so a mere reordering (evidence moves
    first once labelled) must not move a chunk to another slot.

    >>> a, b = Candidate("a", "bm25"), Candidate("b", "evidence", 2)
    >>> [c.chunk_id for c in keep_slots([b, a], ["a", "b"])], [c.chunk_id for c in keep_slots([b], ["a"])]
    (['a', 'b'], ['b'])
    """
    by_id = {c.chunk_id: c for c in pool}
    return [by_id[s] for s in slots] if len(slots) == len(pool) and set(slots) == set(by_id) else pool
