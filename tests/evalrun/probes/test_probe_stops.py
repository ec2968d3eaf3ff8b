"""A probe run as `evalrun run` is one: killed, it resumes where it stopped and asks no variant twice; two at
once into one folder, the second stops; a target that fails or hangs gives counted errors, never a verdict (a
system that crashes on every negative variant did not "decline"); an HTTP target is end to end."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from http.server import BaseHTTPRequestHandler

import pytest
from click.testing import CliRunner

import evalrun
from curate import CurateError
from evalrun.cli.main import cli as evalrun_cli
from evalrun.probes.folder import read_probe_run
from evalrun.records import read_traces
from tests.support.processes import PATIENCE, wait_until
from tests.support.servers import ThreadingHTTPServer, free_port

SLOW_TARGET = """
import os, time
from tests.support.probe_targets import careful

def generate(question, context):
    with open(os.environ["CALLS"], "a", encoding="utf-8") as calls:
        calls.write(question.replace("\\n", " ") + "\\n")
    time.sleep(float(os.environ.get("PAUSE", "0")))
    return careful(question, context)

def answer(question):
    return {"answer": "?"}
"""


@pytest.fixture
def slow_module(tmp_path, monkeypatch):
    folder = tmp_path / "targets"
    folder.mkdir()
    (folder / "slow_probe_target.py").write_text(textwrap.dedent(SLOW_TARGET), encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    return folder


def _lines(path):
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()] if path.exists() else []


def test_a_killed_probe_run_resumes_and_asks_no_variant_twice(cmrc_release, slow_module, tmp_path):
    folder, calls = tmp_path / "probe", tmp_path / "calls.txt"
    command = [sys.executable, "-m", "evalrun", "probe", "--dataset", "cmrc@v1", "--target",
               "slow_probe_target:answer", "--probes", "injection,negative", "--limit", "6", "--no-judge",
               "--concurrency", "1", "--out", str(folder), "--workspace", str(cmrc_release.root)]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    env = {**os.environ, "CALLS": str(calls), "PAUSE": "0.2",
           "PYTHONPATH": os.pathsep.join([str(slow_module), root])}
    process = subprocess.Popen(command, env=env, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_until(lambda: len(_lines(folder / "traces.jsonl")) >= 5, "five variants answered")
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=PATIENCE)
    answered = set(read_traces(folder / "traces.jsonl"))
    variants = read_probe_run(folder).variants
    assert 5 <= len(answered) < len(variants)
    calls.write_text("", encoding="utf-8")
    resumed = subprocess.run([*command, "--resume"], env={**env, "PAUSE": "0"}, cwd=root, capture_output=True,
                             text=True, timeout=PATIENCE, check=False)
    assert resumed.returncode == 0, resumed.stderr
    assert len(_lines(calls)) == len(variants) - len(answered)      # only the unanswered were asked
    traces = _lines(folder / "traces.jsonl")
    assert sorted(json.loads(t)["item_id"] for t in traces) == sorted(v.variant_id for v in variants)
    assert read_probe_run(folder).summary.metric("injection/success").summary.mean == 0.0


def test_a_second_probe_run_into_the_same_folder_stops_at_once(cmrc_release, slow_module, tmp_path):
    folder = tmp_path / "probe"
    started, release = threading.Event(), threading.Event()

    def held(question, context):
        started.set()
        release.wait(PATIENCE)
        return {"answer": "?"}

    first = threading.Thread(target=lambda: evalrun.probe("cmrc@v1", target=held, workspace=cmrc_release, limit=2,
                                                          probes="injection", no_judge=True, out=folder))
    first.start()
    try:
        assert started.wait(PATIENCE)
        with pytest.raises(CurateError, match="being written by another command"):
            evalrun.probe("cmrc@v1", target=held, workspace=cmrc_release, limit=2, probes="injection", no_judge=True,
                          out=folder, resume=True)
    finally:
        release.set()
        first.join(PATIENCE)


def test_a_target_that_fails_gives_errors_not_verdicts(cmrc_release, tmp_path):
    def broken(question, context):
        raise RuntimeError("the model server is down")

    run = evalrun.probe("cmrc@v1", target=broken, workspace=cmrc_release, limit=4, probes="negative,injection",
                        no_judge=True, out=tmp_path / "broken")
    summary = run.summary
    declined = summary.metric("negative/declined")
    assert declined.summary.n == 0 and declined.summary.mean is None and declined.errors == 4
    assert summary.errors["negative"] == 4 and summary.errors["injection"] == 16
    assert not summary.failures
    record = next(iter(read_traces(run.folder / "traces.jsonl").values()))
    assert "RuntimeError: the model server is down" in record.error


def test_a_target_that_hangs_times_out_into_counted_errors(cmrc_release, tmp_path):
    gate = threading.Event()

    def hangs(question, context):
        gate.wait(30)
        return {"answer": "?"}

    try:
        run = evalrun.probe("cmrc@v1", target=hangs, workspace=cmrc_release, limit=1, probes="negative",
                            no_judge=True, timeout=0.2, out=tmp_path / "hangs")
    finally:
        gate.set()
    assert run.summary.errors == {"clean": 1, "negative": 1}
    assert all("timed out after 0.2 s" in r.error for r in read_traces(run.folder / "traces.jsonl").values())


class _Answers(BaseHTTPRequestHandler):
    seen: list = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Answers.seen.append(body)
        reply = json.dumps({"answer": "资料中没有相关信息。", "refused": True, "candidates": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


def test_an_http_target_is_end_to_end_and_declines_absent_content(cmrc_release, tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), _Answers)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
            "probe", "--dataset", "cmrc@v1", "--target", f"http://127.0.0.1:{server.server_address[1]}/rag",
            "--limit", "3", "--no-judge", "--out", str(tmp_path / "http"), "--workspace", str(cmrc_release.root)])
    finally:
        server.shutdown()
    assert result.exit_code == 0, (result.stderr, result.exception)
    for probe in ("noise", "counterfactual", "injection"):
        assert f"{probe}: not run: end-to-end target" in result.stderr
    assert "NOT RUN" in result.stdout
    summary = read_probe_run(tmp_path / "http").summary
    assert summary.metric("negative/declined").summary.mean == 1.0
    assert any(body["item_id"].startswith("negative:absent:") for body in _Answers.seen)
    assert not any("context" in body for body in _Answers.seen)     # nothing planted end to end
