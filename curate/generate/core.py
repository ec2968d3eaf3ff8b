"""The pure core of `curate generate`: chunks in, candidates out; candidates in, a spread sample out.

Types made by mining (no model): confusable (near codes and near-copy pairs) and unanswerable (probes).
single, multi_evidence and conditional questions are written by a model (`MODEL_TYPES`).
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from curate.generate.mine import Mined, mine
from curate.generate.probes import probes as mine_probes
from curate.generate.templates import code_candidates, pair_candidate, probe_candidate, side_of
from curate.records import Chunk
from curate.records.generated import Candidate, Probe, Spread

TYPES = ("single", "multi_evidence", "confusable", "unanswerable", "conditional")
MINED_TYPES = ("confusable", "unanswerable")
MODEL_TYPES = ("single", "multi_evidence", "conditional")


@dataclass
class Made:
    """What mining made of a KB: the pairs, the probes, the candidates, and the pairs no question
    could be made of (by why)."""

    mined: Mined
    probes: list[Probe]
    candidates: list[Candidate]
    not_asked: Counter = field(default_factory=Counter)


def mined_candidates(chunks: Sequence[Chunk], types: Sequence[str], run: str, mined: Mined | None = None) -> Made:
    """Return the candidates of the mined `types` (confusable, unanswerable) of a KB's chunks (`mined`: what
    `mine` finds in them, when it was mined already: over the shards of a large KB)."""
    mined = mined if mined is not None else mine(chunks)
    made = Made(mined=mined, probes=[], candidates=[])
    if "confusable" in types:
        made.candidates += code_candidates(mined.pairs, run)
        asked: dict[tuple[str, str], Candidate] = {}   # (question, evidence text) -> its candidate
        for pair in mined.pairs:
            if pair.kind != "near_copy":
                continue
            candidate = pair_candidate(side_of(pair), run)
            if isinstance(candidate, str):
                made.not_asked[candidate] += 1
            elif (candidate.question, candidate.evidence[0].passage.text) in asked:
                _add_near_misses(asked[candidate.question, candidate.evidence[0].passage.text], candidate)
            else:
                asked[candidate.question, candidate.evidence[0].passage.text] = candidate
                made.candidates.append(candidate)
    if "unanswerable" in types:
        made.probes = mine_probes(chunks, mined)
        made.candidates += [probe_candidate(probe, run) for probe in made.probes]
    return made


def _add_near_misses(kept: Candidate, same: Candidate) -> None:
    """Give `kept` the near misses of `same`, the same question about the same sentence from another
    pair (one fish's fin counts beside three others'): one question, every near miss."""
    known = {e.passage.text for e in kept.evidence}
    for evidence in same.evidence:
        if evidence.grade == 0 and evidence.passage.text not in known:
            number = f"e{len(kept.evidence) + 1}"
            kept.evidence.append(evidence.model_copy(update={"evidence_id": number}))
            kept.generation.near_miss.append(number)
            kept.generation.seed_chunks.append(evidence.passage.chunk_id)
            known.add(evidence.passage.text)


def quotas(n: int, types: Sequence[str]) -> dict[str, int]:
    """Return how many questions of each type to keep: n shared evenly, the first types taking the rest.

    >>> quotas(10, ["confusable", "unanswerable", "single"])
    {'confusable': 4, 'unanswerable': 3, 'single': 3}
    """
    share, rest = divmod(n, len(types))
    return {kind: share + (k < rest) for k, kind in enumerate(types)}


def seeded_rank(seed: int, key: str) -> str:
    """Return the place of `key` in an order fixed by `seed` (a stable hash, not Python's salted one)."""
    return hashlib.sha256(f"{seed}:{key}".encode("utf-8")).hexdigest()


def home(candidate: Candidate) -> str:
    """Return the document a candidate is about: its first evidence's (a near miss's, if it has none)."""
    evidence = sorted(candidate.evidence, key=lambda e: -e.grade)
    return evidence[0].passage.doc_id if evidence else ""


def sample(candidates: Sequence[Candidate], quota: dict[str, int], seed: int) -> list[Candidate]:
    """Return up to `quota[type]` candidates of each type, going round the documents (one question of
    each document in turn, the documents and each one's questions in an order fixed by `seed`), so
    no document gives a second question before every document has given one. What a type cannot
    fill goes to the types that have candidates left, in the same way.

    >>> from curate.records.generated import CandidateEvidence, Generation, Passage
    >>> def c(i, doc, qtype="confusable"):
    ...     return Candidate(candidate_id=i, qtype=qtype, language="en", question="?",
    ...                      evidence=[CandidateEvidence(evidence_id="e1", grade=2,
    ...                                passage=Passage(chunk_id=doc, doc_id=doc, text="t"))],
    ...                      generation=Generation(method="mined", run="r", candidate_id=i))
    >>> pool = [c("a1", "A"), c("a2", "A"), c("a3", "A"), c("b1", "B"), c("u1", "A", "unanswerable")]
    >>> sorted(home(x) for x in sample(pool, {"confusable": 2}, seed=1))
    ['A', 'B']
    >>> len(sample(pool, {"confusable": 2, "unanswerable": 2}, seed=1))  # unanswerable's second goes over
    4
    """
    queues = {kind: _queues([c for c in candidates if c.qtype == kind], seed) for kind in quota}
    chosen = {kind: _take(queues[kind], wanted) for kind, wanted in quota.items()}
    short = sum(quota.values()) - sum(map(len, chosen.values()))
    while short > 0 and any(any(q) for q in queues.values()):
        for kind in quota:
            if short > 0 and any(queues[kind]):
                chosen[kind] += _take(queues[kind], 1)
                short -= 1
    return [c for kind in quota for c in chosen[kind]]


def _queues(candidates: Sequence[Candidate], seed: int) -> list[list[Candidate]]:
    """Return one queue per document, documents and questions in an order fixed by `seed`."""
    by_doc: dict[str, list[Candidate]] = defaultdict(list)
    for candidate in candidates:
        by_doc[home(candidate)].append(candidate)
    return [sorted(by_doc[doc], key=lambda x: seeded_rank(seed, x.candidate_id))
            for doc in sorted(by_doc, key=lambda d: seeded_rank(seed, d))]


def _take(queues: list[list[Candidate]], wanted: int) -> list[Candidate]:
    """Take up to `wanted` candidates, one from each document's queue in turn; a queue taken from goes
    to the back, so the next call goes on round the documents where this one stopped."""
    taken: list[Candidate] = []
    while len(taken) < wanted and any(queues):
        queue = queues.pop(0)
        if queue:
            taken.append(queue.pop(0))
            queues.append(queue)
    return taken


def spread(kept: Sequence[Candidate], documents: int) -> Spread:
    """Return how the kept candidates spread over the documents (each counted at its `home`)."""
    counts = Counter(home(candidate) for candidate in kept)
    top = counts.most_common(3)
    return Spread(documents=documents, asked=len(counts), top_share=(top[0][1] / len(kept)) if kept else 0.0,
                  top=[f"{doc}: {n}" for doc, n in top])
