"""Answering Argilla records over HTTP as an annotator would, in tests."""

from __future__ import annotations

import re

import httpx


def with_every_grade(server, record_id: str, values: dict) -> dict:
    """Return `values` with a 0 for every relevance question of the record's dataset left out: the
    grades are required in the form, so an annotator who means "not evidence" says 0."""
    owner = {"X-Argilla-Api-Key": server.api_key}
    record = httpx.get(f"{server.url}/api/v1/records/{record_id}", headers=owner)
    record.raise_for_status()
    questions = httpx.get(f"{server.url}/api/v1/datasets/{record.json()['dataset_id']}/questions", headers=owner)
    questions.raise_for_status()
    names = [q["name"] for q in questions.json()["items"] if q["name"].startswith("relevance_")]
    return {**{name: {"value": 0} for name in names}, **values}


PASSWORD = "annotator-password-1"


def owner_client(server):
    """Return an argilla SDK client of the server's owner."""
    import argilla as rg
    return rg.Argilla(api_url=server.url, api_key=server.api_key)


def annotator_headers(server, space: str, name: str) -> dict:
    """Return the HTTP headers of a new annotator `NAME-SPACE` of the Argilla workspace `space`."""
    import argilla as rg
    client = owner_client(server)
    user = rg.User(username=f"{name}-{space}", password=PASSWORD, role="annotator", client=client).create()
    client.workspaces(space).add_user(user)
    token = httpx.post(f"{server.url}/api/v1/token", data={"username": user.username, "password": PASSWORD})
    return {"Authorization": f"Bearer {token.json()['access_token']}"}


def submit(server, headers, record_id: str, grades: dict[int, int], answerable="answerable", **texts) -> None:
    """Submit an answer to a record as the annotator of `headers`: `grades` by slot (the rest 0),
    answerability, and text questions by name (key_points_fixed=...)."""
    values = {f"relevance_{n}": {"value": g} for n, g in grades.items()}
    values["answerable"] = {"value": answerable}
    values.update({name: {"value": value} for name, value in texts.items()})
    values = with_every_grade(server, record_id, values)
    response = httpx.post(f"{server.url}/api/v1/records/{record_id}/responses", headers=headers,
                          json={"values": values, "status": "submitted"})
    assert response.status_code == 201, response.text


CHUNK_ID = re.compile(r"`([^`]+)`")


def answer_every_record(url: str, owner_key: str, username: str, password: str, labels: dict,
                        adjudication: bool = False) -> int:
    """Submit `username`'s answer to every record of the Argilla datasets they can see (the annotation
    datasets, or with `adjudication` the adjudication ones), as the web UI would; return how many.

    `labels` maps a piece of the record's question to {chunk id: grade} (the other candidates 0), or
    to None for a question the knowledge base does not answer. The docs' Argilla tutorial stands in
    for its annotators with this."""
    owner = {"X-Argilla-Api-Key": owner_key}
    token = httpx.post(f"{url}/api/v1/token", data={"username": username, "password": password})
    token.raise_for_status()
    annotator = {"Authorization": f"Bearer {token.json()['access_token']}"}
    done = 0
    for dataset in httpx.get(f"{url}/api/v1/me/datasets", headers=annotator).json()["items"]:
        if dataset["name"].endswith("-adjudication") != adjudication:
            continue
        names = [q["name"] for q in httpx.get(f"{url}/api/v1/datasets/{dataset['id']}/questions",
                                              headers=owner).json()["items"]]
        found = httpx.post(f"{url}/api/v1/datasets/{dataset['id']}/records/search", headers=owner,
                           json={"query": {}}, params={"limit": 1000}).json()["items"]
        for hit in found:
            record = hit["record"]
            key = next(k for k in labels if k in record["fields"]["question"])
            wanted = labels[key] or {}
            values = {}
            for name in names:
                if name.startswith("relevance_"):
                    field = record["fields"].get(f"chunk_{name.split('_')[1]}", "")
                    chunk = CHUNK_ID.search(field)
                    values[name] = {"value": wanted.get(chunk.group(1), 0) if chunk else 0}
            values["answerable"] = {"value": "unanswerable" if labels[key] is None else "answerable"}
            response = httpx.post(f"{url}/api/v1/records/{record['id']}/responses", headers=annotator,
                                  json={"values": values, "status": "submitted"})
            response.raise_for_status()
            done += 1
    return done
