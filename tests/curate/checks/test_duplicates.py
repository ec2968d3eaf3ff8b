import json

from curate.checks.copies import chunk_groups
from curate.checks.duplicates import check_dups
from curate.records import extend_evidence
from curate.dataset import DatasetStore
from curate.dataset import import_items
from curate.index.kb_index import KBIndex
from curate.kb import ingest


def _import(workspace, tmp_path, rows, dataset="faq", source="human"):
    path = tmp_path / f"{dataset}-{source}-{len(rows)}.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    import_items(workspace, path, dataset=dataset, source=source)


def test_exact_fuzzy_clusters_conflicts_and_fix(handbook, tmp_path):
    workspace = handbook.workspace
    _import(workspace, tmp_path, [
        {"id": "d-1", "question": "ＬＧ-4031 是什么意思?", "answer": "访问令牌已过期，需要重新登录。",
         "evidence": ["LG-4031 表示访问令牌已过期。"]},                      # t-1 in full width: exact
        {"id": "d-2", "question": "Who can run the upgrade commands?", "answer": "Administrators.",
         "evidence": ["Only administrators can run the upgrade command;"]},   # t-4, one letter more: fuzzy
    ])
    _import(workspace, tmp_path, [{"id": "s-1", "question": "LG-4031是什么意思", "answer": "令牌过期了。",
                                   "evidence": ["LG-4032 表示访问令牌的签名无效"]}], source="synthetic")
    report = check_dups(workspace, dataset="faq", fix=True, semantic_min=None)
    found = {tuple(c.members): [(e.method, e.score) for e in c.edges] for c in report.clusters}
    assert found == {("t-1", "d-1", "s-1"): [("exact", 100.0), ("exact", 100.0)],
                     ("t-4", "d-2"): [("fuzzy", 98.0)]}
    conflicts = {tuple(report.clusters[n].members): kinds for n, kinds in report.conflicts.items()}
    assert conflicts == {("t-1", "d-1", "s-1"): ["evidence", "reference_answer"],
                         ("t-4", "d-2"): ["reference_answer"]}
    assert report.rejected == {}  # clusters whose labels disagree are left to a person


def test_fix_keeps_the_most_curated_human_item(handbook, tmp_path):
    workspace = handbook.workspace
    _import(workspace, tmp_path, [{"id": "s-1", "question": "LG-4031 是什么意思？", "answer": "访问令牌已过期，需要重新登录。",
                                   "key_points": ["访问令牌已过期", "重新登录"],
                                   "evidence": ["LG-4031 表示访问令牌已过期。"]}], source="synthetic")
    result = handbook("check-dups", "--dataset", "faq", "--fix", "--no-semantic")
    assert "rejected 1" in result.stdout
    items = {i.id: i for i in DatasetStore(workspace).items("faq")}
    assert (items["s-1"].status, items["s-1"].duplicate_of) == ("rejected", "t-1")
    assert items["s-1"].status_history[-1].reason == "duplicate of t-1 (exact 100)"
    assert items["t-1"].status == "draft"
    assert DatasetStore(workspace).meta("faq").checks.duplicates.counts["rejected"] == 1
    handbook("check-dups", "--dataset", "faq", "--no-semantic", code=0)   # nothing left to report


def test_semantic_pass_joins_english_paraphrases_but_never_unreadable_text(with_minilm, tmp_path, data_dir):
    workspace = with_minilm
    ingest(workspace, [data_dir / "docs"], name="docs")
    _import(workspace, tmp_path, [
        {"id": "e-1", "question": "How long is an access token valid by default?", "answerable": False},
        {"id": "e-2", "question": "By default, for how long does an access token stay valid?", "answerable": False},
        {"id": "e-3", "question": "Which plugin configures basic authentication?", "answerable": False},
        {"id": "z-1", "question": "锣鼓经是什么？", "answerable": False},
        {"id": "z-2", "question": "徐晓飞是什么职业？", "answerable": False},
    ])
    report = check_dups(workspace, dataset="faq", semantic_min=0.85)
    assert [c.members for c in report.clusters] == [["e-1", "e-2"]]
    assert report.clusters[0].edges[0].method == "semantic"


def test_duplicate_chunks_become_equivalence_groups(handbook, data_dir):
    workspace = handbook.workspace
    copy = data_dir / "docs" / "errors-copy.zh.md"
    text = (data_dir / "docs" / "errors.zh.md").read_text(encoding="utf-8")
    copy.write_text(text.replace("本文列出", "本页列出"), encoding="utf-8")   # a near copy of the whole page
    snapshot = ingest(workspace, [data_dir / "docs"], name="docs", size=120).snapshot_id
    handbook("remap", "--dataset", "faq", "--kb", snapshot)
    groups, withheld = chunk_groups(KBIndex(workspace, snapshot))
    pairs = sorted(tuple(g.chunks) for g in groups)
    assert ("errors-copy.zh.md#1", "errors.zh.md#1") in pairs and ("errors-copy.zh.md#2", "errors.zh.md#2") in pairs
    assert all(len(g.chunks) == 2 for g in groups)
    result = handbook("check-dups", "--dataset", "faq", "--kb", "--no-semantic", code=1)
    assert "groups of duplicate chunks" in result.stdout
    t1 = next(i for i in DatasetStore(workspace).items("faq") if i.id == "t-1")
    assert sorted(t1.evidence[0].chunk_ids) == ["errors-copy.zh.md#1", "errors.zh.md#1"]
    assert t1.evidence[0].copies == ["errors-copy.zh.md#1"]          # kept apart from its own chunk
    assert "'页' → '文'" in result.stdout                              # what differs between the members


