"""Reading a release back: every data file hashed as it is parsed (each read once), and the whole
checked against the manifest before any item is returned."""

from __future__ import annotations

import hashlib
from pathlib import Path

from curate.errors import CurateError, IntegrityError, NotFound
from curate.fileio import iter_json_objects, read_text
from curate.records import EvalItem, ReleaseManifest
from curate.formats.hf import item_from_row


def content_sha256(files: dict[str, str]) -> str:
    """Return the hash over a release's files: each path and its sha256, in path order."""
    digest = hashlib.sha256()
    for path, sha in sorted(files.items()):
        digest.update(f"{path}\0{sha}\n".encode())
    return digest.hexdigest()


def load_release(folder: Path) -> tuple[ReleaseManifest, list[EvalItem]]:
    """Return the manifest and items of a release folder; raise IntegrityError if its content
    no longer matches the recorded sha256."""
    folder = Path(folder)
    path = folder / "manifest.json"
    if not path.exists():
        raise NotFound(f"{folder} is not a release (no manifest.json)")
    manifest = ReleaseManifest.read(path)
    label = f"{manifest.name}@{manifest.version}"
    extra = sorted(p.relative_to(folder).as_posix() for p in (folder / "data").glob("*")
                   if p.relative_to(folder).as_posix() not in manifest.files)
    if extra:
        raise IntegrityError(f"release {label} was modified: {extra[0]} is not in the manifest")
    actual: dict[str, str] = {}
    items: list[EvalItem] = []
    for relative in sorted(manifest.files):
        file = folder / relative
        if not file.exists():
            raise IntegrityError(f"release {label} is damaged: {relative} is missing")
        data = file.read_bytes()
        actual[relative] = hashlib.sha256(data).hexdigest()
        if actual[relative] != manifest.files[relative]:
            raise IntegrityError(f"release {label} was modified: {relative} has sha256 {actual[relative][:12]}..., "
                                 f"the manifest says {manifest.files[relative][:12]}...")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = read_text(file)  # raises the located error
        items.extend(_rows(file, text))
    if content_sha256(actual) != manifest.content_sha256:
        raise IntegrityError(f"release {label} was modified: content sha256 does not match the manifest")
    return manifest, items


def _rows(path: Path, text: str) -> list[EvalItem]:
    """Return the items of one release data file (rows keep difficulty_features as JSON text)."""
    items = []
    for line, row in iter_json_objects(path, text=text):
        if isinstance(row, CurateError):
            raise row
        items.append(item_from_row(row, file=path, line=line))
    return items
