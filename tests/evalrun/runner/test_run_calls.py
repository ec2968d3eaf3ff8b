"""Calls to the target in a run: each within its own timeout, a hung one abandoned, whatever a
target raises or returns recorded for that item, an HTTP body size-limited, the progress status."""

import functools
import importlib
import json
import subprocess
import sys
import threading
import time

import pytest
from click.testing import CliRunner

from curate.errors import CurateError
from evalrun.cli.main import cli as evalrun_cli
from evalrun.records import RunSettings, read_run, read_traces
from evalrun.runner import run
from evalrun.runner.scheduler import Calls
from tests.evalrun.runner.conftest import SIX, send
from tests.support.processes import PATIENCE

REFUSES = '{"candidates": [], "refused": True}'
EVALRUN = [sys.executable, "-c", "from evalrun.cli.main import main; main()"]


def _errors(folder):
    return {i: r.error for i, r in read_traces(folder / "traces.jsonl").items()}


def test_each_timeout_runs_from_the_start_of_its_own_call(six, target_module, tmp_path, capsys):
    """Concurrency 2, timeout 1 s, two items whose calls hang until the test lets them go and four at
    once: the slow two time out after 1 s and the four are answered; the run ends while the slow two
    still hang (so it did not wait for them, however slow the machine)."""
    module = target_module(f"""
        import threading
        RELEASE = threading.Event()
        def answer(question):
            if question in ("Question u-1?", "Question u-2?"):
                RELEASE.wait(300)
            return {REFUSES}
    """)
    release = importlib.import_module(module).RELEASE      # the module the run imports: one object
    try:
        folder = run(six, ref="six@v1", target=f"{module}:answer", out=tmp_path / "run",
                     settings=RunSettings(concurrency=2, timeout=1.0))
        assert not release.is_set()
    finally:
        release.set()
    assert _errors(folder) == {"u-1": "target timed out after 1 s", "u-2": "target timed out after 1 s",
                               "u-3": None, "u-4": None, "u-5": None, "u-6": None}
    assert capsys.readouterr().err.strip().endswith(
        "evalrun: 2 calls to the target ran past the 1 s timeout and were abandoned (2 still running; "
        "whatever they return is ignored)")
    assert [s.item_id for s in read_run(folder).scores] == SIX          # scored


def test_a_target_that_never_returns_holds_up_neither_the_run_nor_the_exit(six, target_module, tmp_path):
    """Every call hangs for ever: the command still ends (the subprocess timeout is only a safety
    net; a run or an exit that waited for its calls would never end)."""
    module = target_module("""
        import threading
        def answer(question):
            threading.Event().wait()
    """)
    folder = tmp_path / "hung"
    done = subprocess.run([*EVALRUN, "run", "--dataset", "six@v1", "--target", f"{module}:answer", "--out",
                           str(folder), "--concurrency", "3", "--timeout", "0.3", "--workspace", str(six.root)],
                          capture_output=True, text=True, timeout=PATIENCE, cwd=tmp_path / "targets", check=False)
    assert done.returncode == 0, done.stderr
    assert set(_errors(folder).values()) == {"target timed out after 0.3 s"} and len(_errors(folder)) == 6
    assert "6 calls to the target ran past the 0.3 s timeout and were abandoned (6 still running" in done.stderr


TARGETS = {
    "exits and raises": ("""
        import sys
        class Odd(BaseException):
            pass
        def answer(question):
            item = question.split()[1].rstrip("?")
            if item == "u-1":
                sys.exit(3)
            if item == "u-2":
                raise KeyboardInterrupt
            if item == "u-3":
                raise Odd("strange")
            if item == "u-4":
                return {"candidates": [{"c1"}]}
            if item == "u-5":
                trace = {"candidates": []}
                trace["me"] = trace
                return trace
            return {"candidates": [], "refused": True}
    """, {"u-1": "target raised SystemExit: 3", "u-2": "target raised KeyboardInterrupt",
          "u-3": "target raised Odd: strange",
          "u-4": "target returned a value JSON cannot hold: set at ['candidates'][0]",
          "u-5": "target returned a value JSON cannot hold: a dict that contains itself at ['me']", "u-6": None}),
    "values JSON cannot hold": ("""
        import datetime
        def answer(question):
            item = question.split()[1].rstrip("?")
            if item == "u-1":
                return {"answer": "half \\ud83d"}
            if item == "u-2":
                return {"candidates": [{"chunk_id": "c1", "score": float("nan")}]}
            if item == "u-3":
                return {"candidates": [], "at": datetime.datetime(2024, 5, 1)}
            if item == "u-4":
                return {"answer": b"bytes"}
            if item == "u-5":
                return {"usage": {1: 10}}
            deep = []
            for _ in range(200):
                deep = [deep]
            return {"candidates": deep}
    """, {"u-1": "target returned a value JSON cannot hold: a lone surrogate \\ud83d in a string at ['answer']",
          "u-2": "target returned a value JSON cannot hold: NaN at ['candidates'][0]['score']",
          "u-3": "target returned a value JSON cannot hold: datetime.datetime at ['at']",
          "u-4": "target returned a value JSON cannot hold: bytes at ['answer']",
          "u-5": "target returned a value JSON cannot hold: a dict key of type int (JSON keys are strings) at ['usage']",
          "u-6": "target returned a value JSON cannot hold: nesting deeper than 99 levels at "
                 "['candidates'][0][0][0][0][0][0][0]..."}),
}


