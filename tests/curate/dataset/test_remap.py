import json

from curate.dataset import DatasetStore
from curate.kb import SnapshotStore, import_chunks, ingest
from curate.dataset import remap


def _evidence(workspace):
    return {(i.id, e.evidence_id): e for i in DatasetStore(workspace).items("faq") for e in i.evidence}


def test_rechunked_snapshot_keeps_every_evidence(handbook, data_dir):
    workspace = handbook.workspace
    before = _evidence(workspace)
    target = ingest(workspace, [data_dir / "docs"], name="docs", chunker="fixed", chunk_size=40, overlap=8)
    report = remap(workspace, dataset="faq", kb=target.snapshot_id)
    assert report.unmapped == [] and sum(report.mapped.values()) == len(before) == 5
    after = _evidence(workspace)
    chunks = {c.chunk_id: c for c in SnapshotStore(workspace).chunks(target.snapshot_id)}
    for key, old in before.items():
        new = after[key]
        assert (new.doc_id, new.start, new.end, new.text, new.grade) == (old.doc_id, old.start, old.end, old.text, old.grade)
        assert new.kb_snapshot == target.snapshot_id and new.chunk_ids
        pieces = [chunks[c] for c in new.chunk_ids]
        if not new.partial:
            assert all(c.start <= new.start and new.end <= c.end for c in pieces)
        else:  # every piece holds part of the span (more than white space)
            assert all(new.text and c.text[max(c.start, new.start) - c.start:min(c.end, new.end) - c.start].strip()
                       for c in pieces)
    assert DatasetStore(workspace).meta("faq").kb_snapshot == target.snapshot_id
    assert {i.kb_snapshot for i in DatasetStore(workspace).items("faq")} == {target.snapshot_id}


def test_moved_text_is_found_by_search_and_lost_text_is_reported(handbook, data_dir):
    workspace = handbook.workspace
    doc = data_dir / "docs" / "errors.zh.md"
    text = doc.read_text(encoding="utf-8")
    text = text.replace("本文列出", "新增的一段说明。\n\n本文列出")  # shifts every offset
    text = text.replace("LG-4291 表示请求超过了每分钟的限额。默认限额为每个密钥每分钟 600 次请求？企业版可以调高到 6000 次。", "限流规则见单独的页面。")
    doc.write_text(text, encoding="utf-8")
    target = ingest(workspace, [data_dir / "docs"], name="docs", chunk_size=120)
    result = handbook("remap", "--dataset", "faq", "--kb", "docs", code=1)
    assert "unmapped 2" in result.stdout and "t-3" in result.stdout
    after = {i.id: i for i in DatasetStore(workspace).items("faq")}
    t1 = after["t-1"].evidence[0]
    assert t1.located_by == "exact" and text[t1.start:t1.end] == t1.text == "LG-4031 表示访问令牌已过期。"
    t3 = after["t-3"]
    assert [(e.located_by, e.chunk_ids) for e in t3.evidence] == [("unmapped", []), ("unmapped", [])]
    assert t3.evidence[0].text == "默认限额为每个密钥每分钟 600 次请求"  # kept, never dropped
    assert t3.status == "needs_evidence" and "e1, e2" in t3.status_history[-1].reason
    assert after["t-1"].status == "draft"
    assert DatasetStore(workspace).meta("faq").kb_snapshot == target.snapshot_id


def test_dry_run_writes_nothing(handbook, data_dir):
    workspace = handbook.workspace
    path = workspace.datasets_dir / "faq" / "items.jsonl"
    before = path.read_bytes()
    target = ingest(workspace, [data_dir / "docs"], name="docs", chunker="fixed", chunk_size=50, overlap=0)
    result = handbook("remap", "--dataset", "faq", "--kb", target.snapshot_id, "--dry-run")
    assert "dry run" in result.stdout and path.read_bytes() == before


