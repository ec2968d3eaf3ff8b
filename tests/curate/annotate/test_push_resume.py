"""A push retried to completion: killed while creating a dataset, during the first batch or during an
update, it is finished by the next push with every record present once and every answer kept; a
lost server is one line. Also: a record asks only what it has (one Argilla dataset per pool size),
and both guidelines reach annotators as Markdown that renders. Against a real argilla-server."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest

from curate.annotate.push import _unwrapped, guidelines_text, push
from curate.annotate.remote import DatasetMismatch
from curate.annotate.state import load_state
from curate.dataset import DatasetStore
from curate.errors import CurateError
from curate.index.kb_index import KBIndex
from tests.support.argilla import annotator_headers as _annotator
from tests.support.argilla import owner_client as _client
from tests.support.argilla import submit as _submit
from tests.support.processes import PATIENCE

ROOT = Path(__file__).resolve().parents[3]

# Run in a child process: SDK steps are wrapped so the process SIGKILLs itself at a chosen point,
# then `curate` runs. Points: "field:NAME" (creating that field), "publish" (before publishing),
# "batch:N" (right after the N-th batch of records reached Argilla; batches of one record).
KILLER = r"""
import os, signal, sys
point, args = sys.argv[1], sys.argv[2:]
def die():
    os.kill(os.getpid(), signal.SIGKILL)
import argilla as rg
if point.startswith("field:"):
    create = rg.TextField.create
    def killing_create(self):
        if self.name == point[len("field:"):]:
            die()
        return create(self)
    rg.TextField.create = killing_create
elif point == "publish":
    from argilla._api._datasets import DatasetsAPI
    DatasetsAPI.publish = lambda self, dataset_id: die()
elif point.startswith("batch:"):
    import curate.annotate.push as push_module
    from argilla._api._records import RecordsAPI
    push_module.BATCH = 1
    upsert, sent = RecordsAPI.bulk_upsert, []
    def killing_upsert(self, *a, **k):
        result = upsert(self, *a, **k)
        sent.append(1)
        if len(sent) == int(point[len("batch:"):]):
            die()
        return result
    RecordsAPI.bulk_upsert = killing_upsert
from curate.cli.main import cli
cli(args, prog_name="curate")
"""


@pytest.fixture
def space(argilla_env) -> str:
    """A fresh Argilla workspace name for one test."""
    return "r" + uuid.uuid4().hex[:8]


def _http(server) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"X-Argilla-Api-Key": server.api_key}, timeout=30)


def _datasets(server, space: str) -> dict[str, dict]:
    """Dataset name -> the API's dataset (with `status`) in a workspace."""
    with _http(server) as http:
        return {d["name"]: d for d in http.get("/api/v1/me/datasets").json()["items"]
                if d["workspace_id"] == str(_client(server).workspaces(space).id)}


def _records(server, dataset_id: str) -> dict[str, dict]:
    """Item id -> record (with its responses) of one dataset, over the API."""
    with _http(server) as http:
        items = http.get(f"/api/v1/datasets/{dataset_id}/records",
                         params={"limit": 1000, "include": ["responses"]}).json()["items"]
    ids = [r["external_id"] for r in items]
    assert len(ids) == len(set(ids)), f"a record is there twice: {ids}"
    return {r["external_id"]: r for r in items}


def _all_records(server, space: str) -> dict[str, tuple[str, dict]]:
    """Item id -> (dataset name, record) over every dataset of the workspace; each item once."""
    found: dict[str, tuple[str, dict]] = {}
    for name, data in _datasets(server, space).items():
        for item_id, record in _records(server, data["id"]).items():
            assert item_id not in found, f"{item_id} is in both {found[item_id][0]} and {name}"
            found[item_id] = (name, record)
    return found


