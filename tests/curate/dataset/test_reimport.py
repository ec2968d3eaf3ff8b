"""`curate export --format jsonl` imports back: into another dataset, or into another workspace holding
the same KB snapshot, the items are the same field for field and their evidence groups the same."""

from __future__ import annotations

import json

import pytest

from curate.dataset import DatasetStore
from curate.kb import SnapshotStore
from curate.records import Production, item_groups
from curate.workspace import init_workspace
from tests.conftest import Cli

PRICING = """# 套餐价格

标准版每月 99 元，包含 5 个席位。专业版每月 299 元，包含 20 个席位，并提供 7×24 小时技术支持。

## 退款

购买后 14 天内可以申请全额退款；超过 14 天不予退款。年付用户可以按剩余月份折算退款。
"""
FAQ = """# 常见问题

## 退款

购买后 14 天内可申请全额退款；超过 14 天不予退款。年付用户可以按剩余月份折算退款。

## 发票

发票在付款后 3 个工作日内开具。
"""
RELEASE = """# Release 4.1

Version 4.1 raises the upload limit to 2 GB for every upload, through the web page or the API.

## Errors

Uploads larger than 2 GB are rejected with error UP-413 and are never stored, not even in part.

## Notes

As the 4.1 release notes put it, the limit is now 2 GB for every plan, the free plan included.

## Retention

Deleted files stay in the trash for 30 days, then they are removed for good.
"""
RETENTION = "Deleted files stay in the trash for 30 days"
REFUND = "购买后 14 天内可以申请全额退款"
REFUND_FAQ = "购买后 14 天内可申请全额退款"   # a near copy: one fact only where the chunks are copies

ITEMS = [
    {"id": "zh-multi", "question": "标准版每月多少钱？发票多久开具？", "answer": "每月 99 元；付款后 3 个工作日内开具发票。",
     "answers": ["99 元，3 个工作日", "九十九元，三个工作日内"],
     "evidence": ["标准版每月 99 元", "发票在付款后 3 个工作日内开具"],
     "key_points": [{"text": "标准版每月 99 元", "evidence_ids": ["e1"]}, {"text": "3 个工作日内开具", "evidence_ids": ["e2"]}],
     "tags": ["价格", "发票"]},
    {"id": "en-alt", "question": "What is the upload limit in version 4.1?", "answer": "2 GB.",
     "evidence": [{"text": "Uploads larger than 2 GB are rejectd with eror UP-413.", "grade": 1},  # fuzzy
                  {"text": "Version 4.1 raises the upload limit to 2 GB.", "any_of": "limit"},
                  {"text": "the limit is now 2 GB for every plan", "any_of": "limit"}],
     "key_points": [{"text": "2 GB", "evidence_ids": ["e2", "e3"]}], "qtype": "single", "tags": ["upload"]},
    {"id": "zh-copy", "question": "购买多久内可以申请全额退款？", "answer": "14 天内。",
     "evidence": [{"text": REFUND, "doc_id": "pricing.zh.md"}, {"text": REFUND_FAQ, "doc_id": "faq.zh.md"}],
     "qtype": "single"},
    {"id": "en-span", "question": "How long do deleted files stay in the trash?", "answer": "30 days.",
     "evidence": [{"doc_id": "release.en.md", "start": RELEASE.index(RETENTION),
                   "end": RELEASE.index(RETENTION) + len(RETENTION)}], "qtype": "single"},
    {"id": "zh-none", "question": "企业版支持私有化部署吗？", "answerable": False,
     "evidence": [{"text": "专业版每月 299 元，包含 20 个席位", "grade": 0}], "tags": ["部署"]},
]


def _workspace(root, tmp_path) -> Cli:
    cli = Cli(init_workspace(root))
    docs = tmp_path / "docs"
    if not docs.exists():
        docs.mkdir()
        for name, text in (("pricing.zh.md", PRICING), ("faq.zh.md", FAQ), ("release.en.md", RELEASE)):
            (docs / name).write_text(text, encoding="utf-8")
    cli("kb", "ingest", docs, "--name", "docs", "--chunk-size", "200")
    return cli


@pytest.fixture
def exported(tmp_path):
    """(source workspace, its export): the items above, grouped with their copies, curated further, exported."""
    source = _workspace(tmp_path / "source", tmp_path)
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in ITEMS), encoding="utf-8")
    source("import", items, "--dataset", "faq", "--source", "human", "--kb", "docs")
    source("check-dups", "--dataset", "faq", "--kb", "--no-semantic", code=1)   # the two refund chunks are copies
    store = DatasetStore(source.workspace)
    meta, loaded = store.load("faq")
    multi, alt, copy, span, none = loaded
    multi.set_status("labelled", "evidence checked", by="ann-1")
    multi.set_status("verified", "adjudicated", by="lead")
    multi.difficulty, multi.difficulty_features, multi.split = "hard", {"bm25_rank": 7.0}, "test"
    multi.guideline_version = "g-7"
    alt.evidence = alt.evidence[1:] + alt.evidence[:1]   # ids e2, e3, e1: not in order, not renumbered
    span.split, span.source = "dev", "production"
    span.production = Production(answer="七天", retrieved=[span.evidence[0].chunk_ids[0]], failed_by=["thumbs_down"])
    none.duplicate_of = "zh-copy"
    store.save(meta, loaded)
    out = tmp_path / "export.jsonl"
    source("export", "faq", "--out", out)
    return source, out


