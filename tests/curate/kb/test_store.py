import json

import pytest

from curate.errors import InvalidRecords, NotFound
from curate.kb import SnapshotStore, import_chunks, ingest


def test_same_content_gives_same_snapshot_id(workspace, data_dir):
    first = ingest(workspace, [data_dir / "docs"], name="docs", chunker="structure", chunk_size=120)
    second = ingest(workspace, [data_dir / "docs"], name="docs-again", chunker="structure", chunk_size=120)
    assert first.snapshot_id == second.snapshot_id
    assert SnapshotStore(workspace).all_ids() == [first.snapshot_id]


def test_changed_content_or_chunking_gives_new_snapshot(workspace, data_dir):
    base = ingest(workspace, [data_dir / "docs"], name="docs", chunk_size=120).snapshot_id
    other_size = ingest(workspace, [data_dir / "docs"], name="docs", chunk_size=60).snapshot_id
    (data_dir / "docs" / "upgrade.en.md").write_text("# Upgrading\n\nNothing to see.\n", encoding="utf-8")
    other_text = ingest(workspace, [data_dir / "docs"], name="docs", chunk_size=120).snapshot_id
    assert len({base, other_size, other_text}) == 3
    store = SnapshotStore(workspace)
    assert store.names()["docs"] == [base, other_size, other_text]
    assert store.resolve("docs") == other_text
    assert store.resolve(f"docs@{base[3:9]}") == base
    assert store.resolve(base[:10]) == base


def test_jsonl_documents_and_bad_lines(workspace, tmp_path):
    good = tmp_path / "docs.jsonl"
    good.write_text('{"doc_id": "a", "text": "Alpha. Beta.", "title": "A", "metadata": {"version": "3.2"}}\n'
                    '{"doc_id": 7, "text": "第七篇。"}\n', encoding="utf-8")
    manifest = ingest(workspace, [good], name="j")
    chunks = SnapshotStore(workspace).chunks(manifest.snapshot_id)
    # `version` is a scope field: it moves out of metadata into the chunk's scope
    assert [(c.chunk_id, c.scope and c.scope.version, "version" in c.metadata) for c in chunks] == [
        ("a#0", "3.2", False), ("7#0", None, False)]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"doc_id": "a", "text": "x"}\n{"doc_id": "b"}\n{"doc_id": "a", "text": "y"}\n', encoding="utf-8")
    with pytest.raises(InvalidRecords) as info:
        ingest(workspace, [bad], name="bad")
    located = [e.located() for e in info.value.errors]
    assert located == [f"{bad}:2: field 'text': missing",
                       f"{bad}:3: field 'doc_id': duplicate doc_id 'a' (first at {bad}:1)"]


def test_production_chunks_are_kept_as_they_are(workspace, tmp_path):
    path = tmp_path / "chunks.jsonl"
    rows = [{"chunk_id": "p-1", "doc_id": "d", "text": "LG-4031 令牌过期。", "start": 0, "end": 13},
            {"chunk_id": "p-2", "doc_id": "d", "text": "其他内容", "metadata": {"acl": "admin"}}]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    manifest, skipped = import_chunks(workspace, path, name="prod")
    assert skipped == [] and manifest.chunks == 2 and manifest.chunker.kind == "imported"
    chunks = SnapshotStore(workspace).chunks(manifest.snapshot_id)
    assert [(c.chunk_id, c.text, c.start, c.metadata) for c in chunks] == [
        ("p-1", "LG-4031 令牌过期。", 0, {}), ("p-2", "其他内容", None, {"acl": "admin"})]


def test_production_chunk_validation(workspace, tmp_path):
    path = tmp_path / "chunks.jsonl"
    path.write_text('{"chunk_id": "a", "doc_id": "d", "text": "abc", "start": 0, "end": 5}\n'
                    '{"chunk_id": "b", "doc_id": "d", "text": "abc", "start": 0}\n'
                    'not json\n'
                    '{"chunk_id": "c", "doc_id": "d", "text": "ok"}\n'
                    '{"chunk_id": "c", "doc_id": "d", "text": "again"}\n', encoding="utf-8")
    with pytest.raises(InvalidRecords) as info:
        import_chunks(workspace, path, name="prod")
    assert [(e.line, e.field) for e in info.value.errors] == [(1, "end"), (2, "end"), (3, None), (5, "chunk_id")]
    assert SnapshotStore(workspace).all_ids() == []
    manifest, skipped = import_chunks(workspace, path, name="prod", skip_invalid=True)
    assert manifest.chunks == 1 and len(skipped) == 4


def test_unknown_snapshot(workspace):
    with pytest.raises(NotFound):
        SnapshotStore(workspace).resolve("nope")


def test_kb_commands(curate, data_dir):
    result = curate("kb", "ingest", data_dir / "docs", "--name", "docs", "--chunker", "fixed",
                    "--chunk-size", "100", "--overlap", "10")
    snapshot = result.stdout.split("snapshot ")[1].split()[0]
    listing = curate("kb", "list").stdout
    assert "docs" in listing and snapshot in listing and "fixed" in listing
    shown = curate("kb", "show", "docs").stdout
    assert snapshot in shown and "size=100" in shown and "overlap=10" in shown
    manifest = json.loads(curate("kb", "show", "docs", "--json").stdout)
    assert manifest["snapshot_id"] == snapshot and manifest["documents"] == 2
    assert "no KB snapshot 'other'" in curate("kb", "show", "other", code=2).stderr


def test_kb_chunks_lists_filters_and_prints_one_whole(curate, data_dir):
    curate("kb", "ingest", data_dir / "docs", "--name", "docs", "--chunk-size", "120")
    store = SnapshotStore(curate.workspace)
    chunks = store.chunks(store.resolve("docs"))
    listed = curate("kb", "chunks", "docs")
    rows = [line.split()[0] for line in listed.stdout.splitlines()[1:]]
    assert rows == [c.chunk_id for c in chunks]
    assert listed.stderr.startswith(f"{len(chunks)} chunks of {store.resolve('docs')}")
    first = chunks[0]
    assert f"{first.start}-{first.end}" in listed.stdout.splitlines()[1]
    english = curate("kb", "chunks", "docs", "--doc", "upgrade.en.md", "--json")
    lines = [json.loads(line) for line in english.stdout.splitlines()]
    assert [c["chunk_id"] for c in lines] == [c.chunk_id for c in chunks if c.doc_id == "upgrade.en.md"]
    assert lines[0]["text"] == next(c.text for c in chunks if c.doc_id == "upgrade.en.md")
    long = max(chunks, key=lambda c: len(c.text))
    whole = curate("kb", "chunks", "docs", long.chunk_id)
    assert whole.stdout.splitlines()[0] == f"{long.chunk_id} ({long.doc_id}, characters {long.start}-{long.end}, " \
                                          f"{len(long.text)} long)"
    assert whole.stdout.endswith(long.text + "\n")
    missing = curate("kb", "chunks", "docs", "--doc", "upgrade.md", code=2)
    assert missing.stderr.startswith("error: no doc 'upgrade.md' in KB snapshot ") and "upgrade.en.md" in missing.stderr
    curate("kb", "chunks", "docs", "nope#99", code=2)
