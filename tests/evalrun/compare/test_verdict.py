"""The verdict of `evalrun compare`: a real difference in one primary metric is found and named at
n = 60; two runs drawn from one distribution read "no detectable difference" in at least 95% of 200
simulated pairs; and the verdict's lines say what a person deciding "ship it or not" needs.

The runs are built in memory as `evalrun run` would score them: per item a retrieval recall over one
to three evidence groups, a token F1 that depends on what retrieval found (an answer without its
evidence is rarely right), a refusal on unanswerable items, and the item's tokens, its cost (the
tokens priced) and its latency (longer for more tokens); both runs of a pair share each item's
difficulty, as two configurations of one system over one release do.

Holm's method holds the chance of any false "better" or "worse" at 5%, and no lower: over 600 more
null pairs (seeds 20000-20599) 571 read "no detectable difference" (95.2%), and 570 of 600 when every
metric is drawn independently. The 200 pairs below (seeds 0-199, the first ones, not chosen) read
194; a change that made the verdict claim more than its family-wise error would fail here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from curate import EvalItem
from evalrun.compare.comparison import compare_runs
from evalrun.records import (
    EndToEnd,
    ItemEndToEnd,
    ItemScores,
    JudgeAgreement,
    JudgeReport,
    LatencySummary,
    LeakageGate,
    Run,
    RunManifest,
    RunRef,
    RunSettings,
    RunSummary,
)
from evalrun.scoring.summary import percentiles

RESAMPLES = 2_000


def _items(n: int, unanswerable: int) -> list[EvalItem]:
    return [EvalItem(id=f"q{k:03d}", question=f"question {k}?", answerable=k >= unanswerable, language="zh",
                     source="human", difficulty=("easy", "medium", "hard")[k % 3]) for k in range(n)]


def simulated_run(name: str, items: list[EvalItem], hardness: np.ndarray, rng: np.random.Generator, *,
                  recall: float = 0.7, f1: float = 0.5, refusal: float = 0.8, latency_ms: float = 900.0,
                  tokens: float = 1500.0, judged: dict[str, float] | None = None,
                  agreement: dict[str, JudgeAgreement] | None = None, kb: str = "kb-1") -> Run:
    """Return a scored run of `items` drawn around the given rates, each item made harder by `hardness`
    (shared by both runs of a pair); `judged` adds judged 0/1 metrics at those rates."""
    rows, latencies = [], []
    for k, item in enumerate(items):
        values: dict[str, float] = {}
        if item.answerable:
            groups = 1 + k % 3
            p = float(np.clip(recall - hardness[k], 0.02, 0.98))
            found = float(rng.binomial(groups, p)) / groups
            values["context/recall@5"] = found
            values["lexical/f1"] = float(np.clip(rng.normal((f1 - hardness[k] / 2) * (0.3 + 0.7 * found), 0.15), 0, 1))
            for metric, rate in (judged or {}).items():
                values[metric] = float(rng.random() < np.clip(rate - hardness[k], 0.02, 0.98))
        else:
            values["unanswerable/correct_refusal"] = float(rng.random() < refusal)
        used = int(rng.normal(tokens, 150))
        ms = float(latency_ms * used / tokens * rng.lognormal(0, 0.3))
        latencies.append(ms)
        rows.append(ItemScores(item_id=item.id, answerable=item.answerable, values=values,
                               end_to_end=ItemEndToEnd(latency_ms=ms, warmup=False, tokens=used,
                                                       cost=used * 2.0 / 1e6)))
    gate = LeakageGate(status="clean", kb_snapshot=kb)
    manifest = RunManifest(dataset="d", version="v1", content_sha256="sha", ref="d@v1", kb_snapshot=kb,
                           target=name, settings=RunSettings(ks=[5]), judge={"model": "j"}, leakage_gate=gate,
                           started_at="2026-12-01T00:00:00Z")
    total = sum(r.end_to_end.tokens for r in rows)
    summary = RunSummary.model_construct(
        run=RunRef(dataset="d", version="v1", content_sha256="sha", kb_snapshot=kb, target=name),
        items=len(items), answerable=sum(i.answerable for i in items), leakage_gate=gate, metrics={},
        end_to_end=EndToEnd(latency_ms={"total": percentiles(latencies)}, system_tokens={"prompt_tokens": total},
                            system_cost=total * 2.0 / 1e6, usage_reported=len(items)),
        judge=JudgeReport(status="scored", repeats=2, agreement=agreement) if agreement else None)
    return Run(Path(name), manifest, {}, rows, summary)


def pair(n: int, seed: int, *, new: dict | None = None, base: dict | None = None, unanswerable: int = 10):
    """Return (items, BASE, NEW) of one simulated pair: NEW drawn with the rates `new` changes."""
    rng = np.random.default_rng(seed)
    items = _items(n, unanswerable)
    hardness = rng.uniform(0, 0.4, size=n)
    return (items, simulated_run("base", items, hardness, rng, **(base or {})),
            simulated_run("new", items, hardness, rng, **(new or {})))


def test_a_real_difference_in_one_primary_metric_is_found_and_named_at_n_60():
    items, base, new = pair(60, 7, new={"recall": 0.95})
    comparison = compare_runs(base, new, items=items, resamples=RESAMPLES)
    verdict = comparison.verdict
    assert comparison.family == ["context/recall@5", "lexical/f1", "unanswerable/correct_refusal",
                                 "e2e/latency_p95", "e2e/cost_per_item"]
    assert verdict.outcome == "better" and verdict.improved == ["context/recall@5"], verdict.lines
    assert verdict.sentence == ("NEW is better: context/recall@5 improved significantly; no primary metric got "
                                "worse")
    recall = comparison.row("context/recall@5")
    assert recall.primary and recall.p_adjusted < 0.05 and recall.ci95[0] > 0
    line = verdict.changes[0]
    assert line.startswith("context/recall@5: ") and line.endswith(f"n {recall.n}: better") and "95% CI [+" in line
    assert "(Holm over 5)" in line
    assert all(line.endswith("no detectable change") for line in verdict.changes[1:])
    assert verdict.costs[0].startswith("Costs: tokens per item ") and "p95 latency" in verdict.costs[0]


def test_a_worse_and_a_mixed_change_are_named():
    items, base, new = pair(60, 11, new={"f1": 0.3})
    worse = compare_runs(base, new, items=items, resamples=RESAMPLES).verdict
    assert worse.outcome == "worse" and worse.worsened == ["lexical/f1"], worse.lines
    items, base, new = pair(60, 12, new={"recall": 0.95, "latency_ms": 1800.0})
    mixed = compare_runs(base, new, items=items, resamples=RESAMPLES).verdict
    assert mixed.outcome == "mixed", mixed.lines
    assert mixed.improved == ["context/recall@5"] and mixed.worsened == ["p95 latency"]
    assert mixed.sentence == "Mixed: context/recall@5 improved, but p95 latency got worse (all significant)"


def test_runs_from_one_distribution_read_no_detectable_difference_in_at_least_95_percent_of_200_pairs():
    outcomes = []
    for seed in range(200):
        items, base, new = pair(100, seed, unanswerable=20)
        outcomes.append(compare_runs(base, new, items=items, resamples=RESAMPLES).verdict.outcome)
    quiet = outcomes.count("no detectable difference")
    assert quiet >= 190, {o: outcomes.count(o) for o in set(outcomes)}


def test_the_verdict_says_which_subsets_moved_against_it_and_what_the_judge_explains():
    # recall rises overall; on the hard third NEW is built to lose it
    items, base, new = pair(90, 3, new={"recall": 0.95})
    for row, item in zip(new.scores, items):
        if item.difficulty == "hard" and item.answerable:
            row.values["context/recall@5"] = 0.0
    comparison = compare_runs(base, new, items=items, resamples=RESAMPLES)
    against = [line for line in comparison.verdict.against if line.startswith("Against")]
    assert against and against[0].startswith("Against the overall direction: context/recall@5 on difficulty=hard -")
    assert "exploratory" in against[0] and "uncorrected" in against[0]
    # a judged metric, with and without the judge's own flip rate measured
    items, base, new = pair(60, 5, base={"judged": {"generation/correctness": 0.6}},
                            new={"judged": {"generation/correctness": 0.6}})
    judge = compare_runs(base, new, items=items, resamples=RESAMPLES).verdict.judge
    assert judge[0].startswith("Judge: generation/correctness changed on ") and "--judge-repeats 2" in judge[0]
    shaky = {"generation/correctness": JudgeAgreement(items=50, unstable=20, compared=50, changed=20, rate=0.4)}
    items, base, new = pair(60, 5, base={"judged": {"generation/correctness": 0.6}, "agreement": shaky},
                            new={"judged": {"generation/correctness": 0.6}, "agreement": shaky})
    judge = compare_runs(base, new, items=items, resamples=RESAMPLES).verdict.judge
    assert "within the judge's own flip rate" in judge[0] and "40.0% of its verdicts" in judge[0]


def test_too_few_items_and_an_uncontrolled_comparison_are_said_first():
    items, base, new = pair(4, 1, unanswerable=0)
    verdict = compare_runs(base, new, items=items, resamples=RESAMPLES).verdict
    assert verdict.outcome == "no detectable difference"
    assert any(c.startswith("Too few items to detect anything: on 4 pairs") for c in verdict.caveats), verdict.caveats
    items, base, _ = pair(30, 2)
    other = simulated_run("new", items, np.zeros(30), np.random.default_rng(0), kb="kb-2")
    verdict = compare_runs(base, other, items=items, resamples=RESAMPLES).verdict
    assert verdict.caveats[0].startswith("Not a controlled comparison (KB snapshot kb-1 vs kb-2)")


@pytest.mark.parametrize("declared", [["lexical/f1"], ["lexical/*", "e2e/latency_p95"]])
def test_a_declared_family_replaces_the_default(declared):
    items, base, new = pair(60, 7, new={"recall": 0.95})
    comparison = compare_runs(base, new, items=items, primary=declared, resamples=RESAMPLES)
    assert "context/recall@5" not in comparison.family
    assert comparison.verdict.outcome == "no detectable difference"
    recall = comparison.row("context/recall@5")   # a real rise, exploratory: a lead, not the verdict
    assert not recall.primary and recall.q_value < 0.05 and recall.better


def test_a_significant_p95_change_of_a_few_milliseconds_is_negligible_not_worse():
    items, base, new = pair(60, 21, base={"latency_ms": 1.0}, new={"latency_ms": 3.0})
    comparison = compare_runs(base, new, items=items, resamples=RESAMPLES)
    latency = comparison.row("e2e/latency_p95")
    assert latency.significant and latency.negligible and not latency.worse
    verdict = comparison.verdict
    assert verdict.outcome == "no detectable difference" and verdict.worsened == []
    assert verdict.sentence.startswith("No difference that matters on the 5 primary metrics (60 items both scored): "
                                       "p95 latency changed by under 10 ms")
    assert any(line.startswith("p95 latency: ") and line.endswith("significant, but under 10 ms: negligible")
               for line in verdict.changes)
    # the same rise in hundreds of milliseconds is worse
    items, base, new = pair(60, 21, base={"latency_ms": 100.0}, new={"latency_ms": 300.0})
    assert compare_runs(base, new, items=items, resamples=RESAMPLES).verdict.worsened == ["p95 latency"]


def test_a_failed_call_is_in_no_latency_pair():
    items, base, new = pair(30, 4)
    slow = new.scores[5].model_copy(update={"failed": "target timed out after 60 s"})
    slow.end_to_end = slow.end_to_end.model_copy(update={"latency_ms": 60_000.0})
    new.scores[5] = slow
    latency = compare_runs(base, new, items=items, resamples=RESAMPLES).row("e2e/latency_p95")
    assert latency.n == 29 and latency.new < 10_000
