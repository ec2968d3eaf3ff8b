"""A run stopped by Ctrl-C or SIGTERM, killed while cutting a partial line, refused before it starts,
or moved by a target that changes folder: whole lines, a let-go lock, the command that finishes it,
and no folder left behind by an input refused up front."""

import importlib
import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from curate import writing
from evalrun.cli.main import cli as evalrun_cli
from evalrun.records import RunSettings, read_run, read_traces
from evalrun.runner import run
from evalrun.runner.run import RunInterrupted
from evalrun.runner.trace_log import TraceLog
from tests.evalrun.runner.conftest import SIX
from tests.support.processes import PATIENCE, wait_until

EVALRUN = [sys.executable, "-c", "from evalrun.cli.main import main; main()"]

# Hangs for ever on u-4 until FAST is set; writes each question it is asked to CALLS, and MARK once u-4
# is in flight.
SLOW_ON_U4 = """
    import os, pathlib, threading
    def answer(question):
        with open(os.environ["CALLS"], "a") as calls:
            calls.write(question + "\\n")
        if question == "Question u-4?" and not os.environ.get("FAST"):
            pathlib.Path(os.environ["MARK"]).write_text("in flight")
            threading.Event().wait()
        return {"candidates": [], "refused": True}
"""


def _whole_lines(path: Path) -> list[str]:
    data = path.read_bytes()
    assert data == b"" or data.endswith(b"\n")
    return [json.loads(line)["item_id"] for line in data.decode("utf-8").splitlines()]


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_ctrl_c_stops_the_run_cleanly_and_the_command_it_names_finishes_it(signum, code, six, target_module,
                                                                            tmp_path):
    module = target_module(SLOW_ON_U4)
    folder, mark, calls = tmp_path / "run", tmp_path / "in-flight", tmp_path / "calls.txt"
    env = {**os.environ, "MARK": str(mark), "CALLS": str(calls)}
    process = subprocess.Popen([*EVALRUN, "run", "--dataset", "six@v1", "--target", f"{module}:answer", "--out",
                                str(folder), "--concurrency", "1", "--timeout", "30", "--workspace", str(six.root)],
                               cwd=tmp_path / "targets", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    wait_until(lambda: mark.exists() or process.poll() is not None, "the call of u-4")
    assert mark.exists(), process.communicate()
    process.send_signal(signum)
    _, err = process.communicate(timeout=PATIENCE)   # it ends: it does not wait for the call in flight (never)
    assert process.returncode == code, err
    finish = shlex.join(["evalrun", "run", "--dataset", "six@v1", "--target", f"{module}:answer", "--out", str(folder),
                         "--resume", "--concurrency", "1", "--timeout", "30.0", "--workspace", str(six.root)])
    assert err.splitlines() == [f"interrupted: 3 of 6 items done; finish with: {finish}"]
    assert _whole_lines(folder / "traces.jsonl") == ["u-1", "u-2", "u-3"]   # u-4, in flight, is not recorded
    assert not (folder / "scores.jsonl").exists()

    calls.write_text("")
    resumed = subprocess.run([*EVALRUN, *shlex.split(finish)[1:]], cwd=tmp_path / "targets",
                             env={**env, "FAST": "1"}, capture_output=True, text=True, timeout=PATIENCE, check=False)
    assert resumed.returncode == 0, resumed.stderr
    assert calls.read_text().splitlines() == ["Question u-4?", "Question u-5?", "Question u-6?"]
    assert _whole_lines(folder / "traces.jsonl") == SIX
    assert [s.item_id for s in read_run(folder).scores] == SIX  # every item scored, once


def test_an_interrupted_run_lets_go_of_its_lock_and_resumes_in_the_same_process(six, target_module, tmp_path,
                                                                                monkeypatch):
    module = target_module("""
        import os, signal, threading
        RELEASE = threading.Event()
        def answer(question):
            if question == "Question u-3?" and not os.environ.get("FAST"):
                os.kill(os.getpid(), signal.SIGINT)   # Ctrl-C while this call is in flight
                RELEASE.wait(300)                     # in flight until the test lets it go
            return {"candidates": [], "refused": True}
    """)
    folder = tmp_path / "run"
    settings = RunSettings(concurrency=1, timeout=120)
    try:
        with pytest.raises(RunInterrupted) as caught:
            run(six, ref="six@v1", target=f"{module}:answer", out=folder, settings=settings)
    finally:
        importlib.import_module(module).RELEASE.set()
    assert str(caught.value) == (f"2 of 6 items done; finish with: evalrun run --dataset six@v1 --target "
                                 f"{module}:answer --out {folder} --resume --concurrency 1 --timeout 120.0 "
                                 f"--workspace {six.root}")
    assert caught.value.exit_code == 130
    with writing(folder, "the run folder", wait=False):     # let go of: taken again at once
        pass
    assert _whole_lines(folder / "traces.jsonl") == ["u-1", "u-2"]
    monkeypatch.setenv("FAST", "1")
    run(six, ref="six@v1", target=f"{module}:answer", out=folder, resume=True, settings=settings)
    assert _whole_lines(folder / "traces.jsonl") == SIX


@pytest.mark.parametrize("where", ["_call_target", "score_run"])
def test_the_interrupt_message_reaches_the_user_as_one_line_with_exit_130(where, six, tmp_path, monkeypatch):
    import importlib
    run_module = importlib.import_module("evalrun.runner.run")   # evalrun.runner.run is also the function
    real = getattr(run_module, where)

    def interrupted(*args, **kwargs):
        if where == "score_run":
            real(*args, **kwargs)   # scored, but the summary is not written: Ctrl-C came first
        raise KeyboardInterrupt

    monkeypatch.setattr(run_module, where, interrupted)
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
        "run", "--dataset", "six@v1", "--target", "tests.support.targets:perfect", "--out", str(tmp_path / "run"),
        "--workspace", str(six.root)])
    assert result.exit_code == 130
    done = "0 of 6 items done" if where == "_call_target" else "6 of 6 items done, not yet scored"
    assert result.stderr.splitlines() == [(
        f"interrupted: {done}; finish with: evalrun run --dataset six@v1 --target "
        f"tests.support.targets:perfect --out {tmp_path / 'run'} --resume --workspace {six.root}")]


