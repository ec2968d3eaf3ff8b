"""`curate annotate push|pull|status`: items to Argilla and labels back, with a local record of
what was pushed so that a local edit made meanwhile is reported, never overwritten."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..dataset import DatasetStore
from ..errors import CurateError, InputError
from ..fileio import atomic_write_json
from ..guidelines import workspace_guideline_version
from ..index.kb_index import KBIndex
from ..progress import progress
from ..schema import now
from ..workspace import Workspace
from .agreement import krippendorff_alpha, pairwise
from .apply import Applied, apply_answers, disagreements
from .pool import candidate_pools
from .records import Answer, annotation_digest, answers_of, record, settings

DEFAULT_STATUSES = ("needs_evidence", "draft", "needs_adjudication", "needs_rewrite")
BATCH = 256


def connect(api_url: str | None = None):
    """Return an Argilla client: the URL from the flag or ARGILLA_API_URL, the key from ARGILLA_API_KEY
    (read here, never stored)."""
    import logging

    import argilla as rg
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
        raise CurateError(f"cannot reach Argilla at {url}: {type(exc).__name__}: {str(exc)[:160]}") from None


def _state_path(workspace: Workspace, name: str) -> Path:
    return DatasetStore(workspace).folder(name) / "annotation.json"


def load_state(workspace: Workspace, name: str) -> dict:
    """Return what was pushed for a dataset: Argilla names, pool size, guideline, and per item its
    candidate chunks and the digest of its labels at push time."""
    path = _state_path(workspace, name)
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"items": {}}


ARGILLA_GUIDELINES_LIMIT = 10_000  # characters Argilla accepts as a dataset's guidelines


def guidelines_text(workspace: Workspace, items) -> str:
    """Return the relevance guideline in the language most items are in (Argilla takes one text of at
    most 10,000 characters; a longer one is cut at a section and says where the whole one is)."""
    path = workspace.setting("guidelines", "path")
    folder = (workspace.root / path) if path and not Path(path).is_absolute() else Path(path or "")
    languages = Counter(i.language for i in items).most_common()
    for language, _ in languages + [("en", 0), ("zh", 0)]:
        file = folder / f"relevance.{language}.md"
        if path and file.exists():
            text = file.read_text(encoding="utf-8")
            break
    else:
        raise InputError("no relevance guidelines: set [guidelines] path in curate.toml to a folder holding "
                         "relevance.en.md / relevance.zh.md", field="guidelines")
    if len(text) <= ARGILLA_GUIDELINES_LIMIT:
        return text
    note = f"\n\n(Cut to fit Argilla. The whole guideline, version {workspace_guideline_version(workspace)}: {file})"
    cut = text.rfind("\n## ", 0, ARGILLA_GUIDELINES_LIMIT - len(note))
    return text[:cut if cut > 0 else ARGILLA_GUIDELINES_LIMIT - len(note)] + note


@dataclass
class PushReport:
    """What a push sent."""

    dataset: str
    argilla_dataset: str
    pushed: int
    created: bool
    guideline_version: str | None
    pool_sizes: Counter = field(default_factory=Counter)


def push(workspace: Workspace, *, dataset: str, statuses: tuple[str, ...] = DEFAULT_STATUSES, pool_k: int = 8,
         min_submitted: int = 1, api_url: str | None = None, argilla_workspace: str = "curate",
         argilla_dataset: str | None = None) -> PushReport:
    """Send items to an Argilla dataset (created on first push); records are keyed by item id, so
    pushing again updates them and keeps every submitted response."""
    import argilla as rg
    store = DatasetStore(workspace)
    meta, items = store.load(dataset)
    chosen = [i for i in items if i.status in statuses]
    state = load_state(workspace, dataset)
    if state.get("pool_k") not in (None, pool_k):
        raise InputError(f"dataset '{dataset}' was pushed with --pool-k {state['pool_k']}; Argilla's fields are "
                         f"fixed, so push with the same pool size", field="pool-k")
    index = KBIndex(workspace, meta.kb_snapshot)
    pools = candidate_pools(index, chosen, pool_k)
    texts = {c.chunk_id: (str(c.metadata.get("title") or ""), c.text) for c in index.chunks}
    version = workspace_guideline_version(workspace)
    client = connect(api_url)
    name = argilla_dataset or state.get("argilla", {}).get("dataset") or dataset
    space = client.workspaces(argilla_workspace)
    if space is None:
        space = rg.Workspace(name=argilla_workspace).create()
    target = client.datasets(name=name, workspace=argilla_workspace)
    created = target is None
    if created:
        target = rg.Dataset(name=name, workspace=space, client=client,
                            settings=settings(pool_k, guidelines_text(workspace, items),
                                              min_submitted)).create()
    records = [record(item, pools[item.id], texts, origin="curate") for item in chosen]
    for start in progress(range(0, len(records), BATCH), "pushing to Argilla", unit="batch",
                          total=(len(records) + BATCH - 1) // BATCH):
        batch = records[start:start + BATCH]
        target.records.log(batch, batch_size=len(batch))
    pushed_at = now()
    for item in chosen:
        state["items"][item.id] = {"slots": [c.chunk_id for c in pools[item.id]], "digest": annotation_digest(item),
                                   "pushed_at": pushed_at, "applied": state["items"].get(item.id, {}).get("applied")}
    state.update({"argilla": {"api_url": client.api_url, "dataset": name, "workspace": argilla_workspace},
                  "pool_k": pool_k, "guideline_version": version, "min_submitted": min_submitted})
    atomic_write_json(_state_path(workspace, dataset), state)
    return PushReport(dataset, name, len(records), created, version,
                      Counter(len(pools[i.id]) for i in chosen))


@dataclass
class PullReport:
    """What a pull applied and how far annotators agree."""

    applied: list[Applied] = field(default_factory=list)
    conflicts: dict[str, str] = field(default_factory=dict)   # item id -> why it was left alone
    pending: int = 0
    agreement: dict = field(default_factory=dict)


def _records_with_responses(client, dataset_id, page: int = 1000):
    """Yield (record id, responses) of every record, read over the API directly: SDK 2.8 crashes on a
    discarded response stored without values."""
    offset = 0
    while True:
        response = client.http_client.get(f"/api/v1/datasets/{dataset_id}/records",
                                          params={"offset": offset, "limit": page, "include": ["responses"]})
        response.raise_for_status()
        batch = response.json()["items"]
        for item in batch:
            yield str(item.get("external_id") or item["id"]), item.get("responses") or []
        if len(batch) < page:
            return
        offset += page


def _signature(answers: list[Answer], adjudicator: str | None) -> str:
    """Return what decides an item's outcome: the answers and who adjudicates."""
    return json.dumps([adjudicator, [a.__dict__ for a in answers]], sort_keys=True, ensure_ascii=False, default=str)


