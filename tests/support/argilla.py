"""Answering Argilla records over HTTP as an annotator would, in tests."""

from __future__ import annotations

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
