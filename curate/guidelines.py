"""The version of the relevance guidelines in force: a hash of their content."""

from __future__ import annotations

import hashlib
from pathlib import Path

from curate.errors import InputError
from curate.workspace import Workspace


def guideline_version(folder: Path) -> str:
    """Return 'g-' + 12 hex digits of the sha256 over the folder's Markdown files (names and bytes)."""
    folder = Path(folder)
    files = sorted(p for p in folder.glob("*.md") if p.is_file())
    if not files:
        raise InputError("no guideline files (*.md)", file=str(folder))
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode("utf-8") + b"\0" + path.read_bytes() + b"\0")
    return "g-" + digest.hexdigest()[:12]


def workspace_guideline_version(workspace: Workspace) -> str | None:
    """Return the version of the guidelines curate.toml points to, or None if it names none."""
    path = workspace.setting("guidelines", "path")
    if not path:
        return None
    folder = Path(path) if Path(path).is_absolute() else workspace.root / path
    return guideline_version(folder)
