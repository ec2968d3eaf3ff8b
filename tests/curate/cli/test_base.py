"""One CLI shape for both programs: a known error is one line and exit 2, findings exit 1, a bug is
one line and exit 3, and --debug or CURATE_DEBUG=1 shows the traceback instead."""

import pytest
from click.testing import CliRunner

import curate.kb.store
from curate.cli.main import cli as curate_cli
from evalrun.cli.main import cli as evalrun_cli


def _boom(*args, **kwargs):
    raise ZeroDivisionError("a bug in the library")


@pytest.fixture
def buggy(monkeypatch):
    monkeypatch.setattr(curate.kb.store.SnapshotStore, "names", _boom)


def test_a_bug_is_one_line_and_exit_3(workspace, buggy):
    result = CliRunner(mix_stderr=False).invoke(curate_cli, ["--workspace", str(workspace.root), "kb", "list"])
    assert result.exit_code == 3
    assert result.stderr.strip().splitlines() == [
        "internal error: ZeroDivisionError: a bug in the library; run with --debug (or CURATE_DEBUG=1) for the traceback"]
    assert "Traceback" not in result.stderr + result.stdout


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_debug_shows_the_traceback(workspace, buggy, monkeypatch, how):
    args = ["--workspace", str(workspace.root), "kb", "list"]
    if how == "flag":
        args = ["--debug", *args]
    else:
        monkeypatch.setenv("CURATE_DEBUG", "1")
    result = CliRunner(mix_stderr=False).invoke(curate_cli, args)
    assert isinstance(result.exception, ZeroDivisionError)


def test_a_known_error_is_one_line_and_exit_2(tmp_path):
    result = CliRunner(mix_stderr=False).invoke(curate_cli, ["--workspace", str(tmp_path), "kb", "list"])
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("error: ")


def test_evalrun_has_the_same_shape(tmp_path, monkeypatch):
    not_a_run = tmp_path / "somewhere"
    not_a_run.mkdir()
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["show", str(not_a_run)])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {not_a_run} is not a run folder (no manifest.json); `evalrun run` writes one"
    missing = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["show", str(tmp_path / "nothing")])
    assert missing.exit_code == 2 and len(missing.stderr.strip().splitlines()) == 1

    import evalrun.cli.show as show
    monkeypatch.setattr(show, "read_run", _boom)
    bug = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["show", str(not_a_run)])
    assert bug.exit_code == 3 and bug.stderr.startswith("internal error: ZeroDivisionError")
    debug = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["--debug", "show", str(not_a_run)])
    assert isinstance(debug.exception, ZeroDivisionError)


def test_bad_k_is_one_line(tmp_path):
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["run", "--dataset", "x@v1", "--traces", "t.jsonl",
                                                              "--k", "0,5", "--workspace", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: --k '0,5': give positive whole numbers, e.g. 1,3,5,10"