def test_a_kill_while_the_partial_line_is_cut_leaves_traces_intact(six, target_module, tmp_path, monkeypatch):
    """--resume cuts a partial last line by writing a temporary file and renaming it over traces.jsonl:
    a kill between the two leaves the old file whole, and the next --resume finishes the cut."""
    module = target_module("""
        def answer(question):
            return {"candidates": [], "refused": True}
    """)
    folder = tmp_path / "run"
    run(six, ref="six@v1", target=f"{module}:answer", out=folder)
    traces = folder / "traces.jsonl"
    lines = traces.read_bytes().splitlines(keepends=True)
    damaged = b"".join(lines[:3]) + lines[3][:20]              # killed while writing u-4's line
    traces.write_bytes(damaged)
    script = ("import os, sys\n"
              "from evalrun.runner.trace_log import TraceLog\n"
              "os.replace = lambda *args: os._exit(9)   # killed after the temporary file is written\n"
              "TraceLog(sys.argv[1])")
    killed = subprocess.run([sys.executable, "-c", script, str(traces)], capture_output=True, text=True, timeout=60,
                            check=False)
    assert killed.returncode == 9, killed.stderr
    assert traces.read_bytes() == damaged                          # intact: the old file, not half of a new one
    left = [p.name for p in folder.iterdir() if p.name.startswith(".traces.jsonl.")]
    assert len(left) == 1 and (folder / left[0]).read_bytes() == b"".join(lines[:3])

    run(six, ref="six@v1", target=f"{module}:answer", out=folder, resume=True)
    assert sorted(_whole_lines(traces)) == SIX                   # each item once
    assert not [p for p in folder.iterdir() if p.name.startswith(".traces.jsonl.")]   # the leftover is removed


def test_a_failed_cut_in_process_leaves_traces_intact(tmp_path, monkeypatch):
    traces = tmp_path / "traces.jsonl"
    traces.write_bytes(b'{"item_id": "a"}\n{"item_id": "b"')

    def killed(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        TraceLog(traces)
    monkeypatch.undo()
    assert traces.read_bytes() == b'{"item_id": "a"}\n{"item_id": "b"'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["traces.jsonl"]
    assert TraceLog(traces).path.read_bytes() == b'{"item_id": "a"}\n'


def test_a_relative_out_is_resolved_before_the_target_can_change_folder(six, target_module, tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    module = target_module(f"""
        import os
        os.chdir({str(elsewhere)!r})            # on import
        def answer(question):
            os.chdir({str(elsewhere)!r})        # and on every call
            return {{"candidates": [], "refused": True}}
    """)
    start = tmp_path / "start"
    start.mkdir()
    monkeypatch.chdir(start)
    folder = run(six, ref="six@v1", target=f"{module}:answer", out=Path("relative-run"))
    assert folder == start / "relative-run"
    assert sorted(_whole_lines(folder / "traces.jsonl")) == SIX and (folder / "scores.jsonl").exists()
    assert list(elsewhere.iterdir()) == []
    monkeypatch.chdir(start)
    assert TraceLog(Path("traces.jsonl")).path == start / "traces.jsonl"


BAD = {
    "a traces file of broken JSON": (["--traces", "{dir}/t.jsonl"], {"t.jsonl": '{"item_id": "u-1"\n'}),
    "a traces file naming an item twice": (["--traces", "{dir}/t.jsonl"],
                                           {"t.jsonl": '{"item_id": "u-1"}\n{"item_id": "u-1"}\n'}),
    "a TREC run ranking a document twice": (["--traces", "{dir}/run.trec"],
                                            {"run.trec": "u-1 Q0 c1 1 2 x\nu-1 Q0 c1 2 1 x\n"}),
    "a k of 0": (["--target", "tests.support.targets:perfect", "--k", "0"], {}),
    "a negative k": (["--target", "tests.support.targets:perfect", "--k", "-1"], {}),
    "a k above MAX_K": (["--target", "tests.support.targets:perfect", "--k", "5,5000"], {}),
    "a k that is not a number": (["--target", "tests.support.targets:perfect", "--k", "a,b"], {}),
    "a target that does not import": (["--target", "no_such_module_at_all:f"], {}),
}


@pytest.mark.parametrize("out", [True, False], ids=["--out", "default out"])
@pytest.mark.parametrize("name", list(BAD))
def test_an_input_refused_before_the_run_leaves_no_folder(name, out, six, tmp_path):
    args, files = BAD[name]
    for file, text in files.items():
        (tmp_path / file).write_text(text)
    args = [a.replace("{dir}", str(tmp_path)) for a in args]
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
        "run", "--dataset", "six@v1", *args, *(["--out", str(tmp_path / "run")] if out else []),
        "--workspace", str(six.root)])
    assert result.exit_code == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("error: ")
    assert not (tmp_path / "run").exists() and not (six.root / "runs").exists()


