"""Required key points and alternative evidence: an "any of" group is found when one of its
alternatives is; a required group none of whose alternatives was retrieved is a retrieval miss."""

import json

import pytest

from curate.checks.leakage import check_leakage
from curate.dataset import DatasetStore, import_items
from curate.kb import ingest
from curate.release import release
from evalrun.records import read_run
from evalrun.runner import run
from tests.support import targets

# Five news passages that report the same fact, as a news QA set has them (and two other facts).
PASSAGES = [f"第{n}家媒体报道：大桥于2018年10月23日正式开通，全长55公里。" for n in range(1, 6)]
DOCS = "\n\n".join(PASSAGES + ["大桥的设计使用寿命为120年。", "大桥连接香港、珠海和澳门三地。"])


@pytest.fixture
def bridge(workspace, tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "news.zh.md").write_text(DOCS, encoding="utf-8")
    (tmp_path / "docs" / "distractor.en.md").write_text("Nothing about bridges.", encoding="utf-8")
    ingest(workspace, [tmp_path / "docs"], name="news", chunk_size=40)
    rows = [
        # five interchangeable positives for one fact: any one found counts
        {"id": "any", "question": "大桥什么时候开通？", "answers": ["2018年10月23日", "2018年10月"],
         "evidence": PASSAGES, "evidence_mode": "any"},
        # the same passages, each required: finding one is one fifth
        {"id": "all", "question": "各家媒体怎么报道大桥开通？", "evidence": PASSAGES},
        # two facts, two required key points; the first stated by any of two passages
        {"id": "two-facts", "question": "大桥何时开通，设计寿命多少年？",
         "evidence": [PASSAGES[0], PASSAGES[1], "大桥的设计使用寿命为120年。"],
         "key_points": [{"text": "2018年10月23日开通", "evidence_ids": ["e1", "e2"]},
                        {"text": "设计寿命120年", "evidence_ids": ["e3"]}]},
    ]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    import_items(workspace, path, dataset="bridge", source="human", kb="news")
    check_leakage(workspace, ref="bridge", semantic=False)
    release(workspace, dataset="bridge", message="v1")
    targets.GOLD.clear()
    for item in DatasetStore(workspace).items("bridge"):
        targets.GOLD[item.question] = list(dict.fromkeys(c for e in item.evidence for c in e.chunk_ids))
    return workspace


def test_items_record_alternatives_and_accepted_answers(bridge):
    items = {i.id: i for i in DatasetStore(bridge).items("bridge")}
    assert items["any"].qtype == "single" and {e.any_of for e in items["any"].evidence} == {"any"}
    assert items["all"].qtype == "multi_evidence" and {e.any_of for e in items["all"].evidence} == {None}
    assert items["any"].answers == ["2018年10月23日", "2018年10月"] and items["any"].reference_answer == "2018年10月23日"


def test_one_alternative_found_counts_and_a_missing_required_group_is_a_miss(bridge, tmp_path):
    folder = run(bridge, ref="bridge@v1", target="tests.support.targets:one_of", out=tmp_path / "run")
    scores = {r.item_id: r for r in read_run(folder).scores}
    # "any": the fifth passage alone, at rank 1 of the context, finds the one required group
    assert scores["any"].values["context/recall@1"] == 1.0 and scores["any"].values["candidates/hit_rate@1"] == 1.0
    # its retrieval is whole; its placeholder answer ("an answer") holds no accepted answer: a lexical miss
    assert scores["any"].attribution == ["generation_miss"] and list(scores["any"].lexical_attribution) == [
        "generation_miss"]
    # "all": each passage required; one of five found
    assert scores["all"].values["candidates/recall@5"] == 1 / 5 and scores["all"].attribution == ["retrieval_miss"]
    # two facts: only the life-span passage retrieved, so the opening-date fact (e1 or e2) is missed
    assert scores["two-facts"].values["candidates/recall@5"] == 1 / 2
    assert scores["two-facts"].attribution == ["retrieval_miss"]