def test_remap_onto_production_chunks_with_offsets(handbook, data_dir, tmp_path):
    workspace = handbook.workspace
    documents = SnapshotStore(workspace).documents(DatasetStore(workspace).meta("faq").kb_snapshot)
    rows = []
    for doc in documents:  # production cut every document into 30-character pieces
        for start in range(0, len(doc.text), 30):
            rows.append({"chunk_id": f"{doc.doc_id}:{start}", "doc_id": doc.doc_id, "text": doc.text[start:start + 30],
                         "start": start, "end": start + len(doc.text[start:start + 30])})
    path = tmp_path / "prod.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    manifest, _ = import_chunks(workspace, path, name="prod")
    report = remap(workspace, dataset="faq", kb="prod")
    assert report.unmapped == [] and report.mapped == {"span": 5}
    for evidence in _evidence(workspace).values():
        assert all(c.startswith(evidence.doc_id + ":") for c in evidence.chunk_ids)


def test_interrupted_save_is_reconciled_from_the_items(handbook, data_dir, monkeypatch):
    """A remap killed between writing the items and the dataset record loses nothing."""
    workspace = handbook.workspace
    target = ingest(workspace, [data_dir / "docs"], name="docs", chunker="fixed", chunk_size=50, overlap=0)
    import curate.records.base as module  # where every record is written
    real = module.atomic_write_json
    monkeypatch.setattr(module, "atomic_write_json", lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        remap(workspace, dataset="faq", kb=target.snapshot_id)
    except KeyboardInterrupt:
        pass
    monkeypatch.setattr(module, "atomic_write_json", real)
    store = DatasetStore(workspace)
    assert {i.kb_snapshot for i in store.items("faq")} == {target.snapshot_id}
    assert store.meta("faq").kb_snapshot == target.snapshot_id


def test_evidence_across_a_boundary_the_chunker_trimmed_maps_to_both_chunks(handbook, data_dir):
    """The structure chunker drops the white space between sentences it puts in different chunks:
    evidence spanning those sentences belongs to both (it once got no chunk and still counted as mapped)."""
    workspace = handbook.workspace
    target = ingest(workspace, [data_dir / "docs"], name="docs", chunker="structure", chunk_size=60)
    report = remap(workspace, dataset="faq", kb=target.snapshot_id)
    assert report.unmapped == []
    for evidence in _evidence(workspace).values():
        assert evidence.chunk_ids, evidence
    crossing = [e for e in _evidence(workspace).values() if e.partial]
    assert crossing and all(len(e.chunk_ids) >= 2 for e in crossing)


def test_remap_with_lost_text_exits_1_and_lists_why(handbook, data_dir):
    doc = data_dir / "docs" / "upgrade.en.md"
    doc.write_text("# Upgrading Lumen Gateway\n\nNothing left here.\n", encoding="utf-8")
    target = ingest(handbook.workspace, [data_dir / "docs"], name="docs", chunk_size=120)
    result = handbook("remap", "--dataset", "faq", "--kb", target.snapshot_id, code=1)
    assert "unmapped 0" not in result.stdout and "its text is not in the snapshot" in result.stdout
    lost = [i for i in DatasetStore(handbook.workspace).items("faq") if i.status == "needs_evidence"]
    assert lost and all(any(e.located_by == "unmapped" and not e.chunk_ids for e in i.evidence) for i in lost)


# -- a changed number is a changed fact ----------------------------------------------------------

def test_a_quote_whose_number_changed_is_not_rebound_and_goes_to_review(handbook, data_dir):
    workspace = handbook.workspace
    doc = data_dir / "docs" / "errors.zh.md"
    doc.write_text(doc.read_text(encoding="utf-8").replace("每分钟 600 次请求", "每分钟 900 次请求"), encoding="utf-8")
    upgrade = data_dir / "docs" / "upgrade.en.md"
    upgrade.write_text(upgrade.read_text(encoding="utf-8").replace("from 15 seconds to 30 seconds",
                                                                   "from 15 seconds to 60 seconds"), encoding="utf-8")
    ingest(workspace, [data_dir / "docs"], name="docs", chunk_size=120)
    before = _evidence(workspace)
    result = handbook("remap", "--dataset", "faq", "--kb", "docs", code=1)
    line = result.stdout.splitlines()[0]
    assert "changed 2; unmapped 0" in line and "fuzzy" not in line        # never counted as found by fuzzy
    assert "600" in result.stdout and "900" in result.stdout and "600 ≠ 900" in result.stdout
    items = {i.id: i for i in DatasetStore(workspace).items("faq")}
    t3 = items["t-3"]
    e1 = t3.evidence[0]
    assert (e1.text, e1.chunk_ids, e1.located_by) == ("默认限额为每个密钥每分钟 600 次请求", [], "unmapped")  # kept as quoted
    assert (e1.doc_id, e1.start, e1.end) == (before[("t-3", "e1")].doc_id, before[("t-3", "e1")].start,
                                             before[("t-3", "e1")].end)
    assert t3.evidence[1].chunk_ids and t3.evidence[1].located_by in ("span", "exact")   # 6000 is unchanged
    assert t3.status == "needs_adjudication"
    reason = t3.status_history[-1].reason
    assert "e1" in reason and "600 次请求" in reason and "900 次请求" in reason and "600 ≠ 900" in reason
    t2 = items["t-2"]
    assert t2.status == "needs_adjudication" and "30 ≠ 60" in t2.status_history[-1].reason
    assert items["t-1"].status == "draft"
    # run again: the same finding, recorded once
    handbook("remap", "--dataset", "faq", "--kb", "docs", code=1)
    again = {i.id: i for i in DatasetStore(workspace).items("faq")}["t-3"]
    assert len(again.status_history) == len(t3.status_history)


def test_the_returned_report_puts_old_and_new_text_side_by_side(handbook, data_dir):
    workspace = handbook.workspace
    doc = data_dir / "docs" / "errors.zh.md"
    doc.write_text(doc.read_text(encoding="utf-8").replace("LG-4031 表示访问令牌已过期。", "LG-4039 表示访问令牌已过期。"),
                   encoding="utf-8")
    target = ingest(workspace, [data_dir / "docs"], name="docs", chunk_size=120)
    path = workspace.datasets_dir / "faq" / "items.jsonl"
    unchanged = path.read_bytes()
    report = remap(workspace, dataset="faq", kb=target.snapshot_id, dry_run=True)
    assert path.read_bytes() == unchanged
    (changed,) = [c for c in report.changed if c.item_id == "t-1"]
    assert (changed.old_text, changed.new_text) == ("LG-4031 表示访问令牌已过期。", "LG-4039 表示访问令牌已过期。")
    assert changed.differs == "4031 ≠ 4039" and changed.located_by == "fuzzy" and changed.doc_id == "errors.zh.md"
    assert not report.mapped.get("fuzzy")


# -- re-chunking never merges separate facts -------------------------------------------------------

FACTS_ZH = [
    "港珠澳大桥于 2018 年 10 月 23 日正式开通。", "大桥全长 55 公里，是世界上最长的跨海大桥。",
    "主桥为三座斜拉桥，最大跨径为 458 米。", "海底隧道长 6.7 公里，由 33 节沉管组成。",
    "大桥的设计使用寿命为 120 年。", "桥面按双向六车道高速公路标准建设。",
    "设计时速为每小时 100 公里。", "大桥可以抵御 16 级台风和 8 级地震。",
    "工程总投资约为 1269 亿元人民币。", "人工岛的面积各约 10 万平方米。",
    "大桥连接香港、珠海和澳门三地。", "通车后，从香港到珠海的车程缩短到约 45 分钟。",
]


def _bridge_workspace(workspace, tmp_path):
    """A long Chinese page (four paragraphs of three facts, filler between) chunked by paragraph, and
    one item quoting all twelve facts."""
    docs = tmp_path / "docs"
    docs.mkdir()
    filler = "以下内容摘自公开的工程资料，供内部培训使用。"
    paragraphs = [filler + "".join(FACTS_ZH[n:n + 3]) + filler for n in range(0, 12, 3)]
    (docs / "bridge.zh.md").write_text("# 港珠澳大桥\n\n" + "\n\n".join(paragraphs) + "\n", encoding="utf-8")
    source = ingest(workspace, [docs], name="bridge", chunker="structure", chunk_size=200)
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps({"id": "facts", "question": "港珠澳大桥的主要数据有哪些？", "evidence": FACTS_ZH},
                               ensure_ascii=False) + "\n", encoding="utf-8")
    from curate.dataset import import_items
    import_items(workspace, path, dataset="bridge", source="human", kb="bridge")
    return docs, source


