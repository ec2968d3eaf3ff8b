"""Which items people review (pure: candidates in, a stratified sample with each item's inclusion
probability out).

Every item with a reviewable verdict (`evalrun.review.verdicts`) is a candidate. Candidates fall into
strata by, in this order of priority: whether the judge seemed unsure about it (its repeats disagreed,
`--judge-repeats`, or its completeness and the lexical key-point coverage differ by at least
LEXICAL_GAP), its correctness verdict, its language, whether every claim was supported, its relevance
verdict, its difficulty and its question type. When there are more strata than the sample can give
MIN_PER_STRATUM items each, the dimensions of lowest priority are dropped until it can.

Each stratum gets MIN_PER_STRATUM items (or all it has), then the rest of the sample in proportion to its
size, an unsure stratum counting UNSURE_WEIGHT times (largest remainders, never more than a stratum
holds); the items of a stratum are drawn at random without replacement (seeded). An item's inclusion
probability is n_h / N_h of its stratum: the estimates weight each stratum by its size, so the extra
weight on unsure items buys precision where the judge is doubtful without biasing any mean.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from curate import EvalItem
from evalrun.records import ItemScores
from evalrun.review.verdicts import judged_verdicts

MIN_PER_STRATUM = 2
UNSURE_WEIGHT = 3.0
LEXICAL_GAP = 0.5
DIMENSIONS = ("unsure", "correct", "language", "faithful", "relevance", "difficulty", "qtype")


@dataclass(frozen=True)
class Candidate:
    """An item people could review: what places it in a stratum, and why the judge seemed unsure."""

    item_id: str
    keys: dict[str, str]
    unsure: tuple[str, ...] = ()


@dataclass
class Selection:
    """A stratified sample: the dimensions kept, each candidate's stratum, and the items chosen."""

    dimensions: tuple[str, ...]
    stratum_of: dict[str, str]                       # every candidate -> its stratum label
    chosen: list[str]                                # item ids, in stratum then draw order
    sizes: dict[str, int] = field(default_factory=dict)     # stratum -> candidates (N_h)
    taken: dict[str, int] = field(default_factory=dict)     # stratum -> chosen (n_h)

    def inclusion(self, item_id: str) -> float:
        """Return the probability the design gave the item of being chosen (n_h / N_h)."""
        stratum = self.stratum_of[item_id]
        return self.taken.get(stratum, 0) / self.sizes[stratum]


def unsure_reasons(row: ItemScores) -> tuple[str, ...]:
    """Return why the judge seems unsure about an item: its repeats gave another value, or its
    completeness and the lexical key-point coverage differ by LEXICAL_GAP or more.

    >>> row = ItemScores(item_id="a", answerable=True, values={"generation/completeness": 1.0,
    ...                  "lexical/key_point_coverage": 0.2}, generation={"repeats": [{"generation/completeness": 0.5}]})
    >>> unsure_reasons(row)
    ('repeats disagree', 'judge and lexical coverage disagree')
    """
    reasons = []
    values = row.values
    for again in (row.generation or {}).get("repeats") or []:
        if any(name in values and again.get(name) is not None and again[name] != values[name] for name in again):
            reasons.append("repeats disagree")
            break
    judged, lexical = values.get("generation/completeness"), values.get("lexical/key_point_coverage")
    if judged is not None and lexical is not None and abs(judged - lexical) >= LEXICAL_GAP:
        reasons.append("judge and lexical coverage disagree")
    return tuple(reasons)


def _bucket(value: float | None, names: tuple[str, str]) -> str:
    return "unscored" if value is None else (names[0] if value == 1.0 else names[1])


def candidates(items: list[EvalItem], rows: dict[str, ItemScores]) -> list[Candidate]:
    """Return the items with a reviewable verdict, in item order, with their stratum keys."""
    found = []
    for item in items:
        row = rows.get(item.id)
        if row is None or not judged_verdicts(item, row):
            continue
        values = row.values
        relevance = values.get("generation/answer_relevance")
        unsure = unsure_reasons(row)
        keys = {"unsure": "unsure" if unsure else "sure",
                "correct": _bucket(values.get("generation/correctness"), ("correct", "not correct")),
                "language": item.language,
                "faithful": _bucket(values.get("generation/faithfulness"), ("all supported", "some unsupported")),
                "relevance": "unscored" if relevance is None else {1.0: "relevant", 0.5: "partly"}.get(relevance,
                                                                                                   "not relevant"),
                "difficulty": item.difficulty or "ungraded", "qtype": item.qtype or "none"}
        found.append(Candidate(item.id, keys, unsure))
    return found


