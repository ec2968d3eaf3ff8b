"""The run's summary: every metric overall and per subset, what the context lost, end to end,
attribution."""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Collection

import numpy as np

from curate import EvalItem, now
from evalrun.records import (
    EndToEnd,
    ItemEndToEnd,
    ItemScores,
    LatencySummary,
    RunManifest,
    RunRef,
    RunSettings,
    RunSummary,
    Trace,
    TraceRecord,
    Usage,
)
from evalrun.scoring.aggregate import aggregate

RETRIEVAL = ("hit_rate", "recall", "precision", "mrr", "ndcg")
SUBSET_FIELDS = ("difficulty", "qtype", "source", "split")
SCOPE_FIELDS = ("asker_group", "asker_role", "as_of")
"""Subsets by scope, reported when any item sets the field: each asker group (an item with two groups
is in both), each role, each moment."""
NOT_NAMED, NO_GROUP, LATEST = "(not named)", "(no group)", "(latest)"


def percentiles(values: list[float]) -> LatencySummary | None:
    """Return n, p50, p95 and max of some latencies (None when there are none).

    >>> percentiles([10.0, 20.0, 30.0]).p50
    20.0
    """
    if not values:
        return None
    data = np.asarray(values, dtype=float)
    return LatencySummary(n=len(values), p50=float(np.percentile(data, 50)), p95=float(np.percentile(data, 95)),
                          max=float(data.max()))


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")   # a date moment, as curate stores one


def scope_labels(item: EvalItem, fields: Collection[str]) -> list[str]:
    """Return the scope subsets an item is in, of the `fields` (SCOPE_FIELDS) reported: each of its asker
    groups (NO_GROUP for [], NOT_NAMED for no asker), its role, its moment (LATEST when none).

    >>> item = EvalItem(id="q", question="?", language="en", source="human", asker_groups=["hr", "staff"])
    >>> scope_labels(item, SCOPE_FIELDS)
    ['asker_group=hr', 'asker_group=staff', 'asker_role=none', 'as_of=(latest)']
    """
    labels = []
    if "asker_group" in fields:
        groups = [NOT_NAMED] if item.asker_groups is None else item.asker_groups or [NO_GROUP]
        labels += [f"asker_group={group}" for group in dict.fromkeys(groups)]
    if "asker_role" in fields:
        labels.append(f"asker_role={item.asker_role or 'none'}")
    if "as_of" in fields:
        labels.append(f"as_of={moment_label(item.as_of)}")
    return labels


@functools.lru_cache(maxsize=1024)   # a run's items ask at a few moments
def moment_label(as_of: str | None) -> str:
    """Return the subset a moment falls in: a version label as it is, a date by its year (a log's questions
    each asked on their own day would make a subset a day), LATEST when none.

    >>> moment_label("2026"), moment_label("2026-03-01"), moment_label(None)
    ('2026', 'dates in 2026', '(latest)')
    """
    if as_of is None:
        return LATEST
    return f"dates in {as_of[:4]}" if _DATE.fullmatch(as_of) else as_of


def subsets_of(items: list[EvalItem], apart: dict[str, str] | None = None) -> dict[str, list[str]]:
    """Return {"field=value": [item ids]} for difficulty, qtype, source, split and every tag, the scope
    subsets (`scope_labels`) when any item names an asker, a role or a moment, and {"apart=<reason>":
    [item ids]} for the items scored apart (`apart`: item id -> reason), which are in no other subset."""
    apart = apart or {}
    scope = [name for name, attribute in zip(SCOPE_FIELDS, ("asker_groups", "asker_role", "as_of"))
             if any(getattr(item, attribute) is not None for item in items)]
    subsets: dict[str, list[str]] = {}
    for item in items:
        if item.id in apart:
            subsets.setdefault(f"apart={apart[item.id]}", []).append(item.id)
            continue
        for field_name in SUBSET_FIELDS:
            subsets.setdefault(f"{field_name}={getattr(item, field_name) or 'none'}", []).append(item.id)
        for tag in item.tags:
            subsets.setdefault(f"tag={tag}", []).append(item.id)
        for label in scope_labels(item, scope):
            subsets.setdefault(label, []).append(item.id)
    return subsets


