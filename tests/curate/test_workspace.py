import os
import tomllib

import pytest
from click.testing import CliRunner

from curate.cli.main import cli
from curate.errors import InputError, WorkspaceError
from curate.fileio import atomic_directory, atomic_write_text
from curate.release import Releases
from curate.workspace import find_workspace, init_workspace


def test_init_writes_settings_and_never_a_key(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    result = CliRunner(mix_stderr=False).invoke(cli, [
        "init", str(tmp_path / "ws"), "--kb", "handbook", "--embedding-model", "/models/minilm",
        "--judge-base-url", "http://127.0.0.1:9000/v1", "--judge-model", "qwen", "--judge-api-key-env", "MY_KEY"])
    assert result.exit_code == 0, result.stderr
    text = (tmp_path / "ws" / "curate.toml").read_text(encoding="utf-8")
    config = tomllib.loads(text)
    assert config["kb"]["default"] == "handbook"
    assert config["embedding"]["model"] == "/models/minilm"
    assert config["judge"] == {"base_url": "http://127.0.0.1:9000/v1", "model": "qwen", "api_key_env": "MY_KEY"}
    assert "sk-secret-value" not in text
    assert (tmp_path / "ws" / "kb").is_dir() and (tmp_path / "ws" / "datasets").is_dir()


def test_init_refuses_an_existing_workspace(tmp_path):
    init_workspace(tmp_path)
    with pytest.raises(WorkspaceError, match="already exists"):
        init_workspace(tmp_path)


def test_workspace_is_found_from_a_subfolder_or_named(tmp_path, monkeypatch):
    workspace = init_workspace(tmp_path / "ws")
    inner = tmp_path / "ws" / "datasets" / "deep"
    inner.mkdir(parents=True)
    assert find_workspace(inner).root == workspace.root
    monkeypatch.chdir(inner)
    result = CliRunner(mix_stderr=False).invoke(cli, ["kb", "list"])
    assert result.exit_code == 0, result.stderr
    with pytest.raises(WorkspaceError, match="no curate.toml"):
        find_workspace(tmp_path)
    with pytest.raises(WorkspaceError, match="is not a curate workspace"):
        find_workspace(explicit=tmp_path)


def test_outside_a_workspace_the_error_is_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner(mix_stderr=False).invoke(cli, ["kb", "list"])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: no curate.toml in ")


def test_broken_config_names_file_and_line(tmp_path):
    workspace = init_workspace(tmp_path)
    workspace.config_path.write_text("[kb]\ndefault = \n", encoding="utf-8")
    with pytest.raises(InputError, match=r"curate.toml:2: not valid TOML"):
        workspace.config()


def test_atomic_write_keeps_the_old_file_when_interrupted(tmp_path, monkeypatch):
    path = tmp_path / "items.jsonl"
    atomic_write_text(path, "old\n")

    def fail(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(path, "new\n")
    monkeypatch.undo()
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["items.jsonl"]


def test_atomic_directory_appears_whole_or_not_at_all(tmp_path):
    with pytest.raises(RuntimeError):
        with atomic_directory(tmp_path / "out") as tmp:
            (tmp / "half").write_text("x")
            raise RuntimeError("interrupted")
    assert os.listdir(tmp_path) == []
    with atomic_directory(tmp_path / "out") as tmp:
        (tmp / "whole").write_text("x")
    with atomic_directory(tmp_path / "out", replace=True) as tmp:
        (tmp / "newer").write_text("y")
    assert os.listdir(tmp_path / "out") == ["newer"] and os.listdir(tmp_path) == ["out"]
    with pytest.raises(FileExistsError):
        with atomic_directory(tmp_path / "out"):
            pass


def _store_often(final, number: int) -> None:
    for _ in range(150):
        with atomic_directory(final, replace=True) as tmp:
            (tmp / "a").write_text(str(number))
            (tmp / "b").write_text(str(number))


def test_commands_storing_one_folder_at_once_all_succeed_and_leave_one_whole_folder(tmp_path):
    # two commands that store the same shard's sketch at once (each finished its own copy): before, the later
    # rename failed with "Directory not empty" and the command stopped
    import multiprocessing
    final = tmp_path / "sketch"
    writers = [multiprocessing.get_context("fork").Process(target=_store_often, args=(final, n)) for n in range(4)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    assert [w.exitcode for w in writers] == [0, 0, 0, 0]
    assert os.listdir(tmp_path) == ["sketch"]   # nothing moved aside is left
    assert (final / "a").read_text() == (final / "b").read_text()   # one writer's whole folder


def test_init_prints_the_next_steps_and_they_work_in_that_order(tmp_path, data_dir, monkeypatch):
    import shlex
    monkeypatch.chdir(tmp_path)
    runner = CliRunner(mix_stderr=False)
    result = runner.invoke(cli, ["init", "hr-eval", "--kb", "hr"])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1] == "next, in this order (docs/tutorials/first-release.md goes through them):"
    steps = [line.strip() for line in lines[2:]]
    assert steps[0] == "cd hr-eval" and steps[-1].startswith("evalrun run --dataset hr@v1 ")
    monkeypatch.chdir(tmp_path / "hr-eval")
    for step in steps[1:-1]:
        args = shlex.split(step.replace("DOCS_FOLDER", str(data_dir / "docs"))
                           .replace("QUESTIONS.jsonl", str(data_dir / "items.jsonl")), comments=True)
        assert args[0] == "curate"
        done = runner.invoke(cli, args[1:])
        assert done.exit_code in (0, 1), f"{step}: {done.stderr}"
    manifest = Releases(find_workspace(), "hr").manifest("v1")
    assert all(record.current for record in manifest.checks.present().values())


def test_a_new_workspace_has_no_judge_until_one_is_given(tmp_path):
    from curate.errors import InputError
    from curate.judge.config import resolve
    from curate.workspace import init_workspace

    bare = init_workspace(tmp_path / "bare")
    with pytest.raises(InputError, match="no judge configured"):   # not a placeholder address that never answers
        resolve(bare)
    given = init_workspace(tmp_path / "given", judge_base_url="http://127.0.0.1:8000/v1")
    assert (resolve(given).base_url, resolve(given).model) == ("http://127.0.0.1:8000/v1", "judge")
