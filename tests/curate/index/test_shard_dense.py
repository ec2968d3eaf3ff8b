"""Chunk vectors over shards (issue 29, point 2): each shard embedded by a worker on either engine, resumed
from the shards and slices done when killed; dense ranks over the shards' vectors are those over one array of
every vector; `curate grade --dense --engine` embeds a KB in shards and ranks over it."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from curate.checks.difficulty.features import dense_rank
from curate.engine import EngineSettings, LocalEngine, open_engine
from curate.index.embeddings import load_model
from curate.index.kb_index import KBIndex
from curate.index.shard_dense import build_dense_shards, dense_ranks_over, shard_vectors
from curate.kb.store import SnapshotStore
from curate.records import ChunkerSettings
from curate.workspace import Workspace, init_workspace

from tests.support.killed import kill_when, stage_script
from tests.support.many_chunks import many_chunks
from tests.support.tiny_model import tiny_model


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> str:
    return str(tiny_model(tmp_path_factory.mktemp("model") / "tiny"))


def _write(workspace: Workspace, chunks, **layout) -> str:
    return SnapshotStore(workspace).write("kb", [], chunks, ChunkerSettings(kind="imported"), **layout).snapshot_id


def _vector_files(workspace: Workspace, snapshot: str) -> dict[str, bytes]:
    folder = workspace.kb_dir / "index" / snapshot / "shards"
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.glob("*/dense/[!.]*/vectors.npy"))}


def test_ranks_over_shards_are_the_ranks_over_every_vector():
    rng = np.random.default_rng(5)
    # vectors on a coarse grid: many equal scores, so the tie rule (the earlier chunk first) is exercised
    chunks = np.round(rng.standard_normal((700, 8)), 0).astype(np.float32)
    questions = np.round(rng.standard_normal((40, 8)), 0).astype(np.float32)
    gold = [set(rng.choice(700, size=int(rng.integers(1, 4)), replace=False).tolist()) for _ in range(40)]
    shards = [chunks[a:b] for a, b in ((0, 250), (250, 251), (251, 600), (600, 700))]
    expected = [dense_rank(questions[n] @ chunks.T, gold[n], k=300) for n in range(40)]
    assert dense_ranks_over(shards, questions, gold, k=300, block=16) == expected
    assert sum(r is None for r in expected) > 0 and len(set(expected)) > 10
    scores = questions @ chunks.T
    assert any((scores[n] == scores[n, list(gold[n])].max()).sum() > 1 for n in range(40))   # ties there are


def test_a_killed_embedding_resumes_from_its_shards_and_slices_on_either_engine(tmp_path, model, ray_address):
    chunks, _, _ = many_chunks(24_000)
    fresh = init_workspace(tmp_path / "fresh")
    snapshot = _write(fresh, chunks, shard_size=2_000)
    shards = len(SnapshotStore(fresh).shards(snapshot))
    assert build_dense_shards(KBIndex(fresh, snapshot), model, LocalEngine(2)) == (shards, 0)
    expected = _vector_files(fresh, snapshot)
    assert len(expected) == shards
    for name, engine in (("local", "LocalEngine(2)"), ("ray", f"open_engine(EngineSettings('ray', {ray_address!r}))")):
        workspace = init_workspace(tmp_path / name)
        _write(workspace, chunks, shard_size=2_000)
        script = stage_script(f"build_dense_shards(KBIndex(Workspace(Path({str(workspace.root)!r})), {snapshot!r}), "
                              f"{model!r}, ENGINE)", "from curate.index.kb_index import KBIndex\n"
                              "from curate.index.shard_dense import build_dense_shards\n"
                              "from curate.workspace import Workspace", engine)
        kill_when(script, lambda: len(_vector_files(workspace, snapshot)) >= 3, "shard embedded")
        kept = len(_vector_files(workspace, snapshot))
        built, done = build_dense_shards(KBIndex(workspace, snapshot), model, LocalEngine(2))
        assert done == kept and built == shards - kept and built > 0, name
        assert _vector_files(workspace, snapshot) == expected, name
        assert not list((workspace.kb_dir / "index" / snapshot / "shards").glob("*/dense-slices/*/*.npy"))


def test_grade_embeds_a_kb_in_shards_on_the_engine_it_names(curate, tmp_path, model, ray_address):
    chunks, items, _ = many_chunks(12_000)
    snapshot = _write(curate.workspace, chunks, shard_size=2_000)
    toml = curate.workspace.root / "curate.toml"
    toml.write_text(re.sub(r'(?m)^model = .*$', f"model = {json.dumps(model)}", toml.read_text(encoding="utf-8"), count=1),
                    encoding="utf-8")
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps({"id": i.id, "question": i.question, "reference_answer": i.reference_answer,
                                        "language": "zh", "split": "test", "evidence": [
                                            {"chunk_id": i.evidence[0].chunk_ids[0]}]}, ensure_ascii=False) + "\n"
                            for i in items[:300]), encoding="utf-8")
    curate("import", path, "--dataset", "big", "--source", "human", "--kb", "kb")
    on_ray = curate("grade", "--dataset", "big", "--dense", "--json", "--engine", ray_address)
    assert "note: embedded 6 of the 6 shards of kb-" in on_ray.stderr and "on ray" in on_ray.stderr
    ranks = [g["features"].get("dense_rank") for g in json.loads(on_ray.stdout)["items"]]
    assert sum(r is not None for r in ranks) > 100
    # the ranks are those over every vector in one array
    vectors = np.concatenate(shard_vectors(KBIndex(curate.workspace, snapshot), model))
    assert vectors.shape == (12_000, 32)
    position = {c.chunk_id: n for n, c in enumerate(chunks)}
    questions = load_model(model).encode([i.question for i in items[:300]])
    expected = [dense_rank(vectors @ q, {position[i.evidence[0].chunk_ids[0]]}, k=100) for q, i in zip(questions, items)]
    assert [None if r is None else int(r) for r in ranks] == expected
    again = curate("grade", "--dataset", "big", "--json", "--engine", "local")   # the vectors stored: reused
    assert "note: embedded" not in again.stderr and json.loads(again.stdout)["items"] == json.loads(on_ray.stdout)["items"]