def pull(workspace: Workspace, *, dataset: str, api_url: str | None = None, adjudicator: str | None = None,
         min_submitted: int | None = None) -> PullReport:
    """Read submitted responses and apply them (see `apply_answers`); report agreement."""
    store = DatasetStore(workspace)
    meta, items = store.load(dataset)
    state = load_state(workspace, dataset)
    if not state.get("argilla"):
        raise InputError(f"dataset '{dataset}' was never pushed: run `curate annotate push --dataset {dataset}`",
                         field="dataset")
    client = connect(api_url or state["argilla"]["api_url"])
    target = client.datasets(name=state["argilla"]["dataset"], workspace=state["argilla"]["workspace"])
    if target is None:
        raise CurateError(f"Argilla has no dataset '{state['argilla']['dataset']}' any more")
    usernames = {str(user.id): user.username for user in client.users}
    needed = min_submitted or state.get("min_submitted", 1)
    by_id = {i.id: i for i in items}
    index = KBIndex(workspace, meta.kb_snapshot)
    chunks = {c.chunk_id: c for c in index.chunks}
    report = PullReport()
    relevance_units: dict = {}
    answerability: dict = {}
    for item_id, responses in progress(list(_records_with_responses(client, target.id)),
                                       "pulling from Argilla", unit="record"):
        pushed = state["items"].get(item_id)
        item = by_id.get(item_id)
        if pushed is None or item is None:
            continue
        answers = answers_of(responses, usernames)
        for answer in answers:
            for n in range(1, len(pushed["slots"]) + 1):
                relevance_units.setdefault((item_id, n), {})[answer.user] = answer.grade(n)
            if answer.answerable is not None:
                answerability.setdefault(item_id, {})[answer.user] = answer.answerable
        if len(answers) < needed:
            report.pending += 1
            continue
        # The adjudicator decides only where annotators disagree.
        signature = _signature(answers, adjudicator if disagreements(answers, pushed["slots"]) else None)
        if pushed.get("applied") == signature:
            continue  # nothing new since the last pull
        if annotation_digest(item) != pushed["digest"]:
            report.conflicts[item_id] = "changed locally after it was pushed; push it again to re-annotate"
            continue
        applied = apply_answers(item, answers, pushed["slots"], chunks, index.copies, meta.kb_snapshot,
                                state.get("guideline_version"), adjudicator)
        report.applied.append(applied)
        pushed["applied"] = signature
        pushed["digest"] = annotation_digest(item)
    alpha = krippendorff_alpha(relevance_units, "ordinal")
    report.agreement = {
        "relevance_alpha": None if alpha is None else round(alpha, 4),
        "relevance_alpha_pairs": pairwise(relevance_units, "alpha", "ordinal"),
        "answerability_kappa_pairs": pairwise(answerability, "kappa"),
        "units": sum(1 for u in relevance_units.values() if len(u) > 1)}
    kappas = [p["agreement"] for p in report.agreement["answerability_kappa_pairs"].values()
              if p["agreement"] is not None]
    report.agreement["answerability_kappa"] = round(sum(kappas) / len(kappas), 4) if kappas else None
    meta.checks["annotation"] = {
        "at": now(), "argilla": state["argilla"], "guideline_version": state.get("guideline_version"),
        "labelled": sum(a.outcome == "labelled" for a in report.applied),
        "needs_adjudication": sum(a.outcome == "needs_adjudication" for a in report.applied),
        "conflicts": sorted(report.conflicts), "pending": report.pending, "agreement": report.agreement}
    store.save(meta, items)
    atomic_write_json(_state_path(workspace, dataset), state)
    return report


def status(workspace: Workspace, *, dataset: str, api_url: str | None = None) -> dict:
    """Return local counts per status and, when the dataset was pushed, Argilla's progress per annotator."""
    items = DatasetStore(workspace).items(dataset)
    result = {"statuses": dict(Counter(i.status for i in items)), "argilla": None}
    state = load_state(workspace, dataset)
    if state.get("argilla"):
        client = connect(api_url or state["argilla"]["api_url"])
        target = client.datasets(name=state["argilla"]["dataset"], workspace=state["argilla"]["workspace"])
        if target is not None:
            result["argilla"] = target.progress(with_users_distribution=True)
    return result
