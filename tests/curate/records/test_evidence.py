"""The one evidence-group rule, and that import, difficulty, scoring and the exports all follow it."""

import json

from curate.checks.difficulty import assess_difficulty
from curate.dataset import DatasetStore, import_items
from curate.kb import SnapshotStore
from curate.records import EvalItem, Evidence, evidence_groups


def _evidence(eid: str, chunks: list[str], grade: int = 2) -> Evidence:
    return Evidence(evidence_id=eid, text=eid, grade=grade, chunk_ids=chunks)


def test_evidence_sharing_a_chunk_or_a_copy_is_one_group():
    evidence = [_evidence("e1", ["a"]), _evidence("e2", ["a"]),    # two quotes from one chunk
                _evidence("e3", ["b"]), _evidence("e4", ["c"]),    # b and c are copies
                _evidence("e5", ["d"], grade=0),                   # not relevant
                _evidence("e6", [])]                               # anchored nowhere: a group of its own
    groups = evidence_groups(evidence, copies={"b": ["b", "c"], "c": ["b", "c"]})
    assert [(g.evidence_ids, set(g.chunk_ids), g.anchored) for g in groups] == [
        (("e1", "e2"), {"a"}, True), (("e3", "e4"), {"b", "c"}, True), (("e6",), set(), False)]


def test_a_span_over_two_chunks_and_a_quote_in_one_of_them_are_one_group():
    # The case the three old rules disagreed on: evidence [a, b] plus evidence [a].
    groups = evidence_groups([_evidence("e1", ["a", "b"]), _evidence("e2", ["a"], grade=1)])
    assert len(groups) == 1 and groups[0].grade == 2 and groups[0].chunk_ids == ("a", "b")


def test_groups_join_through_a_chain_of_shared_chunks():
    groups = evidence_groups([_evidence("e1", ["a"]), _evidence("e2", ["b"]), _evidence("e3", ["a", "b"])])
    assert [g.evidence_ids for g in groups] == [("e1", "e2", "e3")]


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
    report = assess_difficulty(ws, dataset="faq", dense=False)
    assert next(g for g in report.items if g.id == "two-in-one").features["evidence_groups"] == 1.0


def test_an_item_keeps_its_evidence_order_in_groups():
    item = EvalItem(id="x", question="q", language="en", source="human",
                    evidence=[_evidence("e2", ["b"]), _evidence("e1", ["a"])])
    assert [g.group_id for g in evidence_groups(item.evidence)] == ["e2", "e1"]
