"""`evalrun rejudge`: a run's answers judged again by another judge, the system never called."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from curate.errors import InputError
from evalrun.cli.main import cli
from evalrun.records import read_run
from evalrun.review.rejudge import rejudge
from evalrun.runner import run
from tests.evalrun.scoring.test_generation import _reply
from tests.support import targets
from tests.support.servers import ScriptedServer


def _harsh(messages):
    """Another judge: every key point missing, the rest as the first judge says."""
    text = messages[-1]["content"]
    if "Key point:" in text or "要点：" in text:
        return json.dumps({"verdict": "missing", "reason": "harsh"})
    return _reply(messages)


@pytest.fixture
def judges(monkeypatch):
    first, second = ScriptedServer(_reply), ScriptedServer(_harsh)
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", first.base_url)
    monkeypatch.setenv("CURATE_JUDGE_MODEL", "judge")
    yield first, second
    first.close()
    second.close()


def test_rejudging_scores_the_same_answers_with_the_other_judge_and_compare_says_so(released, tmp_path, judges):
    first, second = judges
    workspace = released.workspace
    folder = run(workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "run")
    calls, asked = list(targets.CALLS), first.requests
    args = ["--workspace", str(workspace.root), "rejudge", str(folder), "--out", str(tmp_path / "again"),
            "--judge-model", "harsh", "--base-url", second.base_url]
    result = CliRunner(mix_stderr=False).invoke(cli, args)
    assert result.exit_code == 0, result.stderr
    again = read_run(tmp_path / "again")
    assert targets.CALLS == calls and first.requests == asked and second.requests > 0   # the system: not called
    assert (tmp_path / "again" / "traces.jsonl").read_bytes() == (folder / "traces.jsonl").read_bytes()
    assert again.manifest.judge["model"] == again.summary.judge.config["model"] == "harsh"
    assert again.manifest.rejudged_from == str(folder.resolve())
    before = read_run(folder).summary.metrics["all"]["generation/completeness"].mean
    assert before > 0 and again.summary.metrics["all"]["generation/completeness"].mean == 0.0
    compared = CliRunner(mix_stderr=False).invoke(cli, ["--workspace", str(workspace.root), "compare", str(folder),
                                                        str(tmp_path / "again")])
    said = " ".join(compared.stdout.split())
    assert "NEW is the other run's answers judged again (judge model harsh vs judge" in said
    assert "every difference below is the judges', not the system's" in said
    with pytest.raises(InputError, match="already holds another run"):
        rejudge(workspace, folder, tmp_path / "again", base_url=first.base_url, model="judge")
    with pytest.raises(InputError, match="another folder"):
        rejudge(workspace, folder, folder, base_url=second.base_url, model="harsh")
