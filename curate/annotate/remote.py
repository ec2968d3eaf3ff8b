"""The Argilla side of a push: each dataset found whole, repaired, or rebuilt, and a lost server
turned into one line.

Argilla's SDK creates a dataset in steps (the dataset, then each field, question and metadata
property, then publish), so a push killed mid-way leaves a draft dataset with only some of its
fields. A draft cannot hold records, so it is deleted and built again. A published dataset whose
fields or questions differ from what curate expects is rebuilt only if no annotator has answered a
record in it; otherwise the push stops and says what differs, because rebuilding would lose the
answers. What Argilla lets change on a published dataset (guidelines, distribution, a field's
Markdown setting, metadata properties) is brought up to date in place.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from uuid import UUID

from curate.credentials import mask_url
from curate.errors import CurateError

PAGE = 1000


class ArgillaLost(CurateError):
    """Argilla could not be reached, or failed, while a push was talking to it."""


class ArgillaRefused(CurateError):
    """Argilla answered a push's request with a client error (4xx): retrying will not help."""


class DatasetMismatch(CurateError):
    """An Argilla dataset holds answers but is not shaped as curate expects."""


def _chain(exc: BaseException) -> list[BaseException]:
    """Return an exception and those it was raised from, outermost first (the SDK wraps the real one)."""
    chain = [exc]
    while (chain[-1].__cause__ or chain[-1].__context__) is not None and len(chain) < 20:
        chain.append(chain[-1].__cause__ or chain[-1].__context__)
    return chain


def _status_code(chain: list[BaseException]) -> int | None:
    """Return the HTTP status Argilla answered with, from the innermost exception that carries one (the
    SDK re-raises some errors with a status of its own)."""
    for exc in reversed(chain):
        response = getattr(exc, "response", None)
        code = getattr(exc, "status_code", None) or getattr(response, "status_code", None)
        if isinstance(code, int):
            return code
    return None


@contextlib.contextmanager
def argilla_errors(api_url: str, doing: str,
                   then: str = "nothing answered is lost, push again to finish") -> Iterator[None]:
    """Return a context that turns a lost or failing Argilla (connection refused or reset, timeout,
    5xx, an SDK error) into one `ArgillaLost` line that names what was being done and what to do
    (`then`), and a request Argilla refused (4xx) into one `ArgillaRefused` line."""
    import httpx
    from argilla._exceptions import ArgillaError

    try:
        yield
    except (httpx.HTTPError, ArgillaError, ConnectionError, TimeoutError) as exc:
        chain = _chain(exc)
        cause, code = chain[-1], _status_code(chain)
        said = " ".join(str(cause).split())[:160] or type(cause).__name__
        if code is not None and 400 <= code < 500:
            detail = next(str(e) for e in chain if _status_code([e]) == code and str(e))
            raise ArgillaRefused(f"Argilla at {mask_url(api_url)} refused {doing} (HTTP {code}): "
                                 f"{' '.join(detail.split())[:200]}") from None
        raise ArgillaLost(f"lost Argilla at {mask_url(api_url)} while {doing}: {type(cause).__name__}: {said}; "
                          f"{then}") from None


@dataclass(frozen=True)
class RemoteRecord:
    """One record of an Argilla dataset: its server id and how many responses it holds."""

    server_id: str
    responses: int


def argilla_records(client, dataset_id, page: int = PAGE, include: tuple[str, ...] = ("responses",)) -> Iterator[dict]:
    """Yield every record of an Argilla dataset as the API lists it (id, external_id, status, metadata, and
    what `include` names: responses, suggestions), read over the API directly: SDK 2.8 crashes on a
    discarded response stored without values."""
    offset = 0
    while True:
        response = client.http_client.get(f"/api/v1/datasets/{dataset_id}/records",
                                          params={"offset": offset, "limit": page, "include": list(include)})
        response.raise_for_status()
        batch = response.json()["items"]
        yield from batch
        if len(batch) < page:
            return
        offset += page


def remote_records(client, dataset_id: UUID) -> dict[str, RemoteRecord]:
    """Return every record of a dataset by item id, with its count of responses (submitted, draft or
    discarded)."""
    return {str(item.get("external_id") or item["id"]): RemoteRecord(str(item["id"]), len(item.get("responses") or []))
            for item in argilla_records(client, dataset_id)}


def delete_records(client, dataset_id: UUID, server_ids: list[str]) -> None:
    """Delete records of a dataset by their server ids."""
    for start in range(0, len(server_ids), 100):
        response = client.http_client.delete(f"/api/v1/datasets/{dataset_id}/records",
                                             params={"ids": ",".join(server_ids[start:start + 100])})
        response.raise_for_status()


def _shape(settings) -> dict[str, tuple]:
    """Return what records depend on in a dataset's settings: each field's and question's type,
    whether a field is required, and a question's options (titles and descriptions may change freely)."""
    shape = {}
    for field in settings.fields:
        data = field.serialize()
        shape[f"field '{field.name}'"] = (data["settings"]["type"], bool(data.get("required")))
    for question in settings.questions:
        data = question.serialize()
        options = tuple(str(o.get("value")) for o in data["settings"].get("options") or [])
        shape[f"question '{question.name}'"] = (data["settings"]["type"], bool(data.get("required")), options)
    return shape


