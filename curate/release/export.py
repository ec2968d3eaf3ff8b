"""`curate export`: a release (or the draft) as JSONL, ragas rows, a BEIR folder or a Hugging Face
dataset in Parquet.

An export never destroys what it did not make: its --out may not be the workspace, hold it, or lie
in the workspace's own state (`Workspace.refuse_state`), and an existing file or non-empty folder
is replaced only with `force`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from curate.dataset import items_digest, parse_ref
from curate.errors import InputError
from curate.fileio import atomic_directory, atomic_write_bytes, jsonl_bytes
from curate.formats.beir import write_beir
from curate.formats.hf import write_parquet
from curate.formats.ragas import ragas_rows
from curate.kb import SnapshotStore
from curate.release.store import SPLIT_FILES, resolve_items
from curate.workspace import Workspace

EXPORT_FORMATS = ("jsonl", "ragas", "beir", "hf")
FOLDER_FORMATS = ("beir", "hf")


def check_output(workspace: Workspace, out: str, *, folder: bool, force: bool = False) -> Path | None:
    """Return where an export may write (None for standard output), or raise one line: not the
    workspace's state, and no existing file or non-empty folder unless `force` (a folder that is
    itself a curate workspace, never)."""
    if out == "-":
        if folder:
            raise InputError("this export is a folder: give --out DIR", field="out")
        return None
    target = workspace.refuse_state(Path(out))
    if target.is_dir():
        if not folder:
            raise InputError(f"{out} is a folder: give a file name", field="out")
        if (target / "curate.toml").exists():
            raise InputError(f"{out} is a curate workspace: give a new folder", field="out")
        if any(target.iterdir()) and not force:
            raise InputError(f"{out} is not empty: give a new folder, or --force to replace what it holds",
                             field="out")
    elif target.exists():
        if folder:
            raise InputError(f"{out} is a file, a folder was expected", field="out")
        if not force:
            raise InputError(f"{out} exists: give a new file name, or --force to replace it", field="out")
    return target


def export(workspace: Workspace, *, ref: str, format: str, out: str, force: bool = False) -> dict[str, int]:
    """Write the items `ref` names in `format` to `out` ('-' for standard output); return counts."""
    if format not in EXPORT_FORMATS:
        raise InputError(f"unknown format {format!r} ({', '.join(EXPORT_FORMATS)})", field="format")
    target = check_output(workspace, out, folder=format in FOLDER_FORMATS, force=force)
    items, manifest, snapshot = resolve_items(workspace, ref)
    if format == "hf":
        by_split = {s: [i for i in items if (i.split or "unassigned") == s] for s in SPLIT_FILES}
        name, version = parse_ref(ref)
        with atomic_directory(target, replace=True) as tmp:
            written = write_parquet(tmp, {s: chosen for s, chosen in by_split.items() if chosen}, name=name,
                                    version=version or "draft",
                                    content_sha256=manifest.content_sha256 if manifest else items_digest(items),
                                    message=manifest.message if manifest else f"the draft of {name}",
                                    kb_snapshot=snapshot)
        return {"items": len(items), **{f"{s} rows": n for s, n in written.items()}}
    if format == "jsonl":
        data = jsonl_bytes(i.model_dump(mode="json") for i in items)
    else:
        if snapshot is None:
            raise InputError(f"'{ref}' has no KB snapshot to take chunk texts from", field="kb")
        chunks = SnapshotStore(workspace).chunks(snapshot)
        if format == "beir":
            return write_beir(target, items, chunks)
        data = jsonl_bytes(ragas_rows(items, {c.chunk_id: c for c in chunks}))
    if target is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        atomic_write_bytes(target, data)
    return {"items": len(items)}
