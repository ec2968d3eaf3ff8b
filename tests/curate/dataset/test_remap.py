import json

from curate.dataset import DatasetStore
from curate.kb import SnapshotStore, import_chunks, ingest
from curate.dataset import remap


def _evidence(workspace):
    return {(i.id, e.evidence_id): e for i in DatasetStore(workspace).items("faq") for e in i.evidence}


def test_rechunked_snapshot_keeps_every_evidence(handbook, data_dir):
    workspace = handbook.workspace
    before = _evidence(workspace)
    target = ingest(workspace, [data_dir / "docs"], name="docs", chunker="fixed", size=40, overlap=8)
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
    target = ingest(workspace, [data_dir / "docs"], name="docs", size=120)
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
    target = ingest(workspace, [data_dir / "docs"], name="docs", chunker="fixed", size=50, overlap=0)
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
    target = ingest(workspace, [data_dir / "docs"], name="docs", chunker="fixed", size=50, overlap=0)
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
    target = ingest(workspace, [data_dir / "docs"], name="docs", chunker="structure", size=60)
    report = remap(workspace, dataset="faq", kb=target.snapshot_id)
    assert report.unmapped == []
    for evidence in _evidence(workspace).values():
        assert evidence.chunk_ids, evidence
    crossing = [e for e in _evidence(workspace).values() if e.partial]
    assert crossing and all(len(e.chunk_ids) >= 2 for e in crossing)


def test_remap_with_lost_text_exits_1_and_lists_why(handbook, data_dir):
    doc = data_dir / "docs" / "upgrade.en.md"
    doc.write_text("# Upgrading Lumen Gateway\n\nNothing left here.\n", encoding="utf-8")
    target = ingest(handbook.workspace, [data_dir / "docs"], name="docs", size=120)
    result = handbook("remap", "--dataset", "faq", "--kb", target.snapshot_id, code=1)
    assert "unmapped 0" not in result.stdout and "its text is not in the snapshot" in result.stdout
    lost = [i for i in DatasetStore(handbook.workspace).items("faq") if i.status == "needs_evidence"]
    assert lost and all(any(e.located_by == "unmapped" and not e.chunk_ids for e in i.evidence) for i in lost)
