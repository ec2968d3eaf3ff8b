"""What `evalrun run` says to a newcomer: the run folder and the next commands at the end; why no
judge scored, in one line (none configured, --no-judge, an endpoint that does not answer), and one
line per kind of problem the judge or the traces had, each with an example."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import evalrun.scoring.generation as generation
from evalrun.cli.main import cli as evalrun_cli
from evalrun.records import read_run
from tests.support.servers import ScriptedServer, free_port

ALARMS = ("Traceback", "ConnectError", "Connection refused", "warning")


def _run(workspace, *args, code=0):
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["run", *map(str, args),
                                                              "--workspace", str(workspace.root)])
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result


def _without_judge(workspace) -> None:
    """Take the [judge] endpoint and model `curate init` wrote out of curate.toml."""
    text = workspace.config_path.read_text(encoding="utf-8")
    kept = [line for line in text.splitlines() if not line.startswith(("base_url =", "model = \"judge\""))]
    workspace.config_path.write_text("\n".join(kept) + "\n", encoding="utf-8")


def test_a_run_ends_with_its_folder_and_the_next_commands(six, tmp_path):
    first = _run(six, "--dataset", "six@v1", "--target", "tests.support.targets:perfect", "--out",
                 tmp_path / "runs" / "first", "--no-judge")
    folder = tmp_path / "runs" / "first"
    assert first.stdout.rstrip().splitlines()[-4:] == [
        f"run folder: {folder}",
        f"next: evalrun show {folder} --failures",
        f"      evalrun report {folder} --out {folder / 'report.html'} --workspace {six.root}",
        f"      evalrun compare BASE {folder} --workspace {six.root}   (BASE: another run of six@v1)"]
    second = _run(six, "--dataset", "six@v1", "--target", "tests.support.targets:perfect", "--out",
                  tmp_path / "runs" / "second", "--no-judge")
    assert second.stdout.rstrip().splitlines()[-1] == (
        f"      evalrun compare {folder} {tmp_path / 'runs' / 'second'} --workspace {six.root}   "
        f"(BASE: {folder}, the latest other run of six@v1)")
    # the commands it names work as printed
    for line in second.stdout.rstrip().splitlines()[-3:]:
        command = line.removeprefix("next:").split("   (")[0].split()
        assert command[0] == "evalrun"
        result = CliRunner(mix_stderr=False).invoke(evalrun_cli, command[1:])
        assert result.exit_code == 0, (command, result.stdout, result.stderr)


def test_without_a_judge_configured_the_run_says_so_in_one_calm_line(released, tmp_path):
    workspace = released.workspace
    _without_judge(workspace)
    result = _run(workspace, "--dataset", "faq@v1", "--target", "tests.support.targets:perfect", "--out",
                  tmp_path / "run")
    said = [line for line in result.stdout.splitlines() if "no judge configured" in line]
    assert said == ["no judge configured: the judged metrics (generation/*) are counted as unscored, not 0 "
                    "(docs/how-to/judge.md)"]
    assert not any(alarm in result.stdout + result.stderr for alarm in ALARMS + ("reachable", "error"))
    done = read_run(tmp_path / "run")
    assert done.summary.judge.absent == "not-configured"
    overall = done.summary.metrics["all"]
    assert overall["generation/correctness"].unscored == {"no judge configured": 4}
    assert overall["candidates/recall@5"].mean == 1.0 and overall["lexical/f1"].n == 4   # the rest is scored


def test_no_judge_contacts_none_and_says_the_judged_metrics_are_unscored(released, tmp_path, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("--no-judge contacted the judge")
    monkeypatch.setattr(generation, "_judge_unreachable", never)
    monkeypatch.setattr(generation, "Judge", never)
    folder = tmp_path / "run"
    result = _run(released.workspace, "--dataset", "faq@v1", "--target", "tests.support.targets:perfect", "--out",
                  folder, "--no-judge")
    assert ("no judge (--no-judge): the judged metrics (generation/*) were not computed; counted as unscored, not 0"
            in result.stdout.splitlines())
    done = read_run(folder)
    assert done.manifest.judge == {"unavailable": "--no-judge"} and done.manifest.settings.no_judge
    assert done.summary.metrics["all"]["generation/correctness"].unscored == {generation.NO_JUDGE: 4}
    assert done.summary.metrics["all"]["generation/correctness"].mean is None
    # resuming asks for the run as it was started
    (folder / "summary.json").unlink()
    again = _run(released.workspace, "--dataset", "faq@v1", "--target", "tests.support.targets:perfect", "--out",
                 folder, "--resume", code=2)
    assert again.stderr.strip() == (f"error: {folder} was started with --no-judge: finish it as it was started, "
                                    f"or run into a new --out; not resuming it")


def test_an_unreachable_judge_is_one_loud_readable_line(released, tmp_path, monkeypatch):
    url = f"http://127.0.0.1:{free_port()}/v1"   # nothing listens there
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", url)
    result = _run(released.workspace, "--dataset", "faq@v1", "--target", "tests.support.targets:perfect", "--out",
                  tmp_path / "run")
    lines = [line for line in result.stdout.splitlines() if url in line]
    assert lines == [f"judge endpoint {url} not reachable (ConnectError): the judged metrics (generation/*) are "
                     f"unscored, not 0; start it, fix [judge] in curate.toml, or pass --no-judge"]
    assert "Traceback" not in result.stdout + result.stderr


@pytest.fixture
def babbling_judge():
    server = ScriptedServer(lambda messages: "I think it is fine")   # not JSON: no verdict
    yield server
    server.close()


def test_a_judge_that_gives_no_verdict_says_so_once_per_kind_with_an_example(released, tmp_path, monkeypatch,
                                                                            babbling_judge):
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", babbling_judge.base_url)
    result = _run(released.workspace, "--dataset", "faq@v1", "--target", "tests.support.targets:perfect", "--out",
                  tmp_path / "run")
    lines = [line for line in result.stdout.splitlines() if line.startswith("the judge gave no verdict")]
    summary = read_run(tmp_path / "run").summary
    assert list(summary.judge.unscored) == ["unparsable answer"]
    n = summary.judge.unscored["unparsable answer"]
    assert len(lines) == 1 and lines[0].startswith(f"the judge gave no verdict on {n} questions: unparsable answer, "
                                                    f"e.g. t-")
    assert lines[0].endswith("; those metrics are unscored")
    assert f"generation layer: scored by model judge at {babbling_judge.base_url}" in result.stdout


def test_the_first_lines_name_each_kind_of_trace_problem_with_an_example(six, target_module, tmp_path):
    module = target_module("""
        def answer(question):
            if question.endswith("u-1?"):
                return "I cannot tell."
            return {"retrieved": ["a"], "response": "no idea", "refused": True}
    """)
    result = _run(six, "--dataset", "six@v1", "--target", f"{module}:answer", "--out", tmp_path / "run", "--no-judge")
    lines = result.stdout.splitlines()
    start = lines.index("5 items have unscored metrics, and trace problems:")
    assert lines[start + 1:start + 4] == [
        "  5 items: no candidates, e.g. u-2: the trace reports no candidates (no 'candidates' key): its candidate "
        "metrics are unscored",
        "  5 items: unknown trace key, e.g. u-2: unknown trace keys (ignored): response (did you mean answer?), "
        "retrieved (did you mean candidates?)",
        "  1 item: bad trace, e.g. u-1: bad trace: trace of u-1: must be a JSON object, got a string (an answer alone "
        "is {\"answer\": \"...\"}; a trace also names its candidates and context)"]
