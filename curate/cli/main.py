"""The `curate` command line: thin commands over the library, one module per capability, all
registered on one root group whose errors reach the user as one line (see `curate.cli.base`)."""

from __future__ import annotations

import click

from curate.cli import annotate, checks, failures, generate, items, judge, kb, release
from curate.cli.base import CONTEXT, ToolGroup, root_options
from curate.version import __version__


@click.group(cls=ToolGroup, context_settings=CONTEXT)
@root_options
@click.version_option(__version__, prog_name="curate")
def cli(workspace, debug: bool) -> None:
    """Build and guard versioned evaluation sets for RAG systems."""


for command in (items.init, kb.kb, items.import_, items.remap, checks.check_dups, checks.check_leakage,
                checks.split_command, checks.difficulty_command, judge.check_consistency_command, annotate.annotate,
                failures.add_failures_command, generate.generate_command,
                release.release, release.versions, release.diff, release.export, release.show):
    cli.add_command(command)


def main() -> None:
    """Entry point of the `curate` console script."""
    cli(prog_name="curate")