@pytest.mark.parametrize("name", list(TARGETS))
def test_what_a_target_raises_or_returns_is_that_items_failure_and_the_run_goes_on(name, six, target_module,
                                                                                    tmp_path):
    source, errors = TARGETS[name]
    module = target_module(source)
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
        "run", "--dataset", "six@v1", "--target", f"{module}:answer", "--out", str(tmp_path / "run"),
        "--workspace", str(six.root)])
    assert result.exit_code == 0, result.stderr
    assert _errors(tmp_path / "run") == errors
    traces = read_traces(tmp_path / "run" / "traces.jsonl")
    assert all(traces[i].trace is None for i, error in errors.items() if error)   # nothing converted and kept
    assert [s.item_id for s in read_run(tmp_path / "run").scores] == SIX


DRIBBLE = 0.05      # s between the bytes of u-2's body: no read ever times out, the whole call does


def _by_item(dribbling: threading.Event, stop: threading.Event):
    def answer(handler, body):
        item = body["item_id"]
        if item == "u-1":        # an endless body
            handler.send_response(200)
            handler.send_header("Transfer-Encoding", "chunked")
            handler.end_headers()
            for _ in range(100_000):
                handler.wfile.write(b"400\r\n" + b" " * 1024 + b"\r\n")
        elif item == "u-2":      # a byte every 50 ms until the test stops it (or PATIENCE has passed)
            handler.send_response(200)
            handler.send_header("Transfer-Encoding", "chunked")
            handler.end_headers()
            dribbling.set()
            try:
                for _ in range(int(PATIENCE / DRIBBLE)):
                    if stop.is_set():
                        break
                    handler.wfile.write(b"1\r\n \r\n")
                    handler.wfile.flush()
                    time.sleep(DRIBBLE)
            finally:
                dribbling.clear()
        elif item == "u-3":
            send(handler, b'{"candidates": [], "latency_ms": {"total": Infinity}}')
        elif item == "u-4":
            send(handler, b"{}", status=500)
        else:
            send(handler, json.dumps({"candidates": [], "refused": True}).encode())
    return answer


def test_an_http_target_is_bounded_in_size_by_the_limit_and_in_time_by_the_deadline(six, http_server, tmp_path):
    """u-2's body never ends while the run lasts: the run ends with u-2's body still coming (so the
    deadline, not the body's end, stopped the call; known from the server, not from a stopwatch).
    The deadline is 5 s, not less: each of the other calls must end within it, and on a busy machine
    one local HTTP call takes most of a second (the client's TLS set-up alone is 0.15 s at load 14)."""
    dribbling, stop = threading.Event(), threading.Event()
    server = http_server(_by_item(dribbling, stop))
    try:
        result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
            "run", "--dataset", "six@v1", "--target", server.url, "--out", str(tmp_path / "run"), "--timeout", "5",
            "--max-response-bytes", "10000", "--workspace", str(six.root)])
        assert dribbling.is_set()                     # u-2's body is still being sent
    finally:
        stop.set()
    assert result.exit_code == 0, result.stderr
    errors = _errors(tmp_path / "run")
    assert errors == {
        "u-1": "target response larger than 10000 bytes", "u-2": "target timed out after 5 s",
        "u-3": "target raised ValueError: the target answered HTTP 200 with JSON that cannot be held (Infinity is "
               "not a number JSON can hold): '{\"candidates\": [], \"latency_ms\": {\"total\": Infinity}}'",
        "u-4": "target answered HTTP 500 Internal Server Error", "u-5": None, "u-6": None}
    assert read_run(tmp_path / "run").manifest.settings.max_response_bytes == 10000


def test_the_progress_bar_is_curates_with_the_error_count(six, target_module, tmp_path, monkeypatch):
    run_module = importlib.import_module("evalrun.runner.run")   # evalrun.runner.run is also the function
    shown = []

    def progress(items, description, unit="item", total=None, status=None):
        for item in items:
            yield item
            shown.append(status())
        shown.append((description, unit, total))

    monkeypatch.setattr(run_module, "progress", progress)
    module = target_module(f"""
        def answer(question):
            if question in ("Question u-2?", "Question u-5?"):
                raise RuntimeError("down")
            return {REFUSES}
    """)
    run(six, ref="six@v1", target=f"{module}:answer", out=tmp_path / "run", settings=RunSettings(concurrency=1))
    assert shown == ["0 errors", "1 errors", "1 errors", "1 errors", "2 errors", "2 errors",
                     ("running the target", "item", 6)]


def test_a_target_hung_on_too_many_calls_stops_the_run_resumably(six, target_module, tmp_path, monkeypatch):
    run_module = importlib.import_module("evalrun.runner.run")   # evalrun.runner.run is also the function
    monkeypatch.setattr(run_module, "Calls", functools.partial(Calls, max_hung=2))
    module = target_module(f"""
        import os, threading
        def answer(question):
            if question != "Question u-1?" and not os.environ.get("FIXED"):
                threading.Event().wait()
            return {REFUSES}
    """)
    settings = RunSettings(concurrency=1, timeout=0.2)
    folder = tmp_path / "run"
    with pytest.raises(CurateError) as caught:
        run(six, ref="six@v1", target=f"{module}:answer", out=folder, settings=settings)
    assert str(caught.value) == (
        f"2 calls to the target are still running after their 0.2 s timeout (it hangs): stopped, 3 of 6 items "
        f"done; fix the target, then finish with: evalrun run --dataset six@v1 --target {module}:answer --out "
        f"{folder} --resume --concurrency 1 --timeout 0.2 --workspace {six.root}")
    monkeypatch.setenv("FIXED", "1")
    run(six, ref="six@v1", target=f"{module}:answer", out=folder, resume=True, settings=settings)
    assert list(_errors(folder).values()) == [None, "target timed out after 0.2 s", "target timed out after 0.2 s",
                                              None, None, None]
