"""A comparison corrected by people: BASE reviewed, NEW pushed `--like BASE` (its unchanged answers carry
their reviews over), the prediction-powered paired difference in `compare`, and the gate told to use it."""

from __future__ import annotations

import shutil
import uuid

import pytest

import evalrun
from evalrun.review.argilla import pull, push
from evalrun.records import read_run
from evalrun.review.records import read_reviews
from evalrun.runner import run
from tests.evalrun.review.test_push_pull import _answer, _records
from tests.evalrun.scoring.test_generation import _reply
from tests.support import targets
from tests.support.argilla import annotator_headers
from tests.support.servers import ScriptedServer

CHANGED: list[str] = []


def changed_one(question: str) -> dict:
    """The `perfect` system, but for the first question it is asked about, which it answers otherwise."""
    trace = targets.perfect(question)
    if trace["answer"] and (not CHANGED or CHANGED[0] == question):
        CHANGED[:1] = [question]
        trace["answer"] = "another answer"
    return trace


@pytest.fixture
def judge(monkeypatch):
    server = ScriptedServer(_reply)
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", server.base_url)
    monkeypatch.setenv("CURATE_JUDGE_MODEL", "judge")
    yield server
    server.close()


def _review_everything(server, space: str, name: str, headers) -> int:
    records = _records(server, space, name)
    for record in records.values():
        if not record["responses"]:
            _answer(server, headers, record["id"], {"overall": "reasonable"})
    return len(records)


@pytest.fixture
def reviewed_base(released, tmp_path, argilla_env, judge):
    """faq@v1 run as BASE, every judged answer pushed and agreed with by a reviewer, the reviews pulled:
    (workspace, Argilla workspace, BASE's folder, its push, the reviewer's headers)."""
    workspace = released.workspace
    space = "r" + uuid.uuid4().hex[:8]
    base = run(workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "base")
    pushed = push(workspace, base, n=10, argilla_workspace=space)
    ann = annotator_headers(argilla_env, space, "ann")
    assert _review_everything(argilla_env, space, pushed.argilla_dataset, ann) == pushed.chosen >= 3
    pull(workspace, base)
    return workspace, space, base, pushed, ann


def test_unchanged_answers_carry_their_reviews_and_compare_corrects_the_judged_changes(reviewed_base, tmp_path,
                                                                                       argilla_env):
    workspace, space, base, pushed, ann = reviewed_base

    CHANGED.clear()
    new = run(workspace, ref="faq@v1", target="tests.evalrun.review.test_paired:changed_one", out=tmp_path / "new")
    again = push(workspace, new, like_run=base, argilla_workspace=space)
    assert (again.carried, again.pushed) == (pushed.chosen - 1, 1)          # only the changed answer is sent
    state = read_reviews(new).state
    assert state.like == str(base.resolve()) and state.strata == read_reviews(base).state.strata
    assert _review_everything(argilla_env, space, again.argilla_dataset, ann) == 1
    pull(workspace, new)

    comparison = evalrun.compare(base, new, workspace=workspace.root)
    corrected = {d.metric: d for d in comparison.judge_corrected}
    relevance = corrected["generation/answer_relevance"]
    assert (relevance.reviewed, relevance.carried) == (pushed.chosen, pushed.chosen - 1)
    assert relevance.difference is not None and relevance.ci95[0] <= relevance.difference <= relevance.ci95[1]

    from evalrun.report import write_report
    page = write_report(new, out=tmp_path / "report.html", workspace=workspace, vs=base).path.read_text("utf-8")
    assert 'id="judge-review"' in page and 'id="corrected-table"' in page and "generation/answer_relevance" in page

    gate = tmp_path / "gate.toml"
    gate.write_text('[gate]\nguard = ["generation/answer_relevance"]\nuse_reviews = true\nrequire_controlled = false\n')
    held = evalrun.compare(base, new, workspace=workspace.root, gate=str(gate))
    line = next(x for x in held.gate.checked + held.gate.failed if "use_reviews" in x)
    assert f"over {pushed.chosen} reviewed of" in line
    plain = tmp_path / "plain"                                             # the same run, never reviewed
    shutil.copytree(base, plain, ignore=shutil.ignore_patterns("review*"))
    unreviewed = evalrun.compare(plain, plain, workspace=workspace.root, gate=str(gate))
    assert not unreviewed.judge_corrected and not unreviewed.gate.passed
    assert unreviewed.gate.failed == ["guard generation/answer_relevance on all (use_reviews): cannot be decided: no "
                                      "reviews of both runs to correct it (`evalrun review push`, and `--like BASE` "
                                      "for NEW)"]


def test_a_rejudged_copy_is_calibrated_against_the_same_people_without_a_new_review(reviewed_base, tmp_path):
    from evalrun.review.calibrate import calibrate_run
    from evalrun.review.rejudge import rejudge
    from evalrun.review.verdicts import judged_verdicts
    from tests.evalrun.review.test_rejudge import _harsh

    workspace, space, base, pushed, _ = reviewed_base
    harsh = ScriptedServer(_harsh)
    try:
        copy = rejudge(workspace, base, tmp_path / "harsh", base_url=harsh.base_url, model="harsh")
    finally:
        harsh.close()
    again = push(workspace, copy, like_run=base, argilla_workspace=space)
    assert (again.pushed, again.carried) == (0, pushed.chosen)             # the same answers: nothing to review
    assert pull(workspace, copy).carried == pushed.chosen
    people = calibrate_run(workspace, base).metrics["generation/completeness"].agreement
    other = calibrate_run(workspace, copy).metrics["generation/completeness"].agreement
    assert people.agreed == people.n                                       # the people agreed with the first judge
    from curate.dataset import DatasetStore
    items = {i.id: i for i in DatasetStore(workspace).items("faq")}
    first = [v.verdict for row in read_run(base).scores if row.item_id in read_reviews(base).state.items
             for v in judged_verdicts(items[row.item_id], row).get("key_point", [])]
    assert other.n == people.n == len(first) and other.agreed == first.count("missing")   # harsh: all missing
