"""The one evidence-group rule, and that import, difficulty, scoring and the exports all follow it."""

import json

from curate.checks.difficulty import grade
from curate.dataset import DatasetStore, import_items
from curate.kb import SnapshotStore
from curate.records import EvalItem, Evidence, evidence_groups


def _evidence(eid: str, chunks: list[str], grade: int = 2, text: str | None = None) -> Evidence:
    return Evidence(evidence_id=eid, text=text or f"fact {eid} stated here", grade=grade, chunk_ids=chunks)


def test_evidence_that_is_one_text_in_one_chunk_or_a_copy_is_one_group():
    evidence = [_evidence("e1", ["a"], text="退款期限为30天。"), _evidence("e2", ["a"], text="退款期限为 30 天"),
                _evidence("e3", ["b"], text="客服电话 400-820-1234"),        # b and c are copies
                _evidence("e4", ["c"], text="客服热线电话：400-820-1234。"),   # near-equal, same number
                _evidence("e5", ["d"], grade=0),                           # not relevant
                _evidence("e6", [])]                                       # anchored nowhere: a group of its own
    groups = evidence_groups(evidence, copies={"b": ["b", "c"], "c": ["b", "c"]})
    assert [(g.evidence_ids, set(g.chunk_ids), g.anchored) for g in groups] == [
        (("e1", "e2"), {"a"}, True), (("e3", "e4"), {"b", "c"}, True), (("e6",), set(), False)]


def test_two_facts_in_one_chunk_stay_two_groups_and_the_chunk_finds_both():
    """Where a chunker cut is no reason to merge facts (an item once went from 17 groups to 4)."""
    groups = evidence_groups([_evidence("e1", ["a"], text="大桥于2018年10月23日正式开通。"),
                              _evidence("e2", ["a"], text="大桥全长55公里。")])
    assert [(g.evidence_ids, g.chunk_ids) for g in groups] == [(("e1",), ("a",)), (("e2",), ("a",))]


def test_a_copy_that_differs_in_a_number_is_another_fact():
    # b and c are copies by check-dups, yet the quotes differ in the year: two facts, both required.
    groups = evidence_groups([_evidence("e1", ["b"], text="2017年计划招生1200人"),
                              _evidence("e2", ["c"], text="2018年计划招生1200人")],
                             copies={"b": ["b", "c"], "c": ["b", "c"]})
    assert len(groups) == 2


def test_the_same_text_anywhere_is_one_group_and_declared_alternatives_are_one_group():
    same = evidence_groups([_evidence("e1", ["a"], text="Refunds take 30 days."),
                            _evidence("e2", ["z"], text="REFUNDS take 30 days")])
    assert [g.evidence_ids for g in same] == [("e1", "e2")]
    labelled = evidence_groups([Evidence(evidence_id="e1", text="one", chunk_ids=["a"], any_of="x"),
                                Evidence(evidence_id="e2", text="two", chunk_ids=["b"], any_of="x"),
                                Evidence(evidence_id="e3", text="three", chunk_ids=["a"])])
    assert [g.evidence_ids for g in labelled] == [("e1", "e2"), ("e3",)]


def test_a_span_over_two_chunks_and_a_shorter_quote_in_one_of_them_are_two_groups():
    # evidence [a, b] (a span across the boundary) plus another quote in a: two facts; chunk a finds both.
    groups = evidence_groups([_evidence("e1", ["a", "b"], text="大桥全长55公里，设计使用寿命为120年。"),
                              _evidence("e2", ["a"], grade=1, text="大桥全长55公里")])
    assert [(g.evidence_ids, g.chunk_ids, g.grade) for g in groups] == [(("e1",), ("a", "b"), 2), (("e2",), ("a",), 1)]


def test_no_chain_of_shared_chunks_joins_separate_facts():
    groups = evidence_groups([_evidence("e1", ["a"]), _evidence("e2", ["b"]), _evidence("e3", ["a", "b"])])
    assert [g.evidence_ids for g in groups] == [("e1",), ("e2",), ("e3",)]


def test_the_rule_does_not_change_its_input():
    evidence = [_evidence("e1", ["a"]), _evidence("e2", ["a"])]
    before = [e.model_dump() for e in evidence]
    evidence_groups(evidence, copies={"a": ["a", "z"]})
    assert [e.model_dump() for e in evidence] == before


def test_import_and_difficulty_use_the_rule(handbook):
    """Import's qtype and difficulty's evidence_groups feature agree on one item (two quotes of one chunk)."""
    ws = handbook.workspace
    chunks = [c.chunk_id for c in SnapshotStore(ws).chunks(DatasetStore(ws).meta("faq").kb_snapshot)]
    path = ws.root / "one.jsonl"
    path.write_text(json.dumps({"id": "two-in-one", "question": "What do the first two chunks say?",
                                "evidence": [{"chunk_id": chunks[0]}, {"chunk_id": chunks[0], "grade": 1}]}) + "\n",
                    encoding="utf-8")
    import_items(ws, path, dataset="faq", source="human")
    item = next(i for i in DatasetStore(ws).items("faq") if i.id == "two-in-one")
    assert item.qtype == "single" and len(evidence_groups(item.evidence)) == 1
    report = grade(ws, dataset="faq", dense=False)
    assert next(g for g in report.items if g.id == "two-in-one").features["evidence_groups"] == 1.0


def test_an_item_keeps_its_evidence_order_in_groups():
    item = EvalItem(id="x", question="q", language="en", source="human",
                    evidence=[_evidence("e2", ["b"]), _evidence("e1", ["a"])])
    assert [g.group_id for g in evidence_groups(item.evidence)] == ["e2", "e1"]
