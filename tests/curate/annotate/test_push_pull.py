"""curate annotate push / pull / status against a real argilla-server."""

import re
import uuid

import pytest

from curate.annotate.pull import pull
from curate.annotate.push import _unwrapped, push
from curate.annotate.state import load_state
from curate.dataset import DatasetStore
from tests.support.argilla import annotator_headers as _annotator
from tests.support.argilla import owner_client as _client
from tests.support.argilla import submit as _submit



@pytest.fixture
def pushed(handbook, argilla_env):
    """The handbook items pushed to their own Argilla workspace, needing two annotators."""
    space = "t" + uuid.uuid4().hex[:8]
    report = push(handbook.workspace, dataset="faq", pool_k=4, min_submitted=2, argilla_workspace=space)
    return handbook, report, space


def _record_ids(server, space: str) -> dict[str, str]:
    """Item id -> Argilla record id, over the annotation datasets of the workspace (one per pool size)."""
    client = _client(server)
    names = [d.name for d in client.workspaces(space).datasets if re.fullmatch(r"faq(-k\d+)?", d.name)]
    return {str(r.id): str(r._server_id) for name in names
            for r in client.datasets(name=name, workspace=space).records(with_responses=False)}


def test_push_sends_pools_and_again_never_duplicates(pushed, argilla_env):
    handbook, report, space = pushed
    assert (report.pushed, report.created, report.argilla_dataset) == (5, True, "faq")
    # t-3 and t-5 have only two candidates: their records ask two grading questions, in their own dataset
    assert report.records == {"faq": 3, "faq-k2": 2} and report.pool_sizes == {4: 3, 2: 2}
    dataset = _client(argilla_env).datasets(name="faq", workspace=space)
    records = list(dataset.records(with_suggestions=True))
    assert sorted(str(r.id) for r in records) == ["t-1", "t-2", "t-4"]
    small = _client(argilla_env).datasets(name="faq-k2", workspace=space)
    assert sorted(str(r.id) for r in small.records()) == ["t-3", "t-5"]
    assert [q.name for q in small.settings.questions][:3] == ["relevance_1", "relevance_2", "answerable"]
    t1 = next(r for r in records if str(r.id) == "t-1")
    assert t1.fields["question"] == "LG-4031 是什么意思？" and "`errors.zh.md#" in t1.fields["chunk_1"]
    assert t1.suggestions["relevance_1"].value == 2 and t1.metadata["source"] == "human"
    english = (handbook.workspace.root / "guidelines" / "relevance.en.md").read_text(encoding="utf-8")
    english_part = dataset.settings.guidelines.split("\n\n---\n\n")[0]   # most items are in English
    assert english_part.startswith("# English\n\n#" + _unwrapped(english)[:300])
    assert len(dataset.settings.guidelines) <= 10_000
    state = load_state(handbook.workspace, "faq")
    assert state.items["t-1"].slots[0] == t1.fields["chunk_1"].split("`")[1]
    again = push(handbook.workspace, dataset="faq", pool_k=4, min_submitted=2, argilla_workspace=space)
    assert again.created is False and len(list(dataset.records())) == 3 and len(list(small.records())) == 2
    with pytest.raises(Exception, match="same pool size"):
        push(handbook.workspace, dataset="faq", pool_k=6, argilla_workspace=space)


