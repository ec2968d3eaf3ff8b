"""What is a dispute, how agreeing answers merge, and adjudication in its own Argilla dataset, against a
real argilla-server (the first tests are pure logic)."""

import uuid

import httpx
import pytest

from curate.annotate.adjudication import load_adjudication
from curate.annotate.apply import disputes, merge_key_points, merged_answer
from curate.annotate.form import Answer
from curate.annotate.pull import argilla_datasets, pull, status
from curate.annotate.remote import argilla_records
from curate.annotate.push import push
from curate.annotate.state import load_state
from curate.dataset import DatasetStore
from curate.records import EvalItem
from tests.support.argilla import annotator_headers as annotator
from tests.support.argilla import owner_client as client_of
from tests.support.argilla import with_every_grade



# --- pure logic -------------------------------------------------------------------------------------

def test_only_grades_and_answerability_are_disputes():
    same = dict(grades={1: 2, 2: 0}, answerable="answerable")
    assert disputes([Answer("ann", key_points="令牌过期 [1]", comment="ok", answer="A.", **same),
                     Answer("bo", key_points="访问令牌过期了 [1]", question="Q?", answer="B, longer.", **same)],
                    ["c1", "c2"]) == []
    # 1 against 2 is a grade disagreement (the guideline: "disagreements (grade or answerability)")
    assert disputes([Answer("ann", {1: 1}), Answer("bo", {1: 2})], ["c1"]) == ["candidate 1 (c1): ann 1, bo 2"]
    # an ungraded slot is 0; an answer without an answerability label has no say on it
    assert disputes([Answer("ann", {1: 0}, "answerable"), Answer("bo", {}, None)], ["c1"]) == []
    assert disputes([Answer("ann", {}, "answerable"), Answer("bo", {}, "unanswerable")], ["c1"]) == [
        "answerable: ann answerable, bo unanswerable"]


def test_key_points_merge_when_they_cite_the_same_chunks_and_say_the_same():
    merged, notes = merge_key_points([
        Answer("ann", key_points="The access token has expired [1]\nDefault is 600 requests per minute [2]"),
        Answer("bo", key_points="Access token expired [1]\nDefault is 6000 requests per minute [2]\n"
                                "Log in again [1]")])
    # paraphrases citing [1] are one (the longest wording kept); 600 and 6000 are two facts; bo's extra one kept
    assert merged == [("The access token has expired", [1]), ("Default is 600 requests per minute", [2]),
                      ("Default is 6000 requests per minute", [2]), ("Log in again", [1])]
    assert any("merged as 'The access token has expired'" in n for n in notes)
    assert any(n == "key point from bo only: 'Log in again'" for n in notes)
    # the same text with other chunks cited is one key point citing both; similar text citing others is two
    merged, _ = merge_key_points([Answer("ann", key_points="令牌过期 [1]"), Answer("bo", key_points="令牌过期 [2]")])
    assert merged == [("令牌过期", [1, 2])]
    merged, _ = merge_key_points([Answer("ann", key_points="访问令牌已过期 [1]"),
                                  Answer("bo", key_points="访问令牌过期了 [2]")])
    assert len(merged) == 2
    # the same words in another order are one key point too
    merged, _ = merge_key_points([
        Answer("ann", key_points="The old key stays valid for 24 hours after rotation [1]"),
        Answer("bo", key_points="After rotation the old key keeps working for 24 hours [1]\nThe new key works at once [1]")])
    assert merged == [("After rotation the old key keeps working for 24 hours", [1]), ("The new key works at once", [1])]
    # numbers agree when one's are all in the other's
    merged, _ = merge_key_points([Answer("ann", key_points="3.2 raises the default upstream timeout to 30 s [1]"),
                                  Answer("bo", key_points="Version 3.2 raises the default timeout from 15 to 30 "
                                                          "seconds [1]")])
    assert merged == [("Version 3.2 raises the default timeout from 15 to 30 seconds", [1])]


