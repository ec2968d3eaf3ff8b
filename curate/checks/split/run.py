"""`curate split`: assign dev (tuning) and test, keeping alike questions on one side.

Units are clusters of alike questions by the rule check-leakage uses for split leaks (exact, form,
fuzzy, and semantic from the embedding model's own threshold, `curate.index.embeddings.semantic_min`,
as check-dups uses it): no pair the leakage check would flag straddles the split. A semantic pass
that is skipped or leaves questions out (no model, a model that cannot load or cannot read them) is
said in one line and recorded; the split is then `incomplete`. Units are spread stratum by stratum
(difficulty x qtype) in an order fixed by the seed. Synthetic items enter dev only until a
person verifies them (status `verified`), unless told otherwise.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from curate.checks.clusters import clusters
from curate.checks.leakage.find import LeakSettings, split_edges
from curate.dataset import DatasetStore, items_digest
from curate.errors import InputError
from curate.index.embeddings import SemanticPass, semantic_pass
from curate.records import UNRELEASED_STATUSES, EvalItem, SplitCheck, now
from curate.workspace import Workspace


@dataclass
class SplitReport:
    """What a split assigned."""

    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # stratum -> split -> items
    moved: int = 0
    synthetic_held_in_dev: int = 0
    units: int = 0
    straddling_fixed: list[str] = field(default_factory=list)
    semantic: SemanticPass | None = None   # the semantic pass that formed units, or why it was skipped


def _stratum(item: EvalItem) -> str:
    return f"{item.difficulty or 'ungraded'}/{item.qtype or 'none'}"


def _order(seed: int, unit: list[EvalItem]) -> str:
    return hashlib.sha256(f"{seed}:{unit[0].id}".encode("utf-8")).hexdigest()


def split(workspace: Workspace, *, dataset: str, test_fraction: float = 0.5, seed: int = 0,
          reassign: bool = False, synthetic_in_test: bool = False, semantic: bool = True) -> SplitReport:
    """Assign dev/test to the dataset's items (regression items and released-out ones untouched)."""
    with DatasetStore(workspace).writing(dataset):
        if not 0.0 <= test_fraction <= 1.0:
            raise InputError(f"test fraction must be between 0 and 1, got {test_fraction}", field="test-fraction")
        store = DatasetStore(workspace)
        meta, items = store.load(dataset)
        pool = [i for i in items if i.status not in UNRELEASED_STATUSES and i.split != "regression"]
        settings = LeakSettings()
        used = semantic_pass(workspace, [i.question for i in pool], semantic=semantic,
                             threshold=settings.split_semantic_min)
        settings.split_semantic_min = used.semantic_min   # the model's own, as check-leakage uses it
        by_id = {i.id: i for i in pool}
        joined = clusters(split_edges(pool, settings, used.vectors, used.readable),
                          {i.id: n for n, i in enumerate(pool)})
        in_cluster = {m for c in joined for m in c.members}
        units = [[by_id[m] for m in c.members] for c in joined] + [[i] for i in pool if i.id not in in_cluster]
        report = SplitReport(units=len(units), semantic=used)
        strata: dict[str, list[list[EvalItem]]] = defaultdict(list)
        before = {i.id: i.split for i in pool}
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
        for side, assigned in decided.items():
            for unit in assigned:
                for item in unit:
                    item.split = side
        for stratum, stratum_units in sorted(strata.items()):
            size = sum(len(u) for u in stratum_units)
            fixed = Counter(i.split for u in decided["dev"] + decided["test"] for i in u if _stratum(i) == stratum)
            target = round(test_fraction * (size + sum(fixed.values()))) - fixed["test"]
            in_test = 0
            for unit in sorted(stratum_units, key=lambda u: _order(seed, u)):
                side = "test" if in_test + len(unit) <= target or (in_test < target and len(unit) == 1) else "dev"
                in_test += len(unit) if side == "test" else 0
                for item in unit:
                    item.split = side
        for item in pool:
            if item.split != before[item.id]:
                item.updated_at = now()
                report.moved += 1
            report.counts.setdefault(_stratum(item), Counter())[item.split] += 1
        report.counts = {k: dict(v) for k, v in sorted(report.counts.items())}
        meta.checks.split = SplitCheck(
            kb_snapshot=meta.kb_snapshot, items_sha256=items_digest(i for i in items if i.status not in UNRELEASED_STATUSES),
            outcome="incomplete" if used.degraded else "clean", units=report.units,
            counts=dict(Counter(i.split for i in pool)),
            settings={"seed": seed, "test_fraction": test_fraction, "reassign": reassign,
                      "synthetic_in_test": synthetic_in_test, "split_fuzzy_min": settings.split_fuzzy_min,
                      **used.settings(), "semantic_min": settings.split_semantic_min if used.vectors is not None
                      else None, "unreadable_questions": used.unreadable})
        store.save(meta, items)
        return report
