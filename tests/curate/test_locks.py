"""One writer at a time: a second command waits for the first (and loses nothing), or stops with one
line; a run and a --resume of it never both call the target; what a killed write left behind is
removed by the next writer."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from curate.dataset import DatasetStore
from curate.locks import Busy, writing

ROOT = Path(__file__).resolve().parents[2]


def _curate(workspace, *args, env=None, **kwargs):
    return subprocess.Popen([sys.executable, "-c", "from curate.cli.main import main; main()",
                             "--workspace", str(workspace.root), *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, **(env or {})}, **kwargs)


def _items_file(path: Path, prefix: str, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"{prefix}-{k}", "question": f"{prefix} question {k}?",
                                        "answerable": False}) + "\n" for k in range(n)), encoding="utf-8")
    return path


def test_a_second_writer_waits_and_nothing_is_lost(handbook, tmp_path):
    workspace = handbook.workspace
    store = DatasetStore(workspace)
    with writing(store.folder("faq"), "dataset 'faq'"):
        waiting = _curate(workspace, "import", _items_file(tmp_path / "b.jsonl", "b", 30), "--dataset", "faq",
                          "--source", "human")
        time.sleep(2.0)
        assert waiting.poll() is None                      # it waits for the lock ...
        meta, items = store.load("faq")                    # ... while this writer saves its own change
        items[0].tags = items[0].tags + ["edited-meanwhile"]
        store.save(meta, items)
    out, err = waiting.communicate(timeout=60)
    assert waiting.returncode == 0, err
    assert "waiting for another command writing dataset 'faq'" in err
    items = {i.id: i for i in store.items("faq")}
    assert "edited-meanwhile" in items["t-1"].tags and sum(i.startswith("b-") for i in items) == 30


def test_two_imports_at_once_keep_every_item(handbook, tmp_path):
    workspace = handbook.workspace
    first = _curate(workspace, "import", _items_file(tmp_path / "x.jsonl", "x", 400), "--dataset", "faq",
                    "--source", "human")
    second = _curate(workspace, "import", _items_file(tmp_path / "y.jsonl", "y", 400), "--dataset", "faq",
                     "--source", "human")
    for process in (first, second):
        assert process.wait(timeout=120) == 0, process.stderr.read()
    ids = [i.id for i in DatasetStore(workspace).items("faq")]
    assert sum(i.startswith("x-") for i in ids) == 400 and sum(i.startswith("y-") for i in ids) == 400


def test_a_writer_that_waits_too_long_stops_with_one_line(handbook, tmp_path):
    workspace = handbook.workspace
    before = (workspace.datasets_dir / "faq" / "items.jsonl").read_bytes()
    with writing(DatasetStore(workspace).folder("faq"), "dataset 'faq'"):
        blocked = _curate(workspace, "split", "--dataset", "faq", "--no-semantic", env={"CURATE_LOCK_TIMEOUT": "1"})
        out, err = blocked.communicate(timeout=60)
    assert blocked.returncode == 2
    assert err.strip().splitlines()[-1] == ("error: dataset 'faq' is still being written by another command "
                                           "after 1 s; try again when it has finished")
    assert (workspace.datasets_dir / "faq" / "items.jsonl").read_bytes() == before


def test_the_lock_is_reentrant_in_a_thread_and_exclusive_across_processes(tmp_path):
    with writing(tmp_path, "x"):
        with writing(tmp_path, "x"):
            pass
        other = subprocess.run([sys.executable, "-c", "import sys\nfrom curate.locks import writing\n"
                                f"with writing({str(tmp_path)!r}, 'x', wait=False): pass"],
                               capture_output=True, text=True, cwd=ROOT)
        assert other.returncode == 1 and "Busy: x is being written by another command" in other.stderr
    with writing(tmp_path, "x", wait=False):
        pass


def test_a_killed_writer_lets_go_and_its_leftovers_are_removed(handbook, tmp_path):
    workspace = handbook.workspace
    folder = workspace.datasets_dir / "faq"
    (folder / ".items.jsonl.abc123.tmp").write_text("half an items file", encoding="utf-8")
    (folder / "releases" / ".v7.xyz.tmp").mkdir(parents=True)
    (folder / "releases" / ".v7.xyz.tmp" / "data.jsonl").write_text("half a release", encoding="utf-8")
    holder = subprocess.Popen([sys.executable, "-c", "import time\nfrom curate.locks import writing\n"
                               f"with writing({str(folder)!r}, 'x'):\n    print('held', flush=True)\n    time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(Busy):
        with writing(folder, "dataset 'faq'", wait=False):
            pass
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    handbook("split", "--dataset", "faq", "--no-semantic")                   # the next writer gets the lock and cleans up
    assert not (folder / ".items.jsonl.abc123.tmp").exists() and not (folder / "releases" / ".v7.xyz.tmp").exists()
    assert len(DatasetStore(workspace).items("faq")) == 5


def test_an_import_killed_at_any_point_leaves_the_dataset_readable(handbook, tmp_path):
    workspace = handbook.workspace
    path = _items_file(tmp_path / "big.jsonl", "k", 3000)
    for delay in (0.3, 0.8, 1.5):
        process = _curate(workspace, "import", path, "--dataset", "faq", "--source", "human")
        time.sleep(delay)
        process.kill()
        process.wait()
        ids = [i.id for i in DatasetStore(workspace).items("faq")]    # old or new, never half
        assert len(ids) in (5, 3005)
        if len(ids) == 3005:
            break
    leftovers = [p for p in (workspace.datasets_dir / "faq").rglob(".*.tmp")]
    handbook("split", "--dataset", "faq", "--no-semantic")
    assert all(not p.exists() for p in leftovers)


def test_a_run_and_a_resume_of_it_never_both_call_the_target(handbook, tmp_path):
    from curate.checks.leakage import check_leakage
    from curate.release import release
    from evalrun.records import RunSettings
    from evalrun.runner import run
    check_leakage(handbook.workspace, ref="faq", semantic=False)
    release(handbook.workspace, dataset="faq", message="v1")
    folder = tmp_path / "run"
    run(handbook.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=folder)
    holder = subprocess.Popen([sys.executable, "-c", "import time\nfrom curate.locks import writing\n"
                               f"with writing({str(folder)!r}, 'x'):\n    print('held', flush=True)\n    time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert holder.stdout.readline().strip() == "held"     # as a run still going would hold it
        with pytest.raises(Busy, match=f"run folder {folder} is being written by another command"):
            run(handbook.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=folder, resume=True,
                settings=RunSettings())
    finally:
        holder.kill()
        holder.wait()