def test_extend_evidence_leaves_split_spans_alone(handbook):
    items = DatasetStore(handbook.workspace).items("faq")
    items[0].evidence[0].partial = True
    before = list(items[0].evidence[0].chunk_ids)
    changed = extend_evidence(items, {before[0]: [before[0], "copy#0"]})
    assert changed == 0 and items[0].evidence[0].chunk_ids == before


def test_items_imported_later_get_the_copies_too(handbook, data_dir, tmp_path):
    workspace = handbook.workspace
    copy = data_dir / "docs" / "errors-copy.zh.md"
    copy.write_text((data_dir / "docs" / "errors.zh.md").read_text(encoding="utf-8"), encoding="utf-8")
    snapshot = ingest(workspace, [data_dir / "docs"], name="docs", size=120).snapshot_id
    handbook("remap", "--dataset", "faq", "--kb", snapshot)
    handbook("check-dups", "--dataset", "faq", "--kb", "--no-semantic", code=1)
    _import(workspace, tmp_path, [{"id": "late", "question": "令牌签名无效怎么办？",
                                   "evidence": ["LG-4032 表示访问令牌的签名无效"]}])
    late = next(i for i in DatasetStore(workspace).items("faq") if i.id == "late")
    assert sorted(late.evidence[0].chunk_ids) == ["errors-copy.zh.md#1", "errors.zh.md#1"]


def test_the_keeper_ranks_every_status_and_source():
    from curate.checks.duplicates import SOURCE_RANK, STATUS_RANK
    from curate.records import SOURCES, STATUSES
    assert set(STATUS_RANK) == set(STATUSES) and set(SOURCE_RANK) == set(SOURCES)


def test_copies_that_differ_in_a_year_or_a_negation_are_never_joined(handbook, data_dir):
    """The 2017 and 2018 editions of a brochure differ only in their quotas and year: not copies."""
    workspace = handbook.workspace
    brochure = ("# 招生简章\n\n{year}年本科招生计划：计算机专业招收{n}人，学费每年5000元，{neg}接受调剂。\n\n"
                "报名时间为每年6月1日至6月30日，逾期不予受理。")
    (data_dir / "docs" / "brochure-2017.zh.md").write_text(brochure.format(year=2017, n=120, neg=""), encoding="utf-8")
    (data_dir / "docs" / "brochure-2018.zh.md").write_text(brochure.format(year=2018, n=150, neg=""), encoding="utf-8")
    (data_dir / "docs" / "brochure-2019.zh.md").write_text(brochure.format(year=2019, n=150, neg="不"),
                                                            encoding="utf-8")
    snapshot = ingest(workspace, [data_dir / "docs"], name="docs", size=60).snapshot_id
    handbook("remap", "--dataset", "faq", "--kb", snapshot)
    groups, withheld = chunk_groups(KBIndex(workspace, snapshot))
    joined = {c for g in groups for c in g.chunks}
    assert not {"brochure-2017.zh.md#0", "brochure-2018.zh.md#0", "brochure-2019.zh.md#0"} & joined
    differs = {frozenset((w.a, w.b)): w.differs for w in withheld}
    assert differs[frozenset(("brochure-2017.zh.md#0", "brochure-2018.zh.md#0"))] == "120, 2017 ≠ 150, 2018"
    # the registration paragraph is the same in every edition: those are copies
    assert any({"brochure-2017.zh.md#1", "brochure-2018.zh.md#1"} <= set(g.chunks) for g in groups)
    result = handbook("check-dups", "--dataset", "faq", "--kb", "--no-semantic", code=1)
    assert "not joined, though alike" in result.stdout and "2017 ≠ 150, 2018" in result.stdout


def test_a_group_can_be_undone_and_stays_undone(handbook, data_dir, tmp_path):
    workspace = handbook.workspace
    copy = data_dir / "docs" / "errors-copy.zh.md"
    copy.write_text((data_dir / "docs" / "errors.zh.md").read_text(encoding="utf-8"), encoding="utf-8")
    snapshot = ingest(workspace, [data_dir / "docs"], name="docs", size=120).snapshot_id
    handbook("remap", "--dataset", "faq", "--kb", snapshot)
    first = check_dups(workspace, dataset="faq", kb=True, semantic_min=None)
    t1 = lambda: next(i for i in DatasetStore(workspace).items("faq") if i.id == "t-1")  # noqa: E731
    group = next(g for g in first.chunk_groups if "errors.zh.md#1" in g.chunks)
    assert "errors-copy.zh.md#1" in t1().evidence[0].chunk_ids
    handbook("check-dups", "--dataset", "faq", "--kb", "--no-semantic", "--undo", group.group_id, code=1)
    assert t1().evidence[0].chunk_ids == ["errors.zh.md#1"] and t1().evidence[0].copies == []
    again = check_dups(workspace, dataset="faq", kb=True, semantic_min=None)
    assert group.group_id not in {g.group_id for g in again.chunk_groups} and again.undone == [group.group_id]
    assert t1().evidence[0].chunk_ids == ["errors.zh.md#1"]
    result = handbook("check-dups", "--dataset", "faq", "--kb", "--no-semantic", "--undo", "g-nosuchgroup", code=2)
    assert result.stderr.count("\n") == 1 and "no duplicate-chunk group g-nosuchgroup" in result.stderr
