"""Fixtures of the labelling tests."""

import pytest


@pytest.fixture
def argilla_env(argilla_server, monkeypatch):
    """The session's local Argilla, its URL and the owner's key in the environment."""
    monkeypatch.setenv("ARGILLA_API_KEY", argilla_server.api_key)
    monkeypatch.setenv("ARGILLA_API_URL", argilla_server.url)
    return argilla_server
