import json

import pytest

from curate.dataset import DatasetStore
from curate.dataset import import_items
from curate.errors import InputError, InvalidRecords
from curate.kb import SnapshotStore


def _items(workspace, name="faq"):
    return {i.id: i for i in DatasetStore(workspace).items(name)}


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_import_reads_user_field_names_and_locates_evidence(handbook):
    workspace = handbook.workspace
    items = _items(workspace)
    assert list(items) == ["t-1", "t-2", "t-3", "t-4", "t-5"]
    documents = {d.doc_id: d.text for d in SnapshotStore(workspace).documents(items["t-1"].kb_snapshot)}
    chunks = {c.chunk_id: c for c in SnapshotStore(workspace).chunks(items["t-1"].kb_snapshot)}
    for item in items.values():
        for e in item.evidence:
            assert documents[e.doc_id][e.start:e.end] == e.text
            for chunk_id in e.chunk_ids:
                chunk = chunks[chunk_id]
                assert chunk.doc_id == e.doc_id
                assert chunk.start <= e.start and e.end <= chunk.end or e.partial
    t1, t2, t3, t4, t5 = (items[f"t-{n}"] for n in range(1, 6))
    assert (t1.language, t1.qtype, t1.tags, [k.text for k in t1.key_points]) == (
        "zh", "confusable", ["auth"], ["访问令牌已过期", "重新登录"])
    assert (t2.question, t2.reference_answer, t2.language) == (
        "What does version 3.2 change about the upstream timeout?", "It raises the default from 15 to 30 seconds.", "en")
    assert [e.located_by for e in t2.evidence] == ["exact"]
    assert [(e.grade, e.located_by) for e in t3.evidence] == [(2, "exact"), (1, "exact")]
    assert t3.qtype == "multi_evidence"  # two facts, both quoted from one chunk: two groups
    assert [(e.located_by, e.text) for e in t4.evidence] == [("normalized", "Only administrators can run the upgrade command;")]
    assert (t5.answerable, t5.qtype, t5.evidence, t5.status) == (False, "unanswerable", [], "draft")
    assert t1.provenance.line == 1 and t1.provenance.file.endswith("items.jsonl")
    assert t1.status_history[0].status == "draft"


def test_fuzzy_quotes_are_found_with_their_score(workspace, handbook, tmp_path):
    path = _write_jsonl(tmp_path / "fuzzy.jsonl", [
        {"question": "签名无效是哪个错误码？", "evidence": ["LG-4032 表示访问令牌的签名无效；请检查网关的签名秘钥配置。"]}])
    import_items(workspace, path, dataset="faq", source="human")
    item = next(i for i in _items(workspace).values() if i.question.startswith("签名"))
    (evidence,) = item.evidence
    assert evidence.located_by == "fuzzy" and 90 <= evidence.match_score < 100
    assert evidence.text == "LG-4032 表示访问令牌的签名无效；请检查网关的签名密钥配置。"
    assert item.id.startswith("q-")


def test_missing_evidence_names_file_line_and_field_and_writes_nothing(workspace, handbook, tmp_path):
    path = _write_jsonl(tmp_path / "new.jsonl", [
        {"question": "ok?", "evidence": ["LG-4031 表示访问令牌已过期。"]},
        {"question": "bad?", "reference_contexts": ["LG-4031", "This sentence is nowhere in the knowledge base."]}])
    before = (workspace.datasets_dir / "faq" / "items.jsonl").read_bytes()
    with pytest.raises(InvalidRecords) as info:
        import_items(workspace, path, dataset="faq", source="human")
    (error,) = info.value.errors
    assert (error.file, error.line, error.field) == (str(path), 2, "reference_contexts[1]")
    assert "not found in the KB snapshot" in error.message
    assert (workspace.datasets_dir / "faq" / "items.jsonl").read_bytes() == before


