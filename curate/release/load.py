"""Reading a release back: every file of the folder hashed (each read once), every manifest field
held against the content hash, the hash held against the one dataset.json recorded, the card held
against the data files, all before any item is returned.

A release sits at datasets/NAME/releases/vN; loaded from there, it is also checked against its
dataset's record. A release folder copied elsewhere is checked on its own.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from curate.errors import CurateError, InputError, IntegrityError, NotFound
from curate.fileio import dumps_json, iter_json_objects, loads_json, read_text
from curate.formats.hf import card_data_files, item_from_row
from curate.records import DatasetMeta, EvalItem, ReleaseManifest

MANIFEST = "manifest.json"
CARD = "README.md"


def content_sha256(files: dict[str, str], fields: dict[str, Any] | None = None) -> str:
    """Return the hash over a release: each file's path and sha256, in path order, then the canonical
    JSON of the manifest's other fields (all but `content_sha256`; schema 1 hashed no fields).

    >>> content_sha256({"data/test.jsonl": "ab"}) == hashlib.sha256(b"data/test.jsonl\\0ab\\n").hexdigest()
    True
    >>> content_sha256({"data/test.jsonl": "ab"}, {"items": 1}) == hashlib.sha256(
    ...     b'data/test.jsonl\\0ab\\nmanifest\\0{"items":1}\\n').hexdigest()
    True
    """
    digest = hashlib.sha256()
    for path, sha in sorted(files.items()):
        digest.update(f"{path}\0{sha}\n".encode())
    if fields is not None:
        digest.update(f"manifest\0{dumps_json(fields)}\n".encode())
    return digest.hexdigest()


def data_files(files: dict[str, str]) -> dict[str, str]:
    """Return the entries of `files` that hold items (data/<split>.jsonl)."""
    return {path: sha for path, sha in files.items() if path.startswith("data/")}


def load_release(folder: Path) -> tuple[ReleaseManifest, list[EvalItem]]:
    """Return the manifest and items of a release folder; raise IntegrityError if any file or manifest
    field changed since it was written (or the manifest is missing or damaged)."""
    manifest, data = _verified(Path(folder))
    label = f"{manifest.name}@{manifest.version}"
    items: list[EvalItem] = []
    for relative, raw in sorted(data.items()):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = read_text(Path(folder) / relative)  # raises the located error
        items.extend(_rows(Path(folder) / relative, text, label=label, relative=relative))
    return manifest, items


def check_release(folder: Path) -> ReleaseManifest:
    """Return the manifest of a release folder after every check `load_release` makes but parsing items."""
    return _verified(Path(folder))[0]


def _verified(folder: Path) -> tuple[ReleaseManifest, dict[str, bytes]]:
    """Return the manifest and the bytes of each data file, every check passed."""
    record = _dataset_record(folder)
    label = f"{folder.resolve().parent.parent.name}@{folder.resolve().name}" if record else str(folder)
    if not folder.is_dir():
        raise NotFound(f"no release folder {folder}")
    path = folder / MANIFEST
    if not path.is_file():
        if record is None:
            raise NotFound(f"{folder} is not a release (no {MANIFEST})")
        raise IntegrityError(f"release {label} is damaged: it has no {MANIFEST}")
    try:
        raw = loads_json(path.read_bytes())
    except ValueError:
        raise IntegrityError(f"release {label} is damaged: {MANIFEST} is not valid JSON") from None
    if not isinstance(raw, dict):
        raise IntegrityError(f"release {label} is damaged: {MANIFEST} is not a JSON object")
    try:
        manifest = ReleaseManifest.parse(raw, file=path)
    except InputError as exc:
        raise IntegrityError(f"release {label} is damaged: {MANIFEST}: "
                             f"{exc.located().removeprefix(f'{path}: ')}") from None
    named = f"{manifest.name}@{manifest.version}"
    if record is not None and named != label:
        raise IntegrityError(f"release {label} was modified: its manifest names {named}")
    label = named
    if raw.get("schema_version", 1) == 1:
        data = _verified_schema_1(folder, manifest, label)
    else:
        data = _verified_files(folder, manifest, label)
        # The hash is over the fields as written, not as upgraded: a later schema's defaults must not
        # change the hash of a release written before it.
        fields = {k: v for k, v in raw.items() if k != "content_sha256"}
        if content_sha256(manifest.files, fields) != manifest.content_sha256:
            raise IntegrityError(f"release {label} was modified: its manifest no longer matches its content hash "
                                 f"(a field was edited)")
        _check_card(folder, manifest, label)
    if record is not None:
        _check_record(record, manifest, label, schema=raw.get("schema_version", 1))
    return manifest, data


def _dataset_record(folder: Path) -> DatasetMeta | None:
    """Return the record of the dataset whose releases/ holds `folder`, or None outside a workspace."""
    folder = folder.resolve()
    meta = folder.parent.parent / "dataset.json"
    if folder.parent.name != "releases" or not meta.is_file():
        return None
    return DatasetMeta.read(meta)


def _verified_files(folder: Path, manifest: ReleaseManifest, label: str) -> dict[str, bytes]:
    """Return the bytes of each data file after checking that the folder holds exactly the files the
    manifest lists (manifest.json aside), each with its sha256."""
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - {MANIFEST}
    extra = sorted(present - manifest.files.keys())
    if extra:
        raise IntegrityError(f"release {label} was modified: {extra[0]} is not in the manifest")
    missing = sorted(manifest.files.keys() - present)
    if missing:
        raise IntegrityError(f"release {label} is damaged: {missing[0]} is missing")
    data = {}
    for relative in sorted(manifest.files):
        raw = (folder / relative).read_bytes()
        _check_sha(raw, relative, manifest, label)
        if relative in data_files(manifest.files):
            data[relative] = raw
    return data


def _verified_schema_1(folder: Path, manifest: ReleaseManifest, label: str) -> dict[str, bytes]:
    """Return the bytes of each data file of a schema-1 release, checked as curate then did.

    Releases written before schema 2 hashed their data files only; they stay loadable (runs refer to
    them), and dataset.json, when it recorded them, still vouches for their hash."""
    extra = sorted(p.relative_to(folder).as_posix() for p in (folder / "data").glob("*")
                   if p.relative_to(folder).as_posix() not in manifest.files)
    if extra:
        raise IntegrityError(f"release {label} was modified: {extra[0]} is not in the manifest")
    data = {}
    for relative in sorted(manifest.files):
        if not (folder / relative).is_file():
            raise IntegrityError(f"release {label} is damaged: {relative} is missing")
        data[relative] = (folder / relative).read_bytes()
        _check_sha(data[relative], relative, manifest, label)
    if content_sha256(manifest.files) != manifest.content_sha256:
        raise IntegrityError(f"release {label} was modified: content sha256 does not match the manifest")
    return data


def _check_sha(raw: bytes, relative: str, manifest: ReleaseManifest, label: str) -> None:
    actual = hashlib.sha256(raw).hexdigest()
    if actual != manifest.files[relative]:
        raise IntegrityError(f"release {label} was modified: {relative} has sha256 {actual[:12]}..., "
                             f"the manifest says {manifest.files[relative][:12]}...")


def _check_card(folder: Path, manifest: ReleaseManifest, label: str) -> None:
    """Raise unless README.md sends each split to its own data file, and to no other file: what
    Hugging Face `datasets` loads must be what the manifest vouches for."""
    if CARD not in manifest.files:
        raise IntegrityError(f"release {label} is damaged: it has no {CARD}")
    pairs = card_data_files((folder / CARD).read_bytes().decode("utf-8", errors="replace"))
    wanted = [(Path(p).stem, p) for p in data_files(manifest.files)]
    if sorted(pairs) != sorted(wanted):
        shown = ", ".join(f"{s} -> {p}" for s, p in pairs) or "nothing"
        raise IntegrityError(f"release {label} was modified: {CARD} sends {shown}, its data files are "
                             f"{', '.join(p for _, p in sorted(wanted))}")


def _check_record(record: DatasetMeta, manifest: ReleaseManifest, label: str, *, schema: int) -> None:
    """Raise unless the manifest's content hash is the one dataset.json recorded at release time; a hash
    recomputed by hand inside the release folder does not match it."""
    recorded = record.releases.get(manifest.version)
    if recorded is None:
        if schema == 1:
            return  # written before dataset.json recorded releases
        raise IntegrityError(f"release {label} cannot be vouched for: dataset.json has no record of its content hash")
    if recorded != manifest.content_sha256:
        raise IntegrityError(f"release {label} was modified: its content hash differs from the one dataset.json "
                             f"recorded at release time")


def _rows(path: Path, text: str, *, label: str, relative: str) -> list[EvalItem]:
    """Return the items of one release data file (rows keep difficulty_features as JSON text), each of
    the split the file is named after."""
    split = Path(relative).stem
    items = []
    for line, row in iter_json_objects(path, text=text):
        if isinstance(row, CurateError):
            raise row
        item = item_from_row(row, file=path, line=line)
        if (item.split or "unassigned") != split:
            raise IntegrityError(f"release {label} was modified: {relative}:{line} holds item {item.id} of split "
                                 f"{item.split or 'unassigned'}")
        items.append(item)
    return items
