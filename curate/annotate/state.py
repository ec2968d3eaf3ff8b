"""The connection to Argilla and the local record of what was pushed (datasets/NAME/annotation.json),
which lets a pull tell a local edit made meanwhile from an annotator's answer."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from curate.dataset import DatasetStore
from curate.errors import CurateError, InputError
from curate.records import AnnotationState
from curate.credentials import mask, mask_url
from curate.workspace import Workspace


def argilla_sdk():
    """Return the argilla SDK module, or raise one line saying how to install it."""
    try:
        import argilla
    except ImportError:
        raise CurateError("labelling in Argilla needs the argilla extra: pip install 'curate-evalrun[argilla]'") from None
    return argilla


def connect(api_url: str | None = None):
    """Return an Argilla client: the URL from the flag or ARGILLA_API_URL, the key from ARGILLA_API_KEY
    (read here, never stored, and masked out of the error raised when Argilla cannot be reached)."""
    import logging

    rg = argilla_sdk()
    # The SDK's notices ("workspace not found" before we create it, batch sizes) are not for our users.
    logging.getLogger("argilla.sdk").setLevel(logging.ERROR)
    url = api_url or os.environ.get("ARGILLA_API_URL")
    key = os.environ.get("ARGILLA_API_KEY")
    if not url or not key:
        raise InputError("Argilla needs --api-url (or ARGILLA_API_URL) and ARGILLA_API_KEY in the environment; "
                         "`curate annotate serve` runs a local one", field="api-url")
    try:
        return rg.Argilla(api_url=url, api_key=key, timeout=120)
    except Exception as exc:
        if type(exc).__name__ == "ArgillaCredentialsError":
            raise CurateError(f"Argilla at {mask_url(url)} does not accept the API key in ARGILLA_API_KEY") from None
        said = mask(str(exc), [key, urlsplit(url).password])[:160]
        raise CurateError(f"cannot reach Argilla at {mask_url(url)}: {type(exc).__name__}: {said}") from None


def state_path(workspace: Workspace, name: str) -> Path:
    """Return where a dataset's annotation state is kept."""
    return DatasetStore(workspace).folder(name) / "annotation.json"


def judge_suggestions_path(workspace: Workspace, name: str) -> Path:
    """Return where a pull keeps what annotators did with the judge's suggested grades."""
    return DatasetStore(workspace).folder(name) / "judge_suggestions.json"


def load_state(workspace: Workspace, name: str) -> AnnotationState:
    """Return what was pushed for a dataset: Argilla names, pool size, guideline, and per item its
    candidate chunks and the digest of its labels at push time."""
    path = state_path(workspace, name)
    return AnnotationState.read(path) if path.exists() else AnnotationState()