def test_rechunking_through_quotes_keeps_every_required_group(workspace, tmp_path):
    """Windows of 24 characters with 4 of overlap cut through most quotes: many evidence become partial
    and share boundary chunks with their neighbours; still twelve facts, twelve required groups."""
    from curate.records import item_groups
    docs, _ = _bridge_workspace(workspace, tmp_path)
    (item,) = DatasetStore(workspace).items("bridge")
    assert len(item_groups(item)) == 12
    target = ingest(workspace, [docs], name="bridge", chunker="fixed", chunk_size=24, overlap=4)
    report = remap(workspace, dataset="bridge", kb=target.snapshot_id)
    assert report.unmapped == [] and report.changed == [] and report.groups_changed == []
    (item,) = DatasetStore(workspace).items("bridge")
    partial = [e for e in item.evidence if e.partial]
    shared = {c for e in item.evidence for c in e.chunk_ids if sum(c in f.chunk_ids for f in item.evidence) > 1}
    assert len(partial) >= 10 and len(shared) >= 6       # the cut really went through quotes (11 and 8)
    assert len(item_groups(item)) == 12
    assert item.status == "draft"


def test_an_item_whose_group_count_changes_is_reported(workspace, tmp_path, curate):
    """Two quotes of one sentence (one a little shorter) in two documents are two groups until the
    target snapshot knows the chunks are copies: then they are one, and remap says 2 -> 1."""
    from curate.checks.copies import chunk_groups, write_chunk_groups
    from curate.index.kb_index import KBIndex
    from curate.dataset import import_items
    from tests.support.copies import ingest_copied_pages
    sentence = ingest_copied_pages(workspace, tmp_path)
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps({"id": "refund", "question": "退款要在多久内申请？", "evidence": [
        {"text": sentence, "doc_id": "a.zh.md"}, {"text": sentence[2:], "doc_id": "b.zh.md"}]},
        ensure_ascii=False) + "\n", encoding="utf-8")
    import_items(workspace, path, dataset="shop", source="human", kb="shop")
    docs = tmp_path / "docs"                  # the folder ingest_copied_pages wrote
    (docs / "c.en.md").write_text("# Shipping\n\nOrders ship within two working days.", encoding="utf-8")
    target = ingest(workspace, [docs], name="shop", chunk_size=60)
    assert target.snapshot_id != DatasetStore(workspace).meta("shop").kb_snapshot
    index = KBIndex(workspace, target.snapshot_id)
    groups, withheld = chunk_groups(index)
    write_chunk_groups(index, groups, withheld, 90.0, [])
    result = curate("remap", "--dataset", "shop", "--kb", target.snapshot_id, code=1)
    assert "required groups changed in 1 items" in result.stdout and "refund" in result.stdout
    (item,) = DatasetStore(workspace).items("shop")
    assert "required evidence groups 2 -> 1" in item.status_history[-1].reason and item.status == "draft"
    report = remap(workspace, dataset="shop", kb=target.snapshot_id, dry_run=True)
    assert report.groups_changed == []                   # already 1: nothing changes a second time