def test_a_target_that_exits_on_import_is_refused_and_leaves_no_folder(six, target_module, tmp_path):
    module = target_module("""
        import sys
        sys.exit(4)
    """)
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
        "run", "--dataset", "six@v1", "--target", f"{module}:answer", "--out", str(tmp_path / "run"),
        "--workspace", str(six.root)])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: field 'target': cannot import {module}: SystemExit: 4"
    assert not (tmp_path / "run").exists()


def test_a_logged_trace_too_deep_to_record_is_that_items_failure(six, tmp_path):
    traces = tmp_path / "t.jsonl"
    deep = '{"item_id": "u-2", "deep": ' + "[" * 99 + "]" * 99 + "}"   # 100 levels: loads_json reads it
    traces.write_text('{"item_id": "u-1", "candidates": []}\n' + deep + "\n")
    folder = run(six, ref="six@v1", traces=traces, out=tmp_path / "run")
    records = read_traces(folder / "traces.jsonl")               # and traces.jsonl is readable too
    assert records["u-1"].trace == {"item_id": "u-1", "candidates": []} and records["u-1"].kind == "trace"
    assert records["u-2"].error == (f"its trace in {traces} cannot be recorded: nesting deeper than 99 levels at "
                                    "['deep'][0][0][0][0][0][0][0]...")


def test_the_lines_of_a_repeated_item_id_and_an_impossible_k_are_named(six, tmp_path):
    traces = tmp_path / "t.jsonl"
    traces.write_text("".join(f'{{"item_id": "u-{n}"}}\n' for n in (1, 3, 2, 4, 5, 6, 7, 8, 3)))
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
        "run", "--dataset", "six@v1", "--traces", str(traces), "--workspace", str(six.root)])
    assert result.stderr.strip() == f"error: {traces}:9: item_id 'u-3' appears on lines 2 and 9"
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
        "run", "--dataset", "six@v1", "--traces", str(traces), "--k", "1,5000", "--workspace", str(six.root)])
    assert result.stderr.strip() == ("error: --k '1,5000': at most 1000 (a larger cutoff is a typo, not a "
                                     "measurement), e.g. 1,3,5,10")


def test_a_trec_run_is_recorded_as_one_candidates_only(six, tmp_path):
    run_file = tmp_path / "run.trec"
    run_file.write_text("u-1 Q0 errors.zh.md#0 1 2.0 bm25\nu-1 Q0 upgrade.en.md#0 2 1.0 bm25\n"
                        "u-2 Q0 upgrade.en.md#0 1 1.0 bm25\n")
    folder = run(six, ref="six@v1", traces=run_file, out=tmp_path / "run")
    records = read_traces(folder / "traces.jsonl")
    assert {r.kind for r in records.values()} == {"trec"}
    assert records["u-1"].trace == {"candidates": ["errors.zh.md#0", "upgrade.en.md#0"]}
    assert records["u-3"].error == "no trace for this item in the --traces file" and records["u-3"].trace is None
    lines = [json.loads(line) for line in (folder / "traces.jsonl").read_text().splitlines()]
    assert lines[1]["trace"] == {"candidates": ["upgrade.en.md#0"]} and lines[1]["kind"] == "trec"
    assert read_run(folder).manifest.target == f"TREC run {run_file} (candidates only)"
    jsonl = tmp_path / "traces.jsonl"
    jsonl.write_text('{"item_id": "u-1", "candidates": ["errors.zh.md#0"], "refused": true}\n')
    folder = run(six, ref="six@v1", traces=jsonl, out=tmp_path / "jsonl")
    assert {r.kind for r in read_traces(folder / "traces.jsonl").values()} == {"trace"}
    assert read_run(folder).manifest.target == f"traces from {jsonl}"
