"""Running the leakage check on a dataset or a release: the options checked, the items, snapshot,
documents and acceptances loaded under the dataset's lock, the pure core (`core.leak_check`) run with
the workspace's embedding model, and its result written (the dataset's record, or one beside the
release)."""

from __future__ import annotations

from pathlib import Path

from curate.checks.leakage.accept import load_acceptances
from curate.checks.leakage.core import FIXES, check_options, leak_check
from curate.checks.leakage.find import LeakReport, LeakSettings
from curate.checks.leakage.paraphrase import paraphrase_leaks
from curate.dataset import DatasetStore, parse_ref
from curate.index.embeddings import semantic_pass
from curate.engine import engine_settings, open_engine
from curate.index.kb_index import KBIndex
from curate.index.shard_index import shard_views
from curate.records import LeakageDocs
from curate.release import Releases, resolve_items
from curate.workspace import Workspace

__all__ = ["FIXES", "check_leakage", "load_docs"]


def _docs_file(workspace: Workspace, name: str) -> Path:
    return DatasetStore(workspace).folder(name) / "leakage_docs.json"


def _accepted_file(workspace: Workspace, name: str) -> Path:
    return DatasetStore(workspace).folder(name) / "leakage_accepted.json"


def load_docs(workspace: Workspace, name: str) -> LeakageDocs:
    """Return the documents a dataset's leakage checks allow and evaluation excludes."""
    path = _docs_file(workspace, name)
    return LeakageDocs.read(path) if path.exists() else LeakageDocs()


def check_leakage(workspace: Workspace, ref: str, *, kb: str | None = None, fix: str | None = None,
                  allow_docs: tuple[str, ...] = (), accept_items: tuple[str, ...] = (), reason: str | None = None,
                  accepted_by: str | None = None, settings: LeakSettings | None = None,
                  semantic: bool = True, report: Path | None = None, engine: str | None = None) -> LeakReport:
    """Return the leakage check of the items `ref` names (NAME: the draft; NAME@vN: a release) against
    a snapshot (default: theirs): accept the open findings of `accept_items` with `reason`, apply
    `fix` (quarantine, exclude-docs) to the findings left open, record the result in the dataset (and,
    for a release, beside it), and with `report` write every finding there as JSON. A snapshot in many
    shards is searched on the engine `engine` names (local, ray, a Ray address), else curate.toml's
    [engine], else the local engine."""
    settings = settings or LeakSettings()
    chosen = engine_settings(workspace, engine)
    name, version = parse_ref(ref)
    check_options(settings, fix=fix, accept_items=accept_items, reason=reason, release=bool(version))
    if report is not None:
        workspace.refuse_state(report, field="report")
    with DatasetStore(workspace).writing(name):
        items, _, own_snapshot = resolve_items(workspace, ref)
        index = KBIndex.open(workspace, kb or own_snapshot)
        docs = load_docs(workspace, name)
        kept = load_acceptances(_accepted_file(workspace, name))
        store = DatasetStore(workspace)
        meta, draft = store.load(name)

        def embed(questions):
            # alike by the embedding model's own threshold unless one is given: what check-dups and split use
            return semantic_pass(workspace, questions, semantic=semantic, threshold=settings.split_semantic_min)

        def paraphrases(checked, index, skip_docs, found):   # `running`: the engine opened below
            return paraphrase_leaks(workspace, checked, index, skip_docs=skip_docs, found=found, semantic=semantic,
                                    threshold=settings.paraphrase_min, min_chars=settings.question_min_chars,
                                    engine=running)

        shards = shard_views(index)
        running = open_engine(chosen, max(s.chunks for s in index.store.shards(index.snapshot_id))) if shards > 1 else None
        try:
            result = leak_check(items, index, ref=ref, draft=None if version else draft, docs=docs,
                                acceptances=kept, previous=meta.checks.leakage, settings=settings, fix=fix,
                                allow_docs=allow_docs, accept_items=accept_items, reason=reason,
                                accepted_by=accepted_by, embed=embed, paraphrases=paraphrases, engine=running)
        finally:
            if running is not None:
                running.close()
        result.shards, result.engine = shards, (chosen.describe() if running is not None else None)
        if allow_docs or fix == "exclude-docs":
            docs.write(_docs_file(workspace, name))
        if accept_items:
            kept.write(_accepted_file(workspace, name))
        if version:
            result.record.write(Releases(workspace, name).leakage_check_path(version, index.snapshot_id))
        else:
            meta.checks.leakage = result.record
            store.save(meta, draft)
    if report is not None:
        result.write(report)
    return result
