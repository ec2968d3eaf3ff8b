"""The guards with scoped items: grade measures over the evidence the asker may use at the item's moment
(none left: graded as an item the system should decline); split keeps one question asked by several
askers on one side; check-dups never calls the same question for another asker or moment a duplicate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curate.checks.difficulty import grade
from curate.checks.split import split
from curate.dataset import DatasetStore, import_items
from tests.support.scoped import scoped_kb

DATA = Path(__file__).parents[1] / "dataset" / "data"


@pytest.fixture
def scoped(curate):
    """The scoped KB and the dataset 'hr': s-1 .. s-7 (tests/curate/dataset/data/scoped_items.jsonl)."""
    scoped_kb(curate.workspace)
    import_items(curate.workspace, DATA / "scoped_items.jsonl", dataset="hr", source="human", kb="policies")
    return curate


def test_grade_measures_what_the_asker_may_use_and_declines_what_is_left_without(scoped):
    report = grade(scoped.workspace, dataset="hr", dense=False)
    graded = {g.id: g for g in report.items}
    # s-3: staff asks about salary bands (hr and managers only); s-5: the 2025 policy at the latest moment
    assert report.declined == {"s-3": ["forbidden"], "s-5": ["superseded"]}
    for item_id in ("s-3", "s-5"):
        assert graded[item_id].difficulty == "hard"
        assert graded[item_id].why == "should decline: no evidence its asker may use at its moment"
        assert graded[item_id].features["declined"] == 1 and graded[item_id].features["unusable_evidence"] == 1
        assert graded[item_id].features["answerable"] == 0 and graded[item_id].features["evidence_groups"] == 0
    # the same question asked by hr (s-6) is measured on its evidence, as an answerable item
    assert "declined" not in graded["s-6"].features and graded["s-6"].features["evidence_groups"] == 1
    assert graded["s-6"].features["bm25_rank"] == 1 and graded["s-6"].why != graded["s-3"].why
    # the qtype says what the question needs from the KB whoever asks: `single` still fits s-3 and s-5
    assert report.misfits == {} and report.unmeasured == {}
    stored = {i.id: i for i in DatasetStore(scoped.workspace).items("hr")}
    assert stored["s-3"].difficulty == "hard" and stored["s-3"].answerable is True   # the item itself is unchanged
    result = scoped("grade", "--dataset", "hr", "--no-dense")
    assert "graded hard as the system should decline them" in result.stdout
    assert "s-3" in result.stdout and "forbidden" in result.stdout and "superseded" in result.stdout


def test_split_keeps_one_question_asked_by_several_askers_on_one_side(scoped):
    grade(scoped.workspace, dataset="hr", dense=False)
    for seed in range(4):
        split(scoped.workspace, dataset="hr", seed=seed, reassign=True, semantic=False)
        side = {i.id: i.split for i in DatasetStore(scoped.workspace).items("hr")}
        assert side["s-1"] == side["s-2"] and side["s-3"] == side["s-6"] and side["s-4"] == side["s-7"], seed
        assert set(side.values()) == {"dev", "test"}


def test_the_same_question_for_another_asker_or_moment_is_no_duplicate(scoped, tmp_path):
    path = tmp_path / "more.jsonl"
    path.write_text(json.dumps({"id": "s-8", "question": "请问一线城市出差每晚住宿上限是多少呢？", "user_groups": "staff",
                                "as_of": "2026-03-01", "evidence": ["每晚住宿费上限为 800 元"]}, ensure_ascii=False)
                    + "\n", encoding="utf-8")
    import_items(scoped.workspace, path, dataset="hr", source="human")
    result = scoped("check-dups", "--dataset", "hr", "--no-semantic", code=1)
    # s-8 asks s-1's question for the same groups on the same day (s-1 by role): a duplicate
    assert "1 clusters of alike questions (2 items)" in result.stdout
    assert "kept apart: 3 same-question pairs for another asker or moment (different samples" in result.stdout
    meta = DatasetStore(scoped.workspace).meta("hr")
    assert meta.checks.duplicates.counts["kept_apart_by_scope"] == 3
    report = tmp_path / "dups.json"
    scoped("check-dups", "--dataset", "hr", "--no-semantic", "--report", report, code=1)
    pairs = {(e["a"], e["b"]) for e in json.loads(report.read_text(encoding="utf-8"))["scope_apart"]}
    assert pairs == {("s-1", "s-2"), ("s-3", "s-6"), ("s-4", "s-7")}
    clusters = json.loads(report.read_text(encoding="utf-8"))["clusters"]
    assert [c["members"] for c in clusters] == [["s-1", "s-8"]]
