"""Warm-up is not latency: the first `--warmup` calls per worker (imports, model loading, connections)
are marked in their trace records, left out of every latency stage, and counted and shown apart; a
resumed run warms up again; a run whose every call was a warm-up has no latency, and says so."""

from __future__ import annotations

import importlib
import json

import pytest
from click.testing import CliRunner

from curate.checks.leakage import check_leakage
from curate.release import release
from evalrun.cli.main import cli as evalrun_cli
from evalrun.records import RunSettings, read_run, read_traces
from evalrun.runner import run

EIGHT = [f"w-{n}" for n in range(1, 9)]
REFUSES = '{"candidates": [], "context": [], "refused": True}'
# The first two calls (one per worker at concurrency 2) sleep 0.5 s, as a cold index loads; the rest are fast.
SLOW_FIRST = f"""
    import threading, time
    LOCK, COUNT = threading.Lock(), [0]
    def answer(question):
        with LOCK:
            COUNT[0] += 1
            cold = COUNT[0] <= 2
        if cold:
            time.sleep(0.5)
        return {REFUSES}
"""


def _release(handbook, tmp_path, name: str, ids: list[str]):
    """Release NAME@v1 of unanswerable items `ids` (question "Question ID?"), checked for leakage."""
    source = tmp_path / f"{name}.jsonl"
    source.write_text("".join(json.dumps({"id": i, "question": f"Question {i}?", "answerable": False}) + "\n"
                              for i in ids))
    handbook("import", source, "--dataset", name, "--source", "human", "--kb", "docs")
    check_leakage(handbook.workspace, ref=name, semantic=False)
    release(handbook.workspace, dataset=name, message="v1")
    return handbook.workspace


@pytest.fixture
def eight(handbook, tmp_path):
    """eight@v1: eight unanswerable items w-1..w-8."""
    return _release(handbook, tmp_path, "eight", EIGHT)


def _warm(folder) -> set[str]:
    return {item_id for item_id, record in read_traces(folder / "traces.jsonl").items() if record.warmup}


def test_the_first_call_per_worker_is_warm_up_out_of_the_latency(eight, target_module, tmp_path):
    module = target_module(SLOW_FIRST)
    folder = tmp_path / "run"
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
        "run", "--dataset", "eight@v1", "--target", f"{module}:answer", "--out", str(folder), "--concurrency", "2",
        "--workspace", str(eight.root)])
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    assert _warm(folder) == {"w-1", "w-2"}      # calls start in the release's order
    done = read_run(folder)
    e2e = done.summary.end_to_end
    assert e2e.latency_ms["total"].n == 6 and e2e.latency_ms["total"].max < 500
    assert e2e.latency_ms["total"].p95 < 500
    assert e2e.warmup_calls == 2 and e2e.warmup_ms.n == 2 and e2e.warmup_ms.max >= 500
    assert done.manifest.settings.warmup == 1
    items = {row.item_id: row.end_to_end for row in done.scores}
    assert items["w-1"].warmup and items["w-1"].latency_ms >= 500 and not items["w-3"].warmup
    assert (items["w-3"].tokens, items["w-3"].cost) == (None, None)      # no usage reported: unknown, not 0
    out = " ".join(result.stdout.split())
    assert "latency over 6 calls; 2 warm-up calls left out (slowest " in out
    shown = " ".join(CliRunner().invoke(evalrun_cli, ["show", str(folder)]).output.split())
    assert "latency over 6 calls; 2 warm-up calls left out (slowest " in shown


def test_warmup_0_keeps_the_first_calls_in_the_latency(eight, target_module, tmp_path):
    module = target_module(SLOW_FIRST)
    folder = tmp_path / "run"
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
        "run", "--dataset", "eight@v1", "--target", f"{module}:answer", "--out", str(folder), "--concurrency", "2",
        "--warmup", "0", "--workspace", str(eight.root)])
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    assert _warm(folder) == set()
    e2e = read_run(folder).summary.end_to_end
    assert e2e.latency_ms["total"].n == 8 and e2e.latency_ms["total"].max >= 500
    assert (e2e.warmup_calls, e2e.warmup_ms) == (0, None)
    assert read_run(folder).manifest.settings.warmup == 0
    out = " ".join(result.stdout.split())
    assert "latency over 8 calls" in out and "warm-up" not in out


