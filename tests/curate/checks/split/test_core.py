"""The split's pure core on items in memory: alike items share a side, the test share is met per
stratum, unverified synthetic items stay in dev, sides already given are kept, nothing is changed."""

import numpy as np

from curate.checks.split.core import assign
from curate.index.embeddings import SemanticPass
from curate.records import EvalItem


def _item(n: int, question: str, **fields) -> EvalItem:
    return EvalItem(id=f"q{n:02d}", question=question, language="en", source=fields.pop("source", "human"), **fields)


TOPICS = ["refunds", "invoices", "quotas", "webhooks", "backups", "regions", "tokens", "plugins", "alerts", "proxies"]


def test_assign_places_items_in_memory_and_changes_none():
    items = [_item(n, f"What is the policy on {topic}?") for n, topic in enumerate(TOPICS)]
    items.append(_item(10, "What is the policy on refunds ?"))              # alike q00 (exact once folded)
    items.append(_item(11, "A made-up question?", source="synthetic"))
    items.append(_item(12, "Which regions are served?", split="test"))     # already placed
    items.append(_item(13, "A failure from production?", split="regression"))
    before = [i.model_dump() for i in items]
    report = assign(items, test_fraction=0.5, seed=3)
    assert [i.model_dump() for i in items] == before
    sides = report.sides
    assert "q13" not in sides                                               # regression items are not placed
    assert sides["q00"] == sides["q10"] and sides["q11"] == "dev" and sides["q12"] == "test"
    # 13 items to place, 12 units: q12 fixed in test, q11 held in dev; test gets round(13 / 2) = 6 (q12 among them)
    assert sum(side == "test" for side in sides.values()) == 6
    assert report.units == 12 and report.synthetic_held_in_dev == 1
    assert assign(items, test_fraction=0.5, seed=3).sides == sides          # the seed fixes the order
    assert assign(items, test_fraction=0.5, seed=4).sides != sides


def test_assign_keeps_items_alike_by_meaning_together_when_given_embeddings():
    items = [_item(0, "How long do refunds take?"), _item(1, "When will my money come back?"),
             _item(2, "Can a viewer see keys?"), _item(3, "Which plans have SSO?")]
    vectors = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float32)

    def embed(questions):
        assert questions == [i.question for i in items]
        return SemanticPass("test-model", 0.9, vectors, np.ones(len(questions), dtype=bool))
    for seed in range(6):
        report = assign(items, test_fraction=0.5, seed=seed, embed=embed)
        assert report.sides["q00"] == report.sides["q01"] and report.units == 3
    assert report.semantic.settings()["semantic"] == "used"
    # without them, the two are two units
    assert assign(items, test_fraction=0.5).units == 4


def test_alike_items_on_both_sides_go_to_dev_unless_reassigned():
    items = [_item(0, "How long do refunds take?", split="dev"), _item(1, "How long do refunds take?", split="test")]
    report = assign(items)
    assert report.sides == {"q00": "dev", "q01": "dev"} and report.straddling_fixed == ["q00", "q01"]
    assert report.moved == 1
