"""Two commands over one snapshot in shards at once (issue 29): each stage that stores something per shard (the
lexical index, copy and mining sketches, BM25 terms, chunk vectors) may be built by both at the same moment.
Both finish, with the results one command alone finds, and the stored parts are whole. Two imports of one large
file at once take turns and give one snapshot."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from curate.kb.store import SnapshotStore
from curate.records import ChunkerSettings
from curate.workspace import init_workspace

from tests.support.many_chunks import many_chunks
from tests.support.production_export import production_file
from tests.support.tiny_model import tiny_model

SCRIPT = """
import hashlib, json, sys
from pathlib import Path
from curate.checks.copies import chunk_groups
from curate.engine import LocalEngine
from curate.generate.mine_shards import mine_index
from curate.index.kb_index import KBIndex
from curate.index.shard_bm25 import build_terms
from curate.index.shard_dense import build_dense_shards, shard_vectors
from curate.index.shard_index import build_lexical
from curate.workspace import Workspace

root, snapshot, model = sys.argv[1:4]
index = KBIndex(Workspace(Path(root)), snapshot)
engine = LocalEngine(1)
build_lexical(index, engine)
groups, withheld = chunk_groups(index, engine=engine)
mined = mine_index(index, engine)
build_terms(index, engine)
build_dense_shards(index, model, engine)
index = KBIndex(Workspace(Path(root)), snapshot)
vectors = hashlib.sha256(b"".join(v.tobytes() for v in shard_vectors(index, model))).hexdigest()
print(json.dumps({"groups": [g.model_dump(mode="json") for g in groups], "withheld": len(withheld),
                  "pairs": [p.model_dump(mode="json") for p in mined.pairs], "vectors": vectors}))
"""


def _start(root, snapshot: str, model) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", SCRIPT, str(root), snapshot, str(model)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_two_commands_building_every_shard_stage_at_once_both_finish_with_the_same_results(tmp_path):
    workspace = init_workspace(tmp_path / "w")
    chunks, _, _ = many_chunks(6_000)
    snapshot = SnapshotStore(workspace).write("kb", [], chunks, ChunkerSettings(kind="imported"),
                                              shard_size=250, parquet_from=0).snapshot_id
    model = tiny_model(tmp_path / "model")
    first, second = _start(workspace.root, snapshot, model), _start(workspace.root, snapshot, model)
    results = []
    for process in (first, second):
        out, err = process.communicate(timeout=600)
        assert process.returncode == 0, err[-3000:]
        results.append(json.loads(out.splitlines()[-1]))
    alone = _start(workspace.root, snapshot, model)   # everything stored now: read back whole
    out, err = alone.communicate(timeout=600)
    assert alone.returncode == 0, err[-3000:]
    assert results[0] == results[1] == json.loads(out.splitlines()[-1])
    assert results[0]["groups"] and results[0]["pairs"]
    left = [p for p in (workspace.kb_dir / "index").rglob("*") if p.name.startswith(".") and p.name.endswith(".tmp")]
    assert left == []


def test_two_imports_of_one_large_file_at_once_take_turns_and_give_one_snapshot(tmp_path):
    big = production_file(tmp_path / "big.jsonl", documents=4_000)
    assert big.stat().st_size > 5_000_000   # staged from 5 MB
    workspace = init_workspace(tmp_path / "w")
    command = [str(Path(sys.executable).parent / "curate"), "--workspace", str(workspace.root), "kb", "import",
               str(big), "--name", "big", "--engine", "local"]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    done = [run.communicate(timeout=600) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], done
    assert done[0][0] == done[1][0] and "19,800 chunks imported" in done[0][0]
    assert [p.name for p in (workspace.kb_dir / "snapshots").iterdir()] == [done[0][0].split()[2]]
    assert not (workspace.kb_dir / "ingesting").exists() or not any((workspace.kb_dir / "ingesting").iterdir())