def test_differing_corrections_decide_nothing_and_are_noted():
    item = EvalItem(id="x", question="What does LG-4301 mean?", source="human", language="en")
    answer, notes = merged_answer([
        Answer("ann", {1: 2}, "answerable", question="What does LG-4031 mean?", answer="The token expired."),
        Answer("bo", {1: 2}, "answerable", question="What does error LG-4031 mean for a login?",
               answer="The access token has expired; log in again.")], item)
    assert answer.question == "What does LG-4031 mean?"                       # closest to the original
    assert answer.answer == "The access token has expired; log in again."     # the longest
    assert [n.split(":")[0] for n in notes] == ["question corrections differ, kept closest to the original",
                                                "reference answer corrections differ, kept the longest"]


# --- against the real server -----------------------------------------------------------------------

@pytest.fixture
def pushed(handbook, argilla_env):
    """The handbook items pushed to their own Argilla workspace, needing two annotators."""
    space = "a" + uuid.uuid4().hex[:8]
    push(handbook.workspace, dataset="faq", pool_k=4, min_submitted=2, argilla_workspace=space)
    return handbook, space


def records_of(server, space: str, name: str) -> dict[str, dict]:
    """Return the records of an Argilla dataset by item id, as the API lists them (with responses)."""
    client = client_of(server)
    target = client.datasets(name=name, workspace=space)
    return {str(r["external_id"]): r for r in argilla_records(client, target.id)}


def annotation_records(server, space: str, workspace, dataset: str = "faq") -> dict[str, dict]:
    """Return the records of every Argilla dataset the local dataset was pushed to, by item id."""
    found = {}
    for name in argilla_datasets(load_state(workspace, dataset)):
        found.update(records_of(server, space, name))
    return found


def respond(server, headers, record_id, grades: dict[int, int] | None = None, answerable="answerable",
            status="submitted", **texts):
    values = {f"relevance_{n}": {"value": g} for n, g in (grades or {}).items()}
    values["answerable"] = {"value": answerable}
    values.update({name: {"value": value} for name, value in texts.items()})
    if status == "submitted":
        values = with_every_grade(server, record_id, values)
    body = {"values": values, "status": status} if status != "discarded" else {"status": status}
    response = httpx.post(f"{server.url}/api/v1/records/{record_id}/responses", headers=headers, json=body)
    assert response.status_code == 201, response.text


def test_same_grades_in_other_words_are_agreement_with_key_points_merged(pushed, argilla_env):
    handbook, space = pushed
    ann, bo = annotator(argilla_env, space, "ann"), annotator(argilla_env, space, "bo")
    records = annotation_records(argilla_env, space, handbook.workspace)
    respond(argilla_env, ann, records["t-1"]["id"], {1: 2, 2: 1}, key_points_fixed="访问令牌已过期 [1]\n需要重新登录 [2]",
            answer_fixed="访问令牌已过期。", comment="unsure: 2 或 1")
    respond(argilla_env, bo, records["t-1"]["id"], {1: 2, 2: 1}, key_points_fixed="访问令牌过期了 [1]\n需要重新登录。[2]",
            answer_fixed="访问令牌已过期，需要重新登录。")

    out = handbook("annotate", "pull", "--dataset", "faq").stdout
    assert "labelled 1 (0 by adjudication), open disputes 0" in out
    assert "merged or differing texts (for a person to check)" in out and "needs adjudication" not in out
    t1 = next(i for i in DatasetStore(handbook.workspace).items("faq") if i.id == "t-1")
    assert [k.text for k in t1.key_points] == ["访问令牌已过期", "需要重新登录。"]
    assert all(len(k.evidence_ids) == 1 for k in t1.key_points)
    assert t1.reference_answer == "访问令牌已过期，需要重新登录。"          # the longest correction
    reason = t1.status_history[-1].reason
    assert "in agreement" in reason and "key point merged as '访问令牌已过期'" in reason
    assert "reference answer corrections differ" in reason and "unsure: 2 或 1" in reason
    assert client_of(argilla_env).datasets(name="faq-adjudication", workspace=space) is None
    # Argilla shows the new status; the annotators' answers are untouched
    again = annotation_records(argilla_env, space, handbook.workspace)["t-1"]
    assert again["metadata"]["status"] == "labelled"
    assert [r["status"] for r in again["responses"]] == ["submitted", "submitted"]


