"""The judge review round trip against a real argilla-server: a run scored by a scripted judge, a sample
pushed, reviewers answering over HTTP as the web form does, the reviews pulled into the run folder."""

from __future__ import annotations

import uuid

import httpx
import pytest

from click.testing import CliRunner

from evalrun.cli.main import cli
from evalrun.review.argilla import pull, push
from evalrun.review.calibrate import calibrate_run
from evalrun.review.records import read_reviews
from evalrun.runner import run
from tests.evalrun.scoring.test_generation import _reply
from tests.support.argilla import annotator_headers, owner_client
from tests.support.servers import ScriptedServer


@pytest.fixture
def judged(released, tmp_path, monkeypatch):
    """faq@v1 run by a system answering with its gold context, scored by the scripted judge."""
    server = ScriptedServer(_reply)
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", server.base_url)
    monkeypatch.setenv("CURATE_JUDGE_MODEL", "judge")
    folder = run(released.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "run")
    yield released.workspace, folder
    server.close()


def _records(server, space: str, name: str) -> dict[str, dict]:
    client = owner_client(server)
    target = client.datasets(name=name, workspace=space)
    response = httpx.get(f"{server.url}/api/v1/datasets/{target.id}/records",
                         headers={"X-Argilla-Api-Key": server.api_key}, params={"include": ["responses"]})
    response.raise_for_status()
    return {r["external_id"]: r for r in response.json()["items"]}


def _answer(server, headers, record_id: str, values: dict[str, str], status: str = "submitted") -> None:
    body = {"values": {name: {"value": value} for name, value in values.items()}, "status": status}
    response = httpx.post(f"{server.url}/api/v1/records/{record_id}/responses", headers=headers, json=body)
    assert response.status_code == 201, response.text


def test_push_sends_the_sample_once_and_pull_stores_each_reviewers_verdicts(judged, argilla_env):
    workspace, folder = judged
    space = "r" + uuid.uuid4().hex[:8]
    first = push(workspace, folder, n=10, argilla_workspace=space)
    state = read_reviews(folder).state
    assert first.drawn and first.chosen == len(state.items) == first.pushed >= 1
    assert all(entry.pushed and entry.answer_digest for entry in state.items.values())
    again = push(workspace, folder, n=10, argilla_workspace=space)        # nothing left to send, nothing drawn
    assert (again.drawn, again.pushed, again.chosen) == (False, 0, first.chosen)
    records = _records(argilla_env, space, first.argilla_dataset)
    assert set(records) == set(state.items)                               # one record per item, never twice
    guidelines = owner_client(argilla_env).datasets(name=first.argilla_dataset, workspace=space).settings.guidelines
    assert guidelines.startswith("# English\n\n## Judge review guidelines") and "\n# 中文\n\n## 评审模型核查规范" in guidelines

    item_id, record = sorted(records.items())[0]
    shown = record["fields"]["review"]
    assert shown["verdicts"] and shown["answer"] == "an answer"
    ann, bo = annotator_headers(argilla_env, space, "ann"), annotator_headers(argilla_env, space, "bo")
    assert "R" in {v["slot"] for v in shown["verdicts"]}
    _answer(argilla_env, ann, record["id"], {"overall": "reasonable"})    # one click: every verdict agreed with
    _answer(argilla_env, bo, record["id"], {"overall": "wrong", "relevance": "no",
                                            "reason": "R: it answers another question"})

    seen = httpx.post(f"{argilla_env.url}/api/v1/me/datasets/{record['dataset_id']}/records/search", headers=bo,
                      json={"query": {}}, params={"include": ["responses"]})
    seen.raise_for_status()
    mine = next(hit["record"] for hit in seen.json()["items"] if hit["record"]["id"] == record["id"])
    assert [r["values"]["overall"]["value"] for r in mine["responses"]] == ["wrong"]   # bo never sees ann's answer

    report = pull(workspace, folder)
    assert report.records == 1 and not report.refused and not report.unreadable
    reviews = read_reviews(folder).reviews
    relevance = {r.reviewer.split("-")[0]: r for r in reviews if r.metric == "generation/answer_relevance"}
    assert relevance["ann"].person_value == relevance["ann"].judge_value
    assert relevance["bo"].person_value == 0.0 and relevance["bo"].reason == "R: it answers another question"
    assert {r.item_id for r in reviews} == {item_id}
    assert all(r.person_value == r.judge_value for r in reviews if r.metric != "generation/answer_relevance")
    assert pull(workspace, folder).reviews == report.reviews              # a pull is repeatable

    result = CliRunner(mix_stderr=False).invoke(cli, ["--workspace", str(workspace.root), "calibrate", str(folder)])
    assert result.exit_code == 0, result.stderr
    out = " ".join(result.stdout.split())
    assert "generation/answer_relevance" in out and "R: it answers another question" in out
    shown = CliRunner(mix_stderr=False).invoke(cli, ["--workspace", str(workspace.root), "show", str(folder)])
    assert shown.exit_code == 0, shown.stderr
    lines = shown.stdout.splitlines()
    said = next(k for k, line in enumerate(lines) if line.startswith("TOO FEW REVIEWS to judge the judge on generation/"))
    assert said < next(k for k, line in enumerate(lines) if line.startswith("retrieval"))   # before any number
    assert "the judge checked by people" in shown.stdout
    relevance = calibrate_run(workspace, folder).metrics["generation/answer_relevance"]
    assert (relevance.agreement.n, relevance.agreement.agreed, relevance.items_reviewed) == (2, 1, 1)


