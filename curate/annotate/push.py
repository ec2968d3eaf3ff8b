"""`curate annotate push`: items with their candidate chunks to Argilla, recording locally what
was pushed (see `curate.annotate.state`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from curate.annotate.form import annotation_digest, record, settings
from curate.annotate.pool import candidate_pools
from curate.annotate.state import argilla_sdk, connect, load_state, state_path
from curate.dataset import DatasetStore
from curate.errors import InputError
from curate.guidelines import workspace_guideline_version
from curate.index.kb_index import KBIndex
from curate.progress import progress
from curate.records import ArgillaTarget, PushedItem, now
from curate.workspace import Workspace

DEFAULT_STATUSES = ("needs_evidence", "draft", "needs_adjudication", "needs_rewrite")
BATCH = 256
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
    if not 1 <= pool_k <= 50:
        raise InputError(f"must be 1 to 50 candidate slots, got {pool_k}", field="pool-k")
    if min_submitted < 1:
        raise InputError(f"must be at least 1, got {min_submitted}", field="min-annotators")
    with DatasetStore(workspace).writing(dataset):
        rg = argilla_sdk()
        store = DatasetStore(workspace)
        meta, items = store.load(dataset)
        chosen = [i for i in items if i.status in statuses]
        state = load_state(workspace, dataset)
        if state.pool_k not in (None, pool_k):
            raise InputError(f"dataset '{dataset}' was pushed with --pool-k {state.pool_k}; Argilla's fields are "
                             f"fixed, so push with the same pool size", field="pool-k")
        index = KBIndex(workspace, meta.kb_snapshot)
        pools = candidate_pools(index, chosen, pool_k)
        texts = {c.chunk_id: (str(c.metadata.get("title") or ""), c.text) for c in index.chunks}
        version = workspace_guideline_version(workspace)
        client = connect(api_url)
        name = argilla_dataset or (state.argilla.dataset if state.argilla else None) or dataset
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
            before = state.items.get(item.id)
            state.items[item.id] = PushedItem(slots=[c.chunk_id for c in pools[item.id]], digest=annotation_digest(item),
                                              pushed_at=pushed_at, applied=before.applied if before else None)
        state.argilla = ArgillaTarget(api_url=client.api_url, dataset=name, workspace=argilla_workspace)
        state.pool_k, state.guideline_version, state.min_submitted = pool_k, version, min_submitted
        state.write(state_path(workspace, dataset))
        return PushReport(dataset, name, len(records), created, version,
                          Counter(len(pools[i.id]) for i in chosen))
