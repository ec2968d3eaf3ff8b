"""The pure core of `curate split`: the items to place in, each one's side (dev or test) out. No
workspace, no lock, no file; the semantic pass comes in as a function (`embed`).

Units are clusters of alike questions by the rule check-leakage uses for split leaks (exact, form,
fuzzy, and semantic from the embedding model's own threshold): no pair the leakage check would flag
straddles the split. Units are spread stratum by stratum (difficulty x qtype) in an order fixed by
the seed. Synthetic items enter dev only until a person verifies them (status `verified`), unless
`synthetic_in_test`.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from curate.checks.clusters import clusters
from curate.checks.leakage.find import LeakSettings, split_edges
from curate.errors import InputError
from curate.index.embeddings import Embed, SemanticPass, no_embedding
from curate.records import UNRELEASED_STATUSES, EvalItem


@dataclass
class SplitReport:
    """What a split assigned."""

    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # stratum -> split -> items
    moved: int = 0
    synthetic_held_in_dev: int = 0
    units: int = 0
    straddling_fixed: list[str] = field(default_factory=list)
    semantic: SemanticPass | None = None   # the semantic pass that formed units, or why it was skipped
    sides: dict[str, str] = field(default_factory=dict)   # item id -> dev or test, for every item placed


def _stratum(item: EvalItem) -> str:
    return f"{item.difficulty or 'ungraded'}/{item.qtype or 'none'}"


def _order(seed: int, unit: list[EvalItem]) -> str:
    return hashlib.sha256(f"{seed}:{unit[0].id}".encode("utf-8")).hexdigest()


def to_place(items: Sequence[EvalItem]) -> list[EvalItem]:
    """Return the items a split places: all but the regression split and those never released."""
    return [i for i in items if i.status not in UNRELEASED_STATUSES and i.split != "regression"]


def check_test_fraction(test_fraction: float) -> None:
    """Raise InputError unless the share of items in test is between 0 and 1."""
    if not 0.0 <= test_fraction <= 1.0:
        raise InputError(f"test fraction must be between 0 and 1, got {test_fraction}", field="test-fraction")


def assign(items: Sequence[EvalItem], *, test_fraction: float = 0.5, seed: int = 0, reassign: bool = False,
           synthetic_in_test: bool = False, embed: Embed = no_embedding) -> SplitReport:
    """Return the side of each item `to_place` picks out of `items` (in `report.sides`) and what the
    split did; `items` are not changed. Items already on a side keep it unless `reassign`; alike items
    found on both sides go to dev (the tuning side is the safe one).

    >>> def item(n, question, split=None):
    ...     return EvalItem(id=f"q{n}", question=question, language="en", source="human", split=split)
    >>> items = [item(1, "How long do refunds take?"), item(2, "How long do refunds take ?"),
    ...          item(3, "Can a viewer see API keys?"), item(4, "Which regions are supported?", split="test")]
    >>> report = assign(items, test_fraction=0.5, seed=0)
    >>> report.sides["q1"] == report.sides["q2"], report.sides["q4"], report.units
    (True, 'test', 3)
    """
    check_test_fraction(test_fraction)
    pool = to_place(items)
    settings = LeakSettings()
    used = embed([i.question for i in pool])
    settings.split_semantic_min = used.semantic_min   # the model's own, as check-leakage uses it
    by_id = {i.id: i for i in pool}
    joined = clusters(split_edges(pool, settings, used.vectors, used.readable), {i.id: n for n, i in enumerate(pool)})
    in_cluster = {m for c in joined for m in c.members}
    units = [[by_id[m] for m in c.members] for c in joined] + [[i] for i in pool if i.id not in in_cluster]
    report = SplitReport(units=len(units), semantic=used)
    side = {i.id: i.split for i in pool}
    strata: dict[str, list[list[EvalItem]]] = defaultdict(list)
    decided: dict[str, list[list[EvalItem]]] = {"dev": [], "test": []}
    for unit in units:
        held = any(i.source == "synthetic" and i.status != "verified" for i in unit) and not synthetic_in_test
        sides = {i.split for i in unit if i.split in ("dev", "test")}
        if held:
            decided["dev"].append(unit)
            report.synthetic_held_in_dev += sum(1 for i in unit if i.source == "synthetic")
        elif sides and not reassign:
            if len(sides) > 1:  # alike items already on both sides: the tuning side is the safe one
                report.straddling_fixed.extend(i.id for i in unit)
            decided["dev" if len(sides) > 1 else sides.pop()].append(unit)
        else:
            strata[_stratum(unit[0])].append(unit)
    for name, assigned in decided.items():
        for unit in assigned:
            for i in unit:
                side[i.id] = name
    for stratum, stratum_units in sorted(strata.items()):
        size = sum(len(u) for u in stratum_units)
        fixed = Counter(side[i.id] for u in decided["dev"] + decided["test"] for i in u if _stratum(i) == stratum)
        target = round(test_fraction * (size + sum(fixed.values()))) - fixed["test"]
        in_test = 0
        for unit in sorted(stratum_units, key=lambda u: _order(seed, u)):
            name = "test" if in_test + len(unit) <= target or (in_test < target and len(unit) == 1) else "dev"
            in_test += len(unit) if name == "test" else 0
            for i in unit:
                side[i.id] = name
    for i in pool:
        report.moved += side[i.id] != i.split
        report.counts.setdefault(_stratum(i), Counter())[side[i.id]] += 1
    report.counts = {k: dict(v) for k, v in sorted(report.counts.items())}
    report.sides = side
    return report
