import json

import pytest

from curate.checks.leakage.find import LeakSettings, long_form
from curate.checks.leakage import check_leakage
from curate.checks.split import split
from curate.dataset import DatasetStore
from curate.dataset import import_items
from curate.kb import ingest
from curate.release import release

from tests.support import EXAMPLES


@pytest.fixture
def leaky(curate, data_dir):
    """KB = the test docs plus an FAQ and field notes that hold copies of evaluation text."""
    docs = data_dir / "docs"
    for name in ("faq.zh.md", "notes.en.md"):
        (docs / name).write_text((data_dir / "leak" / name).read_text(encoding="utf-8"), encoding="utf-8")
    curate("kb", "ingest", docs, "--name", "docs", "--chunk-size", "400")
    curate("import", data_dir / "leak_items.jsonl", "--dataset", "leaky", "--source", "human", "--kb", "docs")
    return curate


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
    assert release(workspace, dataset="leaky", message="stale").checks.leakage.current is False


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
    manifest = ingest(workspace, [doc.parent], name="kb", chunker="fixed", size=30, overlap=0)
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
    newer = ingest(workspace, [data_dir / "docs"], name="docs", size=400)
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