def _fields(item) -> dict:
    """Every field of an item but the two an import adds to (its history gets one entry, its updated_at)."""
    return item.model_dump(mode="json", exclude={"status_history", "updated_at"})


def _same(before, after):
    assert [i.id for i in after] == [i.id for i in before]
    for old, new in zip(before, after, strict=True):
        assert _fields(new) == _fields(old), old.id
        assert new.status_history[:-1] == old.status_history
        assert new.status_history[-1].by == "curate import" and new.status_history[-1].status == old.status
        assert [g.evidence_ids for g in item_groups(new)] == [g.evidence_ids for g in item_groups(old)], old.id


def test_an_export_imports_into_another_dataset_as_the_same_items(exported):
    source, out = exported
    before = DatasetStore(source.workspace).items("faq")
    assert [len(item_groups(i)) for i in before] == [2, 2, 1, 1, 0]   # copies make zh-copy one group
    assert [e.evidence_id for e in before[1].evidence] == ["e2", "e3", "e1"]
    assert before[1].evidence[2].located_by == "fuzzy" and before[1].evidence[2].match_score < 100
    result = source("import", out, "--dataset", "back", "--source", "synthetic")
    assert "5 of them curate's own item records" in result.stdout and result.stderr == ""
    after = DatasetStore(source.workspace).items("back")
    _same(before, after)
    assert after[3].source == "production"       # each record's own source, not --source
    assert after[0].status == "verified" and after[0].answers == before[0].answers and len(after[0].answers) == 3


def test_an_export_imports_into_a_fresh_workspace_with_the_same_snapshot(exported, tmp_path):
    source, out = exported
    before = DatasetStore(source.workspace).items("faq")
    target = _workspace(tmp_path / "target", tmp_path)
    assert SnapshotStore(target.workspace).resolve("docs") == before[0].kb_snapshot
    # no copies known here yet: zh-copy's two near-equal quotes share no chunk, so two groups, and the import says so
    result = target("import", out, "--dataset", "first", "--source", "human")
    assert result.stderr.splitlines() == [
        "warning: item zh-copy: 1 required evidence groups in its record, 2 here (chunk copies known in one "
        "workspace only, or another chunking: `curate check-dups --kb` finds copies)"]
    first = {i.id: i for i in DatasetStore(target.workspace).items("first")}
    assert first["zh-copy"].evidence[0].copies == [] and len(item_groups(first["zh-copy"])) == 2
    target("check-dups", "--dataset", "first", "--kb", "--no-semantic", code=1)
    result = target("import", out, "--dataset", "faq", "--source", "human")
    assert result.stderr == ""
    _same(before, DatasetStore(target.workspace).items("faq"))


def test_an_export_imports_into_another_chunking_anchored_anew(exported, tmp_path):
    source, out = exported
    before = {i.id: i for i in DatasetStore(source.workspace).items("faq")}
    target = Cli(init_workspace(tmp_path / "rechunked"))
    target("kb", "ingest", tmp_path / "docs", "--name", "docs", "--chunker", "fixed", "--chunk-size", "40",
           "--overlap", "0")
    # span's production.retrieved names chunks of the old snapshot: refused, naming the field
    result = target("import", out, "--dataset", "faq", "--source", "human", code=2)
    assert f"{out}:4: field 'production.retrieved'" in result.stderr
    kept = out.with_name("kept.jsonl")
    kept.write_text("".join(line + "\n" for line in out.read_text(encoding="utf-8").splitlines()
                            if '"en-span"' not in line), encoding="utf-8")
    target("import", kept, "--dataset", "faq", "--source", "human")
    after = {i.id: i for i in DatasetStore(target.workspace).items("faq")}
    snapshot = SnapshotStore(target.workspace).resolve("docs")
    chunks = {c.chunk_id: c.text for c in SnapshotStore(target.workspace).chunks(snapshot)}
    for item_id, item in after.items():
        assert [(e.evidence_id, e.doc_id, e.start, e.end, e.text, e.grade, e.any_of) for e in item.evidence] == \
            [(e.evidence_id, e.doc_id, e.start, e.end, e.text, e.grade, e.any_of) for e in before[item_id].evidence]
        assert item.key_points == before[item_id].key_points and item.kb_snapshot == snapshot
        for evidence in item.evidence:
            assert evidence.kb_snapshot == snapshot and evidence.chunk_ids
            if not evidence.partial:
                assert all(evidence.text in chunks[c] for c in evidence.chunk_ids)
    assert {e.located_by for i in after.values() for e in i.evidence} == {"span"}


