"""End to end: warm-up calls out of every latency stage but in the tokens and cost; each item's own
latency, tokens and cost (`ItemEndToEnd`) priced by the one rule the run's cost uses, unknown never 0."""

from __future__ import annotations

import json

import pytest

from evalrun.records import LeakageGate, RunManifest, RunSettings, Trace, read_run
from evalrun.runner import run
from evalrun.scoring.summary import end_to_end
from tests.support import targets


def _manifest(**settings) -> RunManifest:
    return RunManifest(dataset="d", version="v1", content_sha256="x", ref="d@v1", target="t",
                       leakage_gate=LeakageGate(status="clean"), started_at="2025-01-01T00:00:00+00:00",
                       settings=RunSettings(**settings))


def _trace(item_id: str, total: float, **usage) -> Trace:
    return Trace(item_id=item_id, question="?", latency_ms={"retrieval": total / 2, "total": total},
                 usage=usage or None)


def test_warm_up_calls_are_in_no_latency_stage_but_are_paid():
    traces = {"a": _trace("a", 16500.0, prompt_tokens=1000, completion_tokens=100),
              "b": _trace("b", 100.0, prompt_tokens=1000, completion_tokens=100),
              "c": _trace("c", 300.0, prompt_tokens=1000, completion_tokens=100)}
    e2e = end_to_end(traces, _manifest(price_input=1.0, price_output=4.0), failed_ms={"d": 60000.0, "e": 50.0},
                     warmup={"a", "d"})
    assert e2e.latency_ms["total"].n == 2 and e2e.latency_ms["total"].max == 300.0
    assert e2e.latency_ms["retrieval"].max == 150.0                  # the warm-up's stages too are left out
    assert e2e.latency_ms["failed calls"].n == 1 and e2e.latency_ms["failed calls"].max == 50.0
    assert e2e.warmup_calls == 2 and e2e.warmup_ms.n == 2 and e2e.warmup_ms.max == 60000.0
    assert e2e.warmup_ms.p50 == (16500.0 + 60000.0) / 2
    assert e2e.system_tokens == {"prompt_tokens": 3000, "completion_tokens": 300}   # a warm-up call is paid
    assert e2e.system_cost == pytest.approx(3 * (1000 * 1.0 + 100 * 4.0) / 1e6)


def test_every_call_warm_up_leaves_the_latency_empty_not_filled():
    traces = {"a": _trace("a", 900.0), "b": _trace("b", 1200.0)}
    e2e = end_to_end(traces, _manifest(), warmup={"a", "b"})
    assert e2e.latency_ms == {} and e2e.warmup_calls == 2 and e2e.warmup_ms.max == 1200.0


def test_no_warm_up_is_as_before():
    e2e = end_to_end({"a": _trace("a", 900.0)}, _manifest(), failed_ms={"b": 10.0})
    assert e2e.latency_ms["total"].n == 1 and e2e.latency_ms["failed calls"].n == 1
    assert (e2e.warmup_calls, e2e.warmup_ms) == (0, None)


def test_each_items_latency_tokens_and_cost(released, tmp_path):
    usage = {"t-1": {"prompt_tokens": 100, "completion_tokens": 10},               # priced
             "t-2": {"prompt_tokens": 100, "completion_tokens": 10, "cost": 0.5},  # its own cost
             "t-3": None,                                                           # not reported
             "t-4": {"prompt_tokens": -5, "completion_tokens": 10},                 # no count: a problem
             "t-5": {"cost": 0.25}}                                                 # a cost, no tokens
    lines = []
    for item_id, question in (("t-1", "LG-4031 是什么意思？"),
                              ("t-2", "What does version 3.2 change about the upstream timeout?"),
                              ("t-3", "默认每分钟可以发多少次请求？"), ("t-4", "Who can run the upgrade command?"),
                              ("t-5", "Does Lumen support SAML single sign-on?")):
        trace = {key: value for key, value in targets.perfect(question).items() if key != "usage"}
        if usage[item_id] is not None:
            trace["usage"] = usage[item_id]
        lines.append(json.dumps({"item_id": item_id, **trace}) + "\n")
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    folder = run(released.workspace, ref="faq@v1", traces=path, out=tmp_path / "run",
                 settings=RunSettings(price_input=1.0, price_output=4.0))
    done = read_run(folder)
    items = {row.item_id: row.end_to_end for row in done.scores}
    assert all(e.latency_ms == 25.0 and not e.warmup for e in items.values())   # perfect's latency_ms.total
    assert (items["t-1"].tokens, items["t-1"].cost) == (110, pytest.approx((100 * 1.0 + 10 * 4.0) / 1e6))
    assert (items["t-2"].tokens, items["t-2"].cost) == (110, 0.5)
    assert (items["t-3"].tokens, items["t-3"].cost) == (None, None)      # unknown, not 0 (nothing to price)
    assert (items["t-4"].tokens, items["t-4"].cost) == (None, None)      # its usage is a problem
    assert (items["t-5"].tokens, items["t-5"].cost) == (None, 0.25)
    # the run's cost is the sum of the items' known costs: one pricing rule
    assert done.summary.end_to_end.system_cost == pytest.approx(sum(e.cost for e in items.values() if e.cost))
