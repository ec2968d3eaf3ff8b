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
