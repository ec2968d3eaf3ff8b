"""Terminal views of a run: the summary, each metric per subset, and the items behind each failure
attribution."""

from __future__ import annotations

import difflib
import fnmatch
from pathlib import Path

import click
from rich.markup import escape

from curate import InputError
from curate.cli import console, table
from evalrun.cli.probe_views import print_probe_summary
from evalrun.probes.folder import is_probe_run, scored_probe_run
from evalrun.records import ItemScores, RunSummary, scored_run
from evalrun.scope_records import LAYERS
from evalrun.scoring.summary import SCOPE_FIELDS
from evalrun.views import (
    ATTRIBUTIONS,
    INTERVALS,
    LEXICAL,
    attribution_names,
    format_summary,
    judge_lines,
    judged_lines,
    judged_names,
    latency_line,
    latency_rows,
    leak_lines,
    other_names,
    problem_lines,
    retrieval_names,
    scope_lines,
    system_tokens,
)

SUBSET_FIELDS = ("difficulty", "qtype", "source", "split", "tag", "apart", *SCOPE_FIELDS)


def _leaks(summary: RunSummary, rows: list[ItemScores] | None) -> list[str]:
    """Return the permission leak lines, the finding in bold red: what no one may miss comes first."""
    lines = [escape(line) for line in leak_lines(summary.scope, rows)]
    if lines and lines[0].startswith("PERMISSION LEAKS"):
        lines[0] = f"[bold red]{lines[0]}[/bold red]"
    return lines


def _headline(summary: RunSummary, rows: list[ItemScores] | None = None) -> list[str]:
    """Return the lines that come before any number: permission leaks first, what ran, what scope says, and
    everything that was not scored."""
    run = summary.run
    lines = _leaks(summary, rows)
    lines.append(("DIAGNOSTIC RUN (oracle context) — " if run.diagnostic else "")
                 + f"{run.dataset}@{run.version} against {run.kb_snapshot}: {summary.items} items "
                 f"({summary.answerable} answerable, {summary.unanswerable} unanswerable); target {run.target}")
    lines.extend(f"[bold]{escape(line)}[/bold]" for line in scope_lines(summary.scope))
    failed = sum(summary.failed_items.values())
    if failed:
        how = escape(", ".join(f"{n} {why}" for why, n in sorted(summary.failed_items.items())))
        lines.append(f"[bold]{failed} items whose target failed[/bold] ({how}): "
                     + ("left out of every metric (--exclude-errors)" if _excluded(summary) else
                        "scored as a system that returned nothing; 'n (k failed)' below counts them"))
    if summary.unscored_items:
        lines.append(f"[bold]{summary.unscored_items} items have unscored metrics[/bold]"
                     + (", and trace problems:" if summary.problems else ""))
    elif summary.problems:
        lines.append("[bold]trace problems:[/bold]")
    lines.extend(f"  {escape(line)}" for line in problem_lines(summary))
    for label, ids in summary.apart.items():
        shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
        lines.append(f"[bold]{len(ids)} items scored apart ({label})[/bold], in no other figure: {shown}")
    gate = summary.leakage_gate
    if gate.status != "clean":
        lines.append(f"[bold]LEAKAGE UNCHECKED (--allow-unchecked): {gate.problem}[/bold]")
    lines.extend(escape(line) for line in judge_lines(summary))
    # what was not judged is said in bold: a budget reached, or no judge to grade
    lines.extend(f"[bold]{escape(line)}[/bold]" if line.startswith(("JUDGE BUDGET", "retrieval judged (")) else
                 escape(line) for line in judged_lines(summary.judged_retrieval))
    return lines


def _excluded(summary: RunSummary) -> bool:
    overall = summary.metrics.get("all", {})
    return any(reason.startswith("target failed, left out") for m in overall.values() for reason in m.unscored)


def _calibration(folder: Path, workspace):
    """Return the run's calibration by people's reviews, or None when none were pulled."""
    from evalrun.review.calibrate import calibrate_run, has_reviews
    return calibrate_run(workspace, folder) if has_reviews(folder) else None


