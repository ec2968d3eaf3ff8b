"""The leakage gate: a release is evaluated only against a snapshot it was checked on, and clean."""

from __future__ import annotations

import json

from curate.dataset import DatasetStore
from curate.errors import CurateError
from curate.schema import ReleaseManifest
from curate.workspace import Workspace


def leakage_gate(workspace: Workspace, manifest: ReleaseManifest, kb_snapshot: str | None,
                 allow_unchecked: bool) -> dict:
    """Return the leakage check that clears this release for `kb_snapshot`, or raise with one line
    (unless `allow_unchecked`, which is then recorded)."""
    candidates = []
    recorded = manifest.checks.get("leakage")
    if recorded:
        candidates.append(("release manifest", recorded))
    beside = DatasetStore(workspace).folder(manifest.name) / "checks" / f"leakage-{manifest.version}-{kb_snapshot}.json"
    if beside.exists():
        candidates.append((beside.name, json.loads(beside.read_text(encoding="utf-8"))))
    for source, check in reversed(candidates):
        if check.get("kb_snapshot") != kb_snapshot:
            continue
        if check.get("current") is False:
            problem = f"its leakage check ({source}) saw other items than the release holds"
        elif not check.get("clean"):
            problem = f"its leakage check ({source}) found leaks in {len(check.get('items', []))} items"
        else:
            return {"status": "clean", "source": source, "at": check.get("at"), "kb_snapshot": kb_snapshot,
                    "excluded_docs": check.get("excluded_docs", [])}
        break
    else:
        problem = f"no leakage check against KB snapshot {kb_snapshot}"
    label = f"{manifest.name}@{manifest.version}"
    if not allow_unchecked:
        raise CurateError(f"{label} is not cleared for evaluation: {problem}; run `curate check-leakage "
                          f"--dataset {label} --kb {kb_snapshot}` (or pass --allow-unchecked)")
    return {"status": "unchecked", "problem": problem, "kb_snapshot": kb_snapshot, "excluded_docs": []}