def test_pull_applies_agreement_sends_disagreement_to_adjudication_and_keeps_local_edits(pushed, argilla_env):
    handbook, _, space = pushed
    ann, bo = _annotator(argilla_env, space, "ann"), _annotator(argilla_env, space, "bo")
    ids = _record_ids(argilla_env, space)
    state = load_state(handbook.workspace, "faq")
    # t-1: both agree (candidate 1 fully relevant, 2 partial) and fix the key points
    for who in (ann, bo):
        _submit(argilla_env, who, ids["t-1"], {1: 2, 2: 1, 3: 0, 4: 0},
                key_points_fixed="访问令牌已过期 [1]\n需要重新登录 [2]")
    # t-2: they disagree on candidate 2
    _submit(argilla_env, ann, ids["t-2"], {1: 2, 2: 2})
    _submit(argilla_env, bo, ids["t-2"], {1: 2, 2: 0})
    # t-3: only one answer so far
    _submit(argilla_env, ann, ids["t-3"], {1: 2})
    # t-4: both answer, but the item was edited here after the push
    for who in (ann, bo):
        _submit(argilla_env, who, ids["t-4"], {1: 2})
    store = DatasetStore(handbook.workspace)
    meta, items = store.load("faq")
    next(i for i in items if i.id == "t-4").reference_answer = "Administrators only (edited locally)."
    store.save(meta, items)

    report = pull(handbook.workspace, dataset="faq")
    outcome = {a.item_id: a.outcome for a in report.applied}
    assert outcome == {"t-1": "labelled", "t-2": "needs_adjudication"}
    assert report.pending == 2 and list(report.conflicts) == ["t-4"]   # t-3 has one answer, t-5 none
    items = {i.id: i for i in store.items("faq")}
    t1 = items["t-1"]
    slots = state.items["t-1"].slots
    assert t1.status == "labelled" and t1.guideline_version == state.guideline_version
    graded = {c: e.grade for e in t1.evidence for c in e.chunk_ids}
    assert graded[slots[0]] == 2 and graded[slots[1]] == 1
    assert [(k.text, len(k.evidence_ids)) for k in t1.key_points] == [("访问令牌已过期", 1), ("需要重新登录", 1)]
    assert items["t-2"].status == "needs_adjudication"
    assert f"candidate 2 ({slots and state.items['t-2'].slots[1]})" in items["t-2"].status_history[-1].reason
    assert items["t-4"].reference_answer == "Administrators only (edited locally)."   # never overwritten
    # agreement: candidates graded by both on t-1, t-2, t-4; kappa on answerability is undefined (all agree)
    assert report.agreement["units"] == 12 and report.agreement["answerability_kappa"] is None
    assert -1 <= report.agreement["relevance_alpha"] < 1
    assert list(report.open_disputes) == ["t-2"] and report.adjudication_dataset == "faq-adjudication"
    # pulling again changes nothing but still reports the open dispute
    again = pull(handbook.workspace, dataset="faq")
    assert again.applied == [] and list(again.open_disputes) == ["t-2"]
    # an adjudicator answering in the annotation dataset settles t-2 only: on the agreed t-1 it is no vote
    cy = _annotator(argilla_env, space, "cy")
    _submit(argilla_env, cy, ids["t-2"], {1: 2, 2: 1})
    _submit(argilla_env, cy, ids["t-1"], {1: 0, 2: 0})
    t1_before = next(i for i in store.items("faq") if i.id == "t-1").model_dump()
    admin = pull(handbook.workspace, dataset="faq", adjudicator=f"cy-{space}")
    assert [(a.item_id, a.outcome, a.adjudicated_by) for a in admin.applied] == [("t-2", "labelled", [f"cy-{space}"])]
    assert admin.open_disputes == {}
    assert next(i for i in store.items("faq") if i.id == "t-1").model_dump() == t1_before


def test_status_and_cli(pushed, argilla_env):
    handbook, _, space = pushed
    ann = _annotator(argilla_env, space, "cy")
    _submit(argilla_env, ann, _record_ids(argilla_env, space)["t-5"], {1: 0}, answerable="unanswerable")
    result = handbook("annotate", "status", "--dataset", "faq")
    assert "draft" in result.stdout and f"cy-{space}" in result.stdout
    assert "0 of 5 records completed" in result.stdout
    result = handbook("annotate", "pull", "--dataset", "faq")
    assert "waiting for annotators 5" in result.stdout   # two annotators needed, none has two
    assert "open disputes 0" in result.stdout
    result = handbook("annotate", "push", "--dataset", "faq", "--pool-k", "4", "--min-annotators", "2",
                      "--argilla-workspace", space)
    assert "pushed 5 items" in result.stdout and "(created)" not in result.stdout


def test_without_a_key_the_error_is_one_line(handbook, monkeypatch):
    monkeypatch.delenv("ARGILLA_API_KEY", raising=False)
    result = handbook("annotate", "push", "--dataset", "faq", "--api-url", "http://127.0.0.1:9", code=2)
    assert result.stderr.strip().startswith("error: field 'api-url': Argilla needs --api-url (or ARGILLA_API_URL) and")
    assert result.stderr.count("\n") == 1
