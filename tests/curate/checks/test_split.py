import json

from curate.checks.split import split
from curate.dataset import DatasetStore
from curate.dataset import import_items


def _dataset(workspace, tmp_path, n=40):
    words = ["timeout", "billing", "upgrade", "plugin", "quota", "invoice", "token", "cluster", "backup",
             "audit", "region", "latency", "webhook", "schema", "replica", "cache", "proxy", "tenant", "alert",
             "license", "router", "secret", "metric", "archive"]
    rows = []
    for k in range(n):
        rows.append({"id": f"i-{k:02d}", "question": f"What changed for {words[k % 24]} and {words[(k * 5 + 3) % 24]}"
                     f" in release {k}?", "answerable": False, "qtype": "unanswerable" if k % 2 else "conditional"})
    rows.append({"id": "p-1", "question": "Since which version must basic authentication be configured as a plugin?", "answerable": False})
    rows.append({"id": "p-2", "question": "Since which version must basic auth be configured as a plugin?", "answerable": False})
    path = tmp_path / "split.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    import_items(workspace, path, dataset="s", source="human")
    synthetic = tmp_path / "synthetic.jsonl"
    synthetic.write_text(json.dumps({"id": "y-1", "question": "A synthetic question?", "answerable": False}) + "\n")
    import_items(workspace, synthetic, dataset="s", source="synthetic")


def test_split_is_stratified_deterministic_and_keeps_alike_items_together(handbook, tmp_path):
    workspace = handbook.workspace
    _dataset(workspace, tmp_path)
    report = split(workspace, dataset="s", seed=1, semantic=False)
    first = {i.id: i.split for i in DatasetStore(workspace).items("s")}
    assert first["p-1"] == first["p-2"] and first["y-1"] == "dev" and report.synthetic_held_in_dev == 1
    assert report.counts["ungraded/conditional"] == {"dev": 10, "test": 10}
    # 20 numbered items + p-1, p-2 (one unit) + y-1 (held in dev): test gets round(23 / 2) = 12
    assert report.counts["ungraded/unanswerable"] == {"dev": 11, "test": 12}
    # the same seed gives the same split; another seed another one
    split(workspace, dataset="s", seed=1, reassign=True, semantic=False)
    assert {i.id: i.split for i in DatasetStore(workspace).items("s")} == first
    split(workspace, dataset="s", seed=2, reassign=True, semantic=False)
    assert {i.id: i.split for i in DatasetStore(workspace).items("s")} != first


def test_existing_assignments_are_kept_and_regression_untouched(handbook, tmp_path):
    workspace = handbook.workspace
    _dataset(workspace, tmp_path)
    store = DatasetStore(workspace)
    meta, items = store.load("s")
    for item in items:
        if item.id == "i-00":
            item.split = "regression"
        if item.id == "p-1":
            item.split = "test"
    store.save(meta, items)
    split(workspace, dataset="s", seed=5, semantic=False)
    after = {i.id: i.split for i in store.items("s")}
    assert after["i-00"] == "regression" and after["p-1"] == after["p-2"] == "test"
    result = handbook("split", "--dataset", "s", "--seed", "5", "--no-semantic")
    assert "0 items moved" in result.stdout


def test_verified_synthetic_items_may_enter_test(handbook, tmp_path):
    workspace = handbook.workspace
    _dataset(workspace, tmp_path, n=0)
    report = split(workspace, dataset="s", synthetic_in_test=True, test_fraction=1.0, semantic=False)
    assert report.synthetic_held_in_dev == 0
    assert {i.id: i.split for i in DatasetStore(workspace).items("s")}["y-1"] == "test"
