"""One CLI shape for both programs: a known error is one line and exit 2, findings exit 1, a bug is
one line and exit 3, and --debug or CURATE_DEBUG=1 shows the traceback instead."""

import pytest
from click.testing import CliRunner

import curate.kb.store
from curate.cli.main import cli as curate_cli


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
