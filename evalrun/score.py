"""Scoring a run folder: retrieval on the candidates and on the final context, unanswerable items
apart, end to end, failure attribution; per item (scores.jsonl) and aggregated (summary.json)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np

from curate.checks.clusters import Edge, clusters
from curate.errors import InputError
from curate.fileio import atomic_write_json, jsonl_bytes, atomic_write_bytes
from curate.kb import SnapshotStore
from curate.release import Releases, load_release
from curate.schema import EvalItem, now
from curate.workspace import Workspace

from .aggregate import aggregate
from .runner import TRACES, read_traces
from .trace import Trace, trace_from

LAYERS = ("candidates", "context")
RETRIEVAL = ("hit_rate", "recall", "precision", "mrr", "ndcg")
GENERATION = ("generation/correctness", "generation/completeness", "generation/key_points_contradicted",
              "generation/faithfulness", "generation/hallucination_rate", "generation/answer_relevance")
SUBSET_FIELDS = ("difficulty", "qtype", "source", "split")


def evidence_groups(item: EvalItem) -> tuple[dict[str, int], dict[str, str]]:
    """Return ({group: grade}, {chunk id: group}) of an item's relevant evidence: evidence that shares a
    chunk is one group (its best grade), and every chunk of a group (copies included) finds it."""
    relevant = [e for e in item.evidence if e.grade > 0 and e.chunk_ids]
    edges = [Edge(a.evidence_id, b.evidence_id, "chunk", 1.0) for n, a in enumerate(relevant)
             for b in relevant[n + 1:] if set(a.chunk_ids) & set(b.chunk_ids)]
    group_of = {e.evidence_id: e.evidence_id for e in relevant}
    for cluster in clusters(edges):
        for member in cluster.members:
            group_of[member] = cluster.members[0]
    grades: dict[str, int] = {}
    chunk_group: dict[str, str] = {}
    for evidence in relevant:
        group = group_of[evidence.evidence_id]
        grades[group] = max(grades.get(group, 0), evidence.grade)
        for chunk_id in evidence.chunk_ids:
            chunk_group.setdefault(chunk_id, group)
    return grades, chunk_group


def _refused(trace: Trace) -> bool:
    return bool(trace.refused) or not (trace.answer or "").strip()


def _percentiles(values: list[float]) -> dict | None:
    if not values:
        return None
    data = np.asarray(values)
    return {"n": len(values), "p50": round(float(np.percentile(data, 50)), 3),
            "p95": round(float(np.percentile(data, 95)), 3), "max": round(float(data.max()), 3)}


def score_run(workspace: Workspace, folder: Path) -> dict:
    """Score every trace of a run folder; write scores.jsonl and summary.json; return the summary."""
    from .metrics import retrieval_metrics
    folder = Path(folder)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    release_manifest, items = load_release(Releases(workspace, manifest["dataset"]).path(manifest["version"]))
    ks = tuple(manifest["settings"]["k"])
    snapshot_chunks = SnapshotStore(workspace).chunks(manifest["kb_snapshot"])
    known = {c.chunk_id: c.doc_id for c in snapshot_chunks}
    chunk_texts = {c.chunk_id: c.text for c in snapshot_chunks}
    evidence_in_context: set[str] = set()
    excluded = set(manifest["leakage_gate"].get("excluded_docs") or [])
    records = read_traces(folder / TRACES)
    rows, traces = [], {}
    qrels, groups, runs = {}, {}, {layer: {} for layer in LAYERS}
    problems: Counter = Counter()
    for item in items:
        row = {"item_id": item.id, "answerable": item.answerable, "values": {}, "unscored": {}, "attribution": [],
               "problems": []}
        rows.append(row)
        record = records.get(item.id)
        if record is None or "error" in record:
            reason = "no trace" if record is None else record["error"]
            row["problems"].append(reason)
            problems[reason.split(":")[0]] += 1
            row["values"]["success"] = 0.0
            continue
        try:
            trace = trace_from(record["trace"], item_id=item.id, question=item.question, where=f"trace of {item.id}")
        except InputError as exc:
            row["problems"].append(f"bad trace: {exc}")
            problems["bad trace"] += 1
            row["values"]["success"] = 0.0
            continue
        traces[item.id] = trace
        unknown = [p.chunk_id for p in trace.candidates + trace.context if p.chunk_id not in known]
        if unknown:
            row["problems"].append(f"unknown chunk ids: {', '.join(sorted(set(unknown))[:5])}")
            problems["unknown chunk id"] += 1
        layers = {"candidates": [p.chunk_id for p in trace.candidates if known.get(p.chunk_id) not in excluded],
                  "context": [p.chunk_id for p in trace.context if known.get(p.chunk_id) not in excluded]}
        has_context = not record["trace"].get("trec")
        if item.answerable:
            grades, chunk_group = evidence_groups(item)
            if not grades:
                row["unscored"]["retrieval"] = "no relevant evidence labelled"
            else:
                qrels[item.id], groups[item.id] = grades, chunk_group
                runs["candidates"][item.id] = layers["candidates"]
                if has_context:
                    runs["context"][item.id] = layers["context"]
                found = {layer: {chunk_group[c] for c in ids if c in chunk_group} for layer, ids in layers.items()}
                if has_context and not set(grades) - found["context"]:
                    evidence_in_context.add(item.id)
                if set(grades) - found["candidates"]:
                    row["attribution"].append("retrieval_miss")
                elif has_context and set(grades) - found["context"]:
                    row["attribution"].append("context_cut")
                points = [k for k in item.key_points if k.evidence_ids]
                if points and has_context:
                    in_context = {e.evidence_id for e in item.evidence
                                  if set(e.chunk_ids) & set(layers["context"])}
                    row["values"]["context/key_point_coverage"] = sum(
                        bool(set(k.evidence_ids) & in_context) for k in points) / len(points)
            if has_context and _refused(trace):
                row["attribution"].append("false_refusal")
        else:
            row["values"]["unanswerable/retrieved"] = float(len(layers["candidates"]))
            if has_context:
                refused = _refused(trace)
                row["values"]["unanswerable/correct_refusal"] = 1.0 if refused else 0.0
                if not refused:
                    row["attribution"].append("false_answer")
        row["values"]["success"] = 0.0 if trace.error else 1.0
        if trace.error:
            problems["system error"] += 1
            row["problems"].append(f"system reported: {trace.error[:120]}")
    by_id = {row["item_id"]: row for row in rows}
    for layer in LAYERS:
        scored = retrieval_metrics({q: qrels[q] for q in runs[layer]}, runs[layer], ks,
                                   groups={q: groups[q] for q in runs[layer]},
                                   precision_denominator=manifest["settings"]["precision_denominator"])
        for item_id, values in scored.items():
            for name, value in values.items():
                if value is None:
                    by_id[item_id]["unscored"][f"{layer}/{name}"] = "nothing returned: precision over returned is undefined"
                else:
                    by_id[item_id]["values"][f"{layer}/{name}"] = float(value)
        for item_id in qrels:
            if layer == "context" and item_id not in runs["context"] and item_id in traces:
                for k in ks:
                    for metric in RETRIEVAL:
                        by_id[item_id]["unscored"][f"context/{metric}@{k}"] = "a TREC run has no final context"
    judge_record = _score_generation(workspace, rows, items, traces, records, chunk_texts, evidence_in_context)
    summary = summarize(rows, items, traces, manifest, ks, problems)
    summary["judge"] = judge_record
    summary["layers"]["generation"] = judge_record["status"]
    atomic_write_bytes(folder / "scores.jsonl", jsonl_bytes(rows))
    atomic_write_json(folder / "summary.json", summary)
    return summary


def _judge_unreachable(config) -> str | None:
    """Return why the judge endpoint cannot be reached, or None when it answers at all."""
    import httpx
    try:
        httpx.get(config.base_url.rstrip("/") + "/models", timeout=3.0)
        return None
    except httpx.HTTPError as exc:
        return f"judge endpoint {config.base_url} not reachable ({type(exc).__name__})"


def _score_generation(workspace: Workspace, rows: list[dict], items: list[EvalItem], traces: dict[str, Trace],
                      records: dict, chunk_texts: dict[str, str], evidence_in_context: set[str]) -> dict:
    """Score the generation layer through the judge into `rows`; return what the judge did (or why not)."""
    from curate.judge.client import Judge
    from curate.judge.config import resolve

    from .generation import score_generation, versions
    answered = {i: t for i, t in traces.items() if not records[i]["trace"].get("trec")}
    try:
        config = resolve(workspace)
        reason = _judge_unreachable(config)
    except InputError as exc:
        config, reason = None, str(exc)
    by_id = {row["item_id"]: row for row in rows}
    if reason is not None:
        for item in items:
            trace = answered.get(item.id)
            if item.answerable and trace is not None and not trace.error and not _refused(trace):
                for name in GENERATION:
                    by_id[item.id]["unscored"][name] = reason
        return {"status": f"unscored: {reason}", "prompt_versions": versions()}
    judge = Judge(config, workspace.root / "cache" / "judge")
    scored = score_generation({i.id: i for i in items}, answered, chunk_texts, judge, evidence_in_context)
    for item_id, result in scored.items():
        row = by_id[item_id]
        row["values"].update(result["values"])
        row["unscored"].update(result["unscored"])
        row["attribution"].extend(result["attribution"])
        row["generation"] = result["details"]
    stats = judge.stats
    return {"status": "scored", "config": config.public(), "prompt_versions": versions(),
            "requests": stats.requests, "cache_hits": stats.cache_hits, "prompt_tokens": stats.prompt_tokens,
            "completion_tokens": stats.completion_tokens, "cost": stats.cost, "unscored": dict(stats.unscored)}


def summarize(rows: list[dict], items: list[EvalItem], traces: dict[str, Trace], manifest: dict,
              ks: tuple[int, ...], problems: Counter) -> dict:
    """Return the run's summary: every metric overall and per subset, losses, end to end, attribution."""
    metrics = sorted({name for row in rows for name in list(row["values"]) + list(row["unscored"])})
    subsets: dict[str, list[str]] = {}
    for item in items:
        for field_name in SUBSET_FIELDS:
            subsets.setdefault(f"{field_name}={getattr(item, field_name) or 'none'}", []).append(item.id)
        for tag in item.tags:
            subsets.setdefault(f"tag={tag}", []).append(item.id)
    table = aggregate(rows, metrics, subsets)
    overall = table["all"]
    loss = {}
    for k in ks:
        for metric in RETRIEVAL:
            before, after = overall.get(f"candidates/{metric}@{k}"), overall.get(f"context/{metric}@{k}")
            if before and after and before["mean"] is not None and after["mean"] is not None:
                loss[f"{metric}@{k}"] = round(before["mean"] - after["mean"], 6)
    stages: dict[str, list[float]] = {}
    tokens = Counter()
    cost = 0.0
    prices = manifest["settings"].get("price_per_million_tokens") or {}
    for trace in traces.values():
        for stage, ms in trace.latency_ms.items():
            stages.setdefault(stage, []).append(ms)
        tokens["prompt_tokens"] += trace.usage.prompt_tokens
        tokens["completion_tokens"] += trace.usage.completion_tokens
        if trace.usage.cost is not None:
            cost += trace.usage.cost
        elif prices.get("input") is not None and prices.get("output") is not None:
            cost += (trace.usage.prompt_tokens * prices["input"] + trace.usage.completion_tokens * prices["output"]) / 1e6
    unscored_items = sorted({row["item_id"] for row in rows if row["unscored"]})
    return {
        "run": {k: manifest[k] for k in ("dataset", "version", "content_sha256", "kb_snapshot", "target", "diagnostic")},
        "scored_at": now(), "items": len(items),
        "answerable": sum(i.answerable for i in items), "unanswerable": sum(not i.answerable for i in items),
        "leakage_gate": manifest["leakage_gate"], "problems": dict(problems),
        "unscored_items": len(unscored_items),
        "metrics": table, "context_loss": loss,
        "end_to_end": {"latency_ms": {stage: _percentiles(v) for stage, v in sorted(stages.items())},
                       "system_tokens": dict(tokens), "system_cost": round(cost, 6) if cost else None},
        "attribution": dict(Counter(a for row in rows for a in row["attribution"])),
        "layers": {"retrieval": "scored", "generation": None},
    }