def test_a_grade_dispute_is_adjudicated_in_its_own_dataset(pushed, argilla_env):
    handbook, space = pushed
    ann, bo = annotator(argilla_env, space, "ann"), annotator(argilla_env, space, "bo")
    records = annotation_records(argilla_env, space, handbook.workspace)
    state = load_state(handbook.workspace, "faq")
    respond(argilla_env, ann, records["t-1"]["id"], {1: 2}, key_points_fixed="访问令牌已过期 [1]")
    respond(argilla_env, bo, records["t-1"]["id"], {1: 2}, key_points_fixed="访问令牌过期了 [1]")
    respond(argilla_env, ann, records["t-2"]["id"], {1: 2, 2: 1}, comment="unsure: 1 or 2")
    respond(argilla_env, bo, records["t-2"]["id"], {1: 2, 2: 2})

    first = pull(handbook.workspace, dataset="faq")
    assert {a.item_id: a.outcome for a in first.applied} == {"t-1": "labelled", "t-2": "needs_adjudication"}
    assert list(first.open_disputes) == ["t-2"] and first.adjudication_dataset == "faq-adjudication"
    slot2 = state.items["t-2"].slots[1]
    assert first.open_disputes["t-2"] == f"annotators disagree: candidate 2 ({slot2}): ann-{space} 1, bo-{space} 2"
    disputed = records_of(argilla_env, space, "faq-adjudication")
    assert list(disputed) == ["t-2"]
    shown = disputed["t-2"]["fields"]
    assert shown["question"].startswith("What does version 3.2 change")
    assert f"ann-{space}" in shown["answers"] and f"bo-{space}" in shown["answers"]
    assert "unsure: 1 or 2" in shown["answers"]
    assert f"ann-{space} **1** · bo-{space} **2** ⚠ differ" in shown["chunk_2"]
    assert f"`{slot2}`" in shown["chunk_2"] and disputed["t-2"]["metadata"]["status"] == "open"
    main = annotation_records(argilla_env, space, handbook.workspace)
    assert (main["t-1"]["metadata"]["status"], main["t-2"]["metadata"]["status"]) == ("labelled", "needs_adjudication")
    assert len(main["t-2"]["responses"]) == 2

    # pulling again applies nothing, still reports the open dispute, and writes no second record
    again = pull(handbook.workspace, dataset="faq")
    assert again.applied == [] and list(again.open_disputes) == ["t-2"] and again.status_updates == 0
    assert list(records_of(argilla_env, space, "faq-adjudication")) == ["t-2"]
    out = handbook("annotate", "pull", "--dataset", "faq").stdout
    assert "labelled 0 (0 by adjudication), open disputes 1" in out
    assert "needs adjudication (adjudicate in Argilla dataset 'faq-adjudication')" in out and "t-2" in out
    assert records_of(argilla_env, space, "faq-adjudication")["t-2"]["updated_at"] == disputed["t-2"]["updated_at"]

    # a reviewer decides in the adjudication dataset; the next pull settles t-2 and leaves t-1 alone
    store = DatasetStore(handbook.workspace)
    t1_before = next(i for i in store.items("faq") if i.id == "t-1").model_dump()
    # an annotator cannot settle their own dispute
    respond(argilla_env, ann, disputed["t-2"]["id"], {1: 2, 2: 2})
    assert list(pull(handbook.workspace, dataset="faq").open_disputes) == ["t-2"]
    reviewer = annotator(argilla_env, space, "rev")
    respond(argilla_env, reviewer, disputed["t-2"]["id"], {1: 2, 2: 1}, comment="gives the change, not the why")
    settled = pull(handbook.workspace, dataset="faq")
    assert [(a.item_id, a.outcome, a.adjudicated_by) for a in settled.applied] == [
        ("t-2", "labelled", [f"rev-{space}"])]
    assert settled.open_disputes == {}
    items = {i.id: i for i in store.items("faq")}
    assert items["t-1"].model_dump() == t1_before
    t2 = items["t-2"]
    assert t2.status == "labelled" and t2.status_history[-1].by == f"rev-{space}"
    assert t2.status_history[-1].reason.startswith(f"adjudicated by rev-{space}")
    assert {c: e.grade for e in t2.evidence for c in e.chunk_ids}[slot2] == 1
    kept = load_adjudication(handbook.workspace, "faq").items["t-2"]
    assert kept.settled_by == [f"rev-{space}"] and kept.settled_at
    assert records_of(argilla_env, space, "faq-adjudication")["t-2"]["metadata"]["status"] == "settled"
    assert annotation_records(argilla_env, space, handbook.workspace)["t-2"]["metadata"]["status"] == "labelled"
    assert pull(handbook.workspace, dataset="faq").applied == []
    out = handbook("annotate", "status", "--dataset", "faq").stdout
    assert "adjudication ('faq-adjudication'): 0 of 1 records open" in out
    reviewers = status(handbook.workspace, dataset="faq")["argilla"]["adjudication"]["users"]
    assert reviewers[f"rev-{space}"]["submitted"] == reviewers[f"ann-{space}"]["submitted"] == 1


