"""`evalrun compare BASE NEW`: is a change worth keeping? Every metric overall and per subset, paired
over the items both runs scored, corrected for the number of comparisons; and, with --gate, the rules
a CI job holds NEW to (exit 0 pass, 1 fail, 2 a bad gate file). Two probe runs (`evalrun probe`) are
compared by `evalrun.probes.compare`, held to the gate file's [probe_gate]."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.markup import escape

from curate import InputError, WorkspaceError
from curate.cli import EXIT_FINDINGS, console, table, workspace_of
from evalrun.api import both_probe_runs, compare_probes
from evalrun.api import compare as compare_runs_of
from evalrun.probes import compare as probe_compare
from evalrun.probes.gate import gate_lines
from evalrun.cli.run import WORKSPACE, named_workspace
from evalrun.views import format_summary
from evalrun import numbers
from evalrun.compare.scope import leak_comparison_lines
from evalrun.compare.verdict import label
from evalrun.compare.comparison import (
    ALPHA,
    CompareRow,
    Comparison,
    GateResult,
    release_items,
)
from evalrun.compare.history import (
    DROPS,
    check_subset,
    chosen_metrics,
    consecutive_drops,
    history,
    latest_alerts,
    newest_run_alerts,
    scan_runs,
)

INTERVALS = ("95% CI: a paired percentile bootstrap (one resample of the items for both runs); N: Newcombe's score "
             "interval for paired proportions (0/1 values on fewer than 100 pairs, or no pair that changed); S: the "
             "sign-flip test inverted (where the bootstrap and the test disagree about 0: few items changed)")
COLUMNS = ("metric", "subset", "n", "left out", "base", "new", "change", "95% CI", "p")


def _cells(row: CompareRow) -> tuple:
    """Return a row's cells as printed, numbers in their unit (rates in %, changes in points)."""
    ci = numbers.marked_interval(row.metric, row.ci95, row.ci_method)
    return (label(row.metric), row.subset, f"{row.n:,}", f"{row.left_out:,}" if row.left_out else "",
            numbers.value(row.metric, row.base), numbers.value(row.metric, row.new),
            numbers.difference(row.metric, row.difference), ci, numbers.p_value(row.p_value))


def _mark(row: CompareRow) -> str:
    return "better" if row.better else "worse" if row.worse else "negligible" if row.negligible else ""


def headline(comparison: Comparison) -> list[str]:
    """Return the lines printed after the verdict, before any table: what is compared, how the p-values
    are corrected, and every warning."""
    c = comparison
    lines = [(f"NEW {escape(c.new)} ({escape(c.new_target)}) against BASE {escape(c.base)} ({escape(c.base_target)}): "
              f"{c.items:,} items both scored. "
              f"Primary family ({c.primary_source}, {c.compared} rows) corrected together by Holm's method; the other "
              f"{c.exploratory:,} rows are exploratory: uncorrected p, and q = Benjamini-Hochberg false discovery "
              f"rate over them")]
    lines += [f"note: {escape(n)}" for n in c.family_notes]
    if c.uncontrolled:
        lines.append("[bold]NOT A CONTROLLED COMPARISON[/bold]: " + escape("; ".join(c.uncontrolled)))
    if c.new_diagnostic:
        lines.append("[bold]NEW is a DIAGNOSTIC run (oracle context)[/bold]: it can never be the NEW side of a gate")
    lines += [f"warning: {escape(w)}" for w in c.warnings]
    if c.apart:
        lines.append(f"{c.apart} items scored apart in either run are in no row")
    if not c.subsets:
        lines.append("warning: the release could not be read from the workspace (--workspace): only 'all' is compared")
    return lines


def verdict_lines(comparison: Comparison) -> list[str]:
    """Return the verdict as printed first: the sentence, then each supporting line indented."""
    verdict = comparison.verdict
    return [f"Verdict: {verdict.sentence}"] + [f"  {line}" for line in verdict.lines[1:]]


