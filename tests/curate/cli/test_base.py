"""One CLI shape for both programs: a known error is one line and exit 2, findings exit 1, a bug is
one line and exit 3, and --debug or CURATE_DEBUG=1 shows the traceback instead."""

import click
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


@pytest.mark.parametrize("place", ["before", "after the subcommand", "between group and subcommand"])
def test_debug_works_where_the_hint_puts_it(workspace, buggy, place):
    root = ["--workspace", str(workspace.root)]
    args = {"before": ["--debug", *root, "kb", "list"],
            "after the subcommand": ["kb", "list", "--debug", *root],
            "between group and subcommand": [*root, "kb", "--debug", "list"]}[place]
    result = CliRunner(mix_stderr=False).invoke(curate_cli, args)
    assert isinstance(result.exception, ZeroDivisionError)


def test_workspace_may_follow_the_subcommand(workspace):
    result = CliRunner(mix_stderr=False).invoke(curate_cli, ["kb", "list", "-w", str(workspace.root)])
    assert result.exit_code == 0, result.stderr


def test_evalrun_takes_debug_after_the_subcommand(tmp_path):
    from evalrun.cli.main import cli as evalrun_cli
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["show", str(tmp_path / "no-run"), "--debug"])
    assert "no such option" not in result.stderr.lower()
    assert result.exit_code != 0 and result.exception is not None and not isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("tool, args, suggestion", [
    ("curate", ["relase"], "error: No such command 'relase'. Did you mean 'release'? (see `curate --help`)"),
    ("curate", ["kb", "shwo"], "error: No such command 'shwo'. Did you mean 'show'? (see `curate kb --help`)"),
    ("curate", ["annotate", "users", "lst"],
     "error: No such command 'lst'. Did you mean 'list'? (see `curate annotate users --help`)"),
    ("evalrun", ["reprot"], "error: No such command 'reprot'. Did you mean 'report'? (see `evalrun --help`)"),
])
def test_a_mistyped_command_gets_a_suggestion(tmp_path, tool, args, suggestion):
    from evalrun.cli.main import cli as evalrun_cli
    cli = {"curate": curate_cli, "evalrun": evalrun_cli}[tool]
    result = CliRunner(mix_stderr=False).invoke(cli, args, prog_name=tool)
    assert result.exit_code == 2 and result.stderr.strip() == suggestion


def test_every_group_suggests():
    from curate.cli.base import CommandGroup
    from evalrun.cli.main import cli as evalrun_cli

    def groups(group):
        yield group
        for command in group.commands.values():
            if isinstance(command, click.Group):
                yield from groups(command)
    for root in (curate_cli, evalrun_cli):
        assert all(isinstance(g, CommandGroup) for g in groups(root))
