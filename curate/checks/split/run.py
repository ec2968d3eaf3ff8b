"""`curate split`: assign dev (tuning) and test, keeping alike questions on one side (the rule is
`curate.checks.split.core`'s). A semantic pass that is skipped or leaves questions out (no model, a
model that cannot load or cannot read them) is said in one line and recorded; the split is then
`incomplete`.
"""

from __future__ import annotations

from collections import Counter

from curate.checks.leakage.find import LeakSettings
from curate.checks.split.core import SplitReport, assign, check_test_fraction, to_place
from curate.dataset import DatasetStore, items_digest
from curate.index.embeddings import semantic_pass
from curate.records import UNRELEASED_STATUSES, SplitCheck, now
from curate.workspace import Workspace

__all__ = ["SplitReport", "split"]


def split(workspace: Workspace, *, dataset: str, test_fraction: float = 0.5, seed: int = 0,
          reassign: bool = False, synthetic_in_test: bool = False, semantic: bool = True) -> SplitReport:
    """Assign dev/test to the dataset's items (regression items and released-out ones untouched) and
    record the split in the dataset; return what it did."""
    with DatasetStore(workspace).writing(dataset):
        check_test_fraction(test_fraction)
        store = DatasetStore(workspace)
        meta, items = store.load(dataset)
        settings = LeakSettings()

        def embed(questions):
            return semantic_pass(workspace, questions, semantic=semantic, threshold=settings.split_semantic_min)

        report = assign(items, test_fraction=test_fraction, seed=seed, reassign=reassign,
                        synthetic_in_test=synthetic_in_test, embed=embed)
        pool = to_place(items)
        for item in pool:
            if item.split != report.sides[item.id]:
                item.split = report.sides[item.id]
                item.updated_at = now()
        used = report.semantic
        meta.checks.split = SplitCheck(
            kb_snapshot=meta.kb_snapshot,
            items_sha256=items_digest([i for i in items if i.status not in UNRELEASED_STATUSES],
                                      ignore=SplitCheck.IGNORES),
            outcome="incomplete" if used.degraded else "clean", units=report.units,
            counts=dict(Counter(i.split for i in pool)),
            settings={"seed": seed, "test_fraction": test_fraction, "reassign": reassign,
                      "synthetic_in_test": synthetic_in_test, "split_fuzzy_min": settings.split_fuzzy_min,
                      **used.settings(), "semantic_min": used.semantic_min if used.vectors is not None
                      else None, "unreadable_questions": used.unreadable})
        store.save(meta, items)
        return report
