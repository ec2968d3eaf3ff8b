"""Scoring a run folder: retrieval on the candidates and on the final context, unanswerable items
apart, generation through the judge, end to end, failure attribution; per item (scores.jsonl) and
aggregated (summary.json)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from curate import (
    EvalItem,
    InputError,
    ReleaseManifest,
    Releases,
    SnapshotStore,
    Workspace,
    atomic_write_bytes,
    retrieval_qrels,
    jsonl_bytes,
    load_release,
)
from evalrun.metrics import retrieval_metrics
from evalrun.records import SCORES, SUMMARY, ItemScores, RunSummary, Trace, read_run, trace_from
from evalrun.scoring.generation import score_judged
from evalrun.scoring.summary import RETRIEVAL, summarize

LAYERS = ("candidates", "context")


def layer_ids(trace: Trace, layer: str, known: dict[str, str], excluded: set[str]) -> list[str]:
    """Return the chunk ids of one layer of a trace as scored: in rank order, without the chunks of
    documents the leakage check excluded."""
    return [p.chunk_id for p in getattr(trace, layer) if known.get(p.chunk_id) not in excluded]


def score_run(workspace: Workspace, folder: Path,
              release: tuple[ReleaseManifest, list[EvalItem]] | None = None) -> RunSummary:
    """Score every trace of a run folder; write scores.jsonl and summary.json; return the summary.

    `release`: the run's release as already loaded (verified), so it is not read again.
    """
    run = read_run(folder)
    manifest = run.manifest
    if release is None:
        release = load_release(Releases(workspace, manifest.dataset).path(manifest.version))
    items = release[1]
    ks = tuple(manifest.settings.ks)
    snapshot_chunks = SnapshotStore(workspace).chunks(manifest.kb_snapshot)
    known = {c.chunk_id: c.doc_id for c in snapshot_chunks}
    chunk_texts = {c.chunk_id: c.text for c in snapshot_chunks}
    evidence_in_context: set[str] = set()
    excluded = set(manifest.leakage_gate.excluded_docs)
    rows: dict[str, ItemScores] = {}
    traces: dict[str, Trace] = {}
    qrels, groups, runs = {}, {}, {layer: {} for layer in LAYERS}
    problems: Counter = Counter()
    for item in items:
        row = rows[item.id] = ItemScores(item_id=item.id, answerable=item.answerable)
        record = run.traces.get(item.id)
        if record is None or record.error is not None:
            reason = "no trace" if record is None else record.error
            row.problems.append(reason)
            problems[reason.split(":")[0]] += 1
            row.values["success"] = 0.0
            continue
        try:
            trace = trace_from(record.trace, item_id=item.id, question=item.question, where=f"trace of {item.id}")
        except InputError as exc:
            row.problems.append(f"bad trace: {exc}")
            problems["bad trace"] += 1
            row.values["success"] = 0.0
            continue
        traces[item.id] = trace
        unknown = [p.chunk_id for p in trace.candidates + trace.context if p.chunk_id not in known]
        if unknown:
            row.problems.append(f"unknown chunk ids: {', '.join(sorted(set(unknown))[:5])}")
            problems["unknown chunk id"] += 1
        layers = {layer: layer_ids(trace, layer, known, excluded) for layer in LAYERS}
        has_context = not trace.trec
        if item.answerable:
            target = retrieval_qrels(item)
            if isinstance(target, str):
                row.unscored["retrieval"] = target
            else:
                grades, chunk_group = target
                qrels[item.id], groups[item.id] = grades, chunk_group
                runs["candidates"][item.id] = layers["candidates"]
                if has_context:
                    runs["context"][item.id] = layers["context"]
                found = {layer: {chunk_group[c] for c in ids if c in chunk_group} for layer, ids in layers.items()}
                if has_context and not set(grades) - found["context"]:
                    evidence_in_context.add(item.id)
                if set(grades) - found["candidates"]:
                    row.attribution.append("retrieval_miss")
                elif has_context and set(grades) - found["context"]:
                    row.attribution.append("context_cut")
                points = [k for k in item.key_points if k.evidence_ids]
                if points and has_context:
                    in_context = {e.evidence_id for e in item.evidence
                                  if set(e.chunk_ids) & set(layers["context"])}
                    row.values["context/key_point_coverage"] = sum(
                        bool(set(k.evidence_ids) & in_context) for k in points) / len(points)
            if has_context and trace.is_refusal():
                row.attribution.append("false_refusal")
        else:
            row.values["unanswerable/retrieved"] = float(len(layers["candidates"]))
            if has_context:
                refused = trace.is_refusal()
                row.values["unanswerable/correct_refusal"] = 1.0 if refused else 0.0
                if not refused:
                    row.attribution.append("false_answer")
        row.values["success"] = 0.0 if trace.error else 1.0
        if trace.error:
            problems["system error"] += 1
            row.problems.append(f"system reported: {trace.error[:120]}")
    for layer in LAYERS:
        scored = retrieval_metrics({q: qrels[q] for q in runs[layer]}, runs[layer], ks,
                                   groups={q: groups[q] for q in runs[layer]},
                                   precision_denominator=manifest.settings.precision_denominator)
        for item_id, values in scored.items():
            for name, value in values.items():
                if value is None:
                    rows[item_id].unscored[f"{layer}/{name}"] = "nothing returned: precision over returned is undefined"
                else:
                    rows[item_id].values[f"{layer}/{name}"] = float(value)
        for item_id in qrels:
            if layer == "context" and item_id not in runs["context"] and item_id in traces:
                for k in ks:
                    for metric in RETRIEVAL:
                        rows[item_id].unscored[f"context/{metric}@{k}"] = "a TREC run has no final context"
    answered = {i: t for i, t in traces.items() if not t.trec}
    judge = score_judged(workspace, rows, items, answered, chunk_texts, evidence_in_context)
    ordered = [rows[i.id] for i in items]
    summary = summarize(ordered, items, traces, manifest, problems)
    summary.judge = judge
    summary.layers["generation"] = judge.status
    atomic_write_bytes(Path(folder) / SCORES, jsonl_bytes(r.model_dump(mode="json") for r in ordered))
    summary.write(Path(folder) / SUMMARY)
    return summary