def test_bad_lines_each_get_one_located_error(curate, handbook, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([
        '{"id": "n-1", "question": "fine?", "answerable": false}',
        '{"id": "n-2", "question": "broken", ',
        '{"id": "n-3", "answer": "no question"}',
        '{"id": "n-1", "question": "again?", "answerable": false}',
        '{"id": "t-1", "question": "taken id", "answerable": false}',
        '{"id": "n-4", "question": "q", "qtype": "trivia", "answerable": false}',
        '{"id": "n-5", "question": "q", "answerable": "maybe"}',
        '{"id": "n-6", "question": "q", "reference_context_ids": ["no-such-chunk"]}',
        '{"id": "n-7", "question": "q", "key_points": [{"text": "x", "evidence_ids": ["e9"]}]}',
    ]) + "\n", encoding="utf-8")
    result = curate("import", path, "--dataset", "faq", "--source", "human", code=2)
    lines = result.stderr.strip().splitlines()
    assert lines[0] == f"error: {path}:2: not valid JSON (Expecting property name enclosed in double quotes at column 37)"
    assert lines[1] == f"error: {path}:3: field 'question': missing or empty"
    assert lines[2] == f"error: {path}:4: field 'id': duplicate id 'n-1' (first at {path}:1)"
    assert lines[3] == f"error: {path}:5: field 'id': id 't-1' is already in the dataset"
    assert lines[4].startswith(f"error: {path}:6: field 'qtype': unknown qtype 'trivia'")
    assert lines[5] == f"error: {path}:7: field 'answerable': must be true or false, got 'maybe'"
    assert lines[6] == f"error: {path}:8: field 'reference_context_ids[0]': chunk 'no-such-chunk' is not in the KB snapshot"
    assert lines[7].startswith(f"error: {path}:9: field 'key_points[0].evidence_ids': evidence_ids must name")
    assert lines[8] == "error: 8 invalid records; nothing was written (--skip-invalid imports the valid ones)"
    assert len(_items(curate.workspace)) == 5
    result = curate("import", path, "--dataset", "faq", "--source", "human", "--skip-invalid")
    assert result.stderr.count("skipped: ") == 8 and "skipped 8 invalid record(s)" in result.stderr
    assert set(_items(curate.workspace)) == {"t-1", "t-2", "t-3", "t-4", "t-5", "n-1"}


def test_gbk_file_gets_a_clear_error_and_imports_with_encoding(curate, handbook, tmp_path):
    path = tmp_path / "gbk.jsonl"
    path.write_bytes(('{"question": "ok", "answerable": false}\n'
                      '{"question": "默认每分钟可以发多少次请求？", "evidence": ["默认限额为每个密钥每分钟 600 次请求"]}\n')
                     .encode("gbk"))
    result = curate("import", path, "--dataset", "faq", "--source", "human", code=2)
    assert result.stderr.strip() == (f"error: {path}:2: not valid utf-8 text at byte 56 (GBK? pass --encoding gbk)")
    curate("import", path, "--dataset", "faq", "--source", "human", "--encoding", "gbk")
    assert any(i.question == "默认每分钟可以发多少次请求？" and i.evidence for i in _items(curate.workspace).values())


def test_csv_with_lists_tags_and_field_map(workspace, handbook, tmp_path):
    path = tmp_path / "prod.csv"
    path.write_text(
        "ticket,user_question,ground_truth,reference_contexts,tags\n"
        'T-9,"Who can upgrade?","Administrators.","[""Only administrators can run the upgrade command""]",upgrade;roles\n'
        'T-10,"令牌过期怎么办？",重新登录。,LG-4031 表示访问令牌已过期。请重新登录以获取新的令牌！,auth\n',
        encoding="utf-8")
    report = import_items(workspace, path, dataset="faq", source="production",
                          mapping=["user_question=question", "ticket=id"])
    assert report.imported == ["T-9", "T-10"]
    items = _items(workspace)
    assert (items["T-9"].source, items["T-9"].tags, items["T-9"].evidence[0].located_by) == (
        "production", ["upgrade", "roles"], "exact")
    assert items["T-10"].evidence[0].text == "LG-4031 表示访问令牌已过期。请重新登录以获取新的令牌！"
    assert items["T-10"].provenance.format == "csv" and items["T-10"].provenance.line == 3


def test_map_to_unknown_field_is_refused(workspace, handbook, tmp_path):
    with pytest.raises(InputError, match="not a known field"):
        import_items(workspace, tmp_path / "x.jsonl", dataset="faq", source="human", mapping=["a=b"])


