"""Immutable releases: datasets/NAME/releases/vN/, loadable with Hugging Face `datasets`.

A release number is never used twice: the next is one past every vN folder present (damaged or
not) and every version dataset.json recorded, and one release at a time picks it, holding the
dataset's write lock (`curate.locks`).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

from curate.dataset import DatasetStore, check_current, parse_ref
from curate.dataset.staleness import stale_checks
from curate.errors import CurateError, IntegrityError, NotFound
from curate.dataset.batches import FailureBatches, changelog_lines
from curate.fileio import atomic_directory, jsonl_bytes, sha256_bytes
from curate.guidelines import workspace_guideline_version
from curate.records import SPLITS, UNRELEASED_STATUSES, EvalItem, ReleaseManifest, ReleaseScope, ScopeSettings, now
from curate.formats.hf import card, release_row
from curate.release.changes import changes, counts
from curate.release.load import CARD, MANIFEST, check_release, content_sha256, load_release
from curate.release.scope import release_scope
from curate.kb import SnapshotStore
from curate.dataset.asker import names_scope
from curate.scope import read_scope_settings
from curate.version import __version__
from curate.workspace import Workspace

SPLIT_FILES = (*SPLITS, "unassigned")
VERSION = re.compile(r"v[1-9][0-9]*")


def _number(version: str) -> int:
    return int(version[1:])


class Releases:
    """The releases of one dataset."""

    def __init__(self, workspace: Workspace, name: str):
        self.workspace = workspace
        self.name = name
        self.root = DatasetStore(workspace).folder(name) / "releases"

    def versions(self) -> list[str]:
        """Return the version of every release folder present, oldest first, damaged or not (`manifest`
        says whether one is intact)."""
        if not self.root.exists():
            return []
        return sorted((p.name for p in self.root.iterdir() if VERSION.fullmatch(p.name) and p.is_dir()), key=_number)

    def recorded(self) -> dict[str, str]:
        """Return the content sha256 dataset.json recorded for each version at release time."""
        store = DatasetStore(self.workspace)
        return store.meta(self.name).releases if store.exists(self.name) else {}

    def next_version(self) -> str:
        """Return the first version number never used: past every vN under releases/ and every one recorded."""
        present = [p.name for p in self.root.iterdir() if VERSION.fullmatch(p.name)] if self.root.exists() else []
        return f"v{max(map(_number, [*present, *self.recorded()]), default=0) + 1}"

    def path(self, version: str) -> Path:
        """Return the folder of a release (which may be damaged: `load_release` says)."""
        folder = self.root / version
        if folder.is_dir():
            return folder
        known = ", ".join(self.versions()) or "none yet"
        if version in self.recorded():
            raise IntegrityError(f"release {self.name}@{version} is missing: dataset.json recorded it at release "
                                 f"time, but its folder is gone (releases: {known})")
        raise NotFound(f"no release {self.name}@{version} (releases: {known})")

    def manifest(self, version: str) -> ReleaseManifest:
        """Return a release's manifest after checking every file and field against its hashes."""
        return check_release(self.path(version))

    def leakage_check_path(self, version: str, snapshot_id: str | None) -> Path:
        """Return where the leakage check of release `version` against another snapshot is kept
        (beside the immutable release, which cannot take it)."""
        return self.root.parent / "checks" / f"leakage-{version}-{snapshot_id}.json"

    def items(self, version: str) -> list[EvalItem]:
        """Return a release's items after checking every file against the manifest's hashes."""
        return load_release(self.path(version))[1]


def _intact_parent(releases: Releases) -> tuple[str | None, list[EvalItem], list[str]]:
    """Return the newest release that loads intact, its items, and the newer versions passed over
    (damaged, or recorded but gone), oldest first."""
    skipped = []
    for version in sorted({*releases.versions(), *releases.recorded()}, key=_number, reverse=True):
        try:
            return version, releases.items(version), skipped[::-1]
        except IntegrityError:
            skipped.append(version)
    return None, [], skipped[::-1]


def _changelog(releases: Releases, version: str) -> dict:
    """Return the changelog of a release, {} when its manifest cannot be read (a damaged release)."""
    try:
        return releases.manifest(version).changelog
    except (CurateError, OSError, ValueError):
        return {}


