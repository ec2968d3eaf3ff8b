"""Retrieval judged by the judge (--judge-retrieval): grades, metrics apart from the labelled ones, holes in
the labels, agreement, the budget. Scripted endpoints here; the real model server in test_judged_retrieval_llama."""

import json
import re

import pytest

from curate import ChunkGrade, SnapshotStore, read_judged_grades
from curate.judge.client import Verdict
from curate.records import EvalItem
from evalrun.cli.show import print_summary
from evalrun.records import RunSettings, read_run
from evalrun.runner import run
from evalrun.scoring.judged_retrieval import (
    NO_RELEVANT,
    ItemGrading,
    agreement,
    metrics,
    plan,
    possibly_missing,
    read_grades,
)
from evalrun.scoring.retrieval_prompts import PassageGrade, PassageGrades
from tests.support import targets
from tests.support.servers import ScriptedServer

GUIDELINE = ("## 3. The grades\n2 states a fact", "g-test")


def _item(item_id="q", language="en"):
    return EvalItem(id=item_id, question="What does LG-4031 mean?", language=language, source="human",
                    reference_answer="The token expired.")


def _graded(layers, grades, copies=None, not_graded=None, unusable=()):
    grading = ItemGrading(_item(), layers, graded=sorted(grades), copy_of=copies or {},
                          not_graded=dict(not_graded or {}), unusable=set(unusable))
    grading.grades = dict(grades)
    return grading


def _verdict(*grades):
    return Verdict(PassageGrades(grades=[PassageGrade(passage=n, grade=g, reason=f"r{n}") for n, g in grades]))


# -- planning and reading ---------------------------------------------------------------------------

def test_a_plan_grades_each_text_once_in_chunk_id_order_and_never_what_the_asker_may_not_use():
    texts = {f"c{k}": f"text {k}" for k in range(12)} | {"dup": "text 3"}
    grading = plan(_item(), {"candidates": [f"c{k}" for k in range(11, -1, -1)] + ["dup"], "context": ["dup", "c0"]},
                   10, texts, {"c5": "not usable for the asker: permission leak (candidates)"}, GUIDELINE)
    # the top 10 candidates are c11..c2; the context adds dup and c0; c5 is forbidden
    assert grading.layers["candidates"] == [f"c{k}" for k in range(11, 1, -1)]
    assert grading.graded == ["c0", "c10", "c11", "c2", "c3", "c4", "c6", "c7", "c8", "c9"]
    assert grading.copy_of == {"dup": "c3"} and grading.unusable == {"c5"}
    assert [len(batch) for _, _, batch in grading.requests] == [8, 2]   # BATCH passages a request
    prompt, payload, batch = grading.requests[0]
    assert payload["guideline"] == GUIDELINE[0] and "Reference answer: The token expired." in payload["reference"]
    assert payload["passages"].startswith("[1] text 0\n\n[2] text 10")   # numbered, the ranking not shown
    assert "c0" not in payload["passages"]   # chunk ids are not shown either


def test_the_prompt_is_in_the_items_language():
    zh = plan(_item(language="zh"), {"candidates": ["a"], "context": []}, 5, {"a": "令牌过期"}, {}, GUIDELINE)
    prompt, payload, _ = zh.requests[0]
    assert prompt.language == "zh" and "参考答案" in payload["reference"] and "片段" in prompt.messages(payload)[1]["content"]


def test_grades_the_judge_did_not_give_are_named_not_guessed():
    grading = plan(_item(), {"candidates": ["a", "b", "c"], "context": []}, 5, {"a": "A", "b": "B", "c": "C"}, {},
                   GUIDELINE)
    read_grades(grading, [_verdict((1, 2), (3, 0), (1, 0))])   # b missing; a graded twice: its first grade
    assert grading.grades == {"a": 2, "c": 0}
    assert grading.not_graded == {"b": "the judge graded 2 of 3 passages, not this one"}
    values, unscored = metrics(grading, [1, 3], 3, "k")
    assert unscored["judged/candidates/precision@3"].startswith("chunk b not graded")
    assert not any(name.startswith("judged/candidates/") for name in values)
    assert values["judged/context/hit_rate@3"] == 0.0   # an empty context is scored: nothing reached the model

    failed = plan(_item(), {"candidates": ["a"], "context": []}, 5, {"a": "A"}, {}, GUIDELINE)
    read_grades(failed, [Verdict(None, "timeout after 60 s")])
    assert failed.not_graded == {"a": "the judge gave no grades: timeout after 60 s"}