def print_summary(folder: Path, workspace=None) -> None:
    """Print the summary: permission leaks and what was unscored come first, then the layers; with people's
    reviews of the judge, what they say of it first and its corrected means after the other measures."""
    from evalrun.cli.review_views import estimate_table, review_headline
    run = scored_run(folder)
    summary = run.summary
    calibration = _calibration(folder, workspace)
    out = console(markup=True)
    for line in _headline(summary, run.scores) + (review_headline(calibration) if calibration else []):
        out.print(line, soft_wrap=True)   # one line each, however long: a reader greps, a terminal wraps
    overall = summary.metrics.get("all", {})
    rows = []
    for name in retrieval_names(overall):
        loss = summary.context_loss.get(name)
        rows.append((name, *format_summary(overall.get(f"candidates/{name}")), *format_summary(overall.get(f"context/{name}")),
                     "" if loss is None else f"{loss:+.3f}"))
    out.print(table("retrieval (answerable items)", ("metric", "candidates", "95% CI", "n", "context", "95% CI", "n",
                                                     "lost"), rows))
    judged = judged_names(overall)
    if judged:
        out.print(table("retrieval judged by the judge (judged/: its grades, not labels)",
                        ("metric", "candidates", "95% CI", "n", "context", "95% CI", "n"),
                        [(name, *format_summary(overall.get(f"judged/candidates/{name}")),
                          *format_summary(overall.get(f"judged/context/{name}"))) for name in judged]))
    out.print(table("other measures (lexical/: string match, no judge)", ("metric", "mean", "95% CI", "n"),
                    [(name, *format_summary(overall[name])) for name in other_names(overall)]))
    out.print(INTERVALS)
    if calibration is not None:
        out.print(estimate_table(calibration))
    e2e = summary.end_to_end
    if any(e2e.latency_ms.values()):
        out.print(table("latency", ("stage", "n", "p50", "p95", "max"), latency_rows(e2e)))
    if latency := latency_line(e2e):
        out.print(latency, soft_wrap=True)
    cost = "unknown" if e2e.system_cost is None else f"{e2e.system_cost:.4f} USD"
    out.print(f"{system_tokens(e2e, summary.items)}; system cost: {cost}"
              + (f" ([bold]{e2e.usage_left_out} items' usage left out[/bold]: no count or cost, see --failures)"
                 if e2e.usage_left_out else ""))
    judge = summary.judge
    if judge is not None and judge.status == "scored":
        out.print(f"judge (apart from the system): {judge.requests} requests, {judge.cache_hits} from cache, "
                  f"{judge.prompt_tokens}+{judge.completion_tokens} tokens, cost {judge.cost}"
                  + (f" ([bold]{judge.usage_left_out} replies' usage left out[/bold]: no token count, see --failures)"
                     if judge.usage_left_out else ""))
        if judge.agreement:
            out.print(table(f"the judge asked {judge.repeats} times about each answer: how often it changed its mind",
                            ("metric", "items", "items changed", "judgements compared", "changed", "flip rate"),
                            [(name, a.items, a.unstable, a.compared, a.changed, f"{a.rate:.1%}")
                             for name, a in judge.agreement.items()]))
    attribution, lexical = summary.attribution, summary.attribution_lexical
    if not attribution:
        out.print("failure attribution: none")
    elif lexical:
        out.print(table("failure attribution", ("attribution", "items", "of which lexical (no judge)"),
                        [(name, n, lexical.get(name, "")) for name, n in sorted(attribution.items())]))
        out.print(LEXICAL)
    else:
        out.print(table("failure attribution", ("attribution", "items"), sorted(attribution.items())))


def print_by(folder: Path, field: str, metrics: tuple[str, ...] = ()) -> None:
    """Print every metric (or those matching one of the globs `metrics`) per subset of `field`, beside
    all items."""
    summary = scored_run(folder).summary
    labels = [label for label in summary.metrics if label.split("=", 1)[0] == field]
    if not labels:
        have = sorted({label.split("=", 1)[0] for label in summary.metrics if "=" in label})
        raise InputError(f"this run has no subsets by {field} (it has: {', '.join(have) or 'none'})", field="by")
    overall = summary.metrics.get("all", {})
    names = ([f"{layer}/{n}" for n in retrieval_names(overall) for layer in ("candidates", "context")]
             + other_names(overall))
    if metrics:
        for pattern in metrics:
            if not any(fnmatch.fnmatchcase(n, pattern) for n in names):
                raise InputError(f"no metric matches {pattern!r} (e.g. 'context/recall@*', 'lexical/*')",
                                 field="metric")
        names = [n for n in names if any(fnmatch.fnmatchcase(n, pattern) for pattern in metrics)]
    rows = []
    for name in names:
        rows.append((name, "all", *format_summary(overall.get(name))))
        rows.extend((name, label.split("=", 1)[1], *format_summary(summary.metrics[label].get(name)))
                    for label in labels if name in summary.metrics[label])
    out = console(markup=True)
    for line in _headline(summary):
        out.print(line, soft_wrap=True)   # one line each, however long: a reader greps, a terminal wraps
    out.print(table(f"every metric by {field}", ("metric", field, "mean", "95% CI", "n"), rows))
    out.print(INTERVALS)