def test_an_adjudicator_in_the_annotation_dataset_decides_only_disputes(pushed, argilla_env):
    handbook, space = pushed
    ann, bo, cy = (annotator(argilla_env, space, n) for n in ("ann", "bo", "cy"))
    records = annotation_records(argilla_env, space, handbook.workspace)
    for who in (ann, bo):
        respond(argilla_env, who, records["t-1"]["id"], {1: 2})
    respond(argilla_env, ann, records["t-2"]["id"], {1: 2}, answerable="answerable")
    respond(argilla_env, bo, records["t-2"]["id"], {1: 0}, answerable="unanswerable")
    # the adjudicator also answers the agreed t-1, differently: that is no third vote
    respond(argilla_env, cy, records["t-1"]["id"], {1: 0})
    respond(argilla_env, cy, records["t-2"]["id"], {1: 2})
    report = pull(handbook.workspace, dataset="faq", adjudicator=f"cy-{space}")
    outcome = {a.item_id: (a.outcome, a.adjudicated_by) for a in report.applied}
    assert outcome == {"t-1": ("labelled", []), "t-2": ("labelled", [f"cy-{space}"])}
    assert report.agreement["relevance_alpha_pairs"].keys() == {f"ann-{space}|bo-{space}"}
    items = {i.id: i for i in DatasetStore(handbook.workspace).items("faq")}
    assert items["t-1"].status_history[-1].reason.startswith("labelled by ann-")
    assert max(e.grade for e in items["t-1"].evidence) == 2


def test_a_production_item_labelled_with_evidence_gets_a_qtype():
    from curate.annotate.apply import apply_answer
    from curate.annotate.form import ANSWERABLE, Answer
    from curate.records import Chunk, EvalItem

    item = EvalItem(id="p-1", question="婚假有几天？", language="zh", source="production", qtype=None)
    chunks = {f"leave.zh.md#{n}": Chunk(chunk_id=f"leave.zh.md#{n}", doc_id="leave.zh.md", text=text, start=start,
                                        end=start + len(text), text_sha256="0" * 64)
              for n, (text, start) in enumerate([("可享受 3 天带薪婚假。", 0), ("须在登记之日起一年内休完。", 20)])}
    one = item.model_copy(deep=True)
    apply_answer(one, Answer("alice", grades={1: 2}, answerable=ANSWERABLE), list(chunks), chunks, {}, "kb-1")
    assert (one.qtype, len(one.evidence)) == ("single", 1)
    both = item.model_copy(deep=True)
    apply_answer(both, Answer("alice", grades={1: 2, 2: 2}, answerable=ANSWERABLE), list(chunks), chunks, {}, "kb-1")
    assert both.qtype == "multi_evidence"
    unlabelled = item.model_copy(deep=True)
    apply_answer(unlabelled, Answer("alice", answerable=ANSWERABLE), list(chunks), chunks, {}, "kb-1")
    assert unlabelled.qtype is None   # no evidence yet: nothing to say
