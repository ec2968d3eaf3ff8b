"""A resumed run keeps its judge: `--resume` with another judge endpoint or model is refused, naming both,
before any call; the manifest and the summary never name different judges."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from curate.errors import CurateError
from evalrun.cli.main import cli as evalrun_cli
from evalrun.records import read_run
from evalrun.runner import run
from evalrun.scoring import score_run
from tests.evalrun.scoring.test_generation import _reply
from tests.support import targets
from tests.support.servers import ScriptedServer


@pytest.fixture
def judges():
    first, second = ScriptedServer(_reply), ScriptedServer(_reply)
    yield first, second
    first.close()
    second.close()


def _killed(folder) -> bytes:
    """Cut traces.jsonl as a kill while writing its third line would; return what is left."""
    lines = (folder / "traces.jsonl").read_bytes().splitlines(keepends=True)
    left = b"".join(lines[:2]) + lines[2][: len(lines[2]) // 2]
    (folder / "traces.jsonl").write_bytes(left)
    (folder / "summary.json").unlink()
    (folder / "scores.jsonl").unlink()
    return left


def test_resuming_with_another_judge_is_refused_naming_both(released, tmp_path, monkeypatch, judges):
    first, second = judges
    folder = tmp_path / "run"
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", first.base_url)
    run(released.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=folder)
    left = _killed(folder)
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", second.base_url)          # a new shell, another endpoint
    targets.CALLS.clear()
    args = ["run", "--dataset", "faq@v1", "--target", "tests.support.targets:perfect", "--out", str(folder), "--resume",
            "--workspace", str(released.workspace.root)]
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, args)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stderr.strip() == (
        f"error: {folder} keeps the judge it started with, and the judge differs (started with model judge at "
        f"{first.base_url}; now model judge at {second.base_url}): configure that judge again (curate.toml [judge], "
        f"CURATE_JUDGE_BASE_URL, CURATE_JUDGE_MODEL) to finish this run, or run into a new --out; not resuming it")
    assert targets.CALLS == [] and (folder / "traces.jsonl").read_bytes() == left
    assert not (folder / "summary.json").exists() and second.requests == 0
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", first.base_url)
    monkeypatch.setenv("CURATE_JUDGE_MODEL", "another-model")               # the same endpoint, another model
    assert CliRunner(mix_stderr=False).invoke(evalrun_cli, args).exit_code == 2
    monkeypatch.delenv("CURATE_JUDGE_MODEL")
    monkeypatch.setenv("CURATE_JUDGE_TIMEOUT", "5")                         # a timeout changes no verdict
    assert CliRunner(mix_stderr=False).invoke(evalrun_cli, args).exit_code == 0
    finished = read_run(folder)
    assert finished.summary.judge.config["base_url"] == finished.manifest.judge["base_url"] == first.base_url
    assert finished.summary.judge.config["model"] == finished.manifest.judge["model"] == "judge"


def test_a_run_started_without_a_judge_is_not_finished_by_one(released, tmp_path, monkeypatch, judges):
    folder = tmp_path / "run"
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", "")
    monkeypatch.setenv("CURATE_JUDGE_MODEL", "")
    config = released.workspace.config_path
    assert '\n# model = "judge"' in config.read_text()                 # curate init configures no judge
    run(released.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=folder)
    assert "unavailable" in read_run(folder).manifest.judge
    _killed(folder)
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", judges[0].base_url)
    monkeypatch.setenv("CURATE_JUDGE_MODEL", "judge")
    refused = r"started with no judge \(field 'judge': no judge configured.*; now model judge at "
    with pytest.raises(CurateError, match=refused):
        run(released.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=folder, resume=True)
    with pytest.raises(CurateError, match="is scored by the judge its manifest names"):   # nor scored by one
        score_run(released.workspace, folder)