def _label(candidate: Candidate, dimensions: tuple[str, ...]) -> str:
    return " · ".join(candidate.keys[d] for d in dimensions) or "all"


def _strata(found: list[Candidate], n: int) -> tuple[tuple[str, ...], dict[str, list[str]]]:
    """Return the dimensions kept and the strata (label -> item ids): as many dimensions as let every
    stratum have MIN_PER_STRATUM of the `n` items."""
    for keep in range(len(DIMENSIONS), -1, -1):
        dimensions = DIMENSIONS[:keep]
        strata: dict[str, list[str]] = {}
        for candidate in found:
            strata.setdefault(_label(candidate, dimensions), []).append(candidate.item_id)
        if sum(min(MIN_PER_STRATUM, len(ids)) for ids in strata.values()) <= n:
            return dimensions, strata
    return (), {"all": [c.item_id for c in found]}


def allocate(sizes: dict[str, int], weights: dict[str, float], n: int) -> dict[str, int]:
    """Return how many items each stratum gives: MIN_PER_STRATUM each (or all it has), the rest in
    proportion to size x weight by largest remainders, none more than it holds (a stratum it fills gives
    its share back to the others).

    >>> allocate({"a": 90, "b": 10}, {"a": 1.0, "b": 1.0}, 20)   # 2 + 14.4 -> 14, 2 + 1.6 -> 1 + the remainder
    {'a': 16, 'b': 4}
    """
    taken = {h: min(MIN_PER_STRATUM, size, n) for h, size in sizes.items()}
    left = n - sum(taken.values())
    while left > 0:
        room = {h: sizes[h] - taken[h] for h in sizes if taken[h] < sizes[h]}
        if not room:
            break
        total = sum(sizes[h] * weights[h] for h in room)
        quotas = {h: left * sizes[h] * weights[h] / total for h in room}
        given = {h: min(int(q), room[h]) for h, q in quotas.items()}
        if all(given[h] == int(quotas[h]) for h in room):   # no stratum full: the rest by largest remainder
            rest = left - sum(given.values())
            for h in sorted((h for h in room if given[h] < room[h]), key=lambda h: (int(quotas[h]) - quotas[h], h))[:rest]:
                given[h] += 1
        for h, g in given.items():
            taken[h] += g
            left -= g
    return taken


def _rng(seed: int, stratum: str) -> np.random.Generator:
    digest = hashlib.blake2b(stratum.encode("utf-8"), digest_size=8).digest()
    return np.random.default_rng([seed, int.from_bytes(digest, "big")])


def select(found: list[Candidate], n: int, seed: int = 0) -> Selection:
    """Return a stratified sample of `n` of the candidates (all of them when n >= their number); the
    same candidates, n and seed give the same sample."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    dimensions, strata = _strata(found, n)
    unsure = {c.item_id for c in found if c.unsure}
    sizes = {h: len(ids) for h, ids in strata.items()}
    weights = {h: UNSURE_WEIGHT if ids[0] in unsure and "unsure" in dimensions else 1.0 for h, ids in strata.items()}
    taken = allocate(sizes, weights, min(n, len(found)))
    chosen = []
    for stratum in sorted(strata):
        ids = strata[stratum]
        picks = _rng(seed, stratum).permutation(len(ids))[:taken[stratum]]
        chosen += [ids[k] for k in sorted(picks)]
    stratum_of = {item_id: h for h, ids in strata.items() for item_id in ids}
    return Selection(dimensions, stratum_of, chosen, sizes, {h: t for h, t in taken.items() if t})


def spread(selection: Selection, found: list[Candidate]) -> dict[str, Counter]:
    """Return, per dimension, how many chosen items have each value (what the sample covers)."""
    keys = {c.item_id: c.keys for c in found}
    return {d: Counter(keys[i][d] for i in selection.chosen) for d in DIMENSIONS}