def usage_cost(usage: Usage, settings: RunSettings) -> float | None:
    """Return the USD one trace's usage cost: its own cost, else its reported tokens at the run's prices
    (per million); None when unknown: a usage that is no count or cost, no cost and no tokens reported,
    or no prices given. The one pricing rule of the run's cost and of each item's.

    >>> usage_cost(Usage(prompt_tokens=1000, completion_tokens=100), RunSettings(price_input=1.0, price_output=4.0))
    0.0014
    >>> print(usage_cost(Usage(prompt_tokens=1000, completion_tokens=100), RunSettings()))
    None
    """
    if usage.problem:
        return None
    if usage.cost is not None:
        return usage.cost
    if usage.reported and settings.price_input is not None and settings.price_output is not None:
        return (usage.prompt_tokens * settings.price_input + usage.completion_tokens * settings.price_output) / 1e6
    return None


def usage_tokens(usage: Usage) -> int | None:
    """Return one trace's prompt plus completion tokens; None when it reported none or its usage is no count.

    >>> usage_tokens(Usage(prompt_tokens=100, completion_tokens=10)), usage_tokens(Usage())
    (110, None)
    """
    if usage.problem or not usage.reported:
        return None
    return usage.prompt_tokens + usage.completion_tokens


def item_end_to_end(record: TraceRecord | None, trace: Trace | None, settings: RunSettings) -> ItemEndToEnd | None:
    """Return one item's latency, tokens and cost: from its `trace` as scored, or, when the call failed
    (`trace` None), the failed call's time and unknown tokens and cost; None when the item has no
    trace record, or is a line of a TREC run (no latency, no usage).

    >>> record = TraceRecord(item_id="a", error="target timed out after 1 s", elapsed_ms=1000.0, warmup=True)
    >>> item_end_to_end(record, None, RunSettings())
    ItemEndToEnd(latency_ms=1000.0, warmup=True, tokens=None, cost=None)
    """
    if record is None or record.kind == "trec":
        return None
    if trace is None:
        return ItemEndToEnd(latency_ms=record.elapsed_ms, warmup=record.warmup)
    return ItemEndToEnd(latency_ms=trace.latency_ms.get("total"), warmup=record.warmup,
                        tokens=usage_tokens(trace.usage), cost=usage_cost(trace.usage, settings))


def end_to_end(traces: dict[str, Trace], manifest: RunManifest, failed_ms: dict[str, float] | None = None,
               warmup: Collection[str] = ()) -> EndToEnd:
    """Return latency per stage, the system's tokens and its cost (from the traces, else the prices), over
    the traces whose usage can be counted (the others are counted apart, `usage_left_out`).

    `traces`: item id -> trace that scored; `failed_ms`: item id -> how long a call that failed took
    (timeouts included), reported as its own stage so that the system's latency neither hides nor
    mixes them; `warmup`: the ids of the warm-up calls' items (failed ones too), whose latencies are
    in no stage but counted and summarised apart (`warmup_calls`, `warmup_ms`); their tokens and cost
    count (a warm-up call is paid)."""
    stages: dict[str, list[float]] = {}
    warm_ms: list[float] = []
    for item_id, ms in (failed_ms or {}).items():
        (warm_ms if item_id in warmup else stages.setdefault("failed calls", [])).append(ms)
    tokens: Counter = Counter()
    cost, cost_known = 0.0, False
    left_out = reported = 0
    for item_id, trace in traces.items():
        if item_id in warmup:   # none of its stages is the system's latency; its total is the warm-up's
            if "total" in trace.latency_ms:
                warm_ms.append(trace.latency_ms["total"])
        else:
            for stage, ms in trace.latency_ms.items():
                stages.setdefault(stage, []).append(ms)
        if trace.usage.problem:   # named in the item's problems; a negative or NaN cost is in no sum
            left_out += 1
            continue
        reported += trace.usage.reported
        tokens["prompt_tokens"] += trace.usage.prompt_tokens
        tokens["completion_tokens"] += trace.usage.completion_tokens
        priced = usage_cost(trace.usage, manifest.settings)
        if priced is not None:
            cost, cost_known = cost + priced, True
    # a cost is known when a trace said it or reported tokens to price; none said: unknown, never 0
    return EndToEnd(latency_ms={stage: percentiles(v) for stage, v in sorted(stages.items())},
                    system_tokens=dict(tokens), system_cost=cost if cost_known else None, usage_left_out=left_out,
                    usage_reported=reported, warmup_calls=len(warmup), warmup_ms=percentiles(warm_ms))


