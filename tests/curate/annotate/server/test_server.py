"""The local Argilla (curate.annotate.server) against the real argilla-server and the argilla SDK:
datasets, records logged and re-logged by id, an annotator answering over HTTP as the web UI does,
the curate-sqlite search engine's filters, sort and progress counts, and a restart keeping the data."""

from __future__ import annotations

import importlib.util
import uuid
from pathlib import Path

import pytest

if importlib.util.find_spec("argilla_server") is None:  # the `argilla` extra
    pytest.skip("argilla-server is not installed", allow_module_level=True)
rg = pytest.importorskip("argilla")
httpx = pytest.importorskip("httpx")

from curate.annotate.server.process import start_server  # noqa: E402

from tests.support.processes import PATIENCE, wait_until  # noqa: E402
from tests.support.servers import free_port  # noqa: E402

N = 50
PASSWORD = "annotator-password"


def settings(min_submitted: int = 1):
    """Returns the dataset settings used here: two text fields, a 0/1/2 grade, a label, metadata."""
    return rg.Settings(
        guidelines="Grade each chunk: 2 = evidence, 1 = partial, 0 = not evidence.",
        fields=[rg.TextField(name="question"), rg.TextField(name="chunk")],
        questions=[rg.RatingQuestion(name="relevance", values=[0, 1, 2]),
                   rg.LabelQuestion(name="answerable", labels=["yes", "no"])],
        metadata=[rg.TermsMetadataProperty(name="qtype"), rg.IntegerMetadataProperty(name="difficulty")],
        distribution=rg.TaskDistribution(min_submitted=min_submitted),
    )


def records(n: int = N, tag: str = "") -> list:
    """Returns records item-0..item-(n-1) with metadata and suggestions; `tag` changes their texts."""
    return [rg.Record(id=f"item-{i}",
                      fields={"question": f"Question {i}{tag} about 错误码 E{i}", "chunk": f"Chunk {i}{tag}"},
                      metadata={"qtype": "single" if i % 2 else "multi", "difficulty": i % 5},
                      suggestions=[rg.Suggestion("relevance", i % 3, agent="bm25"),
                                   rg.Suggestion("answerable", "yes" if i % 4 else "no", agent="import")])
            for i in range(n)]


def owner_headers(server) -> dict:
    return {"X-Argilla-Api-Key": server.api_key}


def search(server, dataset, body: dict, headers=None, me: bool = False, **params) -> dict:
    """Returns the JSON of a records search (the owner's, or with `me` the annotator's own)."""
    path = f"/api/v1/{'me/' if me else ''}datasets/{dataset.id}/records/search"
    response = httpx.post(server.url + path, json=body, headers=headers or owner_headers(server),
                          params={"include": ["responses"], **params})
    assert response.status_code == 200, response.text
    return response.json()


def terms(entity: str, values: list, **scope) -> dict:
    return {"type": "terms", "scope": {"entity": entity, **scope}, "values": values}


def external_ids(result: dict) -> list[str]:
    return [item["record"]["external_id"] for item in result["items"]]


@pytest.fixture(scope="module")
def client(argilla_server):
    return rg.Argilla(api_url=argilla_server.url, api_key=argilla_server.api_key)


@pytest.fixture(scope="module")
def workspace(client):
    return rg.Workspace(name=f"ws-{uuid.uuid4().hex[:8]}", client=client).create()


@pytest.fixture(scope="module")
def annotator(argilla_server, client, workspace) -> dict:
    """An annotator created with the SDK, member of the workspace; returns its web-login headers."""
    username = f"ann-{uuid.uuid4().hex[:8]}"
    user = rg.User(username=username, password=PASSWORD, role="annotator", client=client).create()
    workspace.add_user(user)
    token = httpx.post(f"{argilla_server.url}/api/v1/token", data={"username": username, "password": PASSWORD})
    assert token.status_code == 201, token.text
    return {"Authorization": f"Bearer {token.json()['access_token']}"}


def new_dataset(client, workspace, min_submitted: int = 1):
    dataset = rg.Dataset(name=f"ds-{uuid.uuid4().hex[:8]}", workspace=workspace,
                         settings=settings(min_submitted), client=client).create()
    dataset.records.log(records())
    return dataset


