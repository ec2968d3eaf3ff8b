"""`curate export`: a release (or the draft) as JSONL, ragas rows or a BEIR folder."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from .errors import InputError
from .fileio import atomic_write_bytes, jsonl_bytes
from .formats.beir import write_beir
from .kb import SnapshotStore
from .release import resolve_items
from .schema import Chunk, EvalItem
from .workspace import Workspace

EXPORT_FORMATS = ("jsonl", "ragas", "beir")


def ragas_rows(items: Sequence[EvalItem], chunks: dict[str, Chunk]) -> list[dict]:
    """Return one ragas row per item: user_input, reference, reference_contexts and their ids.

    Each relevant evidence contributes one chunk (all of its chunks when it straddles several),
    so the two lists stay aligned: reference_contexts[i] is the text of reference_context_ids[i].
    """
    rows = []
    for item in items:
        ids: list[str] = []
        for evidence in item.evidence:
            if evidence.grade == 0 or not evidence.chunk_ids:
                continue
            for chunk_id in (evidence.chunk_ids if evidence.partial else evidence.chunk_ids[:1]):
                if chunk_id not in ids:
                    ids.append(chunk_id)
        rows.append({"id": item.id, "user_input": item.question, "reference": item.reference_answer,
                     "reference_contexts": [chunks[i].text if i in chunks else "" for i in ids],
                     "reference_context_ids": ids})
    return rows


def export(workspace: Workspace, *, ref: str, format: str, out: str) -> dict[str, int]:
    """Write the items `ref` names in `format` to `out` ('-' for standard output); return counts."""
    if format not in EXPORT_FORMATS:
        raise InputError(f"unknown format {format!r} ({', '.join(EXPORT_FORMATS)})", field="format")
    items, _, snapshot = resolve_items(workspace, ref)
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
