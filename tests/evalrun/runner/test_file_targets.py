"""`--target path/to/file.py:function` loads the file by its path, from any folder; a target that
cannot be imported says in one line where it was looked for (exit 2)."""

from __future__ import annotations

import os
import sys
import textwrap

import pytest
from click.testing import CliRunner

from evalrun.cli.main import cli as evalrun_cli
from evalrun.records import read_run


@pytest.fixture
def restored_path(monkeypatch):
    """Python's path and modules as they were, after the test (a file target puts its folder first)."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "modules", dict(sys.modules))


def _run(workspace, target, out, code=0):
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["run", "--dataset", "six@v1", "--target", target,
                                                              "--out", str(out), "--workspace", str(workspace.root)])
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result


def test_a_file_target_runs_from_any_folder_and_imports_its_neighbours(six, tmp_path, monkeypatch, restored_path):
    system = tmp_path / "my system"
    system.mkdir()
    (system / "helpers_for_rag.py").write_text("REFUSAL = {'candidates': [], 'context': [], 'refused': True}\n")
    (system / "rag.py").write_text(textwrap.dedent("""
        from dataclasses import dataclass
        from helpers_for_rag import REFUSAL

        @dataclass
        class Settings:   # a dataclass looks its module up in sys.modules
            k: int = 3

        def answer(question):
            return dict(REFUSAL, answer=None)
    """))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    _run(six, os.path.join("..", "my system", "rag.py") + ":answer", tmp_path / "run")
    done = read_run(tmp_path / "run")
    assert len(done.traces) == 6 and all(r.error is None for r in done.traces.values())
    assert done.manifest.target == f"{system / 'rag.py'}:answer"   # absolute: --resume works from anywhere too
    assert done.summary.metrics["all"]["unanswerable/correct_refusal"].mean == 1.0


def test_a_missing_file_or_function_is_one_line(six, tmp_path, restored_path):
    result = _run(six, f"{tmp_path / 'nope.py'}:answer", tmp_path / "run", code=2)
    assert result.stderr.strip() == f"error: field 'target': no file {tmp_path / 'nope.py'}"
    (tmp_path / "rag.py").write_text("def answer(question):\n    return {}\n")
    result = _run(six, f"{tmp_path / 'rag.py'}:respond", tmp_path / "run", code=2)
    assert result.stderr.strip() == f"error: field 'target': {tmp_path / 'rag.py'} has no function respond"
    assert not (tmp_path / "run").exists()


def test_a_module_on_no_path_says_where_it_was_looked_for(six, tmp_path, monkeypatch, restored_path):
    monkeypatch.chdir(tmp_path)
    result = _run(six, "no_such_rag_here:answer", tmp_path / "run", code=2)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: field 'target': cannot import no_such_rag_here: no module "
                               f"'no_such_rag_here' on Python's path (looked in {tmp_path}, ")
    assert lines[0].endswith("give its file: --target path/to/no_such_rag_here.py:FUNCTION")


def test_a_missing_import_inside_the_target_names_that_module(six, tmp_path, monkeypatch, restored_path):
    (tmp_path / "rag_needing_more.py").write_text("import not_installed_anywhere\n")
    monkeypatch.chdir(tmp_path)
    result = _run(six, "rag_needing_more:answer", tmp_path / "run", code=2)
    assert result.stderr.strip() == ("error: field 'target': cannot import rag_needing_more: ModuleNotFoundError: "
                                     "No module named 'not_installed_anywhere'")


def test_a_target_that_opens_the_workspace_itself_opens_the_runs_from_any_folder(six, tmp_path, monkeypatch,
                                                                                  restored_path):
    # the README's rag.py opens the workspace at import (curate.find_workspace()): run from elsewhere
    # with --workspace, it finds the run's workspace, not "no curate.toml here"
    monkeypatch.delenv("CURATE_WORKSPACE", raising=False)
    (tmp_path / "rag.py").write_text(textwrap.dedent("""
        import curate
        SNAPSHOTS = curate.SnapshotStore(curate.find_workspace()).names()
        ROOT = curate.open_workspace().root

        def answer(question):
            return {"candidates": [], "context": [], "answer": str(ROOT)}
    """))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    _run(six, f"{tmp_path / 'rag.py'}:answer", tmp_path / "run")
    done = read_run(tmp_path / "run")
    assert {r.trace["answer"] for r in done.traces.values()} == {str(six.root.resolve())}
    assert "CURATE_WORKSPACE" not in os.environ                # set for the run only
