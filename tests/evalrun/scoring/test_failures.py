"""evalrun export-failures: a run's failed items as a production log that curate add-failures reads back,
counting each on its own item (they are the dataset's questions)."""

import json

from click.testing import CliRunner

from curate.dataset import DatasetStore
from curate.failures.add import add_failures
from curate.dataset.batches import FailureBatches
from evalrun.cli.main import cli as evalrun_cli
from evalrun.runner import run
from evalrun.scoring.failures import failure_rows


def test_export_failures_round_trip_counts_run_failures_on_their_items(released, tmp_path):
    workspace = released.workspace
    folder = run(workspace, ref="faq@v1", target="tests.support.targets:cut", out=tmp_path / "run")
    rows = failure_rows(workspace, folder)
    assert rows and all(r["tags"][0] == "wrong" and r["run_id"] == f"faq@v1:{folder.name}" for r in rows)
    out = tmp_path / "failures.jsonl"
    done = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["--workspace", str(workspace.root), "export-failures",
                                                            str(folder), "--out", str(out)])
    assert done.exit_code == 0, done.stderr
    assert [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] == rows
    released("add-failures", out, "--dataset", "faq", "--month", "2026-12")
    batch = FailureBatches(workspace, "faq").all()[0]
    assert batch.counts["added"] == 0 and batch.duplicates == {"exact": len(rows)}   # the run's own items
    items = {i.id: i for i in DatasetStore(workspace).items("faq")}
    assert {r["id"] for r in rows} == {i for i, item in items.items() if item.production}


def test_exported_failures_keep_who_asked_and_when_so_each_comes_back_to_its_own_item(hr, tmp_path):
    """The same question asked by another asker or at another moment is another item: the export carries
    the asker and the moment, so add-failures counts each failure on its own item, adding none."""
    folder = run(hr, ref="hr@v1", target="tests.support.scope:leaky", out=tmp_path / "leaky")
    rows = {r["id"]: r for r in failure_rows(hr, folder)}
    items = {i.id: i for i in DatasetStore(hr).items("hr")}
    assert {"band-staff", "leave", "travel-both"} <= set(rows), sorted(rows)   # a leak, an asker of no group
    for item_id, row in rows.items():
        item = items[item_id]
        assert (row.get("asker_groups"), row.get("as_of")) == (item.asker_groups, item.as_of), item_id
    assert rows["leave"]["asker_groups"] == [] and "as_of" not in rows["leave"]
    out = tmp_path / "failures.jsonl"
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows.values()), encoding="utf-8")
    add_failures(hr, [out], dataset="hr", month="2026-12", semantic=False)
    batch = FailureBatches(hr, "hr").all()[0]
    assert batch.counts["added"] == 0 and sum(batch.duplicates.values()) == len(rows)
