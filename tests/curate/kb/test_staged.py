"""Ingest of a large KB over an engine (issue 29): the same snapshot as one process, byte for byte (id,
manifest, shard files, a document cut across shards), on the local engine and on a local Ray cluster; a
killed ingest resumes from the batches and shards it completed; the command says where it ran, and names a
bad line as one process does."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from curate.engine import LocalEngine
from curate.kb import chunk_documents, read_documents
from curate.kb import store as store_module
from curate.kb.scope_fields import ScopeReader
from curate.kb.shards import foreign_positions
from curate.kb.staged import contiguous_foreign, plan_batches
from curate.kb.documents import document_parts
from curate.kb.store import SnapshotStore, ingest
from curate.records import ChunkerSettings
from curate.scope import read_scope_settings
from curate.workspace import Workspace, init_workspace

from tests.support.killed import kill_when
from tests.support.many_documents import many_documents


def _one_process(workspace: Workspace, docs: Path, shard_size: int):
    """The snapshot as the command wrote it before batches: every document and chunk in one process."""
    reader = ScopeReader(read_scope_settings(workspace))
    documents = read_documents([docs], "utf-8", reader)
    settings = ChunkerSettings(kind="structure", size=200)
    return SnapshotStore(workspace).write("kb", documents, chunk_documents(documents, settings), settings,
                                          sources=[str(docs)], scope=reader.settings, shard_size=shard_size)


def _files(workspace: Workspace, snapshot_id: str) -> dict[str, str]:
    folder = workspace.kb_dir / "snapshots" / snapshot_id
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _manifest(workspace: Workspace, snapshot_id: str) -> dict:
    data = json.loads((workspace.kb_dir / "snapshots" / snapshot_id / "manifest.json").read_text(encoding="utf-8"))
    data.pop("created_at")
    return data


def _same(one: Workspace, other: Workspace, snapshot_id: str) -> None:
    files = _files(other, snapshot_id)
    assert _manifest(other, snapshot_id) == _manifest(one, snapshot_id)
    assert {k: v for k, v in files.items() if k != "manifest.json"} == {
        k: v for k, v in _files(one, snapshot_id).items() if k != "manifest.json"}
    assert not (other.kb_dir / "ingesting").exists()   # the staged batches and shards are gone


def test_contiguous_foreign_is_foreign_positions_of_documents_listed_whole():
    ordinals = [0] * 3 + [1] * 9 + [2] + [3] * 4
    bounds = [(0, 3), (3, 7), (7, 11), (11, 13), (13, 17)]
    assert contiguous_foreign(ordinals, bounds) == foreign_positions(ordinals, bounds)
    assert contiguous_foreign(ordinals, bounds)[1] == [7, 8, 9, 10, 11]


def test_a_large_jsonl_file_is_cut_between_lines(tmp_path):
    path = tmp_path / "docs.jsonl"
    lines = [json.dumps({"doc_id": f"d{n}", "text": "文" * n}, ensure_ascii=False) + "\n" for n in range(300)]
    path.write_text("".join(lines), encoding="utf-8")
    batches = plan_batches(document_parts([path]), batch_bytes=5_000)
    assert len(batches) > 10
    pieces = [path.read_bytes()[p.start:p.end] for batch in batches for p in batch]
    assert b"".join(pieces) == path.read_bytes() and all(piece.endswith(b"\n") for piece in pieces)
    assert plan_batches(document_parts([path]), batch_bytes=5_000, encoding="utf-16") == [document_parts([path])]


def test_100000_chunks_are_the_snapshot_one_process_writes_on_the_local_engine_and_on_ray(tmp_path, ray_address):
    docs = many_documents(tmp_path / "docs", 16_000, long=25_000)
    one = init_workspace(tmp_path / "one")
    expected = _one_process(one, docs, shard_size=10_000)
    assert expected.chunks > 100_000 and len(expected.shards) == 11
    assert any(s.foreign for s in expected.shards)   # the long document is cut: its chunks in two shards
    assert expected.scope.superseded and expected.scope.unknown_superseded == ["gone"]
    for engine in ("local", ray_address):
        workspace = init_workspace(tmp_path / engine.replace(":", "-"))
        where = []
        manifest = ingest(workspace, [docs], name="kb", chunk_size=200, shard_size=10_000, engine=engine,
                          note=where.append)
        assert manifest.snapshot_id == expected.snapshot_id, engine
        _same(one, workspace, expected.snapshot_id)
        assert where[0].startswith("read and chunked 10 batches into 11 shards on "), where


class _Counting(LocalEngine):
    """The local engine, counting the tasks of each stage it is given."""

    def __init__(self, workers: int, seen: dict):
        super().__init__(workers)
        self.seen = seen

    def map(self, fn, tasks, **options):
        self.seen[options["label"]] = len(tasks)
        return super().map(fn, tasks, **options)


def _staged(workspace: Workspace) -> int:
    return len(list(workspace.kb_dir.glob("ingesting/*/batches/[0-9]*/summary.json")))


def test_a_killed_ingest_resumes_from_the_batches_it_completed_on_either_engine(tmp_path, ray_address,
                                                                               monkeypatch):
    docs = many_documents(tmp_path / "docs", 3_000, long=6_000)
    one = init_workspace(tmp_path / "one")
    expected = _one_process(one, docs, shard_size=2_000)
    options = dict(name="kb", chunk_size=200, shard_size=2_000, batch_bytes=200_000)
    total = len(plan_batches(document_parts([docs]), 200_000))
    assert total >= 20
    monkeypatch.setenv("CURATE_LOCK_TIMEOUT", "30")   # a lock the killed command left held fails in 30 s
    for engine in ("local", ray_address):
        workspace = init_workspace(tmp_path / engine.replace(":", "-"))
        script = ("from pathlib import Path\nfrom curate.kb.store import ingest\n"
                  "from curate.workspace import Workspace\n"
                  f"ingest(Workspace(Path({str(workspace.root)!r})), [Path({str(docs)!r})], engine={engine!r}, "
                  f"**{options!r})\n")
        kill_when(script, lambda: _staged(workspace) >= 3, "staged batch")
        kept = _staged(workspace)
        assert not (workspace.kb_dir / "snapshots").exists() or not any((workspace.kb_dir / "snapshots").iterdir())
        seen: dict[str, int] = {}
        monkeypatch.setattr(store_module, "open_engine", lambda *_: _Counting(2, seen))
        manifest = ingest(workspace, [docs], **options)
        assert manifest.snapshot_id == expected.snapshot_id, engine
        assert seen["reading and chunking"] == total - kept and kept >= 3, (engine, seen, kept)
        _same(one, workspace, expected.snapshot_id)


@pytest.fixture(scope="module")
def large_docs(tmp_path_factory) -> Path:
    """Input enough for 10,000 chunks of 200 characters: ingested on an engine."""
    return many_documents(tmp_path_factory.mktemp("large") / "docs", 2_000, long=6_000)


def test_the_command_says_where_it_ingested(curate, large_docs, ray_address, data_dir):
    result = curate("kb", "ingest", large_docs, "--name", "big", "--chunk-size", "200", "--engine", ray_address)
    assert f"note: read and chunked 2 batches into 1 shard on ray at {ray_address}" in result.stderr
    snapshot = result.stdout.split("snapshot ")[1].split()[0]
    local = curate("kb", "ingest", large_docs, "--name", "again", "--chunk-size", "200", "--engine", "local")
    assert local.stdout.split("snapshot ")[1].split()[0] == snapshot and "on local\n" in local.stderr
    (curate.workspace.root / "curate.toml").write_text("[engine]\nworkers = 2\n", encoding="utf-8")
    toml = curate("kb", "ingest", large_docs, "--name", "third", "--chunk-size", "200")
    assert "on local, 2 workers" in toml.stderr
    small = curate("kb", "ingest", data_dir / "docs", "--name", "small", "--engine", ray_address)
    assert small.stderr == ""   # a small KB: in the command's own process, as before
    bad = curate("kb", "ingest", large_docs, "--name", "x", "--chunk-size", "200", "--engine", "nowhere", code=2)
    assert "unknown engine 'nowhere'" in bad.stderr


def test_a_bad_line_of_a_large_ingest_is_named_as_one_process_names_it(curate, large_docs, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    lines = (large_docs / "docs.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    lines[1500] = json.dumps({"doc_id": "d3", "text": "again"}) + "\n"       # a doc_id of another batch
    lines[1700] = json.dumps({"doc_id": "d1700", "title": 3, "text": "x"}) + "\n"
    (docs / "docs.jsonl").write_text("".join(lines), encoding="utf-8")
    result = curate("kb", "ingest", docs, "--name", "bad", "--chunk-size", "200", code=2)
    assert result.stderr.splitlines()[0] == (f"error: {docs / 'docs.jsonl'}:1501: field 'doc_id': duplicate doc_id "
                                            f"'d3' (first at {docs / 'docs.jsonl'}:4)")
    assert f"{docs / 'docs.jsonl'}:1701: field 'title'" in result.stderr
    assert not (curate.workspace.kb_dir / "ingesting").exists()