def _killed_push(handbook, server, space: str, point: str, pool_k: int = 4) -> None:
    """Run `curate annotate push` in a child process that kills itself (SIGKILL) at `point`."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               ARGILLA_API_URL=server.url, ARGILLA_API_KEY=server.api_key)
    args = ["--workspace", str(handbook.workspace.root), "annotate", "push", "--dataset", "faq", "--pool-k",
            str(pool_k), "--argilla-workspace", space]
    done = subprocess.run([sys.executable, "-c", KILLER, point, *args], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == -signal.SIGKILL, f"not killed at {point}: {done.returncode}\n{done.stderr[-2000:]}"


def _assert_complete(handbook, server, space: str) -> dict[str, tuple[str, dict]]:
    """Check every Argilla dataset is published and shaped for its pool, and every item is there once,
    where the local state says; return the records."""
    state = load_state(handbook.workspace, "faq")
    datasets = _datasets(server, space)
    assert all(d["status"] == "ready" for d in datasets.values()), datasets
    client = _client(server)
    for name in datasets:
        k = state.pool_k if name == "faq" else int(name.rsplit("-k", 1)[1])
        settings = client.datasets(name=name, workspace=space).settings
        assert [f.name for f in settings.fields] == (["question", "reference_answer", "key_points"]
                                                     + [f"chunk_{n}" for n in range(1, k + 1)])
        assert [q.name for q in settings.questions][:k + 1] == [f"relevance_{n}" for n in range(1, k + 1)] + [
            "answerable"]
    records = _all_records(server, space)
    assert sorted(records) == ["t-1", "t-2", "t-3", "t-4", "t-5"] == sorted(state.items)
    assert {i: name for i, (name, _) in records.items()} == {i: state.dataset_of(i) for i in state.items}
    assert state.push_started is None
    return records


def test_relogging_a_record_with_submitted_responses_keeps_them(handbook, argilla_env, space):
    first = push(handbook.workspace, dataset="faq", pool_k=4, argilla_workspace=space)
    assert first.records == {"faq": 3, "faq-k2": 2}
    ann = _annotator(argilla_env, space, "ann")
    records = _all_records(argilla_env, space)
    _submit(argilla_env, ann, records["t-1"][1]["id"], {1: 2, 2: 1}, comment="outdated: see 2")
    store = DatasetStore(handbook.workspace)
    meta, items = store.load("faq")
    next(i for i in items if i.id == "t-1").reference_answer = "令牌过期（本地修改）。"
    store.save(meta, items)

    again = push(handbook.workspace, dataset="faq", pool_k=4, argilla_workspace=space)
    assert again.created is False and again.created_datasets == [] and again.records == {"faq": 3, "faq-k2": 2}
    name, t1 = _all_records(argilla_env, space)["t-1"]
    assert name == "faq" and t1["fields"]["reference_answer"] == "令牌过期（本地修改）。"   # the record was updated
    [response] = t1["responses"]                                                    # and its answer kept
    assert response["status"] == "submitted" and response["values"]["relevance_1"]["value"] == 2
    assert response["values"]["comment"]["value"] == "outdated: see 2"


@pytest.mark.parametrize("point", ["field:chunk_3", "publish"])
def test_a_push_killed_while_creating_the_dataset_is_rebuilt_by_the_next(handbook, argilla_env, space, point):
    _killed_push(handbook, argilla_env, space, point)
    half = _datasets(argilla_env, space)["faq"]
    assert half["status"] == "draft"   # what a real trial saw: a dataset missing fields, which retries tripped on
    with _http(argilla_env) as http:
        fields = [f["name"] for f in http.get(f"/api/v1/datasets/{half['id']}/fields").json()["items"]]
    assert ("chunk_3" not in fields) == (point == "field:chunk_3") and "chunk_2" in fields
    report = push(handbook.workspace, dataset="faq", pool_k=4, argilla_workspace=space)
    assert "half-made" in report.rebuilt["faq"] and report.created
    assert report.records == {"faq": 3, "faq-k2": 2}
    _assert_complete(handbook, argilla_env, space)


def test_a_push_killed_during_the_first_batch_is_completed_by_the_next(handbook, argilla_env, space):
    _killed_push(handbook, argilla_env, space, "batch:1")
    state = load_state(handbook.workspace, "faq")
    assert state.push_started is not None and len(state.items) <= 1
    result = handbook("annotate", "push", "--dataset", "faq", "--pool-k", "4", "--argilla-workspace", space)
    assert "pushed 5 items" in result.stdout and "'faq': 3 records" in result.stdout
    assert "'faq-k2': 2 records" in result.stdout
    _assert_complete(handbook, argilla_env, space)


def test_a_push_killed_during_an_update_loses_no_answer(handbook, argilla_env, space):
    push(handbook.workspace, dataset="faq", pool_k=4, argilla_workspace=space)
    ann, bo = _annotator(argilla_env, space, "ann"), _annotator(argilla_env, space, "bo")
    records = _all_records(argilla_env, space)
    for who in (ann, bo):
        _submit(argilla_env, who, records["t-1"][1]["id"], {1: 2, 2: 1})
    _submit(argilla_env, ann, records["t-3"][1]["id"], {1: 2})
    store = DatasetStore(handbook.workspace)
    meta, items = store.load("faq")
    for item in items:
        item.tags = [*item.tags, "rev2"]
        if item.id == "t-4":
            item.reference_answer = "Administrators only (revised)."
    store.save(meta, items)

    _killed_push(handbook, argilla_env, space, "batch:2")   # two records updated, then killed
    assert load_state(handbook.workspace, "faq").push_started is not None
    report = push(handbook.workspace, dataset="faq", pool_k=4, argilla_workspace=space)
    assert report.created_datasets == [] and report.rebuilt == {}
    records = _assert_complete(handbook, argilla_env, space)
    assert records["t-4"][1]["fields"]["reference_answer"] == "Administrators only (revised)."
    assert sorted(r["status"] for r in records["t-1"][1]["responses"]) == ["submitted", "submitted"]
    assert [r["values"]["relevance_1"]["value"] for r in records["t-3"][1]["responses"]] == [2]


def test_a_different_dataset_is_rebuilt_without_answers_and_refused_with_them(handbook, argilla_env, space):
    import argilla as rg

    from curate.annotate.form import settings
    client = _client(argilla_env)
    workspace = rg.Workspace(name=space, client=client).create()
    # 'faq' made by hand with three candidate slots where curate expects four
    rg.Dataset(name="faq", workspace=workspace, client=client, settings=settings(3, "old")).create()
    report = push(handbook.workspace, dataset="faq", pool_k=4, argilla_workspace=space)
    assert "missing field 'chunk_4'" in report.rebuilt["faq"] and "no answers" in report.rebuilt["faq"]
    _assert_complete(handbook, argilla_env, space)

    # 'faq-k2' replaced by one lacking a field, and an annotator answers in it: never rebuilt
    _client(argilla_env).datasets(name="faq-k2", workspace=space).delete()
    odd = rg.Dataset(name="faq-k2", workspace=workspace, client=client, settings=settings(1, "old")).create()
    odd.records.log([rg.Record(id="t-3", fields={"question": "?", "chunk_1": "x"})])
    ann = _annotator(argilla_env, space, "cy")
    _submit(argilla_env, ann, _records(argilla_env, str(odd.id))["t-3"]["id"], {1: 1})
    with pytest.raises(DatasetMismatch, match=r"'faq-k2' is not what curate expects \(missing field 'chunk_2'.*"
                                              r"1 of its records hold answers"):
        push(handbook.workspace, dataset="faq", pool_k=4, argilla_workspace=space)
    result = handbook("annotate", "push", "--dataset", "faq", "--pool-k", "4", "--argilla-workspace", space, code=2)
    assert result.stderr.count("\n") == 1 and "missing field 'chunk_2'" in result.stderr
    assert len(_records(argilla_env, str(odd.id))["t-3"]["responses"]) == 1


def test_losing_the_server_mid_push_is_one_line_and_exit_2(handbook, monkeypatch, tmp_path):
    from curate.annotate import push as push_module
    from curate.annotate.server.process import start_server
    from tests.support.servers import free_port

    server = start_server(tmp_path / "lost", free_port(), api_key="curate-test-lost-api-key", timeout=PATIENCE)
    monkeypatch.setenv("ARGILLA_API_KEY", server.api_key)
    monkeypatch.setenv("ARGILLA_API_URL", server.url)
    log = push_module._log

    def stop_then_log(target, records):
        server.stop()   # the server goes away after the dataset was made, as the first records leave
        log(target, records)

    monkeypatch.setattr(push_module, "_log", stop_then_log)
    try:
        lost = handbook("annotate", "push", "--dataset", "faq", "--pool-k", "4", code=2)
        unreachable = handbook("annotate", "push", "--dataset", "faq", "--pool-k", "4", code=2)
        with pytest.raises(CurateError, match="cannot reach Argilla"):
            push(handbook.workspace, dataset="faq", pool_k=4)
    finally:
        server.stop()
    assert lost.stderr.startswith(f"error: lost Argilla at {server.url} while sending records to Argilla dataset "
                                  f"'faq': ConnectionRefusedError: [Errno 111] Connection refused; ")
    assert lost.stderr.strip().endswith("nothing answered is lost, push again to finish")
    assert unreachable.stderr.startswith(f"error: cannot reach Argilla at {server.url}")
    for result in (lost, unreachable):
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert load_state(handbook.workspace, "faq").push_started is not None   # the batch may or may not have landed
    # a pull now would read records that may not match the local record of what was pushed: refused
    refused = handbook("annotate", "pull", "--dataset", "faq", code=2)
    assert refused.stderr.startswith("error: field 'dataset': the last push of 'faq' (started ")
    assert "run `curate annotate push --dataset faq` again, then pull" in refused.stderr
    assert refused.stderr.count("\n") == 1


def test_a_request_argilla_refuses_is_one_line_without_retry_advice(handbook, argilla_env, space, monkeypatch):
    import argilla as rg
    rg.Workspace(name=space, client=_client(argilla_env)).create()
    headers = _annotator(argilla_env, space, "eve")   # an annotator's key cannot create datasets
    key = httpx.get(f"{argilla_env.url}/api/v1/me", headers=headers).json()["api_key"]
    monkeypatch.setenv("ARGILLA_API_KEY", key)
    result = handbook("annotate", "push", "--dataset", "faq", "--pool-k", "4", "--argilla-workspace", space, code=2)
    assert result.stderr.startswith(f"error: Argilla at {argilla_env.url} refused preparing Argilla dataset 'faq' "
                                    f"(HTTP 403)")
    assert result.stderr.count("\n") == 1 and "push again" not in result.stderr and key not in result.stderr


def test_a_published_dataset_is_brought_up_to_date_in_place(handbook, argilla_env, space):
    import argilla as rg

    from curate.annotate.form import settings
    client = _client(argilla_env)
    workspace = rg.Workspace(name=space, client=client).create()
    old = settings(4, "old guidelines", min_submitted=1)
    for field in old.fields:
        field.use_markdown = False            # as an older curate made it
    old.metadata = [m for m in old.metadata if m.name != "status"]
    rg.Dataset(name="faq", workspace=workspace, client=client, settings=old).create()
    report = push(handbook.workspace, dataset="faq", pool_k=4, min_submitted=2, argilla_workspace=space)
    assert report.rebuilt == {} and report.created_datasets == ["faq-k2"]
    dataset = _client(argilla_env).datasets(name="faq", workspace=space)
    assert dataset.settings.guidelines.startswith("# English")
    assert dataset.settings.distribution.min_submitted == 2
    assert [f.name for f in dataset.settings.fields if f.use_markdown] == [f"chunk_{n}" for n in range(1, 5)]
    assert "status" in [m.name for m in dataset.settings.metadata]
    assert next(r for r in dataset.records() if str(r.id) == "t-1").metadata["status"] == "draft"


def test_a_record_asks_only_for_the_candidates_it_has(handbook, argilla_env, space):
    store = DatasetStore(handbook.workspace)
    meta, items = store.load("faq")
    t5 = next(i for i in items if i.id == "t-5")
    t5.question = "Qwxz vbnm plokij?"   # no word of it is in the KB: no candidate at all
    store.save(meta, items)
    report = push(handbook.workspace, dataset="faq", pool_k=4, argilla_workspace=space)
    assert report.records == {"faq": 3, "faq-k2": 1, "faq-k0": 1}
    client = _client(argilla_env)
    k0 = client.datasets(name="faq-k0", workspace=space).settings
    assert [f.name for f in k0.fields] == ["question", "reference_answer", "key_points"]
    assert [q.name for q in k0.questions] == ["answerable", "question_fixed", "answer_fixed", "key_points_fixed",
                                              "comment"]
    k2 = client.datasets(name="faq-k2", workspace=space).settings
    assert [q.name for q in k2.questions if q.name.startswith("relevance_")] == ["relevance_1", "relevance_2"]
    state = load_state(handbook.workspace, "faq")
    assert (state.dataset_of("t-1"), state.dataset_of("t-3"), state.dataset_of("t-5")) == ("faq", "faq-k2", "faq-k0")
    assert state.items["t-1"].argilla_dataset is None and state.items["t-5"].argilla_dataset == "faq-k0"

    # t-5 gets candidates again; t-3 is answered in faq-k2, then loses its candidates
    ann = _annotator(argilla_env, space, "dee")
    _submit(argilla_env, ann, _all_records(argilla_env, space)["t-3"][1]["id"], {1: 2})
    meta, items = store.load("faq")
    by_id = {i.id: i for i in items}
    by_id["t-5"].question = "Does Lumen support SAML single sign-on?"
    by_id["t-3"].question, by_id["t-3"].evidence = "Qwxz vbnm plokij?", []
    store.save(meta, items)
    again = push(handbook.workspace, dataset="faq", pool_k=4, argilla_workspace=space)
    assert again.moved == {"t-3": "faq-k0", "t-5": "faq-k2"} and again.kept == {"t-3": "faq-k2"}
    assert again.records == {"faq": 3, "faq-k2": 2, "faq-k0": 1}   # t-5 moved in, t-3's answered record stays
    k0_records = _records(argilla_env, _datasets(argilla_env, space)["faq-k0"]["id"])
    assert sorted(k0_records) == ["t-3"]                            # t-5's unanswered record was deleted
    k2_records = _records(argilla_env, _datasets(argilla_env, space)["faq-k2"]["id"])
    assert sorted(k2_records) == ["t-3", "t-5"] and len(k2_records["t-3"]["responses"]) == 1
    assert load_state(handbook.workspace, "faq").dataset_of("t-3") == "faq-k0"
    result = handbook("annotate", "push", "--dataset", "faq", "--pool-k", "4", "--argilla-workspace", space)
    assert "Argilla dataset 'faq-k0': 1 record\n" in result.stdout and "'faq-k2': 2 records" in result.stdout
    assert "t-3: its old record in 'faq-k2' holds answers, so it was kept there" in result.stdout


def _literal_markdown(markdown: str) -> list[str]:
    """Return the rendered lines that still show Markdown emphasis syntax (CommonMark, as Argilla's UI)."""
    from markdown_it import MarkdownIt
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    html = re.sub(r"<code>.*?</code>", "", html, flags=re.DOTALL)
    return [line for line in html.splitlines() if "**" in line or "__" in line]


def test_both_guidelines_reach_annotators_as_markdown_that_renders(handbook, argilla_env, space):
    push(handbook.workspace, dataset="faq", pool_k=4, argilla_workspace=space)
    dataset = _client(argilla_env).datasets(name="faq", workspace=space)
    text = dataset.settings.guidelines
    folder = handbook.workspace.root / "guidelines"
    english, chinese = ((folder / f"relevance.{lang}.md").read_text(encoding="utf-8") for lang in ("en", "zh"))
    assert len(text) <= 10_000 and text.startswith("# English\n\n## Relevance guidelines")   # 3 of 5 items: English
    assert "\n\n# 中文\n\n## 相关性标注规范" in text
    # Both do not fit: English is cut at a section boundary and says where the whole one is; Chinese fits whole
    english_part, chinese_part = text.split("\n\n---\n\n")
    assert english_part.endswith("is guidelines/relevance.en.md in the curate workspace.)")
    assert re.search(r"\n\n### \d+\. [^\n]+\n", english_part) and "### 11. Worked examples" not in english_part
    # headings one level down, soft-wrapped lines joined (Argilla shows each line break as a break)
    demoted = {lang: _unwrapped(re.sub(r"^(#+) ", r"#\1 ", whole.strip(), flags=re.MULTILINE)) for lang, whole in
               (("en", english), ("zh", chinese))}
    assert "Pre-filled values are suggestions to check." in english_part
    assert chinese_part == "# 中文\n\n" + demoted["zh"]
    shown = english_part.rsplit("\n\n", 1)[0]                      # the sections that fit, then the note
    assert ("# English\n\n" + demoted["en"]).startswith(shown) and len(shown) > 4000
    assert _literal_markdown(english) == _literal_markdown(chinese) == _literal_markdown(text) == []
    # Only the candidate fields carry Markdown (a bold title and the chunk id as code), and render it
    markdown = {f.name: f.use_markdown for f in dataset.settings.fields}
    assert markdown == {"question": False, "reference_answer": False, "key_points": False,
                        **{f"chunk_{n}": True for n in range(1, 5)}}
    record = next(r for r in dataset.records() if str(r.id) == "t-1")
    assert _literal_markdown(record.fields["chunk_1"]) == []
    assert not re.search(r"[*`_#]", record.fields["key_points"] + record.fields["question"])


def test_guidelines_fit_whole_or_are_each_cut_at_a_section(workspace, tmp_path):
    class Item:
        def __init__(self, language):
            self.language = language

    folder = workspace.root / "guidelines"
    (folder / "relevance.en.md").write_text("# Rules\n\n## 1. Grades\n\n**2** is fully relevant.\n", encoding="utf-8")
    (folder / "relevance.zh.md").write_text("# 规范\n\n## 1. 分级\n\n**2** 分：完全相关。\n", encoding="utf-8")
    text = guidelines_text(workspace, [Item("zh"), Item("zh"), Item("en")])
    assert text == ("# 中文\n\n## 规范\n\n### 1. 分级\n\n**2** 分：完全相关。\n\n---\n\n"
                    "# English\n\n## Rules\n\n### 1. Grades\n\n**2** is fully relevant.")
    (folder / "relevance.zh.md").write_text("# 规范\n\n" + "".join(f"## {n}. 节\n\n{'长' * 900}\n\n" for n in range(9)),
                                            encoding="utf-8")
    (folder / "relevance.en.md").write_text("# Rules\n\n" + "".join(f"## {n}. S\n\n{'w ' * 450}\n\n" for n in range(9)),
                                            encoding="utf-8")
    cut = guidelines_text(workspace, [Item("en")])
    english, chinese = cut.split("\n\n---\n\n")
    assert len(cut) <= 10_000 and english.startswith("# English") and chinese.startswith("# 中文")
    assert english.endswith("relevance.en.md in the curate workspace.)") and "### 4. S" in english
    assert chinese.endswith("中的 guidelines/relevance.zh.md。）") and "### 4. 节" in chinese
    assert "### 8." not in english and "### 8." not in chinese


def test_a_pool_size_dataset_never_takes_over_another_curate_datasets_records(handbook, data_dir, argilla_env, space):
    handbook("import", data_dir / "items.jsonl", "--dataset", "faq-k2", "--source", "human", "--kb", "docs")
    push(handbook.workspace, dataset="faq-k2", pool_k=2, argilla_workspace=space)   # its main dataset: 'faq-k2'
    result = handbook("annotate", "push", "--dataset", "faq", "--pool-k", "4", "--argilla-workspace", space, code=2)
    assert result.stderr == (f"error: field 'argilla-workspace': Argilla dataset 'faq-k2' in workspace '{space}' "
                             f"holds the records of curate dataset 'faq-k2'; push to another --argilla-workspace\n")
    assert sorted(_records(argilla_env, _datasets(argilla_env, space)["faq-k2"]["id"])) == [
        "t-1", "t-2", "t-3", "t-4", "t-5"]


def test_a_pushed_item_keeps_its_slots_when_only_their_order_would_change(handbook, argilla_env, space):
    from curate.annotate.state import state_path
    push(handbook.workspace, dataset="faq", pool_k=4, argilla_workspace=space)
    state = load_state(handbook.workspace, "faq")
    shuffled = list(reversed(state.items["t-1"].slots))   # as if pushed in another order before
    state.items["t-1"].slots = shuffled
    state.write(state_path(handbook.workspace, "faq"))
    push(handbook.workspace, dataset="faq", pool_k=4, argilla_workspace=space)
    assert load_state(handbook.workspace, "faq").items["t-1"].slots == shuffled
    t1 = next(r for r in _client(argilla_env).datasets(name="faq", workspace=space).records() if str(r.id) == "t-1")
    assert [t1.fields[f"chunk_{n}"].split("`")[1] for n in range(1, 5)] == shuffled


def test_an_answered_record_keeps_its_candidates_when_the_pool_would_change(handbook, argilla_env, space):
    from curate.annotate.state import state_path
    push(handbook.workspace, dataset="faq", pool_k=4, min_submitted=2, argilla_workspace=space)
    records = _all_records(argilla_env, space)
    _submit(argilla_env, _annotator(argilla_env, space, "ann"), records["t-1"][1]["id"], {1: 2})
    state = load_state(handbook.workspace, "faq")
    shown = list(state.items["t-1"].slots)
    pooled = set(shown) | set(state.items["t-2"].slots)
    other = next(c.chunk_id for c in KBIndex(handbook.workspace, DatasetStore(handbook.workspace).meta("faq")
                                             .kb_snapshot).chunks if c.chunk_id not in pooled)
    answered_under = [other] + shown[1:]          # what the record showed when ann answered: another chunk first
    state.items["t-1"].slots = answered_under
    state.items["t-2"].slots = [other] + state.items["t-2"].slots[1:]   # t-2 has no answer: it may change
    state.write(state_path(handbook.workspace, "faq"))
    result = handbook("annotate", "push", "--dataset", "faq", "--pool-k", "4", "--min-annotators", "2",
                      "--argilla-workspace", space)
    after = load_state(handbook.workspace, "faq")
    assert after.items["t-1"].slots == answered_under          # ann's grade of slot 1 still means `other`
    assert after.items["t-2"].slots[0] != other                 # unanswered: its pool is pushed as it is now
    t1 = _all_records(argilla_env, space)["t-1"][1]
    assert t1["fields"]["chunk_1"].split("`")[1] == other and len(t1["responses"]) == 1
    # a record answered about a chunk the snapshot no longer has is not pushed, and says so
    state = load_state(handbook.workspace, "faq")
    state.items["t-1"].slots = ["gone.md#9"] + shown[1:]
    state.write(state_path(handbook.workspace, "faq"))
    result = handbook("annotate", "push", "--dataset", "faq", "--pool-k", "4", "--min-annotators", "2",
                      "--argilla-workspace", space)
    assert ("  t-1 not pushed: its record holds answers about candidates this KB snapshot no longer has: pull "
            "them first (`curate annotate pull`), then push it again") in result.stdout.splitlines()
    assert load_state(handbook.workspace, "faq").items["t-1"].slots[0] == "gone.md#9"