def release(workspace: Workspace, *, dataset: str, message: str) -> ReleaseManifest:
    """Write the next immutable version of `dataset` and return its manifest; damaged releases are
    passed over for the parent and named in the manifest's `skipped_damaged`. The manifest records the
    `[scope]` settings and what scope does to the items (`scope_report`: askers, moments, the items to
    decline)."""
    with DatasetStore(workspace).writing(dataset):
        store = DatasetStore(workspace)
        meta, draft = store.load(dataset)
        if not message.strip():
            raise CurateError("a release needs a message (-m)")
        chosen = [i for i in draft if i.status not in UNRELEASED_STATUSES]
        if not chosen:
            raise CurateError(f"nothing to release: dataset '{dataset}' has no items outside "
                              f"{', '.join(UNRELEASED_STATUSES)}")
        releases = Releases(workspace, dataset)
        by_split: dict[str, list[EvalItem]] = {}
        for item in chosen:
            by_split.setdefault(item.split or "unassigned", []).append(item)
        guideline = workspace_guideline_version(workspace)
        scope = read_scope_settings(workspace)
        # who asks and when, and the items scope leaves without usable evidence (reported, never refused)
        report = scope_report(workspace, chosen, meta.kb_snapshot, scope)
        # A check speaks for this release only if it saw exactly these items (as far as it reads them).
        checks = meta.checks.model_copy(deep=True)
        for record in checks.present().values():
            record.current = check_current(record, chosen)
        if checks.leakage is not None and checks.leakage.current is False:
            # evalrun would refuse the release: say what to run instead of writing an immutable version
            stale = next(s for s in stale_checks(meta, draft) if s.check == "leakage")
            raise CurateError(f"not released: {stale.line()}, then `curate release` (`evalrun run` refuses a "
                              f"release whose leakage check saw other items)")
        parent, parent_items, skipped = _intact_parent(releases)
        changelog = changes(parent_items, chosen)
        # the production failures added since the last release, one line a month (curate add-failures)
        batches = FailureBatches(workspace, dataset)
        # a release killed before it marked its batches still names them in its changelog
        taken = {b for v in releases.versions() for b in _changelog(releases, v).get("failure_batches", [])}
        pending = [b for b in batches.settle(draft) if b.released_in is None and b.batch not in taken]
        if pending:
            changelog["production_failures"] = changelog_lines(pending)
            changelog["failure_batches"] = [b.batch for b in pending]
        if parent and not any(changelog.values()):
            raise CurateError(f"nothing changed since {dataset}@{parent}")
        version = releases.next_version()
        with atomic_directory(releases.root / version) as tmp:
            (tmp / "data").mkdir()
            files = {}
            for split in SPLIT_FILES:
                if split in by_split:
                    relative = f"data/{split}.jsonl"
                    data = jsonl_bytes(release_row(i) for i in by_split[split])
                    (tmp / relative).write_bytes(data)
                    files[relative] = sha256_bytes(data)
            # The card names the data files' hash: it cannot name the content hash, which covers the card.
            text = card(name=dataset, version=version, sha256=content_sha256(files), sha256_of="data files",
                        message=message.strip(), items=len(chosen), kb_snapshot=meta.kb_snapshot,
                        splits=[s for s in SPLIT_FILES if s in by_split]).encode("utf-8")
            (tmp / CARD).write_bytes(text)
            files[CARD] = sha256_bytes(text)
            manifest = ReleaseManifest(
                name=dataset, version=version, parent_version=parent, created_at=now(), message=message.strip(),
                content_sha256="", files=files, kb_snapshot=meta.kb_snapshot, guideline_version=guideline,
                scope=None if scope == ScopeSettings() else scope, scope_report=report,
                items=len(chosen), counts=counts(chosen), checks=checks,
                excluded=dict(Counter(i.status for i in draft if i.status in UNRELEASED_STATUSES)),
                changelog=changelog, skipped_damaged=skipped, curate_version=__version__)
            manifest.content_sha256 = content_sha256(files, manifest.model_dump(mode="json",
                                                                                exclude={"content_sha256"}))
            manifest.write(tmp / MANIFEST)
            for path in tmp.rglob("*"):
                if path.is_file():
                    os.chmod(path, 0o444)
            # Recorded before the folder takes its name, so no release appears that dataset.json does not
            # vouch for; the record is read afresh, as another command may have saved it meanwhile.
            recorded = store.meta(dataset)
            recorded.releases = {**recorded.releases, version: manifest.content_sha256}
            recorded.write(store.folder(dataset) / "dataset.json")
        for batch in pending:
            batch.released_in = version
            batch.write(batches.path(batch.batch))
        return manifest


def scope_report(workspace: Workspace, items: list[EvalItem], snapshot_id: str | None,
                 settings: ScopeSettings | None = None) -> ReleaseScope | None:
    """Return the scope report of `items` against their KB snapshot under the workspace's `[scope]`
    settings (`curate.release.scope.release_scope`); a snapshot that is gone matters only when an item
    names an asker or a moment (a release never needed its snapshot before scope)."""
    asked = any(names_scope(i) for i in items)
    if not asked and not (snapshot_id and _scoped_snapshot(workspace, snapshot_id)):
        return None   # nothing scoped: the snapshot's chunks are not read (1.8 s for 100,000 of them)
    settings = settings or read_scope_settings(workspace)
    try:
        chunks = SnapshotStore(workspace).chunks(snapshot_id) if snapshot_id else []
    except NotFound:
        raise CurateError(f"items name an asker or a moment, and their KB snapshot {snapshot_id} is not in this "
                          f"workspace to check them against") from None
    return release_scope(items, chunks, settings, snapshot_id)


def _scoped_snapshot(workspace: Workspace, snapshot_id: str) -> bool:
    """Return whether any chunk of a stored snapshot has a scope, from its manifest's counts (a snapshot
    that is gone has none to check against)."""
    try:
        return SnapshotStore(workspace).manifest(snapshot_id).scope is not None
    except NotFound:
        return False


def resolve_items(workspace: Workspace, ref: str) -> tuple[list[EvalItem], ReleaseManifest | None, str | None]:
    """Return the items `NAME@vN` (verified release) or `NAME` (the draft, as a release would
    select it) names, the release manifest if any, and the KB snapshot."""
    name, version = parse_ref(ref)
    if version:
        releases = Releases(workspace, name)
        manifest, items = load_release(releases.path(version))
        return items, manifest, manifest.kb_snapshot
    meta, items = DatasetStore(workspace).load(name)
    return [i for i in items if i.status not in UNRELEASED_STATUSES], None, meta.kb_snapshot