def scope_notes(row: ItemScores) -> list[str]:
    """Return what scope says of one item, leaks first: the chunks leaked per layer, that it had no usable
    evidence, its stale chunks per layer and why its answer was taken as built on them."""
    scope = row.scope
    if scope is None:
        return []
    notes = [f"LEAKED in {layer}: {', '.join(scope.leaked[layer])}" for layer in LAYERS if layer in scope.leaked]
    if scope.declined_because:
        notes.append(f"no usable evidence ({', '.join(scope.declined_because)}): should decline")
    if scope.stale_answer:
        notes.append(f"stale_evidence: {scope.stale_answer}")
    notes += [f"stale in {layer}: {', '.join(scope.stale[layer])}" for layer in LAYERS if layer in scope.stale]
    return notes


def print_failures(folder: Path, attribution: str | None = None) -> None:
    """Print every item with a failure attribution or a problem (or only those of `attribution`), and why:
    what scope found first (leaked chunks per layer), then its problems."""
    if attribution is not None and attribution not in ATTRIBUTIONS:
        close = difflib.get_close_matches(attribution, ATTRIBUTIONS, n=1)
        raise InputError(f"unknown attribution {attribution!r}" + (f" (did you mean {close[0]}?)" if close else "")
                         + f"; one of {', '.join(ATTRIBUTIONS)}", field="attribution")
    # escaped: a chunk id or a problem may hold what rich reads as markup ("[hr]")
    rows = [(escape(row.item_id), ", ".join(attribution_names(row)),
             escape("; ".join(scope_notes(row) + ([row.apart] if row.apart else []) + row.problems
                              + [f"{a} (lexical): {why}" for a, why in row.lexical_attribution.items()])[:240]))
            for row in scored_run(folder).scores
            if (attribution in row.attribution if attribution else row.attribution or row.problems or row.apart)]
    title = f"{len(rows)} items " + (f"with {attribution}" if attribution else "with failures")
    console(markup=True).print(table(title, ("item", "attribution", "problems"), rows))


@click.command()
@click.argument("run_folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--by", "by", type=click.Choice(SUBSET_FIELDS), help="Every metric per subset of this field, with n "
              "and 95% CI.")
@click.option("--metric", "metrics", multiple=True, help="With --by: only metrics matching this glob, e.g. "
              "'context/recall@*' (repeatable).")
@click.option("--failures", is_flag=True, help="List the items behind each failure attribution.")
@click.option("--attribution", type=click.Choice(ATTRIBUTIONS), help="With --failures: only items of this "
              "attribution.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def show(ctx: click.Context, run_folder: Path, by: str | None, metrics: tuple[str, ...], failures: bool, attribution: str | None,
         as_json: bool) -> None:
    """Print a run's summary: unscored items first, retrieval per layer, end to end, attribution. A probe
    run folder (`evalrun probe`) prints its probes' summary (--failures: every failure; --json: its
    probe_summary.json)."""
    if is_probe_run(run_folder):
        show_probes(run_folder, failures=failures, as_json=as_json, run_options={"--by": by, "--metric": metrics,
                                                                               "--attribution": attribution})
        return
    if attribution and not failures:
        raise InputError("--attribution filters --failures: pass both", field="attribution")
    if metrics and not by:
        raise InputError("--metric filters --by: pass both", field="metric")
    if as_json:
        click.echo(scored_run(run_folder).summary.model_dump_json(indent=2))
    elif failures:
        print_failures(run_folder, attribution)
    elif by:
        print_by(run_folder, by, metrics)
    else:
        print_summary(run_folder, _workspace_if_any(ctx))


def show_probes(folder: Path, *, failures: bool, as_json: bool, run_options: dict[str, object]) -> None:
    """Print a probe run's summary (`failures`: with every failure; `as_json`: probe_summary.json); an
    option of runs only (`run_options`, by its name) is one line."""
    given = [name for name, value in run_options.items() if value]
    if given:
        raise InputError(f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} to runs of `evalrun run`; "
                         f"{folder} is a probe run folder (show it alone, with --failures or --json)")
    if as_json:
        click.echo(scored_probe_run(folder).summary.model_dump_json(indent=2))
    else:
        print_probe_summary(folder, every_failure=failures)


def _workspace_if_any(ctx: click.Context):
    """Return the workspace the command runs in, or None when there is none (a run folder read on its own)."""
    from curate import CurateError
    from curate.cli import workspace_of
    try:
        return workspace_of(ctx)
    except CurateError:
        return None
