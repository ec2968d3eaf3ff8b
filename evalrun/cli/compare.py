"""`evalrun compare BASE NEW`: is a change worth keeping? Every metric overall and per subset, paired
over the items both runs scored, corrected for the number of comparisons; and, with --gate, the rules
a CI job holds NEW to (exit 0 pass, 1 fail, 2 a bad gate file)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from curate import WorkspaceError
from curate.cli import EXIT_FINDINGS, console, table, workspace_of
from evalrun.api import compare as compare_runs_of
from evalrun.cli.run import WORKSPACE, named_workspace
from evalrun.views import format_summary
from evalrun.compare.comparison import (
    ALPHA,
    CORRECTIONS,
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
             "interval for paired proportions (0/1 values on fewer than 100 pairs, or no pair that changed)")
METHOD = {"holm": "Holm's method (family-wise error)", "bh": "Benjamini-Hochberg (false discovery rate)"}


def _p(p: float | None) -> str:
    if p is None:
        return ""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _num(value: float | None, signed: bool = False) -> str:
    if value is None:
        return ""
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _row(row: CompareRow) -> tuple:
    ci = f"[{row.ci95[0]:+.3f}, {row.ci95[1]:+.3f}]" if row.ci95 else ""
    if ci and row.ci_method == "newcombe":
        ci += " N"
    mark = ("worse" if row.worse else "*") if row.significant else ""
    return (row.metric, row.subset, row.n, row.left_out or "", _num(row.base), _num(row.new),
            _num(row.difference, signed=True), ci, _p(row.p_value), _p(row.p_adjusted), mark)


def headline(comparison: Comparison) -> list[str]:
    """Return the lines printed before any number: what is compared, how p-values are corrected, and
    everything that makes the comparison less than controlled."""
    c = comparison
    lines = [(f"NEW {c.new} ({c.new_target}) against BASE {c.base} ({c.base_target}): {c.items} items both scored; "
             f"p-values corrected for the {c.compared} comparisons (metrics x subsets) by {METHOD[c.correction]}, "
             f"* = significant at {c.alpha:g}")]
    if c.uncontrolled:
        lines.append("[bold]NOT A CONTROLLED COMPARISON[/bold]: " + "; ".join(c.uncontrolled))
    if c.new_diagnostic:
        lines.append("[bold]NEW is a DIAGNOSTIC run (oracle context)[/bold]: it can never be the NEW side of a gate")
    lines += [f"warning: {w}" for w in c.warnings]
    if c.apart:
        lines.append(f"{c.apart} items scored apart in either run are in no row")
    if not c.subsets:
        lines.append("warning: the release could not be read from the workspace (--workspace): only 'all' is compared")
    return lines


def print_comparison(comparison: Comparison, show_all: bool = False) -> None:
    """Print the comparison: the headline, the overall rows and the subsets that differ significantly
    (every row with `show_all`), then the trade-offs."""
    out = console()
    for line in headline(comparison):
        out.print(line, soft_wrap=True)
    shown = [r for r in comparison.rows if show_all or r.subset == "all" or r.significant]
    hidden = len(comparison.rows) - len(shown)
    out.print(table("paired over the items scored in both runs (diff = NEW - BASE)",
                    ("metric", "subset", "n", "left out", "base", "new", "diff", "95% CI", "p",
                     f"p {comparison.correction}", ""), [_row(r) for r in shown]))
    out.print(INTERVALS)
    if hidden:
        out.print(f"{hidden} subset rows without a significant difference not shown (--all shows every row)",
                  soft_wrap=True)
    rows = [(t.measure, "" if t.base is None else f"{t.base:.4g}", "" if t.new is None else f"{t.new:.4g}",
             "" if t.change is None else f"{t.change:+.1%}") for t in comparison.trade_offs
            if t.base is not None or t.new is not None]
    out.print(table("trade-offs (the system's and the judge's apart)", ("measure", "base", "new", "change"), rows))


def print_flips(comparison: Comparison) -> None:
    """Print, per 0/1 metric, the items that went from pass to fail and back, with their attribution
    before and after; then each metric's flips against the judge's own flip rate, where a run measured it."""
    def noise(flip):
        return {None: "", True: "yes", False: "no"}[flip.judge_unstable]

    rows = [(f.metric, f.item_id, f.change, ", ".join(f.base_attribution) or "-", ", ".join(f.new_attribution) or "-",
             noise(f)) for f in comparison.flips]
    console().print(table(f"{len(rows)} item flips of 0/1 metrics (lost: 1 -> 0, gained: 0 -> 1)",
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


@click.command("compare")
@click.argument("base", type=click.Path(file_okay=False, path_type=Path))
@click.argument("new", type=click.Path(file_okay=False, path_type=Path))
@click.option("--metric", "metrics", multiple=True, help="Only metrics matching this glob, e.g. 'context/recall@*' "
              "(repeatable); the correction then counts only these.")
@click.option("--all", "show_all", is_flag=True, help="Every subset row, not only those that differ significantly.")
@click.option("--correction", type=click.Choice(CORRECTIONS), default="holm", show_default=True,
              help="How p-values are corrected for the metrics x subsets compared: holm (family-wise error) or bh "
              "(Benjamini-Hochberg, false discovery rate).")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=ALPHA, show_default=True,
              help="Significance level of the corrected p-values.")
@click.option("--gate", "gate", is_flag=False, flag_value="", default=None, metavar="[FILE]",
              help="Check NEW against the rules of FILE's [gate] table (TOML), or of the workspace's curate.toml "
              "when no FILE is given (put --gate after BASE NEW then): guard, guard_subsets, improve, "
              "improve_subset, max_latency_p95_rise, latency_stage, max_cost_per_item_rise, require_controlled, "
              "alpha. The guard and improve rows are Holm-corrected among themselves. A guard on too few items for "
              "any p-value to get below alpha fails as a weak rule (see --allow-weak-rules), and so does a guarded "
              "metric worse on every item. Exit 0 pass, 1 fail (each failed rule one line), 2 a bad gate file "
              "(file, line, field) or a diagnostic NEW run.")
@click.option("--allow-weak-rules", is_flag=True, help="With --gate: let guards that could not have failed (too few "
              "items for any p-value to get below alpha once corrected) pass; each is still named.")
@click.option("--flips", "show_flips", is_flag=True, help="Also list, per 0/1 metric, the items that went from pass "
              "to fail and back, with their attribution before and after, and whether the flips stay within the "
              "judge's own flip rate (when a run was scored with --judge-repeats).")
@click.option("--json", "as_json", is_flag=True, help="Print every row, the flips (and the gate's verdict) as JSON.")
@WORKSPACE
@click.pass_context
def compare(ctx: click.Context, base: Path, new: Path, metrics: tuple[str, ...], show_all: bool, correction: str,
            alpha: float, gate: str | None, allow_weak_rules: bool, show_flips: bool, as_json: bool,
            command_workspace: Path | None) -> None:
    """Compare run NEW against run BASE, paired item by item: per metric and subset, base, new, the
    difference with its 95% paired bootstrap interval, the p-value (exact McNemar for 0/1 metrics, a
    sign-flip permutation test otherwise) and the p-value corrected by Holm's method (default) for the
    number of metrics x subsets compared.

    Items unscored in either run are compared only where both scored them; how many were left out is
    shown. A different KB snapshot, judge model or prompt version, or a degraded run, is reported
    first as not a controlled comparison. Shown: the overall rows and the subsets that differ
    significantly (--all: every row)."""
    comparison = compare_runs_of(base, new, gate=True if gate == "" else gate,
                                 workspace=named_workspace(ctx, command_workspace),
                                 metrics=metrics, correction=correction, alpha=alpha,
                                 allow_weak_rules=allow_weak_rules)
    result = comparison.gate
    if as_json:
        click.echo(json.dumps(comparison.model_dump(mode="json"), indent=2, ensure_ascii=False))
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
        console().print(table(f"{len(runs)} runs of {runs[0].manifest.dataset} on {subset}, oldest first",
                              ("started", "release", "KB snapshot", "target", "metric", "mean", "95% CI", "n"), rows))
        for line in alerts:
            click.echo(f"ALERT: {line}")
        if alert and not alerts:
            click.echo("no alert")
    if alerts:
        ctx.exit(EXIT_FINDINGS)