# -- metrics ----------------------------------------------------------------------------------------

def test_judged_metrics_by_hand():
    # candidates: x (0), a (2), a2 (copy of a), b (1), y (0); context: a, y
    grading = _graded({"candidates": ["x", "a", "a2", "b", "y"], "context": ["a", "y"]},
                      {"x": 0, "a": 2, "b": 1, "y": 0}, copies={"a2": "a"})
    values, unscored = metrics(grading, [1, 3, 5], 5, "k")
    assert unscored == {}
    assert values["judged/candidates/hit_rate@1"] == 0.0 and values["judged/candidates/hit_rate@3"] == 1.0
    assert values["judged/candidates/precision@3"] == pytest.approx(1 / 3)   # x, a, a2: the copy counts once
    assert values["judged/candidates/precision@5"] == pytest.approx(2 / 5)   # a and b
    assert values["judged/candidates/mrr@5"] == 0.5
    # nDCG@5: gains 0, 2, (copy) 0, 1, 0 at ranks 1..5; ideal 2, 1
    dcg = 2 / 1.584962500721156 + 1 / 2.321928094887362
    ideal = 2 / 1 + 1 / 1.584962500721156
    assert values["judged/candidates/ndcg@5"] == pytest.approx(dcg / ideal)
    assert values["judged/context/precision@1"] == 1.0 and values["judged/context/hit_rate@5"] == 1.0
    assert not any("recall" in name for name in values)   # recall needs every relevant chunk of the KB


def test_candidates_are_judged_only_down_to_the_graded_depth():
    grading = _graded({"candidates": ["a", "b", "c"], "context": ["a"]}, {"a": 2, "b": 0, "c": 0})
    values, _ = metrics(grading, [1, 3, 10], 3, "k")
    assert "judged/candidates/precision@3" in values and "judged/candidates/precision@10" not in values
    assert values["judged/context/precision@10"] == pytest.approx(1 / 10)   # the context is graded whole


def test_nothing_relevant_is_zero_except_ndcg_which_has_no_ideal_ranking():
    grading = _graded({"candidates": ["a", "b"], "context": []}, {"a": 0, "b": 0})
    values, unscored = metrics(grading, [1, 5], 5, "k")
    assert values["judged/candidates/hit_rate@5"] == 0.0 and values["judged/candidates/precision@5"] == 0.0
    assert values["judged/context/mrr@5"] == 0.0
    assert unscored["judged/candidates/ndcg@5"] == NO_RELEVANT
    returned = metrics(_graded({"candidates": [], "context": []}, {}), [5], 5, "returned")[1]
    assert returned["judged/context/precision@5"].startswith("nothing returned")


def test_a_layer_the_trace_does_not_report_is_unscored_not_missing():
    grading = plan(_item(), {"candidates": ["a"], "context": None}, 5, {"a": "A"}, {}, GUIDELINE)
    grading.grades = {"a": 2}
    values, unscored = metrics(grading, [1], 5, "k")
    assert values["judged/candidates/hit_rate@1"] == 1.0
    assert unscored["judged/context/hit_rate@1"] == "the trace reports no context (no 'context' key)"


def test_a_chunk_the_asker_may_not_use_is_not_relevant_whatever_it_says():
    grading = _graded({"candidates": ["secret", "a"], "context": ["secret"]}, {"a": 1},
                      not_graded={"secret": "not usable for the asker: permission leak (candidates)"},
                      unusable={"secret"})
    values, unscored = metrics(grading, [1, 2], 2, "k")
    assert unscored == {} and values["judged/candidates/hit_rate@1"] == 0.0
    assert values["judged/candidates/mrr@2"] == 0.5 and values["judged/context/hit_rate@1"] == 0.0


# -- holes and agreement ----------------------------------------------------------------------------

def test_possibly_missing_is_a_grade_2_outside_the_evidence_and_its_copies():
    grading = _graded({"candidates": ["e1", "e1copy", "new", "half", "dup"], "context": []},
                      {"e1": 2, "new": 2, "half": 1}, copies={"dup": "new"})
    gold = {"e1": "g1", "e1copy": "g1"}
    assert possibly_missing(grading, gold) == ["dup", "new"]


