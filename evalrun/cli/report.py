"""`evalrun report RUN [--vs BASE] [--probes PROBE_FOLDER] [--out report.html]`: one self-contained HTML file of a
run (or of a probe run)."""

from __future__ import annotations

from pathlib import Path

import click

from curate.cli import workspace_of
from evalrun.cli.run import WORKSPACE
from evalrun.probes.folder import is_probe_run
from evalrun.report import write_report


@click.command("report")
@click.argument("run_folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--vs", "vs", type=click.Path(file_okay=False, path_type=Path),
              help="A BASE run to compare with, as `evalrun compare BASE RUN` does: the page leads with its "
              "verdict, and every item opens with BASE beside NEW.")
@click.option("--probes", "probes", type=click.Path(file_okay=False, path_type=Path),
              help="A probe run folder (`evalrun probe`), of the same system over the same release: its probes in "
              "a section of the page.")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path),
              help="The HTML file to write (replaced if it exists); default: report.html in the run folder.")
@WORKSPACE
@click.pass_context
def report(ctx: click.Context, run_folder: Path, vs: Path | None, probes: Path | None, out: Path | None,
           command_workspace: Path | None) -> None:
    """Write one self-contained HTML file of a scored run: the headline per layer with intervals and n,
    the retrieval funnel per K, subsets, failure attribution, latency and cost, what was not scored and
    why, the run's provenance, and a table of every item (filter, sort, open one to read its evidence,
    candidates with the gold ones marked, context, answer, claims and the judge's verdicts). Nothing
    is fetched: it opens from disk or an e-mail attachment. Reads the run's release and KB snapshot
    from the workspace.

    A probe run folder (`evalrun probe`) gets the page of its probes, read from the folder alone: what
    was probed and what did not run, every metric with n and its interval, each paired to the items
    asked clean, accuracy by noise rate and by gold position, attack success per injection template,
    and the failures per probe with what was planted and the answer."""
    workspace = None if is_probe_run(run_folder) else workspace_of(ctx, command_workspace)   # a probe page needs none
    written = write_report(run_folder, out=out or run_folder / "report.html", workspace=workspace, vs=vs,
                           probes=probes)
    cut = sum(written.cuts.values())
    click.echo(f"wrote {written.path} ({written.size / 1e6:.1f} MB, {written.items} items"
               + (f", {cut} long texts cut and marked as cut" if cut else "") + ")")
