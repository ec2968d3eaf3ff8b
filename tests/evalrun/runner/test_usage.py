"""Usage and cost, from the system under test (its traces) and from the judge (its replies), are checked
before they are summed: a negative, NaN, infinite or non-numeric count or cost is that item's problem,
named with its field, counted, and in no sum; never a traceback."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from evalrun.cli.main import cli as evalrun_cli
from evalrun.records import read_run
from evalrun.runner import run
from tests.evalrun.scoring.test_generation import _reply
from tests.support import targets
from tests.support.servers import ScriptedServer


def _traces(tmp_path, usage: dict[str, object]) -> str:
    """Write a traces file of the perfect system for faq@v1's five items, with each item's usage as given."""
    lines = []
    for item_id, question in (("t-1", "LG-4031 是什么意思？"),
                              ("t-2", "What does version 3.2 change about the upstream timeout?"),
                              ("t-3", "默认每分钟可以发多少次请求？"), ("t-4", "Who can run the upgrade command?"),
                              ("t-5", "Does Lumen support SAML single sign-on?")):
        trace = targets.perfect(question)
        trace.pop("usage")
        if item_id in usage:
            trace["usage"] = usage[item_id]
        lines.append(json.dumps({"item_id": item_id, **trace}))
    path = tmp_path / "traces.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_a_traces_negative_or_nan_cost_is_named_and_never_summed(released, tmp_path, monkeypatch):
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", "http://127.0.0.1:9/v1")    # no judge: the system's usage only
    traces = _traces(tmp_path, {
        "t-1": {"prompt_tokens": 100, "completion_tokens": 10, "cost": 0.5},
        "t-2": {"prompt_tokens": 100, "completion_tokens": 10, "cost": -25},
        "t-3": {"prompt_tokens": 100, "completion_tokens": 10, "cost": "NaN"},   # pydantic would read it as nan
        "t-4": {"prompt_tokens": -5, "completion_tokens": "lots"},
        "t-5": "a lot"})
    folder = tmp_path / "run"
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["run", "--dataset", "faq@v1", "--traces", traces,
                                                              "--out", str(folder), "--workspace",
                                                              str(released.workspace.root)])
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    summary = read_run(folder).summary
    e2e = summary.end_to_end
    assert e2e.system_cost == 0.5 and e2e.system_tokens == {"prompt_tokens": 100, "completion_tokens": 10}
    assert e2e.usage_left_out == 4 and summary.problems["invalid usage"] == 4
    out = " ".join(result.stdout.split())
    assert "system cost: 0.5000 USD (4 items' usage left out: no count or cost, see --failures)" in out
    # no -25 anywhere after the cost (paths left out: a temporary folder may be named pytest-256)
    assert "-25" not in re.sub(r"/\S+", "PATH", out.split("system cost:")[1])
    problems = {r.item_id: r.problems for r in read_run(folder).scores}
    assert problems["t-1"] == []
    assert problems["t-2"] == ["usage left out of the system's tokens and cost: usage.cost -25 is negative"]
    assert problems["t-3"] == ["usage left out of the system's tokens and cost: usage.cost 'NaN' is not a number"]
    assert problems["t-4"] == ["usage left out of the system's tokens and cost: usage.prompt_tokens -5 is negative; "
                               "usage.completion_tokens 'lots' is not a number"]
    assert problems["t-5"] == ["usage left out of the system's tokens and cost: usage must be an object, got str"]
    # the items still score: retrieval of t-2..t-4 is whole
    assert summary.metrics["all"]["candidates/recall@5"].mean == 1.0 and summary.failed_items == {}
    listed = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["show", str(folder), "--failures"]).stdout
    assert "t-2" in listed and "usage.cost -25 is negative" in listed
    # compared, the cost per item is over the one item whose usage could be counted, and said so
    from evalrun.compare.comparison import compare_runs
    from evalrun.records import scored_run
    comparison = compare_runs(scored_run(folder), scored_run(folder))
    assert comparison.warnings[:1] == ["BASE: 4 items' usage is no count or cost (negative, NaN, text): the system's "
                                       "tokens and cost per item are over the other 1 items"]
    cost = next(t for t in comparison.trade_offs if t.measure == "system cost per item (USD)")
    assert (cost.base, cost.new) == (0.5, 0.5)


def test_a_judges_nan_usage_is_named_and_never_summed(released, tmp_path, monkeypatch):
    # NaN in the judge's usage was an internal error (exit 3) when the verdict was cached
    def usage(messages):
        text = messages[-1]["content"]
        return {"prompt_tokens": float("nan"), "completion_tokens": 5} if "LG-4031" in text else \
            {"prompt_tokens": 10, "completion_tokens": 5}

    server = ScriptedServer(_reply, usage=usage)
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", server.base_url)
    try:
        result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
            "run", "--dataset", "faq@v1", "--target", "tests.support.targets:perfect", "--out", str(tmp_path / "run"),
            "--workspace", str(released.workspace.root)])
    finally:
        server.close()
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    folder = tmp_path / "run"
    summary = read_run(folder).summary
    judge = summary.judge
    rows = {r.item_id: r for r in read_run(folder).scores}
    left_out = [i for i, r in rows.items() if r.problems]
    assert left_out == ["t-1"] and summary.problems == {"invalid judge usage": 1}
    assert rows["t-1"].problems == [f"the judge's usage left out: prompt_tokens nan is not a whole number "
                                    f"({judge.usage_left_out} of the judge's answers about this item)"]
    assert judge.usage_left_out > 0 and judge.requests == server.requests
    counted = judge.requests - judge.usage_left_out
    assert (judge.prompt_tokens, judge.completion_tokens) == (10 * counted, 5 * counted)
    assert "generation/answer_relevance" in rows["t-1"].values   # the verdicts stand
    assert f"{judge.usage_left_out} replies' usage left out" in " ".join(result.stdout.split())


def _run_traces(released, tmp_path, usage, *options):
    folder = tmp_path / "run"
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["run", "--dataset", "faq@v1", "--traces",
                                                              _traces(tmp_path, usage), "--out", str(folder),
                                                              "--workspace", str(released.workspace.root), *options])
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return read_run(folder).summary.end_to_end, " ".join(result.stdout.split())


def test_a_system_that_reports_no_tokens_has_unknown_tokens_not_zero(released, tmp_path, monkeypatch):
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", "http://127.0.0.1:9/v1")
    e2e, out = _run_traces(released, tmp_path, {}, "--price-input", "1", "--price-output", "4")
    assert e2e.usage_reported == 0 and e2e.system_cost is None     # nothing to price: unknown, not 0 USD
    assert "system tokens: not reported by the system (unknown, not 0); system cost: unknown" in out
    assert "{'" not in out                                           # no Python dict printed


def test_tokens_reported_by_some_items_say_how_many_and_a_free_system_costs_zero(released, tmp_path, monkeypatch):
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", "http://127.0.0.1:9/v1")
    e2e, out = _run_traces(released, tmp_path, {"t-1": {"prompt_tokens": 1200, "completion_tokens": 30, "cost": 0},
                                                "t-2": {"prompt_tokens": 800, "completion_tokens": 20, "cost": 0}})
    assert e2e.usage_reported == 2 and e2e.system_cost == 0.0       # a local model that says it is free
    assert "system tokens: 2,000 prompt + 50 completion (reported by 2 of 5 items); system cost: 0.0000 USD" in out