def test_agreement_counts_an_unlabelled_chunk_as_labelled_zero():
    # five items of four chunks: 16 agree, 2 judged 2 where nobody labelled, 2 labelled 1 the judge missed
    items = [[(2, 2), (2, 2), (0, 0), (0, 0)]] * 3 + [[(2, 2), (0, 0), (2, 0), (0, 1)]] * 2
    found = agreement(items)
    assert found.chunks == 20 and found.items == 5 and found.agreement == pytest.approx(16 / 20)
    assert found.kappa == pytest.approx(0.6)   # p_o 0.8, p_e 0.5
    assert found.kappa_ci95[0] < 0.6 < found.kappa_ci95[1] <= 1.0
    assert found.confusion["2"]["0"] == 2 and found.confusion["0"]["1"] == 2


def test_the_kappa_interval_resamples_items_not_chunks():
    # the same 40 chunks (30 agree, 10 disagree): in 4 items of 10, one item holding every disagreement, or in 20
    # items of 2; chunks of one item rise and fall together, so the first interval is the wider
    clustered = agreement([[(2, 2)] * 5 + [(0, 0)] * 5] * 3 + [[(2, 0)] * 5 + [(0, 2)] * 5])
    spread = agreement([[(2, 2), (0, 0)]] * 15 + [[(2, 0), (0, 2)]] * 5)
    assert clustered.kappa == pytest.approx(spread.kappa) == pytest.approx(0.5)
    width = {name: a.kappa_ci95[1] - a.kappa_ci95[0] for name, a in (("clustered", clustered), ("spread", spread))}
    assert width["clustered"] > width["spread"]
    assert agreement([[(2, 2), (0, 0), (2, 0)]]).kappa_ci95 is None   # one item: no interval, and why
    assert agreement([[(2, 2), (0, 0), (2, 0)]]).note == "too few items for an interval"


# -- a whole run through a scripted judge -----------------------------------------------------------

GRADING_ASKED: list[int] = []


def _grader(messages):
    """Grade 2 a passage that names LG-4031 or 令牌 (the faq's first question), 1 one about tokens, else 0."""
    text = messages[-1]["content"]
    if "Passages:\n" not in text and "片段：\n" not in text:
        return "not json"   # the generation layer's questions: not what these tests are about
    GRADING_ASKED.append(1)
    body = text.split("Passages:\n" if "Passages:\n" in text else "片段：\n")[1].rsplit("\n\n", 1)[0]
    passages = re.findall(r"^\[(\d+)\] (.*?)(?=\n\n\[\d+\] |\Z)", body, flags=re.MULTILINE | re.DOTALL)
    grades = [{"passage": int(n), "grade": 2 if ("LG-4031" in body) else 1 if "token" in body.lower() else 0,
               "reason": "scripted <b>bold</b>"} for n, body in passages]
    return json.dumps({"grades": grades})


