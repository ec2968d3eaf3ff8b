"""One writer at a time: a second command waits for the first (and loses nothing), or stops with one
line; a run and a --resume of it never both call the target; what a killed write left behind is
removed by the next writer."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from curate.dataset import DatasetStore
from curate.locks import Busy, writing
from tests.support.processes import PATIENCE, Watched, wait_until

ROOT = Path(__file__).resolve().parents[2]
KILLED_AT = """
import os, signal, sys
from pathlib import Path
name, argv = sys.argv[1], sys.argv[2:]
replace = os.replace
def killing(source, target, *args, **kwargs):   # dies as it would rename a written file to `name`
    if Path(target).name == name:
        os.kill(os.getpid(), signal.SIGKILL)
    return replace(source, target, *args, **kwargs)
os.replace = killing
from curate.cli.main import cli
cli(argv, prog_name="curate")
"""
# A writer that holds the lock until the test closes its standard input (or kills it): not for a
# time that a slow test could outlast.
HOLDER = """
import sys
from curate.locks import writing
with writing(sys.argv[1], 'x'):
    print('held', flush=True)
    sys.stdin.read()
"""


def _curate(workspace, *args, env=None) -> Watched:
    return Watched([sys.executable, "-c", "from curate.cli.main import main; main()",
                    "--workspace", str(workspace.root), *map(str, args)], cwd=ROOT, env={**os.environ, **(env or {})})


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
        waiting.wait_for("waiting for another command writing dataset 'faq'")   # it waits for the lock ...
        assert waiting.poll() is None
        meta, items = store.load("faq")                    # ... while this writer saves its own change
        items[0].tags = items[0].tags + ["edited-meanwhile"]
        store.save(meta, items)
    out, err = waiting.communicate()
    assert waiting.returncode == 0, err
    items = {i.id: i for i in store.items("faq")}
    assert "edited-meanwhile" in items["t-1"].tags and sum(i.startswith("b-") for i in items) == 30


def test_two_imports_at_once_keep_every_item(handbook, tmp_path):
    workspace = handbook.workspace
    first = _curate(workspace, "import", _items_file(tmp_path / "x.jsonl", "x", 400), "--dataset", "faq",
                    "--source", "human")
    second = _curate(workspace, "import", _items_file(tmp_path / "y.jsonl", "y", 400), "--dataset", "faq",
                     "--source", "human")
    for process in (first, second):
        out, err = process.communicate()
        assert process.returncode == 0, err
    ids = [i.id for i in DatasetStore(workspace).items("faq")]
    assert sum(i.startswith("x-") for i in ids) == 400 and sum(i.startswith("y-") for i in ids) == 400


def test_a_writer_that_waits_too_long_stops_with_one_line(handbook, tmp_path):
    workspace = handbook.workspace
    before = (workspace.datasets_dir / "faq" / "items.jsonl").read_bytes()
    with writing(DatasetStore(workspace).folder("faq"), "dataset 'faq'"):
        blocked = _curate(workspace, "split", "--dataset", "faq", "--no-semantic", env={"CURATE_LOCK_TIMEOUT": "1"})
        out, err = blocked.communicate()
    assert blocked.returncode == 2
    assert err.strip().splitlines()[-1] == ("error: dataset 'faq' is still being written by another command "
                                           "after 1 s; try again when it has finished")
    assert (workspace.datasets_dir / "faq" / "items.jsonl").read_bytes() == before


def test_a_writer_gives_up_no_sooner_than_the_lock_timeout(tmp_path, monkeypatch):
    """Only a lower bound is checked: a busy machine may let it give up later, never sooner."""
    monkeypatch.setenv("CURATE_LOCK_TIMEOUT", "0.3")
    outcome = {}

    def second():
        started = time.monotonic()
        try:
            with writing(tmp_path, "x"):
                outcome["held"] = True
        except Busy as exc:
            outcome["waited"], outcome["error"] = time.monotonic() - started, str(exc)

    with writing(tmp_path, "x"):
        waiting = threading.Thread(target=second)
        waiting.start()
        waiting.join(PATIENCE)
    assert "held" not in outcome and outcome["waited"] >= 0.3
    assert outcome["error"] == "x is still being written by another command after 0.3 s; try again when it has finished"


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


def test_a_writer_waiting_for_a_folder_its_holder_made_and_removed_gets_it(tmp_path, capsys):
    """The first writer made the run folder and leaves it empty (a run refused before its first
    trace, say), so it removes it again; the second, waiting meanwhile, makes it anew and writes
    there (it used to crash on the missing folder)."""
    folder, errors, said = tmp_path / "run", [], []

    def second():
        try:
            with writing(folder, "run folder"):
                (folder / "traces.jsonl").write_text("second", encoding="utf-8")
        except BaseException as exc:  # noqa: BLE001 - the test reports it
            errors.append(exc)

    waiting = threading.Thread(target=second)
    with writing(folder, "run folder"):
        waiting.start()
        wait_until(lambda: said.append(capsys.readouterr().err) or "waiting for another command writing run folder"
                   in "".join(said), "the second writer waiting")
    waiting.join(PATIENCE)
    assert errors == [] and (folder / "traces.jsonl").read_text(encoding="utf-8") == "second"


def test_a_lock_taken_on_a_folder_removed_meanwhile_is_taken_again_on_the_one_there(tmp_path, monkeypatch):
    """Between opening the folder and locking it, its maker removed it and another writer made it
    anew: the lock on the removed folder would exclude nobody, so it is taken on the one at the path."""
    import curate.locks as locks
    folder = tmp_path / "run"
    folder.mkdir()
    flock, swapped = locks.fcntl.flock, []

    def swap_then_lock(fd, operation):
        if not swapped:     # the first lock: its folder is replaced just before
            swapped.append(True)
            folder.rmdir()
            folder.mkdir()
        return flock(fd, operation)

    monkeypatch.setattr(locks.fcntl, "flock", swap_then_lock)
    with writing(folder, "run folder"):
        monkeypatch.setattr(locks.fcntl, "flock", flock)
        other = subprocess.run([sys.executable, "-c", "import sys\nfrom curate.locks import writing\n"
                                f"with writing({str(folder)!r}, 'run folder', wait=False): pass"],
                               capture_output=True, text=True, cwd=ROOT, timeout=PATIENCE)
        assert other.returncode == 1 and "Busy: run folder is being written by another command" in other.stderr
    assert swapped


def test_a_killed_writer_lets_go_and_its_leftovers_are_removed(handbook, tmp_path):
    workspace = handbook.workspace
    folder = workspace.datasets_dir / "faq"
    (folder / ".items.jsonl.abc123.tmp").write_text("half an items file", encoding="utf-8")
    (folder / "releases" / ".v7.xyz.tmp").mkdir(parents=True)
    (folder / "releases" / ".v7.xyz.tmp" / "data.jsonl").write_text("half a release", encoding="utf-8")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder)], stdin=subprocess.PIPE,
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


@pytest.mark.parametrize("killed_at, count", [("items.jsonl", 5), ("dataset.json", 3005)])
def test_an_import_killed_at_any_point_leaves_the_dataset_readable(handbook, tmp_path, killed_at, count):
    """Killed as it renames its new items file into place (the file written, not yet named), or its
    record (the items in place, the record not): old or new, never half; the leftovers go next time.
    The kill comes at that step whatever the machine's speed (a kill after a sleep may come before
    the import has begun)."""
    workspace = handbook.workspace
    path = _items_file(tmp_path / "big.jsonl", "k", 3000)
    process = Watched([sys.executable, "-c", KILLED_AT, killed_at, "--workspace", str(workspace.root), "import",
                       str(path), "--dataset", "faq", "--source", "human"], cwd=ROOT)
    process.communicate()
    assert process.returncode == -signal.SIGKILL
    assert len(DatasetStore(workspace).items("faq")) == count
    leftovers = [p for p in (workspace.datasets_dir / "faq").rglob(".*.tmp")]
    assert [p.name.split(".")[1] for p in leftovers] == [killed_at.split(".")[0]]
    handbook("split", "--dataset", "faq", "--no-semantic")
    assert all(not p.exists() for p in leftovers)
    assert len(DatasetStore(workspace).items("faq")) == count


def test_a_run_and_a_resume_of_it_never_both_call_the_target(handbook, tmp_path):
    from curate.checks.leakage import check_leakage
    from curate.release import release
    from evalrun.records import RunSettings
    from evalrun.runner import run
    check_leakage(handbook.workspace, ref="faq", semantic=False)
    release(handbook.workspace, dataset="faq", message="v1")
    folder = tmp_path / "run"
    run(handbook.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=folder)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert holder.stdout.readline().strip() == "held"     # as a run still going would hold it
        with pytest.raises(Busy, match=f"run folder {folder} is being written by another command"):
            run(handbook.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=folder, resume=True,
                settings=RunSettings())
    finally:
        holder.kill()
        holder.wait()
