"""Attribution without a judge: where no judge decided whether an answer is correct, the lexical verdict
(an accepted answer in the answer, the key points' tokens) attributes generation_miss when all the
evidence reached the context; marked lexical in the record and the output."""

from __future__ import annotations

from click.testing import CliRunner

from evalrun.cli.main import cli as evalrun_cli
from evalrun.records import read_run
from evalrun.runner import run
from tests.evalrun.scoring.test_generation import _reply
from tests.support import targets
from tests.support.servers import ScriptedServer

QUESTIONS = {"t-1": "LG-4031 是什么意思？", "t-2": "What does version 3.2 change about the upstream timeout?",
             "t-3": "默认每分钟可以发多少次请求？", "t-4": "Who can run the upgrade command?"}


def _answers():
    targets.ANSWERS.clear()
    targets.ANSWERS.update({
        QUESTIONS["t-1"]: "访问令牌仍然有效。",                  # key point 2 (重新登录): none of its 4 characters
        QUESTIONS["t-2"]: "The timeout stays at 15 seconds.",     # F1 2 x (2/5)(2/8) / (2/5 + 2/8) = 0.31
        QUESTIONS["t-3"]: "每分钟 100 次。",                        # wrong, but its evidence never reached the context
        QUESTIONS["t-4"]: "Only administrators can run it."})     # holds the accepted answer "Only administrators."
    targets.CUT.clear()
    targets.CUT.add(QUESTIONS["t-3"])


def test_without_a_judge_a_missed_answer_over_whole_evidence_is_a_lexical_generation_miss(released, tmp_path,
                                                                                         monkeypatch):
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", "http://127.0.0.1:9/v1")    # nothing listens: no judge
    _answers()
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
        "run", "--dataset", "faq@v1", "--target", "tests.support.targets:answering", "--out", str(tmp_path / "run"),
        "--workspace", str(released.workspace.root)])
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    folder = tmp_path / "run"
    rows = {r.item_id: r for r in read_run(folder).scores}
    assert {i: r.attribution for i, r in rows.items()} == {
        "t-1": ["generation_miss"], "t-2": ["generation_miss"], "t-3": ["context_cut"], "t-4": [], "t-5": []}
    assert rows["t-1"].lexical_attribution == {"generation_miss": "no accepted answer in it; key point 2 of 2 "
                                                                  "(重新登录): 0 of 4 tokens in the answer"}
    assert rows["t-2"].lexical_attribution == {"generation_miss": "no accepted answer in it; best token F1 0.31"}
    assert rows["t-3"].lexical_attribution == {} and rows["t-4"].lexical_attribution == {}
    summary = read_run(folder).summary
    assert summary.attribution_lexical == {"generation_miss": 2}
    out = " ".join(result.stdout.split())
    assert "generation_miss 2 2" in out and "lexical: no judge scored these items" in out
    listed = " ".join(CliRunner(mix_stderr=False).invoke(evalrun_cli, ["show", str(folder), "--failures"]).stdout.split())
    assert "generation_miss (lexical)" in listed and "best token F1 0.31" in listed
    # and the report says it, overall and per item
    from evalrun.report import write_report
    from tests.evalrun.report.test_report import unpacked
    page = tmp_path / "report.html"
    write_report(folder, out=page, workspace=released.workspace)
    html = page.read_text(encoding="utf-8")
    assert "2 generation_miss by string match, not by a judge" in html
    document = unpacked(html)
    shown = {e["id"]: [document["attributions"][a] for a in e.get("at", [])] for e in document["items"]}
    assert shown["t-1"] == shown["t-2"] == ["generation_miss (lexical)"] and shown["t-3"] == ["context_cut"]


def test_a_judges_verdict_decides_and_the_lexical_one_fills_in_only_where_there_is_none(released, tmp_path,
                                                                                      monkeypatch):
    _answers()
    server = ScriptedServer(_reply)   # key point verdicts: 访问令牌已过期 covered, 重新登录 missing
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", server.base_url)
    try:
        folder = run(released.workspace, ref="faq@v1", target="tests.support.targets:answering", out=tmp_path / "run")
    finally:
        server.close()
    rows = {r.item_id: r for r in read_run(folder).scores}
    # t-1 has key points: the judge scored it (correctness 0: a key point missing), no lexical verdict
    assert rows["t-1"].values["generation/correctness"] == 0.0
    assert rows["t-1"].attribution == ["generation_miss"] and rows["t-1"].lexical_attribution == {}
    # t-2 has none: the judge cannot score its correctness, the lexical verdict does
    assert rows["t-2"].unscored["generation/correctness"] == "no key points labelled"
    assert list(rows["t-2"].lexical_attribution) == ["generation_miss"]
    assert read_run(folder).summary.attribution_lexical == {"generation_miss": 1}
