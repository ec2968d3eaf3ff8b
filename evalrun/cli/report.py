"""`evalrun report RUN [--vs BASE] [--out report.html]`: one self-contained HTML file of a run."""

from __future__ import annotations

from pathlib import Path

import click

from curate.cli import workspace_of
from evalrun.cli.run import WORKSPACE
from evalrun.report import write_report


@click.command("report")
@click.argument("run_folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--vs", "vs", type=click.Path(file_okay=False, path_type=Path),
              help="A BASE run to compare with, as `evalrun compare BASE RUN` does: the page leads with its "
              "verdict, and every item opens with BASE beside NEW.")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path),
              help="The HTML file to write (replaced if it exists); default: report.html in the run folder.")
@WORKSPACE
@click.pass_context
def report(ctx: click.Context, run_folder: Path, vs: Path | None, out: Path | None,
           command_workspace: Path | None) -> None:
    """Write one self-contained HTML file of a scored run: the headline per layer with intervals and n,
    the retrieval funnel per K, subsets, failure attribution, latency and cost, what was not scored and
    why, the run's provenance, and a table of every item (filter, sort, open one to read its evidence,
    candidates with the gold ones marked, context, answer, claims and the judge's verdicts). Nothing
    is fetched: it opens from disk or an e-mail attachment. Reads the run's release and KB snapshot
    from the workspace."""
    written = write_report(run_folder, out=out or run_folder / "report.html", workspace=workspace_of(ctx, command_workspace), vs=vs)
    cut = sum(written.cuts.values())
    click.echo(f"wrote {written.path} ({written.size / 1e6:.1f} MB, {written.items} items"
               + (f", {cut} long texts cut and marked as cut" if cut else "") + ")")
