"""A batch killed midway leaves the dataset as it was or complete, and the next run finishes it; two
add-failures on one dataset at once: one waits for the other (or stops, past the lock timeout)."""

import os
import sys
from pathlib import Path

import pytest

from curate.dataset import DatasetStore
from curate.dataset.batches import FailureBatches
from tests.support.processes import Watched

ROOT = Path(__file__).resolve().parents[3]
KILLER = """
import os, signal, sys
from curate.dataset import DatasetStore
from curate.records import FailureBatch
point, argv = sys.argv[1], sys.argv[2:]
if point == "before-items":     # the batch record is written pending, the items not yet
    DatasetStore.save = lambda self, meta, items: os.kill(os.getpid(), signal.SIGKILL)
elif point == "after-items":    # the items are saved, the batch record not yet complete
    write = FailureBatch.write
    def killing(self, path):
        if self.state == "complete":
            os.kill(os.getpid(), signal.SIGKILL)
        write(self, path)
    FailureBatch.write = killing
from curate.cli.main import cli
cli(argv, prog_name="curate")
"""


def _curate(workspace, log, *extra, env=None, point="none", wait=True):
    args = [sys.executable, "-c", KILLER, point, "--workspace", str(workspace.root), "add-failures", str(log),
            "--dataset", "faq", "--month", "2026-11", "--no-semantic", *extra]
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    process = Watched(args, cwd=ROOT, env=environment)
    if not wait:
        return process
    out, err = process.communicate()
    return process.returncode, out, err


def _state(workspace):
    items = {i.id: i for i in DatasetStore(workspace).items("faq")}
    return items, FailureBatches(workspace, "faq").all()


@pytest.mark.parametrize("point", ["before-items", "after-items"])
def test_a_killed_batch_leaves_the_dataset_whole_and_the_next_run_completes_it(production, point):
    curate, log = production
    workspace = curate.workspace
    items_file = DatasetStore(workspace).folder("faq") / "items.jsonl"
    before = items_file.read_bytes()
    code, _, _ = _curate(workspace, log, point=point)
    assert code == -9
    pending = [p.name for p in (items_file.parent / "failures").glob("*.json")]
    assert pending == ["2026-11-1.json"]
    items, _ = _state(workspace)              # loads: whole, as before or complete
    if point == "before-items":
        assert items_file.read_bytes() == before and "t-1" in items and items["t-1"].production is None
    else:
        assert items["t-1"].production.asked[0].count == 2
    result = curate("add-failures", log, "--dataset", "faq", "--month", "2026-11", "--no-semantic")
    items, batches = _state(workspace)
    assert [(b.batch, b.state) for b in batches] == [("2026-11-1", "complete")]
    assert items["t-1"].production.asked[0].count == 2                 # counted once, not twice
    assert sum(1 for i in items.values() if i.source == "production") == 7   # 6 new (no semantic pass) + 1 leak
    if point == "after-items":
        assert "added before, in batch 2026-11-1" in result.stdout


def test_two_at_once_one_waits_for_the_other_and_past_the_timeout_one_stops(production):
    curate, log = production
    workspace = curate.workspace
    with DatasetStore(workspace).writing("faq"):   # a third command holds the dataset
        late = _curate(workspace, log, env={"CURATE_LOCK_TIMEOUT": "0.5"})
        both = [_curate(workspace, log, wait=False) for _ in range(2)]
        for process in both:     # each has found the dataset locked (however long it took to start)
            process.wait_for("waiting for another command writing dataset 'faq'")
    assert late[0] == 2 and late[2].strip().endswith("dataset 'faq' is still being written by another command "
                                                     "after 0.5 s; try again when it has finished")
    done = [p.communicate() + (p.returncode,) for p in both]
    assert [code for _, _, code in done] == [0, 0]
    outs = sorted(out for out, _, _ in done)
    assert "added 6 (needs_evidence)" in outs[0] and "added before, in batch 2026-11-1" in outs[1]
    items, batches = _state(workspace)
    assert len(batches) == 1 and items["t-1"].production.asked[0].count == 2
