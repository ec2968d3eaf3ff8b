"""`evalrun compare BASE NEW`: paired rows per metric and subset, what is left out, what makes a
comparison uncontrolled; on hand-made run folders (the project's records) and on real runs of faq@v1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from curate import ScopeSettings, jsonl_bytes
from evalrun.cli.main import cli as evalrun_cli
from evalrun.compare.comparable import NotComparable, check_comparable
from evalrun.compare.comparison import compare_runs, scored_run
from evalrun.records import (
    EndToEnd,
    ItemScores,
    JudgeReport,
    LatencySummary,
    LeakageGate,
    RunManifest,
    RunRef,
    RunSettings,
    RunSummary,
    TraceRecord,
)
from evalrun.scope_records import ScopeSummary
from evalrun.scoring.aggregate import aggregate
from evalrun.scoring.generation import judge_agreement


def make_run(folder: Path, values: dict[str, dict[str, float]], *, unscored: dict[str, dict[str, str]] | None = None,
             kb: str = "kb-1", target: str = "sys", judge: str = "judge", ks=(1, 5), p95: float = 100.0,
             cost: float | None = 1.0, oracle: bool = False, degraded: int = 0, sha: str = "sha-1",
             apart: tuple[str, ...] = (), attribution: dict[str, list[str]] | None = None,
             started: str = "2026-12-01T00:00:00Z", version: str = "v1",
             subsets: dict[str, list[str]] | None = None,
             repeats: dict[str, list[dict[str, float]]] | None = None,
             scope: ScopeSummary | None | str = "unscoped") -> Path:
    """Write a scored run folder of dataset `d`: one ItemScores line per item of `values` (item -> metric
    -> value), `unscored` (item -> metric -> reason), a summary whose end to end has total p95 `p95`
    and system cost `cost` (USD, all items), `degraded` traces in degraded mode; its metrics aggregated
    on "all" and on `subsets` (label -> item ids) as `evalrun run` does; `repeats` (item -> values of
    each further judgement) makes it a run scored with --judge-repeats; `scope` its summary's scope section
    (default: scored now, on a KB without scope; None: scored before scope was checked)."""
    folder.mkdir(parents=True)
    settings = RunSettings(ks=list(ks), oracle_context=oracle)
    gate = LeakageGate(status="clean", kb_snapshot=kb)
    RunManifest(dataset="d", version=version, content_sha256=sha, ref="d@v1", kb_snapshot=kb, target=target,
                diagnostic=oracle, settings=settings, judge={"model": judge}, prompt_versions={"p": "1"},
                leakage_gate=gate, started_at=started).write(folder / "manifest.json")
    unscored = unscored or {}
    ids = sorted(set(values) | set(unscored))
    attribution = attribution or {}
    rows = [ItemScores(item_id=i, answerable=True, values=values.get(i, {}), unscored=unscored.get(i, {}),
                       attribution=attribution.get(i, []),
                       apart="evidence in documents the leakage check excluded" if i in apart else None,
                       generation={"repeats": repeats.get(i, [])} if repeats else None) for i in ids]
    (folder / "scores.jsonl").write_bytes(jsonl_bytes(r.model_dump(mode="json") for r in rows))
    traces = [TraceRecord(item_id=i, trace={"answer": "a", "mode": "degraded" if k < degraded else "normal"})
              for k, i in enumerate(ids)]
    (folder / "traces.jsonl").write_bytes(jsonl_bytes(t.model_dump(mode="json") for t in traces))
    RunSummary(run=RunRef(dataset="d", version="v1", content_sha256=sha, kb_snapshot=kb, target=target,
                          diagnostic=oracle),
               scored_at="2026-12-01T00:00:00Z", items=len(ids), answerable=len(ids), unanswerable=0,
               leakage_gate=gate, metrics=aggregate(rows, sorted({m for r in rows for m in (*r.values, *r.unscored)}),
                                                   subsets or {}),
               end_to_end=EndToEnd(latency_ms={"total": LatencySummary(n=len(ids), p50=p95 / 2, p95=p95, max=p95)},
                                   system_tokens={"prompt_tokens": 10 * len(ids)}, system_cost=cost),
               judge=JudgeReport(status="scored", repeats=2, agreement=judge_agreement(rows)) if repeats else None,
               scope=ScopeSummary(scoped=False, settings_digest=ScopeSettings().digest()) if scope == "unscoped" else scope,
               ).write(folder / "summary.json")
    return folder


def hits(pattern: str, metric: str = "context/hit_rate@1") -> dict[str, dict[str, float]]:
    """Return item -> {metric: 0/1} for the pattern of 1s and 0s ("1101": i00 hit, i01 hit, i02 missed, ...)."""
    return {f"i{k:02d}": {metric: float(c)} for k, c in enumerate(pattern)}


def test_a_paired_row_counts_the_pairs_and_what_was_left_out(tmp_path):
    base = make_run(tmp_path / "base", {"i1": {"lexical/f1": 0.2}, "i2": {"lexical/f1": 0.4},
                                        "i3": {"lexical/f1": 0.9}},
                    unscored={"i4": {"lexical/f1": "judge timeout"}})
    new = make_run(tmp_path / "new", {"i1": {"lexical/f1": 0.3}, "i2": {"lexical/f1": 0.6},
                                      "i4": {"lexical/f1": 0.5}},
                   unscored={"i3": {"lexical/f1": "unparsable output"}})
    comparison = compare_runs(scored_run(base), scored_run(new))
    row = comparison.row("lexical/f1")
    assert (row.n, row.left_out) == (2, 2)                      # i1, i2 in both; i3, i4 unscored in one run
    assert row.base == pytest.approx((0.2 + 0.4) / 2) and row.new == pytest.approx((0.3 + 0.6) / 2)
    assert row.difference == pytest.approx((0.1 + 0.2) / 2)
    assert row.test == "sign_flip_exact" and row.p_value == 0.5   # of 4 sign patterns, ++ and -- reach 0.3
    assert comparison.compared == 1 and row.p_adjusted == 0.5 and not row.significant
    assert comparison.uncontrolled == []


def test_a_significant_fall_is_marked_worse_and_holm_counts_the_primary_family(tmp_path):
    base = make_run(tmp_path / "base", {**hits("1" * 30), **{f"i{k:02d}": {"context/hit_rate@1": 1.0,
                                                                          "lexical/f1": 0.5} for k in range(30)}})
    new = make_run(tmp_path / "new", {f"i{k:02d}": {"context/hit_rate@1": float(k >= 20), "lexical/f1": 0.5}
                                      for k in range(30)})
    base, new = scored_run(base), scored_run(new)
    comparison = compare_runs(base, new, primary=["context/hit_rate@1", "lexical/f1"])
    hit = comparison.row("context/hit_rate@1")
    assert hit.test == "mcnemar_exact" and hit.discordant == (20, 0)
    assert hit.p_value == pytest.approx(2 * 0.5 ** 20)
    assert comparison.compared == 2 and hit.p_adjusted == pytest.approx(2 * 2 * 0.5 ** 20)   # Holm: 2 rows
    assert hit.primary and hit.q_value is None
    assert hit.significant and hit.worse and not hit.better and hit.difference == pytest.approx(-20 / 30)
    f1 = comparison.row("lexical/f1")
    assert f1.difference == 0 and f1.p_value == 1.0 and not f1.significant
    assert comparison.verdict.outcome == "worse" and comparison.verdict.worsened == ["context/hit_rate@1"]
    # by default hit_rate@1 is no primary metric: exploratory, with a q-value and no Holm p-value
    default = compare_runs(base, new)
    hit = default.row("context/hit_rate@1")
    assert default.family == ["lexical/f1"] and not hit.primary and hit.p_adjusted is None
    assert hit.q_value == pytest.approx(2 * 0.5 ** 20) and hit.worse        # BH over the one exploratory row
    assert default.verdict.outcome == "no detectable difference"


def test_subsets_come_from_the_release_items(tmp_path):
    from curate import EvalItem
    items = [EvalItem(id=f"i{k:02d}", question=f"q{k}?", answerable=True, language="en", source="human",
                      difficulty="hard" if k < 10 else "easy") for k in range(30)]
    base = make_run(tmp_path / "base", hits("1" * 30))
    new = make_run(tmp_path / "new", hits("0" * 10 + "1" * 20))
    comparison = compare_runs(scored_run(base), scored_run(new), items=items)
    hard, easy = comparison.row("context/hit_rate@1", "difficulty=hard"), comparison.row("context/hit_rate@1",
                                                                                          "difficulty=easy")
    assert (hard.n, hard.difference, hard.discordant) == (10, -1.0, (10, 0))
    assert (easy.n, easy.difference, easy.p_value) == (20, 0.0, 1.0)
    assert comparison.subsets and comparison.compared == 0         # no metric of the default family
    assert comparison.exploratory == len([r for r in comparison.rows if r.p_value is not None])
    assert comparison.verdict.outcome == "no verdict" and "--primary" in comparison.verdict.sentence


def test_items_in_one_run_only_are_counted_and_warned(tmp_path):
    base = make_run(tmp_path / "base", hits("1111"))
    new = make_run(tmp_path / "new", hits("11111"))
    checked = check_comparable(scored_run(base), scored_run(new))
    assert checked.items == ["i00", "i01", "i02", "i03"] and checked.new_only == ["i04"]
    assert checked.warnings == [("the runs hold different items: compared on the 4 both scored (0 only in BASE, "
                                "1 only in NEW)")]
    assert checked.controlled


def test_what_makes_a_comparison_uncontrolled_is_named(tmp_path):
    base = make_run(tmp_path / "base", hits("11"), ks=(1, 5))
    new = make_run(tmp_path / "new", hits("11"), kb="kb-2", judge="other", ks=(1, 3), degraded=1)
    checked = check_comparable(scored_run(base), scored_run(new))
    assert checked.uncontrolled == ["KB snapshot kb-1 vs kb-2", "judge model judge vs other",
                                    "NEW ran degraded on 1 items"]
    assert checked.ks == [1] and checked.warnings[0].startswith("K differs (BASE 1,5; NEW 1,3)")
    oracle = make_run(tmp_path / "oracle", hits("11"), oracle=True)
    assert check_comparable(scored_run(base), scored_run(oracle)).new_diagnostic


def test_runs_of_different_datasets_or_no_common_item_are_refused(tmp_path):
    base = make_run(tmp_path / "base", hits("11"))
    other = make_run(tmp_path / "other", {"x": {"context/hit_rate@1": 1.0}})
    with pytest.raises(NotComparable, match="no scored item in common"):
        check_comparable(scored_run(base), scored_run(other))


def test_retrieval_at_a_cutoff_one_run_lacks_is_not_compared_and_apart_items_are_in_no_row(tmp_path):
    values = {"i1": {"context/recall@5": 1.0, "context/recall@1": 1.0}, "i2": {"context/recall@5": 0.0,
                                                                                "context/recall@1": 0.0}}
    base = make_run(tmp_path / "base", values, ks=(1, 5), apart=("i2",))
    new = make_run(tmp_path / "new", {k: {m: v for m, v in d.items() if m.endswith("@1")} for k, d in values.items()},
                   ks=(1,))
    comparison = compare_runs(scored_run(base), scored_run(new))
    assert [r.metric for r in comparison.rows] == ["context/recall@1"]
    assert comparison.rows[0].n == 1 and comparison.apart == 1


def test_flips_name_the_items_and_their_attribution_before_and_after(tmp_path):
    base = make_run(tmp_path / "base", {**hits("1100"), "i04": {"lexical/f1": 0.5}},
                    attribution={"i02": ["retrieval_miss"], "i03": ["retrieval_miss"]})
    new = make_run(tmp_path / "new", {**hits("0110"), "i04": {"lexical/f1": 0.7}},
                   attribution={"i00": ["context_cut"], "i03": ["context_cut"]})
    comparison = compare_runs(scored_run(base), scored_run(new))
    assert [(f.item_id, f.change, f.base_attribution, f.new_attribution) for f in comparison.flips] == [
        ("i00", "lost", [], ["context_cut"]), ("i02", "gained", ["retrieval_miss"], [])]
    assert {f.metric for f in comparison.flips} == {"context/hit_rate@1"}     # f1 is not 0/1: no flips
    out = _cli("compare", base, new, "--flips", "--workspace", tmp_path / "nowhere").stdout
    assert "2 item flips of 0/1 metrics" in out
    assert any(line.split() == ["context/hit_rate@1", "i02", "gained", "retrieval_miss", "-"]
               for line in out.splitlines())


def _correct(lost: int, items: int = 200) -> dict[str, dict[str, float]]:
    return {f"i{k:03d}": {"generation/correctness": 0.0 if k < lost else 1.0} for k in range(items)}


def _repeats(values: dict[str, dict[str, float]], flipped: range) -> dict[str, list[dict[str, float]]]:
    """One further judgement per item, the same as the first except on the items `flipped` (by index)."""
    return {i: [{m: (1.0 - v if k in flipped else v) for m, v in row.items()}] for k, (i, row) in enumerate(values.items())}


def test_flips_are_held_against_the_judges_own_flip_rate_when_a_run_measured_it(tmp_path):
    base_values, new_values = _correct(0), _correct(10)               # 10 of 200 items lost correctness
    # A judge that changes its mind on 30 of 200 answers in BASE and 10 in NEW: 40 of 400 judgements, 10%.
    base = make_run(tmp_path / "noisy-base", base_values, repeats=_repeats(base_values, range(30)))
    new = make_run(tmp_path / "noisy-new", new_values, repeats=_repeats(new_values, range(100, 110)))
    comparison = compare_runs(scored_run(base), scored_run(new))
    [count] = comparison.flip_counts
    assert (count.metric, count.pairs, count.lost, count.gained) == ("generation/correctness", 200, 10, 0)
    assert count.judge_flip_rate == pytest.approx(0.1) and count.judge_measured == 400
    assert count.expected_from_judge == pytest.approx(20.0) and count.within_judge_rate
    assert count.judge_unstable == 10 and all(f.judge_unstable for f in comparison.flips)   # items 0-9 flipped in BASE
    out = _cli("compare", base, new, "--flips", "--workspace", tmp_path / "nowhere").stdout
    assert "within the judge's own flip rate" in out and "about 20.0 flips expected" in out

    # A judge that never changes its mind: the same 10 flips are more than it explains.
    base = make_run(tmp_path / "steady-base", base_values, repeats=_repeats(base_values, range(0)))
    new = make_run(tmp_path / "steady-new", new_values, repeats=_repeats(new_values, range(0)))
    comparison = compare_runs(scored_run(base), scored_run(new))
    [count] = comparison.flip_counts
    assert count.judge_flip_rate == 0.0 and count.within_judge_rate is False and count.judge_unstable == 0
    assert [f.judge_unstable for f in comparison.flips] == [False] * 10
    out = _cli("compare", base, new, "--flips", "--workspace", tmp_path / "nowhere").stdout
    assert "more than the judge's own flip rate explains" in out

    # Without a repeat measurement nothing is claimed about the judge, and the output says how to measure it.
    base, new = make_run(tmp_path / "base", base_values), make_run(tmp_path / "new", new_values)
    comparison = compare_runs(scored_run(base), scored_run(new))
    [count] = comparison.flip_counts
    assert count.judge_flip_rate is None and count.within_judge_rate is None
    assert {f.judge_unstable for f in comparison.flips} == {None}
    out = _cli("compare", base, new, "--flips", "--workspace", tmp_path / "nowhere").stdout
    assert "not measured (`evalrun run --judge-repeats 2`)" in out


def test_a_0_1_metric_on_few_pairs_gets_newcombes_interval_not_a_degenerate_bootstrap(tmp_path):
    base, new = make_run(tmp_path / "base", hits("11111")), make_run(tmp_path / "new", hits("11111"))
    row = compare_runs(scored_run(base), scored_run(new)).row("context/hit_rate@1")
    assert row.difference == 0.0 and row.ci_method == "newcombe"
    assert row.ci95 == pytest.approx((-0.4345, 0.4345), abs=1e-4)    # not [0, 0]: 5 items say little
    out = _cli("compare", base, new, "--workspace", tmp_path / "nowhere").stdout
    assert "[-43.4, +43.4] pts N" in out and "Newcombe" in out


def _cli(*args, code=0):
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [*map(str, args)])
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result


def test_the_command_prints_overall_rows_and_significant_subsets(tmp_path):
    base = make_run(tmp_path / "base", hits("1" * 30))
    new = make_run(tmp_path / "new", hits("0" * 20 + "1" * 10), kb="kb-2")
    out = _cli("compare", base, new, "--primary", "context/hit_rate@1", "--workspace", tmp_path / "nowhere").stdout
    lines = out.splitlines()
    assert lines[0] == "Verdict: NEW is worse: context/hit_rate@1 got significantly worse; no primary metric improved"
    assert lines[1].startswith("  Not a controlled comparison (KB snapshot kb-1 vs kb-2)")
    assert lines[2].startswith("  context/hit_rate@1: 100.0% -> 33.3%, -66.7 pts 95% CI [")
    assert lines[2].endswith("p <0.001 (Holm over 1), n 30: worse")
    head = lines.index("") + 1
    assert "30 items both scored" in lines[head] and "Primary family (--primary, 1 rows)" in lines[head]
    assert lines[head + 1] == "NOT A CONTROLLED COMPARISON: KB snapshot kb-1 vs kb-2"
    assert "only 'all' is compared" in out and "Subsets: not compared" in out
    row = next(line for line in lines if line.startswith("context/hit_rate@1"))
    assert "-66.7 pts" in row and "worse" in row
    assert "latency p95 total (ms)" in out and "e+" not in out
    data = json.loads(_cli("compare", base, new, "--primary", "context/hit_rate@1", "--json",
                           "--workspace", tmp_path / "nowhere").stdout)
    assert list(data)[0] == "verdict" and data["verdict"]["outcome"] == "worse"
    assert data["verdict"]["lines"][0] == lines[0].removeprefix("Verdict: ")
    assert data["rows"][0]["discordant"] == [20, 0] and data["gate"] is None
    assert data["uncontrolled"] == ["KB snapshot kb-1 vs kb-2"] and data["family"] == ["context/hit_rate@1"]


def test_a_metric_glob_that_matches_nothing_is_one_line(tmp_path):
    base, new = make_run(tmp_path / "base", hits("11")), make_run(tmp_path / "new", hits("10"))
    result = _cli("compare", base, new, "--metric", "generation/*", code=2)
    assert result.stderr.strip() == ("error: field 'metric': no metric of both runs matches 'generation/*' "
                                     "(e.g. 'context/recall@*', 'lexical/*')")
    unscored = tmp_path / "unscored"
    unscored.mkdir()
    (unscored / "manifest.json").write_text((base / "manifest.json").read_text())
    assert "has not been scored yet" in _cli("compare", base, unscored, code=2).stderr


def test_two_real_runs_compare_per_subset(released, tmp_path):
    from evalrun.runner import run
    workspace = released.workspace
    perfect = run(workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "perfect")
    cut = run(workspace, ref="faq@v1", target="tests.support.targets:cut", out=tmp_path / "cut")
    result = _cli("compare", perfect, cut, "--all", "--json", "--workspace", workspace.root)
    data = json.loads(result.stdout)
    assert data["subsets"] and data["uncontrolled"] == [] and data["items"] == 5
    rows = {(r["metric"], r["subset"]): r for r in data["rows"]}
    recall = rows[("context/recall@5", "all")]
    assert (recall["n"], recall["base"], recall["new"], recall["difference"]) == (4, 1.0, 0.0, -1.0)
    assert recall["test"] == "mcnemar_exact" and recall["discordant"] == [4, 0]
    assert recall["p_value"] == 2 * 0.5 ** 4 and not recall["significant"]      # 4 items prove nothing
    assert ("context/recall@5", "qtype=unanswerable") not in rows                # retrieval is for answerable items
    assert any(subset.startswith("difficulty=") for _, subset in rows)
    lost = {(f["metric"], f["item_id"]): f for f in data["flips"] if f["change"] == "lost"}
    assert lost[("context/hit_rate@5", "t-1")]["new_attribution"] == ["context_cut"]
    assert {i for m, i in lost if m == "context/hit_rate@5"} == {"t-1", "t-2", "t-3", "t-4"}
    text = _cli("compare", perfect, cut, "--workspace", workspace.root).stdout
    assert "exploratory subset rows with q >= 0.05 not shown (--all shows every row)" in text


def test_metric_globs_narrow_the_exploratory_rows_never_the_primary_family(tmp_path):
    values = {f"i{k:02d}": {"context/hit_rate@1": 1.0, "context/hit_rate@5": 1.0, "lexical/f1": 0.5} for k in range(8)}
    worse = {i: {**v, "context/hit_rate@1": 0.0 if i < "i06" else 1.0} for i, v in values.items()}
    base, new = scored_run(make_run(tmp_path / "base", values)), scored_run(make_run(tmp_path / "new", worse))
    every = compare_runs(base, new)
    narrowed = compare_runs(base, new, metrics=["context/hit_rate@1"])
    p = 2 * 0.5 ** 6                                               # 6 discordant pairs, all 1 -> 0
    assert every.family == narrowed.family == ["lexical/f1"]      # the default family, kept by --metric
    assert every.exploratory == 2 and every.row("context/hit_rate@1").q_value == pytest.approx(2 * p)  # BH: m p / 1
    assert narrowed.exploratory == 1 and narrowed.row("context/hit_rate@1").q_value == pytest.approx(p)
    assert narrowed.row("context/hit_rate@5") is None and narrowed.row("lexical/f1").primary
    primary = compare_runs(base, new, primary=["context/hit_rate@*"])
    assert primary.family == ["context/hit_rate@1", "context/hit_rate@5"]
    assert primary.row("context/hit_rate@1").p_adjusted == pytest.approx(2 * p) and primary.compared == 2
    text = _cli("compare", base.folder, new.folder, "--primary", "context/hit_rate@*", "--workspace",
                tmp_path / "nowhere").stdout
    assert "Primary family (--primary, 2 rows)" in text
    typo = _cli("compare", base.folder, new.folder, "--primary", "context/recal@5", code=2).stderr
    assert typo.strip() == ("error: field 'primary': primary metric 'context/recal@5' (--primary) matches no metric "
                            "of the runs (e.g. 'context/recall@5', 'lexical/f1')")


def test_tokens_per_item_are_over_the_items_that_reported_them_and_unknown_when_none_did(tmp_path):
    values = {f"i{k}": {"lexical/f1": 0.5} for k in range(4)}
    base, new = make_run(tmp_path / "base", values), make_run(tmp_path / "new", values)
    for folder, tokens, reported in ((base, 0, 0), (new, 300, 2)):   # BASE reports none, NEW 2 items of 4
        summary = RunSummary.read(folder / "summary.json")
        summary.end_to_end.system_tokens, summary.end_to_end.usage_reported = {"prompt_tokens": tokens}, reported
        summary.write(folder / "summary.json")
    comparison = compare_runs(scored_run(base), scored_run(new))
    row = next(t for t in comparison.trade_offs if t.measure == "system tokens per item")
    assert (row.base, row.new, row.change) == (None, 300 / 2, None)     # unknown, never 0 tokens


def test_the_workspace_declares_the_primary_family_and_a_bad_declaration_is_one_line(tmp_path):
    from curate import init_workspace
    workspace = init_workspace(tmp_path / "ws")
    values = {f"i{k:02d}": {"context/hit_rate@1": 1.0, "lexical/f1": 0.5} for k in range(8)}
    base, new = make_run(tmp_path / "base", values), make_run(tmp_path / "new", values)
    config = workspace.config_path
    text = config.read_text(encoding="utf-8")
    assert "# [compare]" in text                                  # curate init says where the family is declared
    config.write_text(text + '\n[compare]\nprimary = ["context/hit_rate@*"]\n', encoding="utf-8")
    data = json.loads(_cli("compare", base, new, "--json", "--workspace", workspace.root).stdout)
    assert data["family"] == ["context/hit_rate@1"] and data["primary_source"] == str(config)
    # --primary replaces it for one command
    data = json.loads(_cli("compare", base, new, "--json", "--primary", "lexical/f1",
                           "--workspace", workspace.root).stdout)
    assert data["family"] == ["lexical/f1"] and data["primary_source"] == "--primary"
    lines = text.count("\n") + 3
    for bad in ('"context/hit_rate@1"', "[1, 2]", '[""]'):
        config.write_text(text + f'\n[compare]\nprimary = {bad}\n', encoding="utf-8")
        result = _cli("compare", base, new, "--workspace", workspace.root, code=2)
        assert result.stderr.strip() == (f"error: {config}:{lines}: field 'compare.primary': must be a list of "
                                         f'metric names or globs, e.g. ["context/recall@5", "lexical/f1"]'), bad
    config.write_text('compare = 3\n' + text, encoding="utf-8")   # top level: a key after a table is the table's
    assert "must be a table, [compare]" in _cli("compare", base, new, "--workspace", workspace.root, code=2).stderr
