"""`evalrun rejudge`: a run's answers judged again by another judge, the system never called."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from curate.errors import InputError
from evalrun.cli.main import cli
from evalrun.records import read_run
from curate.dataset import DatasetStore
from evalrun.review.calibrate import judges_agreement
from evalrun.review.rejudge import rejudge
from evalrun.review.verdicts import judged_verdicts
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
    calibrated = CliRunner(mix_stderr=False).invoke(cli, ["--workspace", str(workspace.root), "calibrate",
                                                          str(tmp_path / "again")])
    assert calibrated.exit_code == 0, calibrated.stderr
    assert "judge against judge: judge (run, rows) and harsh (again, columns)" in " ".join(calibrated.stdout.split())
    items = DatasetStore(workspace).items("faq")
    both = judges_agreement(items, read_run(folder).scores, again.scores)
    said_first = [v.verdict for i in items for row in read_run(folder).scores if row.item_id == i.id
                  for v in judged_verdicts(i, row).get("key_point", [])]
    kp = both["generation/completeness"].agreement
    assert kp.n == len(said_first) > 0 and kp.agreed == said_first.count("missing")   # harsh: missing to all
    assert both["generation/answer_relevance"].agreement.agreed == both["generation/answer_relevance"].agreement.n
    with pytest.raises(InputError, match="already holds another run"):
        rejudge(workspace, folder, tmp_path / "again", base_url=first.base_url, model="judge")
    with pytest.raises(InputError, match="another folder"):
        rejudge(workspace, folder, folder, base_url=second.base_url, model="harsh")


def test_rejudging_through_a_real_local_model_scores_every_answer_it_can(released, tmp_path, judges, llama):
    """The real HTTP path (llama.cpp with SmolLM2): the rejudged run names that judge and whatever the small
    model said is scored or unscored with its reason, never a made-up value."""
    workspace = released.workspace
    folder = run(workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "run")
    again = read_run(rejudge(workspace, folder, tmp_path / "small", base_url=llama.base_url, model="smollm2"))
    judge = again.summary.judge
    assert judge.status == "scored" and judge.config["model"] == "smollm2" and judge.requests > 0
    for row in again.scores:
        for name in ("generation/completeness", "generation/answer_relevance"):
            assert (name in row.values) != (name in row.unscored) or not row.answerable or row.failed
