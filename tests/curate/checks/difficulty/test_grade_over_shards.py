"""`curate grade` over a snapshot in shards (issue 29): every feature of every item, the report and the record
written are those of grading the same snapshot as one index, on the local engine and on Ray: BM25 ranks with
ties, copies (one of another access group), scope (a group, a superseded version), a chunk not in the KB."""

from __future__ import annotations

import json

from curate.checks.difficulty.measure import grade
from curate.dataset import DatasetStore
from curate.index.kb_index import KBIndex
from curate.kb.store import SnapshotStore
from curate.records import ChunkerSettings, DatasetMeta
from curate.workspace import init_workspace

from tests.support.messy_kb import messy_kb


def _graded(path, chunks, items, groups, engine=None, **layout):
    """Return the report (as data, its time left out) and the items written of grading the messy KB."""
    workspace = init_workspace(path)
    snapshot = SnapshotStore(workspace).write("kb", [], chunks, ChunkerSettings(kind="imported"),
                                              **layout).snapshot_id
    index = KBIndex(workspace, snapshot)
    index.groups_path.parent.mkdir(parents=True, exist_ok=True)
    groups.model_copy(update={"snapshot": snapshot}).write(index.groups_path)
    DatasetStore(workspace).save(DatasetMeta(name="big", kb_snapshot=snapshot), items)
    report = grade(workspace, dataset="big", dense=False, engine=engine).to_dict()
    report["record"].pop("at")
    written = [{k: v for k, v in item.model_dump(mode="json").items() if k != "updated_at"}
               for item in DatasetStore(workspace).items("big")]
    assert len(SnapshotStore(workspace).shards(snapshot)) >= (10 if layout else 0)
    return snapshot, report, written


def test_grade_over_shards_is_grade_of_one_index(tmp_path, ray_address):
    chunks, items, groups = messy_kb()
    snapshot, expected, expected_items = _graded(tmp_path / "one", chunks, items, groups)
    features = {g["id"]: g["features"] for g in expected["items"]}
    # what the planted items exercise
    assert features["pay"].get("declined") == 1.0 and "declined" not in features["pay-hr"]
    assert features["policy-new"].get("unusable_evidence") == 1.0 and "unusable_evidence" not in features["policy-old"]
    assert "lost" in expected["unmeasured"] and features["refund-en"]["bm25_rank"] == 1.0
    assert sum("bm25_rank" in f for f in features.values()) > 100
    assert sum(f.get("bm25_rank", 1) > 1 for f in features.values()) > 20
    assert sum(f.get("confusable_above", 0) > 0 for f in features.values()) > 0
    for name, engine in (("local", "local"), ("ray", ray_address)):
        found = _graded(tmp_path / name, chunks, items, groups, engine, parquet_from=0, shard_size=200)
        assert found[0] == snapshot
        assert json.dumps(found[1], sort_keys=True) == json.dumps(expected, sort_keys=True), name
        assert found[2] == expected_items, name