def context_loss(rows: list[ItemScores], ks) -> dict[str, float]:
    """Return {metric@K: mean over items of candidates minus context}, over the items that have both
    values (a trace without a context, a TREC run, has no loss to measure; means over different
    items would be no loss at all).

    >>> rows = [ItemScores(item_id="a", answerable=True, values={"candidates/recall@1": 1.0, "context/recall@1": 0.0}),
    ...         ItemScores(item_id="b", answerable=True, values={"candidates/recall@1": 0.0})]
    >>> context_loss(rows, [1])["recall@1"]
    1.0
    """
    loss = {}
    for k in ks:
        for metric in RETRIEVAL:
            before, after = f"candidates/{metric}@{k}", f"context/{metric}@{k}"
            pairs = [(row.values[before], row.values[after]) for row in rows
                     if before in row.values and after in row.values]
            if pairs:
                loss[f"{metric}@{k}"] = math.fsum(b - a for b, a in pairs) / len(pairs)
    return loss


APART = {"evidence in documents the leakage check excluded": "excluded evidence"}


def apart_label(reason: str) -> str:
    """Return the short label of a reason for scoring an item apart."""
    return APART.get(reason.split(":")[0], reason.split(":")[0])


def summarize(rows: list[ItemScores], items: list[EvalItem], traces: dict[str, Trace], manifest: RunManifest,
              problems: Counter, failed_ms: dict[str, float] | None = None,
              warmup: Collection[str] = ()) -> RunSummary:
    """Return the run's summary: every metric overall and per subset, losses, end to end (`failed_ms`
    and `warmup` as `end_to_end` takes them), attribution.

    "all" and every subset hold the items not scored apart; those are summarised under their
    own label ("apart=excluded evidence")."""
    metrics = sorted({name for row in rows for name in list(row.values) + list(row.unscored)})
    apart = {row.item_id: apart_label(row.apart) for row in rows if row.apart}
    table = aggregate(rows, metrics, subsets_of(items, apart), overall=[r.item_id for r in rows if not r.apart])
    loss = context_loss([row for row in rows if not row.apart], manifest.settings.ks)
    return RunSummary(
        run=RunRef(dataset=manifest.dataset, version=manifest.version, content_sha256=manifest.content_sha256,
                   kb_snapshot=manifest.kb_snapshot, target=manifest.target, diagnostic=manifest.diagnostic),
        scored_at=now(), items=len(items), answerable=sum(i.answerable for i in items),
        unanswerable=sum(not i.answerable for i in items), leakage_gate=manifest.leakage_gate,
        problems=dict(problems), unscored_items=len({row.item_id for row in rows if row.unscored}),
        failed_items=dict(Counter(row.failed.split(":")[0] for row in rows if row.failed)),
        apart={label: [row.item_id for row in rows if row.apart and apart_label(row.apart) == label]
               for label in sorted(set(apart.values()))},
        metrics=table, context_loss=loss, end_to_end=end_to_end(traces, manifest, failed_ms, warmup),
        attribution=dict(Counter(a for row in rows for a in row.attribution)),
        attribution_lexical=dict(Counter(a for row in rows for a in row.lexical_attribution)),
        layers={"retrieval": "scored", "generation": None})
