"""A run's retrieval in TREC run format, in the terms evalrun scores it: each layer's chunk ids as
scored (excluded documents left out), mapped to the item's evidence-group keys and de-duplicated
keeping the first, so that trec_eval or ranx on the BEIR export's `groups/<split>.qrels` give
evalrun's own values. With `chunks`, the chunk ids as the system returned them."""

from __future__ import annotations

from pathlib import Path

from curate import (
    CurateError,
    InputError,
    Releases,
    SnapshotStore,
    Workspace,
    atomic_write_bytes,
    load_release,
    retrieval_qrels,
)
from evalrun.records import read_run, trace_from
from evalrun.scoring.score import LAYERS, layer_ids

TAG = "evalrun"


def trec_run(workspace: Workspace, folder: Path, *, layer: str = "candidates", chunks: bool = False) -> tuple[str, dict]:
    """Return the TREC run text of one layer of a run folder ("qid Q0 docid rank score tag" lines)
    and counts of what it holds and left out."""
    if layer not in LAYERS:
        raise InputError(f"unknown layer {layer!r} ({', '.join(LAYERS)})", field="layer")
    run = read_run(folder)
    manifest = run.manifest
    _, items = load_release(Releases(workspace, manifest.dataset).path(manifest.version))
    known = {c.chunk_id: c.doc_id for c in SnapshotStore(workspace).chunks(manifest.kb_snapshot)}
    excluded = set(manifest.leakage_gate.excluded_docs)
    lines: list[str] = []
    counts = {"items": 0, "without a trace": 0, "bad traces": 0}
    for item in items:
        record = run.traces.get(item.id)
        if record is None or record.error is not None:
            counts["without a trace"] += 1
            continue
        try:
            trace = trace_from(record.trace, item_id=item.id, question=item.question)
        except CurateError:
            counts["bad traces"] += 1
            continue
        if layer == "context" and trace.trec:
            raise InputError("a TREC run has no final context: export --layer candidates", field="layer")
        ids = layer_ids(trace, layer, known, excluded)
        if not chunks:
            target = retrieval_qrels(item) if item.answerable else "unanswerable"
            if isinstance(target, str):  # evalrun scores no retrieval for it, so the run holds none
                counts["not scored for retrieval"] = counts.get("not scored for retrieval", 0) + 1
                continue
            chunk_group = target[1]
            ids = list(dict.fromkeys(chunk_group.get(c, c) for c in ids))
        counts["items"] += 1
        lines.extend(f"{item.id} Q0 {doc} {rank} {len(ids) - rank + 1} {TAG}" for rank, doc in enumerate(ids, start=1))
    return "".join(line + "\n" for line in lines), counts


def export_run(workspace: Workspace, folder: Path, out: Path, *, layer: str = "candidates",
               chunks: bool = False) -> dict:
    """Write `trec_run` to `out` atomically; return its counts."""
    target = workspace.refuse_state(Path(out))
    text, counts = trec_run(workspace, folder, layer=layer, chunks=chunks)
    atomic_write_bytes(target, text.encode("utf-8"))
    return counts