def _interval(value: float | None, ci) -> str:
    if value is None:
        return "—"
    return f"{value:+.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "")


def judge_corrected_table(comparison: Comparison):
    """Return the table of the judged metrics' changes corrected for the judge's error (people's reviews)."""
    rows = [(d.metric, f"{d.reviewed} of {d.items:,}" + (f" ({d.carried} carried)" if d.carried else ""),
             _interval(d.judge_difference, None), _interval(d.difference, d.ci95),
             _interval(d.reviewed_only, d.reviewed_only_ci95), d.note or "")
            for d in comparison.judge_corrected]
    return table("judged metrics corrected by people's reviews (prediction-powered NEW - BASE, 95% interval)",
                 ("metric", "reviewed in both", "judge's change", "corrected [95% CI]", "reviewed only [95% CI]", ""),
                 rows)


def print_comparison(comparison: Comparison, show_all: bool = False) -> None:
    """Print the permission leaks of both runs, the verdict, the headline, the primary rows, the exploratory
    rows (overall, and the subsets whose q-value is below alpha; every row with `show_all`), then the
    trade-offs."""
    out = console(markup=True)
    leaks = leak_comparison_lines(comparison.scope)
    for k, line in enumerate(leaks):   # a leak is a security finding: before the verdict
        loud = k == 0 and line.startswith("PERMISSION LEAKS")
        out.print(escape(line), style="bold red" if loud else None, soft_wrap=True, highlight=False)
    if leaks:
        out.print("")
    verdict = verdict_lines(comparison)
    out.print(escape(verdict[0]), style="bold", soft_wrap=True, highlight=False)
    for line in verdict[1:] + [""]:
        out.print(escape(line), soft_wrap=True, highlight=False)
    for line in headline(comparison):
        out.print(line, soft_wrap=True, highlight=False)
    primary = [r for r in comparison.rows if r.primary]
    out.print(table(f"primary: the metrics that decide (p Holm over {comparison.compared})",
                    (*COLUMNS, "p Holm", ""), [(*_cells(r), numbers.p_value(r.p_adjusted), _mark(r)) for r in primary]))
    explored = [r for r in comparison.rows if not r.primary]
    shown = [r for r in explored if show_all or r.subset == "all" or r.significant]
    hidden = len(explored) - len(shown)
    if shown:
        out.print(table("exploratory: leads to follow, not findings (uncorrected p; q over every exploratory row)",
                        (*COLUMNS, "q", ""), [(*_cells(r), numbers.p_value(r.q_value), _mark(r)) for r in shown]))
    else:
        out.print("exploratory: no row on 'all' outside the primary family (--metric chose only primary metrics)")
    out.print(INTERVALS)
    if comparison.judge_corrected:
        out.print(judge_corrected_table(comparison))
    if hidden:
        out.print(f"{hidden:,} exploratory subset rows with q >= {comparison.alpha:g} not shown (--all shows every row)",
                  soft_wrap=True)
    rows = [(t.measure, numbers.measure(t.measure, t.base), numbers.measure(t.measure, t.new),
             numbers.percent(t.change, signed=True)) for t in comparison.trade_offs if t.base is not None or t.new is not None]
    out.print(table("trade-offs (the system's and the judge's apart)", ("measure", "base", "new", "change"), rows))
    if comparison.warmup_note:
        out.print(comparison.warmup_note, soft_wrap=True)