def test_a_resumed_run_warms_up_again(eight, target_module, tmp_path):
    module = target_module(SLOW_FIRST)
    folder = tmp_path / "run"
    settings = RunSettings(concurrency=2)
    run(eight, ref="eight@v1", target=f"{module}:answer", out=folder, settings=settings)
    path = folder / "traces.jsonl"
    kept = [line for line in path.read_text().splitlines(keepends=True)
            if json.loads(line)["item_id"] in ("w-1", "w-2", "w-3", "w-4")]
    path.write_text("".join(kept))          # as if killed after four items
    (folder / "summary.json").unlink()
    importlib.import_module(module).COUNT[0] = 0      # a new process: the target is cold again
    run(eight, ref="eight@v1", target=f"{module}:answer", out=folder, resume=True, settings=settings)
    assert _warm(folder) == {"w-1", "w-2", "w-5", "w-6"}   # the resumed run's first two calls too
    e2e = read_run(folder).summary.end_to_end
    assert e2e.warmup_calls == 4 and e2e.warmup_ms.n == 4 and e2e.warmup_ms.p50 >= 500
    assert e2e.latency_ms["total"].n == 4 and e2e.latency_ms["total"].max < 500


def test_a_failed_warm_up_call_is_warm_up_not_a_failed_call(eight, target_module, tmp_path):
    module = target_module(f"""
        def answer(question):
            if question == "Question w-1?":
                raise RuntimeError("index not loaded yet")
            if question == "Question w-5?":
                raise RuntimeError("down")
            return {REFUSES}
    """)
    folder = run(eight, ref="eight@v1", target=f"{module}:answer", out=tmp_path / "run",
                 settings=RunSettings(concurrency=2))
    record = read_traces(folder / "traces.jsonl")["w-1"]
    assert record.warmup and record.error == "target raised RuntimeError: index not loaded yet"
    done = read_run(folder)
    e2e = done.summary.end_to_end
    assert e2e.latency_ms["failed calls"].n == 1          # w-5 only: the failed warm-up call is warm-up
    assert e2e.latency_ms["total"].n == 5                 # w-3, w-4, w-6, w-7, w-8
    assert e2e.warmup_calls == 2 and e2e.warmup_ms.n == 2
    assert done.summary.failed_items == {"target raised RuntimeError": 2}    # still a failed item
    item = {row.item_id: row.end_to_end for row in done.scores}["w-1"]
    assert item.warmup and item.latency_ms == record.elapsed_ms and (item.tokens, item.cost) == (None, None)


def test_a_run_whose_every_call_is_warm_up_has_no_latency_and_says_so(handbook, target_module, tmp_path):
    workspace = _release(handbook, tmp_path, "two", ["w-1", "w-2"])
    module = target_module(f"""
        def answer(question):
            return {REFUSES}
    """)
    folder = tmp_path / "run"
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
        "run", "--dataset", "two@v1", "--target", f"{module}:answer", "--out", str(folder),
        "--workspace", str(workspace.root)])          # concurrency 4: four warm-up calls, two items
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    assert _warm(folder) == {"w-1", "w-2"}
    e2e = read_run(folder).summary.end_to_end
    assert e2e.latency_ms == {} and e2e.warmup_calls == 2 and e2e.warmup_ms.n == 2
    out = " ".join(result.stdout.split())
    assert "latency: none measured, every call (2) was a warm-up call (slowest " in out
    assert "--warmup 0 counts them" in out


def test_the_resume_command_passes_warmup_on(eight, tmp_path, monkeypatch):
    run_module = importlib.import_module("evalrun.runner.run")   # evalrun.runner.run is also the function

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(run_module, "_call_target", interrupted)
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
        "run", "--dataset", "eight@v1", "--target", "tests.support.targets:perfect", "--out", str(tmp_path / "run"),
        "--warmup", "0", "--workspace", str(eight.root)])
    assert result.exit_code == 130
    assert result.stderr.splitlines() == [(
        f"interrupted: 0 of 8 items done; finish with: evalrun run --dataset eight@v1 --target "
        f"tests.support.targets:perfect --out {tmp_path / 'run'} --resume --warmup 0 --workspace {eight.root}")]


def test_logged_traces_have_no_warm_up(eight, tmp_path):
    traces = tmp_path / "logged.jsonl"
    traces.write_text("".join(json.dumps({"item_id": i, "candidates": [], "refused": True,
                                          "latency_ms": {"total": 100.0 * n}}) + "\n"
                              for n, i in enumerate(EIGHT, 1)))
    folder = run(eight, ref="eight@v1", traces=traces, out=tmp_path / "run")
    assert _warm(folder) == set() and read_run(folder).manifest.settings.warmup == 0
    e2e = read_run(folder).summary.end_to_end
    assert e2e.latency_ms["total"].n == 8 and e2e.latency_ms["total"].max == 800.0 and e2e.warmup_calls == 0
