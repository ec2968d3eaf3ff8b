"""Immutable releases: datasets/NAME/releases/vN/, loadable with Hugging Face `datasets`."""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

from curate.dataset import DatasetStore, items_digest, parse_ref
from curate.errors import CurateError, NotFound
from curate.fileio import atomic_directory, jsonl_bytes, sha256_bytes
from curate.guidelines import workspace_guideline_version
from curate.records import SPLITS, UNRELEASED_STATUSES, EvalItem, ReleaseManifest, now
from curate.formats.hf import card, release_row
from curate.release.changes import changes, counts
from curate.release.load import content_sha256, load_release
from curate.version import __version__
from curate.workspace import Workspace

SPLIT_FILES = (*SPLITS, "unassigned")


class Releases:
    """The releases of one dataset."""

    def __init__(self, workspace: Workspace, name: str):
        self.workspace = workspace
        self.name = name
        self.root = DatasetStore(workspace).folder(name) / "releases"

    def versions(self) -> list[str]:
        """Return the release versions, oldest first."""
        if not self.root.exists():
            return []
        found = [p.name for p in self.root.iterdir()
                 if re.fullmatch(r"v[1-9][0-9]*", p.name) and (p / "manifest.json").exists()]
        return sorted(found, key=lambda v: int(v[1:]))

    def path(self, version: str) -> Path:
        folder = self.root / version
        if not (folder / "manifest.json").exists():
            known = ", ".join(self.versions()) or "none yet"
            raise NotFound(f"no release {self.name}@{version} (releases: {known})")
        return folder

    def manifest(self, version: str) -> ReleaseManifest:
        """Return a release's manifest."""
        return ReleaseManifest.read(self.path(version) / "manifest.json")

    def leakage_check_path(self, version: str, snapshot_id: str | None) -> Path:
        """Return where the leakage check of release `version` against another snapshot is kept
        (beside the immutable release, which cannot take it)."""
        return self.root.parent / "checks" / f"leakage-{version}-{snapshot_id}.json"

    def items(self, version: str) -> list[EvalItem]:
        """Return a release's items after checking every file against the manifest's hashes."""
        return load_release(self.path(version))[1]


def release(workspace: Workspace, *, dataset: str, message: str) -> ReleaseManifest:
    """Write the next immutable version of `dataset` and return its manifest."""
    store = DatasetStore(workspace)
    meta, draft = store.load(dataset)
    if not message.strip():
        raise CurateError("a release needs a message (-m)")
    chosen = [i for i in draft if i.status not in UNRELEASED_STATUSES]
    if not chosen:
        raise CurateError(f"nothing to release: dataset '{dataset}' has no items outside "
                          f"{', '.join(UNRELEASED_STATUSES)}")
    releases = Releases(workspace, dataset)
    versions = releases.versions()
    parent = versions[-1] if versions else None
    changelog = changes(releases.items(parent) if parent else [], chosen)
    if parent and not any(changelog.values()):
        raise CurateError(f"nothing changed since {dataset}@{parent}")
    version = f"v{int(parent[1:]) + 1 if parent else 1}"
    by_split: dict[str, list[EvalItem]] = {}
    for item in chosen:
        by_split.setdefault(item.split or "unassigned", []).append(item)
    guideline = workspace_guideline_version(workspace)
    digest = items_digest(chosen)
    # A check speaks for this release only if it saw exactly these items.
    checks = meta.checks.model_copy(deep=True)
    for record in checks.present().values():
        record.current = record.items_sha256 == digest if record.items_sha256 is not None else None
    with atomic_directory(releases.root / version) as tmp:
        (tmp / "data").mkdir()
        files = {}
        for split in SPLIT_FILES:
            if split in by_split:
                relative = f"data/{split}.jsonl"
                data = jsonl_bytes(release_row(i) for i in by_split[split])
                (tmp / relative).write_bytes(data)
                files[relative] = sha256_bytes(data)
        manifest = ReleaseManifest(
            name=dataset, version=version, parent_version=parent, created_at=now(), message=message.strip(),
            content_sha256=content_sha256(files), files=files, kb_snapshot=meta.kb_snapshot,
            guideline_version=guideline, items=len(chosen), counts=counts(chosen), checks=checks,
            excluded=dict(Counter(i.status for i in draft if i.status in UNRELEASED_STATUSES)),
            changelog=changelog, curate_version=__version__)
        manifest.write(tmp / "manifest.json")
        (tmp / "README.md").write_text(card(
            name=dataset, version=version, content_sha256=manifest.content_sha256, message=manifest.message,
            items=manifest.items, kb_snapshot=manifest.kb_snapshot, splits=[s for s in SPLIT_FILES if s in by_split]),
            "utf-8")
        for path in tmp.rglob("*"):
            if path.is_file():
                os.chmod(path, 0o444)
    return manifest


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
