"""The run's summary: every metric overall and per subset, what the context lost, end to end,
attribution."""

from __future__ import annotations

from collections import Counter

import numpy as np

from curate import EvalItem, now
from evalrun.records import (
    EndToEnd,
    ItemScores,
    LatencySummary,
    RunManifest,
    RunRef,
    RunSummary,
    Trace,
)
from evalrun.scoring.aggregate import aggregate

RETRIEVAL = ("hit_rate", "recall", "precision", "mrr", "ndcg")
SUBSET_FIELDS = ("difficulty", "qtype", "source", "split")


def percentiles(values: list[float]) -> LatencySummary | None:
    """Return n, p50, p95 and max of some latencies (None when there are none).

    >>> percentiles([10.0, 20.0, 30.0]).p50
    20.0
    """
    if not values:
        return None
    data = np.asarray(values)
    return LatencySummary(n=len(values), p50=round(float(np.percentile(data, 50)), 3),
                          p95=round(float(np.percentile(data, 95)), 3), max=round(float(data.max()), 3))


def subsets_of(items: list[EvalItem]) -> dict[str, list[str]]:
    """Return {"field=value": [item ids]} for difficulty, qtype, source, split and every tag."""
    subsets: dict[str, list[str]] = {}
    for item in items:
        for field_name in SUBSET_FIELDS:
            subsets.setdefault(f"{field_name}={getattr(item, field_name) or 'none'}", []).append(item.id)
        for tag in item.tags:
            subsets.setdefault(f"tag={tag}", []).append(item.id)
    return subsets


def end_to_end(traces: dict[str, Trace], manifest: RunManifest) -> EndToEnd:
    """Return latency per stage, the system's tokens and its cost (from the traces, else the prices)."""
    stages: dict[str, list[float]] = {}
    tokens: Counter = Counter()
    cost = 0.0
    settings = manifest.settings
    for trace in traces.values():
        for stage, ms in trace.latency_ms.items():
            stages.setdefault(stage, []).append(ms)
        tokens["prompt_tokens"] += trace.usage.prompt_tokens
        tokens["completion_tokens"] += trace.usage.completion_tokens
        if trace.usage.cost is not None:
            cost += trace.usage.cost
        elif settings.price_input is not None and settings.price_output is not None:
            cost += (trace.usage.prompt_tokens * settings.price_input
                     + trace.usage.completion_tokens * settings.price_output) / 1e6
    return EndToEnd(latency_ms={stage: percentiles(v) for stage, v in sorted(stages.items())},
                    system_tokens=dict(tokens), system_cost=round(cost, 6) if cost else None)


def summarize(rows: list[ItemScores], items: list[EvalItem], traces: dict[str, Trace], manifest: RunManifest,
              problems: Counter) -> RunSummary:
    """Return the run's summary: every metric overall and per subset, losses, end to end, attribution."""
    metrics = sorted({name for row in rows for name in list(row.values) + list(row.unscored)})
    table = aggregate(rows, metrics, subsets_of(items))
    overall = table["all"]
    loss = {}
    for k in manifest.settings.ks:
        for metric in RETRIEVAL:
            before, after = overall.get(f"candidates/{metric}@{k}"), overall.get(f"context/{metric}@{k}")
            if before and after and before.mean is not None and after.mean is not None:
                loss[f"{metric}@{k}"] = round(before.mean - after.mean, 6)
    return RunSummary(
        run=RunRef(dataset=manifest.dataset, version=manifest.version, content_sha256=manifest.content_sha256,
                   kb_snapshot=manifest.kb_snapshot, target=manifest.target, diagnostic=manifest.diagnostic),
        scored_at=now(), items=len(items), answerable=sum(i.answerable for i in items),
        unanswerable=sum(not i.answerable for i in items), leakage_gate=manifest.leakage_gate,
        problems=dict(problems), unscored_items=len({row.item_id for row in rows if row.unscored}),
        metrics=table, context_loss=loss, end_to_end=end_to_end(traces, manifest),
        attribution=dict(Counter(a for row in rows for a in row.attribution)),
        layers={"retrieval": "scored", "generation": None})
