"""Argilla shows annotators who asks and when, and marks each candidate the asker may not use at that
moment with why (forbidden, superseded, expired, a later version); pushes stay idempotent, pull keeps the
item's asker and moment; a dataset answered before scope keeps its answers. Against a real argilla-server."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from curate.annotate.pull import pull
from curate.annotate.push import push
from curate.annotate.state import load_state
from curate.dataset import DatasetStore
from tests.support.argilla import annotator_headers, owner_client, submit
from tests.support.scoped import scoped_kb

DATA = Path(__file__).parents[1] / "dataset" / "data"
EN_MARK = "> ⚠ **Not usable for this asker at this moment**: {}. Grade it by what it says."
ZH_MARK = "> ⚠ **此时对该提问者不可用**：{}。请照常按片段内容打分。"


def _records(server, space: str) -> dict:
    """Item id -> (Argilla record, {chunk id: its field text}) over every dataset of the workspace."""
    client = owner_client(server)
    found = {}
    for name in [d.name for d in client.workspaces(space).datasets]:
        for record in client.datasets(name=name, workspace=space).records(with_responses=True):
            chunks = {text.split("`")[1]: text for name, text in record.fields.items()
                      if name.startswith("chunk_") and text}
            found[str(record.id)] = (record, chunks)
    return found


@pytest.fixture
def scoped_push(curate, argilla_env):
    scoped_kb(curate.workspace)
    curate("import", DATA / "scoped_items.jsonl", "--dataset", "hr", "--source", "human", "--kb", "policies")
    space = "s" + uuid.uuid4().hex[:8]
    result = curate("annotate", "push", "--dataset", "hr", "--pool-k", "4", "--argilla-workspace", space)
    return curate, space, result


def test_records_show_who_asks_when_and_why_a_candidate_is_not_usable(scoped_push, argilla_env):
    curate, space, result = scoped_push
    assert "records show who asks and when" in result.stdout
    records = _records(argilla_env, space)
    s3, s3_chunks = records["s-3"]
    assert s3.fields["scope"] == "Asked by: groups staff\nAt: the latest (anything superseded is out of date)"
    assert s3_chunks["salary-bands#0"].split("\n\n")[1] == EN_MARK.format(
        "the asker may not see it (visible to hr, manager)")
    assert s3.metadata["asker"] == "groups:staff" and s3.metadata["as_of"] == "latest"
    s6, s6_chunks = records["s-6"]   # hr asks the same: the same passage carries no mark
    assert s6.fields["scope"] == "Asked by: role hr (groups hr, staff)\nAt: 2026-03-01"
    assert "⚠" not in s6_chunks["salary-bands#0"]
    s1, s1_chunks = records["s-1"]   # staff on 2026-03-01: the 2025 policy has expired, the bonus rule is hr's
    assert s1.fields["scope"] == "提问者：角色 staff（用户组 staff）\n时间：2026-03-01"
    assert "⚠" not in s1_chunks["travel-2026#0"]
    assert s1_chunks["travel-2025#0"].split("\n\n")[1] == ZH_MARK.format("已失效（有效期至 2025-12-31）")
    s2, s2_chunks = records["s-2"]   # KB version 2025: the 2026 policy is a later version
    assert s2.fields["scope"] == "提问者：用户组 staff\n时间：知识库版本 2025"
    assert s2_chunks["travel-2026#0"].split("\n\n")[1] == ZH_MARK.format("属于更晚的版本（2026）")
    assert "⚠" not in s2_chunks["travel-2025#0"]
    s5, s5_chunks = records["s-5"]   # the latest: the 2025 policy is superseded by the 2026 one
    assert s5_chunks["travel-2025#0"].split("\n\n")[1] == ZH_MARK.format("已被取代：此时有新的内容生效")
    s4, _ = records["s-4"]
    assert s4.fields["scope"] == "Asked by: no group: may see only what everyone may\nAt: the latest (anything " \
                                 "superseded is out of date)"
    s7, _ = records["s-7"]
    assert s7.fields["scope"].startswith("Asked by: not given (what the asker may see is not checked)")
    # pushing again changes nothing: the same records, once each
    again = curate("annotate", "push", "--dataset", "hr", "--pool-k", "4", "--argilla-workspace", space)
    assert "(created)" not in again.stdout and "rebuilt" not in again.stdout
    assert sorted(_records(argilla_env, space)) == sorted(records) == [f"s-{n}" for n in range(1, 8)]


def test_pull_keeps_the_asker_and_the_moment(scoped_push, argilla_env):
    curate, space, _ = scoped_push
    state = load_state(curate.workspace, "hr")
    annotator = annotator_headers(argilla_env, space, "ann")
    record, _ = _records(argilla_env, space)["s-3"]
    slot = state.items["s-3"].slots.index("salary-bands#0") + 1
    # graded by what it says: fully relevant, though the asker may not see it
    submit(argilla_env, annotator, str(record._server_id), {slot: 2})
    report = pull(curate.workspace, dataset="hr")
    assert [(a.item_id, a.outcome) for a in report.applied] == [("s-3", "labelled")]
    item = next(i for i in DatasetStore(curate.workspace).items("hr") if i.id == "s-3")
    assert (item.asker_groups, item.asker_role, item.as_of, item.answerable) == (["staff"], None, None, True)
    assert [(e.grade, e.chunk_ids) for e in item.evidence if e.grade] == [(2, ["salary-bands#0"])]


def test_a_dataset_answered_before_scope_keeps_its_answers(handbook, argilla_env):
    space = "b" + uuid.uuid4().hex[:8]
    push(handbook.workspace, dataset="faq", pool_k=4, argilla_workspace=space)
    record, _ = _records(argilla_env, space)["t-1"]
    submit(argilla_env, annotator_headers(argilla_env, space, "ann"), str(record._server_id), {1: 2})
    store = DatasetStore(handbook.workspace)
    meta, items = store.load("faq")
    for item in items:   # askers named after the first push
        item.asker_groups = ["staff"]
    store.save(meta, items)
    report = push(handbook.workspace, dataset="faq", pool_k=4, argilla_workspace=space)
    assert report.scoped and report.without_scope_field == ["faq"]   # t-1 answered: the main dataset stays
    assert "faq-k2" in report.rebuilt                                # unanswered: rebuilt with the field
    records = _records(argilla_env, space)
    t1, _ = records["t-1"]
    assert [r.value for r in t1.responses["relevance_1"]] == [2]   # the answer is still there
    assert "scope" not in t1.fields and t1.metadata["asker"] == "groups:staff"
    assert records["t-3"][0].fields["scope"] == "提问者：用户组 staff\n时间：最新（已被取代的内容视为过时）"


def test_a_mark_shows_group_and_version_names_as_written_not_as_markup():
    from curate.annotate.marks import mark
    from curate.records import EvalItem, Scope
    item = EvalItem(id="q", question="?", language="en", source="human", asker_groups=["staff"], as_of="v1")
    shown = mark(item, ["forbidden", "later_version"], Scope(groups=["<img src=x onerror=alert(1)>", "**hr**"],
                                                             version="[v2](javascript:x)"))
    assert "\\<img src=x onerror=alert(1)\\>" in shown and "\\*\\*hr\\*\\*" in shown
    assert "\\[v2\\](javascript:x)" in shown and "<img" not in shown.replace("\\<img", "")