def print_flips(comparison: Comparison) -> None:
    """Print, per 0/1 metric, the items that went from pass to fail and back, with their attribution
    before and after; then each metric's flips against the judge's own flip rate, where a run measured it."""
    def noise(flip):
        return {None: "", True: "yes", False: "no"}[flip.judge_unstable]

    rows = [(f.metric, f.item_id, f.change, ", ".join(f.base_attribution) or "-", ", ".join(f.new_attribution) or "-",
             noise(f)) for f in comparison.flips]
    console(markup=True).print(table(f"{len(rows)} item flips of 0/1 metrics (lost: 1 -> 0, gained: 0 -> 1)",
                          ("metric", "item", "change", "attribution in BASE", "attribution in NEW",
                           "judge flipped it too"), rows))
    for count in comparison.flip_counts:
        flips = count.lost + count.gained
        line = f"{count.metric}: {flips} flips of {count.pairs} items (lost {count.lost}, gained {count.gained})"
        if count.judge_flip_rate is None:
            judged = count.metric.startswith("generation/")
            click.echo(line + ("; the judge's own flip rate was not measured (`evalrun run --judge-repeats 2`)"
                               if judged else ""))
            continue
        verdict = ("within the judge's own flip rate: the judge alone could have made them" if count.within_judge_rate
                   else "more than the judge's own flip rate explains")
        click.echo(f"{line}; the judge changes {count.judge_flip_rate:.1%} of its verdicts when asked again "
                   f"({count.judge_measured} judgements), about {count.expected_from_judge:.1f} flips expected from "
                   f"the judge alone, {count.judge_unstable} of these items flipped by the judge itself: {verdict}")


def print_gate(result: GateResult) -> None:
    """Print the gate's verdict, then every rule that failed and every rule that could not fail, one line each."""
    rules = len(result.checked) + len(result.failed)
    weak = f" ({len(result.weak)} of them could not have failed: --allow-weak-rules)" if result.weak else ""
    if result.passed:
        click.echo(f"gate ({result.source}): passed, {rules} rules held{weak}")
    else:
        click.echo(f"gate ({result.source}): FAILED, {len(result.failed)} of {rules} rules")
    for line in result.failed:
        click.echo(f"failed: {line}")
    for line in result.weak:
        click.echo(f"weak rule: {line}")


def print_probe_comparison(comparison: probe_compare.ProbeComparison) -> None:
    """Print two probe runs' comparison: the verdict and each probe's, what is compared, the warnings, every row."""
    out = console(markup=False)
    for line in probe_compare.lines(comparison):
        out.print(line, soft_wrap=True, highlight=False)
    out.print(table(f"per metric, paired over the items both runs scored (p Holm below {comparison.alpha:g}: better "
                    f"or worse)", probe_compare.COLUMNS, [probe_compare.cells(r) for r in comparison.rows]))
    out.print(INTERVALS, soft_wrap=True)


