"""BM25 over shards (issue 29): the ranks, scores and top k of a snapshot in many shards are exactly those of
one BM25 index of every chunk, ties included; each shard's terms are counted once and kept, and a count killed
half way resumes from the shards it counted on either engine."""

from __future__ import annotations

import hashlib

import numpy as np

from curate.engine import LocalEngine
from curate.index.kb_index import KBIndex
from curate.index.shard_bm25 import ShardBM25, build_terms
from curate.kb.store import SnapshotStore
from curate.records import ChunkerSettings
from curate.workspace import Workspace, init_workspace

from tests.support.killed import kill_when, stage_script
from tests.support.many_chunks import many_chunks
from tests.support.messy_kb import messy_kb


def _write(workspace: Workspace, chunks, **layout) -> str:
    return SnapshotStore(workspace).write("kb", [], chunks, ChunkerSettings(kind="imported"), **layout).snapshot_id


def test_bm25_over_shards_ranks_as_one_index(tmp_path):
    chunks, items, _ = messy_kb()
    one, many = init_workspace(tmp_path / "one"), init_workspace(tmp_path / "many")
    snapshot = _write(one, chunks)
    assert _write(many, chunks, parquet_from=0, shard_size=200) == snapshot
    shards = SnapshotStore(many).shards(snapshot)
    assert len(shards) >= 10 and sum(bool(s.foreign) for s in shards) >= 5   # documents span shards
    questions = [i.question for i in items] + ["", "？", "refund", "2025 travel policy", "退款 申请"]
    whole = KBIndex(one, snapshot).bm25
    sharded = ShardBM25(KBIndex(many, snapshot), LocalEngine(2))
    for k in (10, 300):   # 300: more than a shard holds
        positions, scores = whole.search(questions, k)
        found_positions, found_scores = sharded.search(questions, k)
        assert found_scores.dtype == scores.dtype == np.float32
        assert np.array_equal(found_scores, scores) and np.array_equal(found_positions, positions), k
    # the scores are bm25s's own, and equal scores are many: the tie rule (the earlier chunk first) decides
    tokens = [["refund"], ["2025", "travel", "policy"]]
    _, expected = whole.retriever.retrieve(tokens, k=300, show_progress=False, n_threads=0)
    assert np.array_equal(sharded.search(["refund", "2025 travel policy"], 300)[1], expected)
    tied = [n for n in range(len(questions)) if len(set(scores[n][scores[n] > 0].tolist())) < (scores[n] > 0).sum()]
    assert len(tied) > 20
    # "refund": the ten chunks of the manual score the same, in chunk order, then chunks of no score, in order
    refund, refund_scores = positions[len(questions) - 3], scores[len(questions) - 3]
    assert len(set(refund_scores[:10].tolist())) == 1 and (refund_scores[10:] == 0).all()
    assert (np.diff(refund[:10]) > 0).all() and (np.diff(refund[10:]) > 0).all()


def test_terms_are_counted_once_and_kept(tmp_path):
    chunks, _, _ = messy_kb(count=1_200)
    workspace = init_workspace(tmp_path / "many")
    snapshot = _write(workspace, chunks, parquet_from=0, shard_size=200)
    index = KBIndex(workspace, snapshot)
    count = len(SnapshotStore(workspace).shards(snapshot))
    assert build_terms(index, LocalEngine(2)) == (count, 0)
    assert build_terms(index, LocalEngine(2)) == (0, count)


def _term_files(workspace: Workspace, snapshot: str) -> dict[str, str]:
    folder = workspace.kb_dir / "index" / snapshot / "shards"
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.glob("*/bm25-v*/*")) if p.name != "meta.json"}


def test_a_killed_count_resumes_from_its_shards_on_either_engine(tmp_path, ray_address):
    chunks, _, _ = many_chunks(24_000)
    fresh = init_workspace(tmp_path / "fresh")
    snapshot = _write(fresh, chunks, shard_size=2_000)
    shards = len(SnapshotStore(fresh).shards(snapshot))
    assert build_terms(KBIndex(fresh, snapshot), LocalEngine(2)) == (shards, 0)
    expected = _term_files(fresh, snapshot)
    for name, engine in (("local", "LocalEngine(1)"), ("ray", f"open_engine(EngineSettings('ray', {ray_address!r}))")):
        workspace = init_workspace(tmp_path / name)
        _write(workspace, chunks, shard_size=2_000)
        script = stage_script(f"build_terms(KBIndex(Workspace(Path({str(workspace.root)!r})), {snapshot!r}), ENGINE)",
                              "from curate.index.kb_index import KBIndex\nfrom curate.index.shard_bm25 import build_terms\n"
                              "from curate.workspace import Workspace", engine)
        counted = lambda: len(list((workspace.kb_dir / "index" / snapshot / "shards").glob("*/bm25-v*/meta.json")))  # noqa: E731
        kill_when(script, lambda: counted() >= 3, "shard counted")
        kept = counted()
        built, done = build_terms(KBIndex(workspace, snapshot), LocalEngine(2))
        assert done == kept and built == shards - kept and built > 0, name
        assert _term_files(workspace, snapshot) == expected, name   # the same terms, counted once each
