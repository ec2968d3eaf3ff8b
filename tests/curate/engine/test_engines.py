"""The engines (issue 29, point 2): a stage's results in task order on the local engine, in this process or in
worker processes; a worker's error arrives whole; a killed worker is one line that says the completed
shards are kept; which engine a command uses, from its option or curate.toml; Ray only when asked for."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from curate.engine import EngineFailed, EngineSettings, LocalEngine, engine_settings, pending
from curate.errors import InputError
from curate.workspace import Workspace

from tests.curate.engine import stages


@pytest.mark.parametrize("workers", [1, 2])
def test_results_come_back_in_task_order_with_what_every_task_shares(workers):
    assert LocalEngine(workers).map(stages.times, list(range(7)), shared=3) == [0, 3, 6, 9, 12, 15, 18]


def test_a_workers_input_error_arrives_with_its_file_line_and_field():
    with pytest.raises(InputError) as caught:
        LocalEngine(2).map(stages.refuse, [0, 1, 2, 3])
    assert (caught.value.file, caught.value.line, caught.value.field) == ("items.jsonl", 2, "question")
    assert str(caught.value) == "items.jsonl:2: field 'question': not a number"


def test_a_killed_worker_says_the_completed_shards_are_kept():
    with pytest.raises(EngineFailed, match="a worker process died.*completed are kept: run the command again"):
        LocalEngine(2).map(stages.die, [0, 1, 2], label="indexing kb-1")


def test_the_workers_of_a_killed_command_end_with_it(tmp_path):
    script = ("from curate.engine import LocalEngine\nfrom tests.curate.engine import stages\n"
              f"LocalEngine(2).map(stages.wait, [0, 1], shared={str(tmp_path)!r})\n")
    command = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 60   # a safety net: the test waits for the workers, not for the clock
    while len(list(tmp_path.glob("*.pid"))) < 2:
        assert command.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    workers = [int(p.stem) for p in tmp_path.glob("*.pid")]
    command.send_signal(signal.SIGKILL)
    command.wait()
    deadline = time.monotonic() + 30
    while any(Path(f"/proc/{pid}").exists() for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(Path(f"/proc/{pid}").exists() for pid in workers), "a worker outlived its command"


def test_each_worker_runs_one_thread_of_numeric_work():
    import numpy  # noqa: F401  loaded here first, as a command has it before its workers start

    assert set(LocalEngine(2).map(stages.threads, [0, 1])) == {("1", 1)}


def test_pending_skips_what_was_done():
    assert pending(["a", "b", "c"], lambda task: task == "b") == (["a", "c"], 1)


def _config(workspace: Workspace, text: str) -> None:
    workspace.config_path.write_text(workspace.config_path.read_text(encoding="utf-8") + text, encoding="utf-8")


def test_the_option_else_curate_toml_else_local(workspace):
    assert engine_settings(workspace) == EngineSettings("local")
    _config(workspace, '\n[engine]\nname = "ray"\naddress = "ray://head:10001"\nworkers = 4\n')
    assert engine_settings(workspace) == EngineSettings("ray", "ray://head:10001", 4)
    assert engine_settings(workspace, "local") == EngineSettings("local", None, 4)
    assert engine_settings(workspace, "10.0.0.5:6379") == EngineSettings("ray", "10.0.0.5:6379", 4)


def test_a_bad_engine_setting_names_the_file_line_and_field(workspace):
    _config(workspace, '\n[engine]\nname = "spark"\n')
    with pytest.raises(InputError, match=r"curate\.toml:\d+: field 'engine.name': unknown engine 'spark'"):
        engine_settings(workspace)
    with pytest.raises(InputError, match="field 'engine': unknown engine 'dask'"):
        engine_settings(None, "dask")


def test_without_ray_installed_the_ray_engine_is_one_line_and_nothing_else_needs_it(workspace):
    script = ("import sys; sys.modules['ray'] = None\n"   # as if Ray were not installed
              "from curate.engine import LocalEngine, open_engine, EngineSettings\n"
              "from curate.errors import InputError\n"
              "assert LocalEngine(2).map(abs, [-1, 2]) == [1, 2]\n"
              "try:\n    open_engine(EngineSettings('ray'))\nexcept InputError as exc:\n    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("field 'engine': the Ray engine needs Ray, an optional extra: "
                                   "pip install 'curate-evalrun[ray]' (or '.[ray]' in a clone)")


def test_a_ray_address_where_nothing_answers_is_one_line_at_once():
    from curate.engine import open_engine

    started = time.monotonic()
    with pytest.raises(EngineFailed, match=r"could not join the Ray cluster at 127\.0\.0\.1:1: nothing answers there"):
        open_engine(EngineSettings("ray", "127.0.0.1:1"))
    assert time.monotonic() - started < 60   # Ray alone retries for minutes, printing as it goes
    with pytest.raises(InputError, match=r"field 'engine': not a Ray address: 'ray://head'"):
        open_engine(EngineSettings("ray", "ray://head"))


def test_every_guard_on_a_small_kb_runs_without_ray_and_without_pyarrow(tmp_path):
    """Point 5: a 100-chunk KB's commands run as before with Ray not installed, and load neither Ray nor
    pyarrow (the shards' code is loaded only for a snapshot in many shards)."""
    from tests.support import EXAMPLES

    handbook, export = EXAMPLES / "handbook", tmp_path / "chunks.jsonl"
    export.write_text("".join(f'{{"chunk_id": "c{n}", "doc_id": "d{n // 3}", "text": "第 {n} 条：报销须在 30 天内提交？"}}\n'
                              for n in range(120)), encoding="utf-8")
    commands = [["init", str(tmp_path / "ws"), "--kb", "handbook"],
                ["kb", "ingest", str(handbook / "docs"), "--name", "handbook"],
                ["kb", "import", str(export), "--name", "prod"],
                ["import", str(handbook / "questions.jsonl"), "--dataset", "hb", "--source", "human"],
                ["check-dups", "--dataset", "hb", "--kb", "--no-semantic"], ["grade", "--dataset", "hb", "--no-dense"],
                ["split", "--dataset", "hb", "--seed", "1"], ["check-leakage", "--dataset", "hb", "--no-semantic"],
                ["generate", "--dataset", "gen", "--kb", "handbook", "--dry-run"]]
    script = ("import os, sys\nsys.modules['ray'] = None\n"   # as if Ray were not installed
              "from curate.cli.main import cli\n"
              f"for args in {commands!r}:\n"
              "    try:\n        cli.main(args, prog_name='curate', standalone_mode=False)\n"
              "    except SystemExit as exc:\n        assert exc.code in (0, 1, None), (args, exc.code)\n"
              "    if args[0] == 'init':\n        os.chdir(args[1])\n"
              "print(sorted(m for m in sys.modules if m.split('.')[0] in ('ray', 'pyarrow')))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "['ray']"   # only the stand-in that says it is missing
    assert "prod: snapshot kb-" in done.stdout and "(120 chunks imported as they are)" in done.stdout