def _compare_probe_runs(ctx: click.Context, base: Path, new: Path, *, gate: str | None, alpha: float,
                        allow_weak_rules: bool, as_json: bool, workspace: Path | None,
                        refused: dict[str, bool]) -> None:
    """Compare two probe runs, print the comparison (and the probe gate's decision), exit 1 when the gate fails."""
    for option, given in refused.items():
        if given:
            raise InputError(f"{option} compares runs, not probe runs: BASE and NEW are probe runs (`evalrun probe`)",
                             field=option.removeprefix("--"))
    comparison = compare_probes(base, new, gate=True if gate == "" else gate, workspace=workspace, alpha=alpha,
                                allow_weak_rules=allow_weak_rules)
    if as_json:
        click.echo(json.dumps(comparison.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        print_probe_comparison(comparison)
        for line in gate_lines(comparison.gate) if comparison.gate is not None else []:
            click.echo(line)
    if comparison.gate is not None and not comparison.gate.passed:
        ctx.exit(EXIT_FINDINGS)


@click.command("compare")
@click.argument("base", type=click.Path(file_okay=False, path_type=Path))
@click.argument("new", type=click.Path(file_okay=False, path_type=Path))
@click.option("--primary", "primary", multiple=True, metavar="GLOB",
              help="A metric that decides the verdict (repeatable; replaces [compare] primary of curate.toml and the "
              "default: context/recall@5, generation/correctness and generation/faithfulness when judged else "
              "lexical/f1, unanswerable/correct_refusal, e2e/latency_p95, e2e/cost_per_item). The primary metrics are "
              "corrected together (Holm); every other row is exploratory.")
@click.option("--metric", "metrics", multiple=True, help="Only exploratory metrics matching this glob, e.g. "
              "'context/recall@*' (repeatable); the q-values then count only these. The primary family is kept.")
@click.option("--all", "show_all", is_flag=True, help="Every exploratory subset row, not only those whose q-value is "
              "below alpha.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=ALPHA, show_default=True,
              help="Significance level of the primary family's corrected p-values and of the exploratory q-values.")
@click.option("--gate", "gate", is_flag=False, flag_value="", default=None, metavar="[FILE]",
              help="Check NEW against the rules of FILE's [gate] table (TOML), or of the workspace's curate.toml "
              "when no FILE is given (put --gate after BASE NEW then): guard, guard_subsets, improve, "
              "improve_subset, max_latency_p95_rise, latency_stage, max_cost_per_item_rise, require_controlled, "
              "alpha, use_reviews (judged rules decided by people's reviews: `evalrun review`), max_permission_leaks (on by default: 0, NEW's items with a permission leak in any layer; "
              "raisable, never off; fails when it cannot be checked). The guard and improve rows join the primary "
              "family and are Holm-corrected with it. A guard on too few items for "
              "any p-value to get below alpha fails as a weak rule (see --allow-weak-rules), and so does a guarded "
              "metric worse on every item. Exit 0 pass, 1 fail (each failed rule one line), 2 a bad gate file "
              "(file, line, field) or a diagnostic NEW run. Two probe runs are held to the file's [probe_gate] table "
              "instead: guard (globs that may not get significantly worse, Holm over the guard rows, nor worse on "
              "every pair), max_attack_success (NEW's injection/success at most this share; 0: no attack may "
              "succeed), min (floors on NEW's metrics), alpha; a rule that cannot be checked fails.")
@click.option("--allow-weak-rules", is_flag=True, help="With --gate: let guards that could not have failed (too few "
              "items for any p-value to get below alpha once corrected) pass; each is still named.")
@click.option("--flips", "show_flips", is_flag=True, help="Also list, per 0/1 metric, the items that went from pass "
              "to fail and back, with their attribution before and after, and whether the flips stay within the "
              "judge's own flip rate (when a run was scored with --judge-repeats).")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict first, then every row, the flips (and the "
              "gate's verdict) as JSON.")
@WORKSPACE
@click.pass_context
def compare(ctx: click.Context, base: Path, new: Path, primary: tuple[str, ...], metrics: tuple[str, ...],
            show_all: bool, alpha: float, gate: str | None, allow_weak_rules: bool, show_flips: bool, as_json: bool,
            command_workspace: Path | None) -> None:
    """Compare run NEW against run BASE, paired item by item, and say first whether NEW is better, worse,
    mixed or not detectably different, from the primary family (--primary): its change, interval and
    Holm-corrected p-value per metric, what it costs (tokens, p95 latency, money), the subsets that
    moved against it, and the judge's own flip rate for judged metrics.

    Then every row: per metric and subset, base, new, the change with its 95% paired bootstrap
    interval and the p-value (exact McNemar for 0/1 metrics, a sign-flip permutation test otherwise,
    a swap permutation test for p95 latency); the rows outside the primary family are exploratory,
    with a Benjamini-Hochberg q-value. Items unscored in either run are compared only where both
    scored them; how many were left out is shown. A different KB snapshot, judge model, prompt
    version or scope settings (or one run scored with scope checks and one without), or a degraded
    run, is reported as not a controlled comparison. Permission leaks of BASE and NEW are printed
    before anything else.

    BASE and NEW may instead be two probe runs (`evalrun probe`) of one release, seed and variant
    settings: each metric both hold is paired over the items both scored, with a verdict per probe
    (better, worse or no detectable difference, from its deciding metric: noise/accuracy,
    negative/declined, counterfactual/followed, injection/success (lower is better),
    rewrite/consistent, and clean/accuracy), Holm-corrected together; the other rows apart."""
    if both_probe_runs(base, new):
        _compare_probe_runs(ctx, base, new, gate=gate, alpha=alpha, allow_weak_rules=allow_weak_rules,
                            as_json=as_json, workspace=named_workspace(ctx, command_workspace),
                            refused={"--primary": bool(primary), "--metric": bool(metrics), "--flips": show_flips})
        return
    comparison = compare_runs_of(base, new, gate=True if gate == "" else gate,
                                 workspace=named_workspace(ctx, command_workspace),
                                 metrics=metrics, primary=primary, alpha=alpha,
                                 allow_weak_rules=allow_weak_rules)
    result = comparison.gate
    if as_json:
        document = comparison.model_dump(mode="json")
        document["verdict"]["lines"] = comparison.verdict.lines
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        print_comparison(comparison, show_all)
        if show_flips:
            print_flips(comparison)
        if result is not None:
            print_gate(result)
    if result is not None and not result.passed:
        ctx.exit(EXIT_FINDINGS)


@click.command("history")
@click.argument("folders", nargs=-1, required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--metric", "metrics", multiple=True, help="Only metrics matching this glob (repeatable; default: every "
              "metric of the latest run).")
@click.option("--subset", default="all", show_default=True, help="The subset shown, e.g. 'difficulty=hard'.")
@click.option("--alert", is_flag=True, help="Exit 1 when the latest run is significantly worse than the previous one "
              "(paired, Holm-corrected over the metrics x subsets compared) or a metric got worse in --drops "
              "consecutive runs; each alert one line naming metric and subset. The newest run is never looked "
              "past: a newer run folder that is not scored or cannot be read, or a metric the latest run has no "
              "value of, is an alert too.")
@click.option("--drops", type=click.IntRange(min=1), default=DROPS, show_default=True,
              help="With --alert: consecutive runs in which a metric got worse that raise an alert.")
@click.option("--json", "as_json", is_flag=True, help="Print the history (and the alerts) as JSON.")
@WORKSPACE
@click.pass_context
def history_command(ctx: click.Context, folders: tuple[Path, ...], metrics: tuple[str, ...], subset: str, alert: bool,
                    drops: int, as_json: bool, command_workspace: Path | None) -> None:
    """List the runs of one dataset over time (release version, KB snapshot, target) with chosen metrics
    and their 95% intervals, oldest first. Each FOLDER is a run folder or a folder of runs (runs/)."""
    runs, skipped = scan_runs(folders)
    names = chosen_metrics(runs, metrics)
    points = history(runs, names, check_subset(runs, subset))
    alerts: list[str] = []
    if alert:
        try:
            workspace = workspace_of(ctx, command_workspace)
        except WorkspaceError:
            workspace = None
        items = release_items(workspace, runs[-1]) if len(runs) > 1 else None
        alerts = (newest_run_alerts(runs, skipped, names, chosen=bool(metrics)) + latest_alerts(runs, names, items)
                  + consecutive_drops(runs, names, drops))
    if as_json:
        click.echo(json.dumps({"runs": [str(r.folder) for r in runs],
                               "skipped": [{"folder": str(s.folder), "reason": s.reason, "started_at": s.started_at}
                                           for s in skipped],
                               "points": [p.model_dump(mode="json") for p in points], "alerts": alerts},
                              indent=2, ensure_ascii=False))
    else:
        for run in skipped:
            click.echo(f"skipped run folder {run.folder}: {run.reason}")
        rows = [(p.started_at, p.version, p.kb_snapshot, p.target, p.metric, *format_summary(p.summary))
                for p in points]
        console(markup=True).print(table(f"{len(runs)} runs of {runs[0].manifest.dataset} on {subset}, oldest first",
                              ("started", "release", "KB snapshot", "target", "metric", "mean", "95% CI", "n"), rows))
        for line in alerts:
            click.echo(f"ALERT: {line}")
        if alert and not alerts:
            click.echo("no alert")
    if alerts:
        ctx.exit(EXIT_FINDINGS)