def _usage(messages):
    """What a real endpoint would count: about a token per three characters asked, 150 answered."""
    return {"prompt_tokens": sum(len(m["content"]) for m in messages) // 3, "completion_tokens": 150}


@pytest.fixture
def grader():
    server = ScriptedServer(_grader, usage=_usage)
    yield server
    server.close()


def _configure(workspace, server, prices=False):
    text = workspace.config_path.read_text(encoding="utf-8")
    text = text.replace('# base_url = "http://127.0.0.1:8080/v1"', f'base_url = "{server.base_url}"')
    text = text.replace('# model = "judge"', 'model = "judge"')
    if prices:
        text += '\n[judge.prices]\njudge = { input = 1.0, output = 2.0 }\n'
    workspace.config_path.write_text(text, encoding="utf-8")


def test_a_run_grades_retrieval_apart_from_the_labels(released, grader, tmp_path, capsys):
    workspace = released.workspace
    _configure(workspace, grader)
    settings = RunSettings(judge_retrieval=True)
    folder = run(workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "r", settings=settings)
    done = read_run(folder)
    section = done.summary.judged_retrieval
    assert section.status == "scored" and section.model == "judge" and section.k == 10
    assert section.requests >= 1 and section.estimate.requests == section.requests
    said = capsys.readouterr().err
    assert "grading retrieved chunks" in said and f"{section.estimate.requests:,} requests to send" in said
    everything = done.summary.metrics["all"]
    judged = [name for name in everything if name.startswith("judged/")]
    assert judged and all(name.split("/")[1] in ("candidates", "context") for name in judged)
    assert "candidates/recall@5" in everything   # the labelled metrics stay what they were
    grades = read_judged_grades(folder)
    assert set(grades) == {row.item_id for row in done.scores if row.answerable}
    for line in grades.values():
        assert all(isinstance(g, ChunkGrade) for g in line.grades) and line.judge_model == "judge"
    # the scripted judge grades by text: every grade 2 is a chunk naming LG-4031
    texts = {c.chunk_id: c.text for c in SnapshotStore(workspace).chunks(done.manifest.kb_snapshot)}
    assert any(g.grade == 2 for line in grades.values() for g in line.grades)
    assert all(("LG-4031" in texts[g.chunk_id]) == (g.grade == 2) for line in grades.values() for g in line.grades)
    assert all(g.reason == "scripted <b>bold</b>" for line in grades.values() for g in line.grades)
    print_summary(folder)
    shown = capsys.readouterr().out
    assert "retrieval judged by model judge" in shown and "retrieval judged by the judge (judged/" in shown
    print(shown)
    # the same run again is answered from the cache: nothing sent
    sent = grader.requests
    again = run(workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "again",
                settings=settings)
    assert grader.requests == sent and read_run(again).summary.judged_retrieval.cache_hits == section.requests


def test_the_budget_stops_grading_before_it_is_exceeded(released, grader, tmp_path):
    workspace = released.workspace
    _configure(workspace, grader)
    settings = RunSettings(judge_retrieval=True, no_judge=False, budget_tokens=5000)
    folder = run(workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "r", settings=settings)
    done = read_run(folder)
    section = done.summary.judged_retrieval
    assert section.budget == "5,000 tokens" and section.budget_refused >= 1
    assert section.prompt_tokens + section.completion_tokens <= 5000
    stopped = {row.item_id for row in done.scores for name, reason in row.unscored.items()
               if name.startswith("judged/") and "judge budget (5,000 tokens) would be exceeded" in reason}
    graded = {row.item_id for row in done.scores if any(name.startswith("judged/") for name in row.values)}
    assert stopped and graded and not stopped & graded   # graded until the budget, the rest said, never 0
    # scored again (a killed run resumed): what this run already paid for counts, nothing more is sent
    sent = len(GRADING_ASKED)
    from evalrun.scoring import score_run
    score_run(workspace, folder)
    again = read_run(folder)
    assert len(GRADING_ASKED) == sent
    assert {row.item_id for row in again.scores for name, reason in row.unscored.items()
            if name.startswith("judged/") and "budget" in reason} == stopped


def test_a_budget_in_usd_without_a_price_is_refused_before_the_run(released, grader, tmp_path):
    from curate import InputError
    workspace = released.workspace
    _configure(workspace, grader)
    with pytest.raises(InputError, match="no price"):
        run(workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "r",
            settings=RunSettings(judge_retrieval=True, budget_usd=1.0))
    assert not (tmp_path / "r").exists()


def test_without_a_judge_the_judged_metrics_are_unscored_never_zero(released, tmp_path):
    folder = run(released.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "r",
                 settings=RunSettings(judge_retrieval=True, no_judge=True))
    done = read_run(folder)
    assert done.summary.judged_retrieval.status.startswith("unscored")
    for row in done.scores:
        assert not any(name.startswith("judged/") for name in row.values)
        if row.answerable:
            assert row.unscored["judged/candidates/precision@5"].startswith("not computed: --no-judge")


def test_grading_through_a_real_local_model(released, tmp_path, llama):
    """The real HTTP path (llama.cpp with SmolLM2-135M, the grading schema sent as json_schema): every request is
    sent and answered; each chunk has a grade or a reason it has none, never both, and the numbers hold."""
    workspace = released.workspace
    text = workspace.config_path.read_text(encoding="utf-8")
    text = text.replace('# base_url = "http://127.0.0.1:8080/v1"', f'base_url = "{llama.base_url}"')
    text = text.replace('# model = "judge"', 'model = "smollm2"\nresponse_format = "json_schema"')
    workspace.config_path.write_text(text, encoding="utf-8")
    folder = run(workspace, ref="faq@v1", target="tests.support.targets:retrieving", out=tmp_path / "r",
                 settings=RunSettings(judge_retrieval=True, judge_retrieval_k=3, ks=[1, 3]))
    done = read_run(folder)
    section = done.summary.judged_retrieval
    assert section.status == "scored" and section.model == "smollm2"
    assert section.requests >= section.estimate.requests >= 1   # repairs are requests too
    assert section.prompt_tokens > 0   # counted by the server, not estimated
    # the verdict's schema sent (json_schema): even a 135M model answers in the shape asked
    assert section.chunks > 0 and sum(section.grades.values()) == section.chunks
    grades = read_judged_grades(folder)
    for line in grades.values():
        graded = {g.chunk_id for g in line.grades}
        assert not graded & set(line.not_graded)   # each chunk graded, or said why not: never both
    for row in done.scores:
        for name, value in row.values.items():
            if name.startswith("judged/"):
                assert 0.0 <= value <= 1.0 and name not in row.unscored


def test_compare_and_the_gate_know_the_judged_metrics(released, grader, tmp_path):
    import evalrun
    workspace = released.workspace
    _configure(workspace, grader)
    judged = RunSettings(judge_retrieval=True)
    base = run(workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "base", settings=judged)
    new = run(workspace, ref="faq@v1", target="tests.support.targets:cut", out=tmp_path / "new", settings=judged)
    comparison = evalrun.compare(base, new, workspace=workspace)
    rows = {row.metric for row in comparison.rows}
    assert "judged/candidates/precision@5" in rows and "candidates/recall@5" in rows
    assert not any("judged/" in line for line in comparison.warnings)   # graded alike: nothing to say
    gate = tmp_path / "gate.toml"
    gate.write_text('[gate]\nguard = ["judged/context/hit_rate@5"]\n', encoding="utf-8")
    checked = evalrun.compare(base, new, workspace=workspace, gate=gate, allow_weak_rules=True).gate
    assert any("judged/context/hit_rate@5" in line for line in checked.checked + checked.failed)
    plain = run(workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "plain",
                settings=RunSettings())
    assert any("retrieval was judged in BASE only" in line for line in evalrun.compare(base, plain,
                                                                                       workspace=workspace).warnings)


def test_the_command_line_and_curate_toml_turn_it_on(released, grader, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from evalrun.cli.main import cli as evalrun_cli
    workspace = released.workspace
    _configure(workspace, grader)
    monkeypatch.chdir(workspace.root)
    said = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
        "run", "--dataset", "faq@v1", "--target", "tests.support.targets:perfect", "--out", str(tmp_path / "cli"),
        "--judge-retrieval", "--judge-retrieval-k", "3", "--budget-tokens", "100000"])
    assert said.exit_code == 0, said.stderr
    assert "retrieval judged by model judge: the top 3 candidates" in said.stdout
    settings = read_run(tmp_path / "cli").manifest.settings
    assert settings.judge_retrieval and settings.judge_retrieval_k == 3 and settings.budget_tokens == 100000
    # [judge] retrieval = true: on by default; --no-judge-retrieval: off for one run
    text = workspace.config_path.read_text(encoding="utf-8")
    workspace.config_path.write_text(text.replace("[judge]\n", "[judge]\nretrieval = true\n", 1), encoding="utf-8")
    import evalrun
    assert evalrun.run("faq@v1", target="tests.support.targets:perfect", workspace=workspace,
                       out=tmp_path / "toml").summary.judged_retrieval is not None
    assert evalrun.run("faq@v1", target="tests.support.targets:perfect", workspace=workspace, out=tmp_path / "off",
                       judge_retrieval=False).summary.judged_retrieval is None
    workspace.config_path.write_text(text.replace("[judge]\n", '[judge]\nretrieval = "yes"\n', 1), encoding="utf-8")
    bad = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
        "run", "--dataset", "faq@v1", "--target", "tests.support.targets:perfect", "--out", str(tmp_path / "bad")])
    assert bad.exit_code == 2 and "judge.retrieval" in bad.stderr and "true or false" in bad.stderr