def differences(found, expected, leave_out: tuple[str, ...] = ()) -> list[str]:
    """Return how a dataset's fields and questions differ from the expected settings ([] if alike; a
    field or question a team added that records need not fill is no difference; so is the lack of an
    expected field named in `leave_out`)."""
    have, want = _shape(found), _shape(expected)
    want = {k: v for k, v in want.items() if k not in {f"field '{name}'" for name in leave_out}}
    missing = [name for name in want if name not in have]
    extra = [name for name in have if name not in want and have[name][1]]   # an optional extra asks nothing
    # whether a question is required changes what a form accepts, not what a stored answer means: a
    # dataset made before the grades became required keeps its answers and is no different
    changed = [name for name in want if name in have
               and (have[name] if name.startswith("field") else have[name][::2])
               != (want[name] if name.startswith("field") else want[name][::2])]
    said = []
    for label, names in (("missing", missing), ("unexpected", extra), ("different", changed)):
        if names:
            said.append(f"{label} {', '.join(names[:4])}" + (f" and {len(names) - 4} more" if len(names) > 4 else ""))
    return said


@dataclass
class Target:
    """One Argilla dataset a push writes to, and what the push had to do to it first."""

    dataset: object
    created: bool = False
    rebuilt: str | None = None   # why a half-made or different dataset was deleted and built again
    lacking: tuple[str, ...] = ()   # optional fields it lacks and cannot take: it holds answers


def _find(client, rg, name: str, space):
    """Return the dataset `name` in a workspace with its settings, or None (without the SDK's warning)."""
    model = client.api.datasets.get_by_name_and_workspace_id(name=name, workspace_id=space.id)
    return rg.Dataset.from_model(model, client=client).get() if model is not None else None


def _bring_up_to_date(client, found, expected) -> None:
    """Update in place what a published dataset may change: guidelines, distribution, metadata
    properties and the fields' Markdown setting."""
    import argilla as rg

    patch = {}
    if (found.settings.guidelines or "") != (expected.guidelines or ""):
        patch["guidelines"] = expected.guidelines
    if found.settings.distribution.to_dict() != expected.distribution.to_dict():
        patch["distribution"] = expected.distribution.to_dict()
    if patch:
        client.http_client.patch(f"/api/v1/datasets/{found.id}", json=patch).raise_for_status()
    by_name = {f.name: f for f in found.settings.fields}
    for field in expected.fields:
        have = by_name.get(field.name)
        if isinstance(have, rg.TextField) and bool(have.use_markdown) != bool(field.use_markdown):
            client.http_client.patch(f"/api/v1/fields/{have.id}", json={
                "settings": {"type": "text", "use_markdown": bool(field.use_markdown)}}).raise_for_status()
    known = {m.name for m in found.settings.metadata}
    for prop in expected.metadata:
        if prop.name not in known:
            client.http_client.post(f"/api/v1/datasets/{found.id}/metadata-properties",
                                    json={"name": prop.name, "title": prop.title,
                                          "settings": prop.serialize()["settings"],
                                          "visible_for_annotators": True}).raise_for_status()


def ensure_dataset(client, rg, space, name: str, expected, optional: tuple[str, ...] = ()) -> Target:
    """Return the dataset `name` shaped as `expected` (an `rg.Settings`): created if absent, rebuilt
    if half-made (a draft) or differently shaped without answers, brought up to date otherwise. A
    dataset holding answers that lacks only fields named in `optional` is kept as it is (Argilla adds
    no field to a published dataset), the fields it lacks named in `Target.lacking`.

    Raises `DatasetMismatch` for a dataset that holds answers and lacks what curate needs."""
    found = _find(client, rg, name, space)
    rebuilt = None
    if found is not None and found._model.status != "ready":
        rebuilt = "it was left half-made (not published) by an interrupted push"
    elif found is not None and (said := differences(found.settings, expected)):
        answered = sum(1 for r in remote_records(client, found.id).values() if r.responses)
        lacking = tuple(n for n in optional if n not in {f.name for f in found.settings.fields})
        if answered and lacking and not differences(found.settings, expected, leave_out=lacking):
            _bring_up_to_date(client, found, expected)
            return Target(found, lacking=lacking)
        if answered:
            raise DatasetMismatch(f"Argilla dataset '{name}' is not what curate expects ({'; '.join(said)}) and "
                                  f"{answered} of its records hold answers; rebuilding it would lose them: push "
                                  f"to another --argilla-workspace, or export the answers and delete it in Argilla")
        rebuilt = f"it had no answers and its settings differed ({'; '.join(said)})"
    if found is not None and rebuilt is None:
        _bring_up_to_date(client, found, expected)
        return Target(found)
    if found is not None:
        client.api.datasets.delete(found.id)
    dataset = rg.Dataset(name=name, workspace=space, client=client, settings=expected).create()
    return Target(dataset, created=True, rebuilt=rebuilt)