def test_items_without_evidence_need_evidence(workspace, handbook, tmp_path):
    path = _write_jsonl(tmp_path / "q.jsonl", [{"question": "How do I rotate keys?"}])
    import_items(workspace, path, dataset="faq", source="synthetic")
    item = next(i for i in _items(workspace).values() if i.source == "synthetic")
    assert (item.status, item.answerable) == ("needs_evidence", True)


def test_dataset_stays_on_its_snapshot(workspace, handbook, data_dir, curate):
    curate("kb", "ingest", data_dir / "docs", "--name", "docs", "--chunk-size", "60")
    path = _write_jsonl(data_dir / "more.jsonl", [{"question": "x?", "answerable": False}])
    result = curate("import", path, "--dataset", "faq", "--source", "human", "--kb", "docs", code=2)
    assert "run `curate remap --dataset faq" in result.stderr


PRICES = ("The Pro plan costs $19.99 a month and includes 5 seats. Error LG-4032 means the token signature is "
          "invalid. Since 2025 the free tier ends after 30 days. Refunds are possible within 14 days.")


def _priced_kb(workspace, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pricing.en.md").write_text(PRICES, encoding="utf-8")
    from curate.kb import ingest
    ingest(workspace, [docs], name="pricing", chunk_size=400)


@pytest.mark.parametrize("quote, differs", [
    ("The Pro plan costs $89.99 a month and includes 5 seats.", "89.99 ≠ 19.99"),
    ("Error LG-4031 means the token signature is invalid.", "4031 ≠ 4032"),
    ("Since 2023 the free tier ends after 30 days.", "2023 ≠ 2025"),
    ("Refunds are not possible within 14 days.", "not ≠ (none)"),
])
def test_a_quote_found_only_with_another_number_is_refused_never_bound(workspace, tmp_path, quote, differs):
    """Found fuzzily, "$89.99" would bind to the KB's "$19.99": another fact, named and refused."""
    _priced_kb(workspace, tmp_path)
    path = _write_jsonl(tmp_path / "q.jsonl", [{"question": "How much?", "evidence": [quote]}])
    with pytest.raises(InvalidRecords) as info:
        import_items(workspace, path, dataset="prices", source="human", kb="pricing")
    (error,) = info.value.errors
    assert (error.line, error.field) == (1, "evidence[0]")
    assert differs in error.message and "not bound" in error.message
    assert not (workspace.datasets_dir / "prices" / "items.jsonl").exists()


def test_a_fuzzy_quote_with_the_same_numbers_is_still_found(workspace, tmp_path):
    _priced_kb(workspace, tmp_path)
    path = _write_jsonl(tmp_path / "q.jsonl", [
        {"question": "How much?", "evidence": ["The Pro plan costs $19.99 per month and includes 5 seats."]}])
    import_items(workspace, path, dataset="prices", source="human", kb="pricing")
    (evidence,) = next(iter(_items(workspace, "prices").values())).evidence
    assert evidence.located_by == "fuzzy" and "$19.99" in evidence.text


def test_qtype_is_decided_after_evidence_reaches_chunk_copies(workspace, tmp_path):
    """Two quotes of one sentence in two exact-copy chunks (one quote a little shorter) are one fact:
    `single`, as the evidence groups count them once the copies are known."""
    from curate.checks.duplicates import check_dups
    from curate.records import item_groups
    from tests.support.copies import ingest_copied_pages
    sentence = ingest_copied_pages(workspace, tmp_path)
    first = _write_jsonl(tmp_path / "first.jsonl", [{"question": "售后？", "evidence": [sentence]}])
    import_items(workspace, first, dataset="shop", source="human", kb="shop")
    check_dups(workspace, dataset="shop", kb=True, semantic=False)
    path = _write_jsonl(tmp_path / "q.jsonl", [{"id": "refund", "question": "退款要在多久内申请？", "evidence": [
        {"text": sentence, "doc_id": "a.zh.md"}, {"text": sentence[2:], "doc_id": "b.zh.md"}]}])
    import_items(workspace, path, dataset="shop", source="human")
    item = _items(workspace, "shop")["refund"]
    assert [e.doc_id for e in item.evidence] == ["a.zh.md", "b.zh.md"]
    assert set(item.evidence[0].chunk_ids) == set(item.evidence[1].chunk_ids)    # extended to the copy
    assert len(item_groups(item)) == 1 and item.qtype == "single"
