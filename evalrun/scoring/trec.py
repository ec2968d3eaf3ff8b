"""A run's retrieval in TREC run format, in the terms evalrun scores it: each layer's chunk ids as
scored (excluded documents left out), mapped to the item's evidence-group keys, so that trec_eval or
ranx on the BEIR export's `groups/<split>.qrels` give evalrun's own values. A rank holding a group
already seen higher up keeps its rank under an id no qrels holds (`copy@RANK:CHUNK`), as evalrun
counts it: a rank, not relevant. With `chunks`, the chunk ids as the system returned them.

One case a TREC run cannot say: a chunk holding two required facts finds two groups at one rank in
evalrun, and a TREC rank holds one id. That rank is written as its best-graded new group, so
precision, MRR, hit rate and nDCG still agree, but trec_eval's recall counts one group there; those
items are counted apart ("items where one rank finds several groups") and their recall differs."""

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
from evalrun.scoring.score import LAYERS, excluded_evidence, layer_ids

TAG = "evalrun"


def group_ranks(chunk_ids: list[str], chunk_groups: dict[str, tuple[str, ...]],
                grades: dict[str, int] | None = None) -> tuple[list[str], int]:
    """Return the ranks of a layer as evidence-group keys, a rank that finds no new group as
    `copy@RANK:CHUNK`, and how many ranks find several new groups at once (each written as its
    best-graded new group: a TREC rank holds one id).

    >>> group_ranks(["a#1", "x", "a#2"], {"a#1": ("group:e1",), "a#2": ("group:e1",)})
    (['group:e1', 'x', 'copy@3:a#2'], 0)
    >>> group_ranks(["c1", "c2"], {"c1": ("group:e1", "group:e2"), "c2": ("group:e2",)}, {"group:e1": 1, "group:e2": 2})
    (['group:e2', 'copy@2:c2'], 1)
    """
    grades = grades or {}
    seen: set[str] = set()
    ranks = []
    several = 0
    for rank, chunk_id in enumerate(chunk_ids, start=1):
        held = chunk_groups.get(chunk_id, (chunk_id,))
        new = [g for g in dict.fromkeys(held) if g not in seen]
        if not new:
            ranks.append(f"copy@{rank}:{chunk_id}")
            continue
        several += len(new) > 1
        ranks.append(max(new, key=lambda g: grades.get(g, 0)))
        seen.update(new)
    return ranks, several


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
    failed = ("failed items (left out, as --exclude-errors left them out of evalrun's figures)"
              if manifest.settings.exclude_errors else "failed items (no lines; evalrun scores them as retrieving "
              "nothing, as trec_eval -c and ranx make_comparable=True do)")
    counts = {"items": 0, failed: 0}
    for item in items:
        record = run.traces.get(item.id)
        if record is None or record.error is not None:
            counts[failed] += 1
            continue
        try:
            trace = trace_from(record.trace, item_id=item.id, question=item.question)
        except CurateError:
            counts[failed] += 1
            continue
        if layer == "context" and record.kind == "trec":
            raise InputError("a TREC run has no final context: export --layer candidates", field="layer")
        if excluded_evidence(item, known, excluded):
            key = "items scored apart (left out, as evalrun's 'all' leaves them out: their evidence was excluded)"
            counts[key] = counts.get(key, 0) + 1
            continue
        ids = layer_ids(trace, layer, known, excluded)
        if ids is None:  # the trace reports no such layer: evalrun leaves its metrics unscored
            key = f"without {'a context' if layer == 'context' else 'candidates'}"
            counts[key] = counts.get(key, 0) + 1
            continue
        if not chunks:
            target = retrieval_qrels(item) if item.answerable else "unanswerable"
            if isinstance(target, str):  # evalrun scores no retrieval for it, so the run holds none
                counts["not scored for retrieval"] = counts.get("not scored for retrieval", 0) + 1
                continue
            ids, several = group_ranks(ids, target[1], target[0])
            if several:
                key = ("items where one rank finds several groups (a chunk holding two facts: trec_eval's "
                       "recall counts one there, evalrun's every one)")
                counts[key] = counts.get(key, 0) + 1
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
