"""The `evalrun` root command: every error one line (exit 2), findings exit 1, a bug exit 3."""

from __future__ import annotations

import click

from curate.cli import CONTEXT, ToolGroup, root_options
from evalrun.cli import compare, probe, report, review, run, show
from evalrun.version import __version__


@click.group(cls=ToolGroup, context_settings=CONTEXT)
@root_options
@click.version_option(__version__, prog_name="evalrun")
def cli(workspace, debug: bool) -> None:
    """Run a RAG system over one release of an evaluation set and score every layer apart."""


for command in (run.run_command, run.verify, run.export_run_command, run.export_failures_command, probe.probe, show.show,
                compare.compare, compare.history_command, report.report, review.review,
                review.calibrate_command, review.rejudge_command):
    cli.add_command(command)


def main() -> None:
    """Entry point of the `evalrun` console script."""
    cli(prog_name="evalrun")