def respond(server, headers, record_id, status: str, values: dict | None):
    """Posts one response the way the web UI does; returns the response JSON."""
    body = {"status": status} if values is None else {"status": status, "values": values}
    response = httpx.post(f"{server.url}/api/v1/records/{record_id}/responses", json=body, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()


def grade(value: int, answerable: str = "yes") -> dict:
    return {"relevance": {"value": value}, "answerable": {"value": answerable}}


@pytest.fixture(scope="module")
def annotated(argilla_server, client, workspace, annotator):
    """A dataset of 50 records; the annotator submitted 5, discarded 1 (with values) and drafted 1,
    taking them from the top of their own pending queue as the web UI does."""
    dataset = new_dataset(client, workspace)
    queue = search(argilla_server, dataset, {"filters": {"and": [terms("response", ["pending"], property="status")]}},
                   headers=annotator, me=True, limit=7)
    assert queue["total"] == N
    ids = {item["record"]["external_id"]: item["record"]["id"] for item in queue["items"]}
    order = list(ids)
    for name in order[:5]:
        respond(argilla_server, annotator, ids[name], "submitted", grade(2))
    respond(argilla_server, annotator, ids[order[5]], "discarded", grade(0, "no"))
    respond(argilla_server, annotator, ids[order[6]], "draft", {"relevance": {"value": 1}})
    return {"dataset": dataset, "submitted": sorted(order[:5]), "discarded": order[5], "draft": order[6],
            "queue": order}


def test_server_status_and_owner(argilla_server):
    status = httpx.get(f"{argilla_server.url}/api/v1/status").json()
    assert status["search_engine"]["engine"] == "curate-sqlite"
    me = httpx.get(f"{argilla_server.url}/api/v1/me", headers=owner_headers(argilla_server)).json()
    assert (me["username"], me["role"]) == ("owner", "owner")
    assert httpx.get(f"{argilla_server.url}/api/v1/me", headers={"X-Argilla-Api-Key": "wrong-key"}).status_code == 401
    assert "<html" in httpx.get(argilla_server.url + "/").text.lower()  # the web UI is served


def test_logged_records_keep_their_ids(client, annotated):
    dataset = client.datasets(name=annotated["dataset"].name, workspace=annotated["dataset"].workspace)
    assert dataset.settings.guidelines.startswith("Grade each chunk")
    read = list(dataset.records(with_responses=False))
    assert sorted(r.id for r in read) == sorted(f"item-{i}" for i in range(N))
    item = next(r for r in read if r.id == "item-7")
    assert item.fields["question"] == "Question 7 about 错误码 E7"
    assert item.metadata == {"qtype": "single", "difficulty": 2}
    assert {s.question_name: (s.value, s.agent) for s in item.suggestions} == {
        "relevance": (1, "bm25"), "answerable": ("yes", "import")}


def test_annotator_queue_and_bulk_log_refused(argilla_server, annotated, annotator):
    dataset = annotated["dataset"]
    # the body the web UI sends for an annotator's queue
    pending = {"query": {}, "filters": {"and": [terms("response", ["pending"], property="status"),
                                                terms("record", ["pending"], property="status")]}}
    first = search(argilla_server, dataset, pending, headers=annotator, me=True, limit=100)
    assert first["total"] == N - 7
    assert set(external_ids(first)).isdisjoint(annotated["queue"])
    again = search(argilla_server, dataset, pending, headers=annotator, me=True, limit=100)
    assert external_ids(again) == external_ids(first)  # a stable, per-user order
    assert external_ids(first) != sorted(external_ids(first), key=lambda x: int(x.split("-")[1]))
    page = search(argilla_server, dataset, pending, headers=annotator, me=True, limit=10, offset=10)
    assert external_ids(page) == external_ids(first)[10:20] and page["total"] == N - 7
    mine = search(argilla_server, dataset, {"filters": {"and": [terms("response", ["submitted", "draft"],
                                                                          property="status")]}},
                  headers=annotator, me=True)
    assert sorted(external_ids(mine)) == sorted(annotated["submitted"] + [annotated["draft"]])
    bulk = httpx.put(f"{argilla_server.url}/api/v1/datasets/{dataset.id}/records/bulk", headers=annotator,
                     json={"items": [{"external_id": "item-0", "fields": {"question": "x", "chunk": "y"}}]})
    assert bulk.status_code == 403


def test_owner_reads_submitted_responses_with_the_sdk(client, annotated):
    dataset = annotated["dataset"]
    query = rg.Query(filter=rg.Filter(("response.status", "==", "submitted")))
    submitted = list(dataset.records(query=query, with_responses=True))
    assert sorted(r.id for r in submitted) == annotated["submitted"]
    for record in submitted:
        answers = {r.question_name: (r.value, r.status) for r in record.responses}
        assert answers == {"relevance": (2, "submitted"), "answerable": ("yes", "submitted")}
    discarded = list(dataset.records(query=rg.Query(filter=rg.Filter(("response.status", "==", "discarded")))))
    assert [r.id for r in discarded] == [annotated["discarded"]]


def test_engine_filters_sort_and_text(argilla_server, annotated):
    dataset = annotated["dataset"]

    def ids(body: dict, **params) -> list[str]:
        return external_ids(search(argilla_server, dataset, body, limit=100, **params))

    def number(name: str) -> int:
        return int(name.split("-")[1])

    single_hard = {"and": [terms("metadata", ["single"], metadata_property="qtype"),
                           {"type": "range", "scope": {"entity": "metadata", "metadata_property": "difficulty"},
                            "ge": 3}]}
    assert ids({"filters": single_hard}) == [f"item-{i}" for i in range(N) if i % 2 and i % 5 >= 3]
    assert ids({"filters": {"and": [terms("suggestion", ["2"], question="relevance")]}}) == [
        f"item-{i}" for i in range(N) if i % 3 == 2]
    assert ids({"filters": {"and": [terms("suggestion", ["no"], question="answerable")]}}) == [
        f"item-{i}" for i in range(N) if i % 4 == 0]
    assert sorted(ids({"filters": {"and": [terms("record", ["completed"], property="status")]}})) == \
        annotated["submitted"]
    assert sorted(ids({"filters": {"and": [terms("response", ["2"], question="relevance")]}})) == \
        annotated["submitted"]
    assert ids({"query": {"text": {"q": "QUESTION 4"}}}) == [f"item-{i}" for i in range(N) if "4" in str(i)]
    assert ids({"query": {"text": {"q": "错误码 E12"}}}) == ["item-12"]
    assert ids({"query": {"text": {"q": "Question", "field": "chunk"}}}) == []
    by_difficulty = ids({"sort": [{"scope": {"entity": "metadata", "metadata_property": "difficulty"},
                                   "order": "desc"}]})
    assert [number(x) % 5 for x in by_difficulty] == sorted((i % 5 for i in range(N)), reverse=True)
    by_suggestion = ids({"sort": [{"scope": {"entity": "suggestion", "question": "relevance"}, "order": "asc"}]})
    assert [number(x) % 3 for x in by_suggestion] == sorted(i % 3 for i in range(N))
    graded_first = ids({"sort": [{"scope": {"entity": "response", "question": "relevance"}, "order": "desc"}]})
    assert sorted(graded_first[:5]) == annotated["submitted"]  # graded 2, then the draft's 1, the discarded 0
    assert graded_first[5:7] == [annotated["draft"], annotated["discarded"]]
    page = search(argilla_server, dataset, {"filters": single_hard}, limit=2, offset=1)
    assert page["total"] == 10 and external_ids(page) == ["item-9", "item-13"]


def test_progress_counts(argilla_server, annotated, annotator):
    dataset = annotated["dataset"]
    progress = httpx.get(f"{argilla_server.url}/api/v1/datasets/{dataset.id}/progress",
                         headers=owner_headers(argilla_server)).json()
    assert (progress["total"], progress["completed"], progress["pending"]) == (N, 5, N - 5)
    mine = httpx.get(f"{argilla_server.url}/api/v1/me/datasets/{dataset.id}/metrics", headers=annotator).json()
    assert mine["responses"] == {"total": N, "submitted": 5, "discarded": 1, "draft": 1, "pending": N - 7}


def test_metadata_metrics(argilla_server, annotated):
    dataset = annotated["dataset"]
    qtype, difficulty = dataset.settings.metadata["qtype"], dataset.settings.metadata["difficulty"]
    url = f"{argilla_server.url}/api/v1/metadata-properties/{{}}/metrics"
    terms_metrics = httpx.get(url.format(qtype.id), headers=owner_headers(argilla_server)).json()
    assert terms_metrics["total"] == N
    assert {v["term"]: v["count"] for v in terms_metrics["values"]} == {"single": 25, "multi": 25}
    numeric = httpx.get(url.format(difficulty.id), headers=owner_headers(argilla_server)).json()
    assert (numeric["min"], numeric["max"]) == (0, 4)


def test_relogging_updates_in_place_and_keeps_responses(argilla_server, client, workspace, annotator):
    dataset = new_dataset(client, workspace)
    server_ids = {r.id: r._server_id for r in dataset.records(with_responses=False)}
    respond(argilla_server, annotator, server_ids["item-1"], "submitted", grade(2))
    # the same ids with new texts, new metadata, a new relevance suggestion and no answerable one
    changed = [rg.Record(id=r.id, fields=r.fields, metadata={"qtype": "changed", "difficulty": 4},
                         suggestions=[rg.Suggestion("relevance", 0, agent="judge")]) for r in records(tag=" v2")]
    dataset.records.log(changed)
    read = {r.id: r for r in dataset.records(with_responses=True)}
    assert len(read) == N and {r._server_id for r in read.values()} == set(server_ids.values())
    one = read["item-1"]
    assert one.fields["question"] == "Question 1 v2 about 错误码 E1"
    assert one.metadata == {"qtype": "changed", "difficulty": 4}
    assert {s.question_name: (s.value, s.agent) for s in one.suggestions} == {
        "relevance": (0, "judge"), "answerable": ("yes", "import")}  # a question left out keeps its suggestion
    assert {r.question_name: (r.value, r.status) for r in one.responses} == {
        "relevance": (2, "submitted"), "answerable": ("yes", "submitted")}
    progress = httpx.get(f"{argilla_server.url}/api/v1/datasets/{dataset.id}/progress",
                         headers=owner_headers(argilla_server)).json()
    assert (progress["completed"], progress["pending"]) == (1, N - 1)


def test_changing_min_submitted_runs_the_status_job(argilla_server, client, workspace, annotator):
    dataset = new_dataset(client, workspace, min_submitted=1)
    server_id = next(r._server_id for r in dataset.records(with_responses=False) if r.id == "item-3")
    respond(argilla_server, annotator, server_id, "submitted", grade(1))
    completed = {"filters": {"and": [terms("record", ["completed"], property="status")]}}
    assert search(argilla_server, dataset, completed)["total"] == 1
    dataset.settings.distribution = rg.TaskDistribution(min_submitted=2)
    dataset.update()  # argilla-server enqueues an rq job that recomputes record statuses
    wait_until(lambda: search(argilla_server, dataset, completed)["total"] == 0, "the status job", every=0.1)


def test_vector_search_is_refused_clearly(argilla_server, client, workspace):
    configured = settings()
    configured.vectors = [rg.VectorField(name="emb", dimensions=2)]
    dataset = rg.Dataset(name=f"vec-{uuid.uuid4().hex[:8]}", workspace=workspace, settings=configured,
                         client=client).create()
    dataset.records.log([rg.Record(id="v1", fields={"question": "q", "chunk": "c"}, vectors={"emb": [0.1, 0.2]})])
    response = httpx.post(f"{argilla_server.url}/api/v1/datasets/{dataset.id}/records/search",
                          headers=owner_headers(argilla_server),
                          json={"query": {"vector": {"name": "emb", "value": [0.1, 0.2]}}})
    assert response.status_code == 422 and "not supported" in response.text


def test_restart_keeps_data_and_no_key_is_written(tmp_path: Path):
    data_dir = tmp_path / "argilla"
    port = free_port()
    first = start_server(data_dir, port, timeout=PATIENCE)  # no key given: generated, with a password, on first start
    try:
        assert first.created and first.password and len(first.api_key) >= 32
        client = rg.Argilla(api_url=first.url, api_key=first.api_key)
        workspace = rg.Workspace(name="keep", client=client).create()
        dataset = rg.Dataset(name="kept", workspace=workspace, settings=settings(), client=client).create()
        dataset.records.log(records(5))
        record_id = next(iter(dataset.records(with_responses=False)))._server_id
        respond(first, owner_headers(first), record_id, "submitted", grade(1))
    finally:
        first.stop()
    assert not (data_dir / "tmp").exists()  # argilla-server's copy of its web app is removed
    second = start_server(data_dir, port, timeout=PATIENCE)
    try:
        assert not second.created and second.password is None and second.api_key == first.api_key
        client = rg.Argilla(api_url=second.url, api_key=second.api_key)
        dataset = client.datasets(name="kept", workspace="keep")
        assert sorted(r.id for r in dataset.records) == [f"item-{i}" for i in range(5)]
        submitted = list(dataset.records(query=rg.Query(filter=rg.Filter(("response.status", "==", "submitted")))))
        assert len(submitted) == 1 and submitted[0]._server_id == record_id
    finally:
        second.stop()
    secrets = [first.api_key.encode(), first.password.encode()]
    for path in data_dir.rglob("*"):
        if path.is_file() and not path.name.startswith("argilla.db"):
            content = path.read_bytes()
            assert not any(secret in content for secret in secrets), path
    third = start_server(data_dir, port, api_key="a-key-the-team-chose", timeout=PATIENCE)  # ARGILLA_API_KEY wins
    try:
        assert third.api_key == "a-key-the-team-chose" and not third.created
        me = f"{third.url}/api/v1/me"
        assert httpx.get(me, headers={"X-Argilla-Api-Key": "a-key-the-team-chose"}).status_code == 200
        assert httpx.get(me, headers={"X-Argilla-Api-Key": first.api_key}).status_code == 401
    finally:
        third.stop()
