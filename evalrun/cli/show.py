"""Terminal views of a run: the summary, and the items behind each failure attribution."""

from __future__ import annotations

from pathlib import Path

import click

from curate import NotFound, console, table
from evalrun.records import MetricSummary, read_run


def _fmt(summary: MetricSummary | None) -> tuple:
    if not summary:
        return ("", "", "")
    unscored = sum(summary.unscored.values())
    if summary.mean is None:
        return ("unscored", "", f"0 (+{unscored} unscored)")
    ci = summary.ci95
    return (f"{summary.mean:.3f}", f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "",
            f"{summary.n}" + (f" (+{unscored} unscored)" if unscored else ""))


def _scored(folder: Path):
    """Return the run in `folder`, which must have been scored."""
    run = read_run(folder)
    if run.summary is None or run.scores is None:
        raise NotFound(f"{folder} has not been scored yet (no summary.json): `evalrun run --resume --out {folder}`")
    return run


def print_summary(folder: Path) -> None:
    """Print the summary: what was unscored comes first, then the layers."""
    summary = _scored(folder).summary
    out = console()
    run = summary.run
    first = (f"{run.dataset}@{run.version} against {run.kb_snapshot}: {summary.items} items "
             f"({summary.answerable} answerable, {summary.unanswerable} unanswerable); target {run.target}")
    out.print(("DIAGNOSTIC RUN (oracle context) — " if run.diagnostic else "") + first)
    if summary.unscored_items or summary.problems:
        problems = ", ".join(f"{n} {k}" for k, n in summary.problems.items())
        out.print(f"[bold]{summary.unscored_items} items have unscored metrics[/bold]"
                  + (f"; problems: {problems}" if problems else ""))
    gate = summary.leakage_gate
    if gate.status != "clean":
        out.print(f"[bold]LEAKAGE UNCHECKED (--allow-unchecked): {gate.problem}[/bold]")
    out.print(f"generation layer: {summary.layers.get('generation')}")
    overall = summary.metrics.get("all", {})
    names = sorted({n.split("/", 1)[1] for n in overall if n.startswith(("candidates/", "context/"))},
                   key=lambda n: (n.split("@")[0], int(n.split("@")[1]) if "@" in n else 0))
    rows = []
    for name in names:
        cand, ctx = overall.get(f"candidates/{name}"), overall.get(f"context/{name}")
        loss = summary.context_loss.get(name)
        rows.append((name, *_fmt(cand), *_fmt(ctx), "" if loss is None else f"{loss:+.3f}"))
    out.print(table("retrieval (answerable items)", ("metric", "candidates", "95% CI", "n", "context", "95% CI", "n",
                                                     "lost"), rows))
    others = [(name, *_fmt(v)) for name, v in overall.items()
              if name.startswith(("unanswerable/", "generation/")) or name in ("success", "context/key_point_coverage")]
    out.print(table("other measures", ("metric", "mean", "95% CI", "n"), others))
    e2e = summary.end_to_end
    if e2e.latency_ms:
        out.print(table("latency (ms)", ("stage", "n", "p50", "p95", "max"),
                        [(stage, v.n, v.p50, v.p95, v.max) for stage, v in e2e.latency_ms.items() if v]))
    out.print(f"system tokens: {e2e.system_tokens}; system cost: {e2e.system_cost}")
    judge = summary.judge
    if judge is not None and judge.status == "scored":
        out.print(f"judge (apart from the system): {judge.requests} requests, {judge.cache_hits} from cache, "
                  f"{judge.prompt_tokens}+{judge.completion_tokens} tokens, cost {judge.cost}")
    attribution = summary.attribution
    out.print(table("failure attribution", ("attribution", "items"), sorted(attribution.items())) if attribution
              else "failure attribution: none")


def print_failures(folder: Path) -> None:
    """Print every item with a failure attribution or a problem, and why."""
    rows = [(row.item_id, ", ".join(row.attribution), "; ".join(row.problems)[:100])
            for row in _scored(folder).scores if row.attribution or row.problems]
    console().print(table(f"{len(rows)} items with failures", ("item", "attribution", "problems"), rows))


@click.command()
@click.argument("run_folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--failures", is_flag=True, help="List the items behind each failure attribution.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def show(run_folder: Path, failures: bool, as_json: bool) -> None:
    """Print a run's summary: unscored items first, retrieval per layer, end to end, attribution."""
    if as_json:
        click.echo(_scored(run_folder).summary.model_dump_json(indent=2))
    elif failures:
        print_failures(run_folder)
    else:
        print_summary(run_folder)