def test_reviews_of_another_answer_are_refused(judged, argilla_env):
    workspace, folder = judged
    space = "r" + uuid.uuid4().hex[:8]
    pushed = push(workspace, folder, n=10, argilla_workspace=space)
    records = _records(argilla_env, space, pushed.argilla_dataset)
    item_id, record = sorted(records.items())[0]
    ann = annotator_headers(argilla_env, space, "ann")
    _answer(argilla_env, ann, record["id"], {"overall": "reasonable"})
    state = read_reviews(folder).state
    state.items[item_id] = state.items[item_id].model_copy(update={"answer_digest": "0" * 16})
    state.write(folder / "review.json")                                   # as if the answer changed since
    report = pull(workspace, folder)
    assert report.refused == {item_id: "reviewed another answer (the run's answer or context changed since the push)"}
    assert read_reviews(folder).reviews == []


def test_a_push_killed_half_way_is_finished_by_the_next_without_drawing_again(judged, argilla_env, monkeypatch):
    import evalrun.review.argilla as review_argilla
    from curate.annotate.remote import ArgillaLost

    workspace, folder = judged
    space = "r" + uuid.uuid4().hex[:8]
    sent = []
    real = review_argilla.log_records

    def lost_after_one(target, records):
        if sent:
            raise ArgillaLost("lost Argilla")                  # the connection drops at the second batch
        real(target, records)
        sent.extend(records)

    monkeypatch.setattr(review_argilla, "BATCH", 1)
    monkeypatch.setattr(review_argilla, "log_records", lost_after_one)
    with pytest.raises(ArgillaLost):
        push(workspace, folder, n=10, argilla_workspace=space)
    state = read_reviews(folder).state
    assert len(state.items) >= 2 and [e.pushed for e in state.items.values()].count(True) == 1
    monkeypatch.setattr(review_argilla, "log_records", real)
    finished = push(workspace, folder, n=10, argilla_workspace=space)
    assert not finished.drawn and finished.pushed == len(state.items) - 1
    assert set(read_reviews(folder).state.items) == set(state.items)
    assert set(_records(argilla_env, space, finished.argilla_dataset)) == set(state.items)
    with pytest.raises(Exception, match="drawn with --n 10"):
        push(workspace, folder, n=20, argilla_workspace=space)