def test_a_damaged_record_names_its_line_and_field(exported):
    source, out = exported
    lines = out.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["evidence"][0]["grade"] = 5
    lines[1] = json.dumps(record, ensure_ascii=False)
    record = json.loads(lines[2])
    record["key_points"] = [{"text": "14 天", "evidence_ids": ["e9"]}]
    lines[2] = json.dumps(record, ensure_ascii=False)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = source("import", out, "--dataset", "back", "--source", "human", "--skip-invalid")
    skipped = [line for line in result.stderr.splitlines() if line.startswith("skipped: ")]
    assert skipped[0].startswith(f"skipped: {out}:2: field 'evidence[0].grade': ")
    assert skipped[1] == (f"skipped: {out}:3: field 'key_points[0].evidence_ids': cites e9, not evidence of this item "
                          "(e1, e2)")
    assert [i.id for i in DatasetStore(source.workspace).items("back")] == ["zh-multi", "en-span", "zh-none"]


def _import_into_edited(exported, tmp_path, edit):
    _, out = exported
    docs = tmp_path / "edited"
    docs.mkdir()
    for name, text in (("pricing.zh.md", edit(PRICING)), ("faq.zh.md", FAQ), ("release.en.md", RELEASE)):
        (docs / name).write_text(text, encoding="utf-8")
    target = Cli(init_workspace(tmp_path / "edited-ws"))
    target("kb", "ingest", docs, "--name", "docs", "--chunk-size", "200")
    kept = out.with_name("multi.jsonl")
    kept.write_text(out.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    return target, kept


def test_evidence_whose_wording_changed_sends_a_verified_item_back_to_draft(exported, tmp_path):
    """In another snapshot where the price sentence is worded otherwise, the quote is found only
    fuzzily: the item's verification no longer holds, and its history says why."""
    target, kept = _import_into_edited(exported, tmp_path, lambda text: text.replace("每月 99 元", "每个月 99 元"))
    result = target("import", kept, "--dataset", "faq", "--source", "human", "--min-score", "85")
    assert "1 fuzzy" in result.stdout
    (item,) = DatasetStore(target.workspace).items("faq")
    assert item.evidence[0].text.startswith("标准版每个月 99") and item.evidence[0].located_by == "fuzzy"
    assert item.status == "draft" and [c.status for c in item.status_history] == ["draft", "labelled", "verified", "draft"]
    assert "evidence e1 found again only fuzzily" in item.status_history[-1].reason


def test_evidence_whose_number_changed_is_refused_with_both_texts(exported, tmp_path):
    """Where the price now reads 89, the record's 99 is another fact: refused, never re-bound."""
    target, kept = _import_into_edited(exported, tmp_path, lambda text: text.replace("每月 99 元", "每月 89 元"))
    result = target("import", kept, "--dataset", "faq", "--source", "human", "--min-score", "85", code=2)
    line = result.stderr.strip()
    assert line.count("\n") == 0 and f"{kept}:1: field 'evidence[0]'" in line
    assert "99 ≠ 89" in line and "标准版每月 89 元" in line and "标准版每月 99 元" in line and "not bound" in line
    assert DatasetStore(target.workspace).items("faq") == [] if (target.workspace.root / "datasets" / "faq").exists() else True


def test_a_release_data_file_imports_as_the_same_items(exported, tmp_path):
    """A release's data files hold the same records, difficulty_features written as JSON text."""
    from curate.fileio import jsonl_bytes
    from curate.formats.hf import release_row

    source, _ = exported
    before = DatasetStore(source.workspace).items("faq")
    data = tmp_path / "test.jsonl"
    data.write_bytes(jsonl_bytes(release_row(i) for i in before))
    assert '"difficulty_features":"{\\"bm25_rank\\":7.0}"' in data.read_text(encoding="utf-8")
    source("import", data, "--dataset", "back", "--source", "human")
    _same(before, DatasetStore(source.workspace).items("back"))


def test_chunk_ids_edited_to_name_other_chunks_are_placed_anew_not_trusted(exported):
    source, out = exported
    lines = out.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[3])                    # en-span: its evidence sits in release.en.md
    right = record["evidence"][0]["chunk_ids"]
    record["evidence"][0]["chunk_ids"] = ["pricing.zh.md#0"]
    edited = out.with_name("edited.jsonl")
    edited.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    source("import", edited, "--dataset", "back", "--source", "human")
    (item,) = DatasetStore(source.workspace).items("back")
    assert item.evidence[0].chunk_ids == right and item.evidence[0].located_by == "span"
