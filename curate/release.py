"""Immutable releases: datasets/NAME/releases/vN/, loadable with Hugging Face `datasets`."""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .dataset import DatasetStore, items_digest, parse_ref, read_items_file
from .errors import CurateError, IntegrityError, NotFound
from .fileio import atomic_directory, atomic_write_json, jsonl_bytes, sha256_file
from .guidelines import workspace_guideline_version
from .hf_card import card, release_row
from .schema import UNRELEASED_STATUSES, EvalItem, ReleaseManifest, now
from .workspace import Workspace

SPLIT_FILES = ("dev", "test", "regression", "unassigned")


def counts(items: Sequence[EvalItem]) -> dict[str, dict[str, int]]:
    """Return item counts by split, difficulty, qtype, source, status, language and answerable."""
    table: dict[str, Counter] = {k: Counter() for k in
                                 ("split", "difficulty", "qtype", "source", "status", "language", "answerable")}
    for item in items:
        table["split"][item.split or "unassigned"] += 1
        table["difficulty"][item.difficulty or "ungraded"] += 1
        table["qtype"][item.qtype or "none"] += 1
        table["source"][item.source] += 1
        table["status"][item.status] += 1
        table["language"][item.language] += 1
        table["answerable"][str(item.answerable).lower()] += 1
    return {k: dict(sorted(v.items())) for k, v in table.items()}


def changes(old: Sequence[EvalItem], new: Sequence[EvalItem]) -> dict[str, list[str]]:
    """Return the ids of items added, removed and changed (in content) from `old` to `new`."""
    before = {i.id: i.content() for i in old}
    after = {i.id: i.content() for i in new}
    return {"added": sorted(after.keys() - before.keys()),
            "removed": sorted(before.keys() - after.keys()),
            "changed": sorted(k for k in before.keys() & after.keys() if before[k] != after[k])}


def _content_sha256(files: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for path, sha in sorted(files.items()):
        digest.update(f"{path}\0{sha}\n".encode())
    return digest.hexdigest()


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
        return ReleaseManifest.model_validate_json((self.path(version) / "manifest.json").read_text("utf-8"))

    def items(self, version: str) -> list[EvalItem]:
        """Return a release's items after checking every file against the manifest's hashes."""
        return load_release(self.path(version))[1]


def load_release(folder: Path) -> tuple[ReleaseManifest, list[EvalItem]]:
    """Return the manifest and items of a release folder; raise IntegrityError if its content
    no longer matches the recorded sha256."""
    folder = Path(folder)
    manifest = ReleaseManifest.model_validate_json((folder / "manifest.json").read_text("utf-8"))
    label = f"{manifest.name}@{manifest.version}"
    actual = {}
    for relative in sorted(manifest.files):
        path = folder / relative
        if not path.exists():
            raise IntegrityError(f"release {label} is damaged: {relative} is missing")
        actual[relative] = sha256_file(path)
        if actual[relative] != manifest.files[relative]:
            raise IntegrityError(f"release {label} was modified: {relative} has sha256 {actual[relative][:12]}..., "
                                 f"the manifest says {manifest.files[relative][:12]}...")
    extra = sorted(p.relative_to(folder).as_posix() for p in (folder / "data").glob("*")
                   if p.relative_to(folder).as_posix() not in manifest.files)
    if extra:
        raise IntegrityError(f"release {label} was modified: {extra[0]} is not in the manifest")
    if _content_sha256(actual) != manifest.content_sha256:
        raise IntegrityError(f"release {label} was modified: content sha256 does not match the manifest")
    items = [item for relative in sorted(manifest.files) for item in read_items_file(folder / relative)]
    return manifest, items


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
    checks = {name: {**record, "current": record.get("items_sha256") == digest} if "items_sha256" in record
              else record for name, record in meta.checks.items()}
    with atomic_directory(releases.root / version) as tmp:
        (tmp / "data").mkdir()
        files = {}
        for split in SPLIT_FILES:
            if split in by_split:
                relative = f"data/{split}.jsonl"
                (tmp / relative).write_bytes(jsonl_bytes(release_row(i) for i in by_split[split]))
                files[relative] = sha256_file(tmp / relative)
        manifest = ReleaseManifest(
            name=dataset, version=version, parent_version=parent, created_at=now(), message=message.strip(),
            content_sha256=_content_sha256(files), files=files, kb_snapshot=meta.kb_snapshot,
            guideline_version=guideline, items=len(chosen), counts=counts(chosen), checks=checks,
            excluded=dict(Counter(i.status for i in draft if i.status in UNRELEASED_STATUSES)),
            changelog=changelog, curate_version=__version__)
        atomic_write_json(tmp / "manifest.json", manifest.model_dump(mode="json"))
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


def diff(workspace: Workspace, *, old: str, new: str) -> dict:
    """Return items added, removed and changed (with the fields that changed) and count changes."""
    old_items = resolve_items(workspace, old)[0]
    new_items = resolve_items(workspace, new)[0]
    result = changes(old_items, new_items)
    before = {i.id: i.content() for i in old_items}
    after = {i.id: i.content() for i in new_items}
    changed_fields = {k: sorted(f for f in after[k] if after[k][f] != before[k][f]) for k in result["changed"]}
    old_counts, new_counts = counts(old_items), counts(new_items)
    count_changes = {}
    for table in new_counts.keys() | old_counts.keys():
        keys = old_counts.get(table, {}).keys() | new_counts.get(table, {}).keys()
        rows = {k: (old_counts.get(table, {}).get(k, 0), new_counts.get(table, {}).get(k, 0)) for k in sorted(keys)}
        rows = {k: v for k, v in rows.items() if v[0] != v[1]}
        if rows:
            count_changes[table] = rows
    return {"old": old, "new": new, "items": (len(old_items), len(new_items)), **result,
            "changed_fields": changed_fields, "counts": count_changes}

