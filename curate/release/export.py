"""`curate export`: a release (or the draft) as JSONL, ragas rows, a BEIR folder or a Hugging Face
dataset in Parquet."""

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


def export(workspace: Workspace, *, ref: str, format: str, out: str) -> dict[str, int]:
    """Write the items `ref` names in `format` to `out` ('-' for standard output); return counts."""
    if format not in EXPORT_FORMATS:
        raise InputError(f"unknown format {format!r} ({', '.join(EXPORT_FORMATS)})", field="format")
    items, manifest, snapshot = resolve_items(workspace, ref)
    if format == "hf":
        if out == "-":
            raise InputError("a Hugging Face export is a folder; give --out DIR", field="out")
        by_split = {s: [i for i in items if (i.split or "unassigned") == s] for s in SPLIT_FILES}
        name, version = parse_ref(ref)
        with atomic_directory(Path(out), replace=True) as tmp:
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
            if out == "-":
                raise InputError("a BEIR export is a folder; give --out DIR", field="out")
            return write_beir(Path(out), items, chunks)
        data = jsonl_bytes(ragas_rows(items, {c.chunk_id: c for c in chunks}))
    if out == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        atomic_write_bytes(Path(out), data)
    return {"items": len(items)}
