"""The `evalrun` command line. Scoring runs come with the evalrun issue; today it checks the
release a run would read."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from curate.dataset import parse_ref
from curate.errors import CurateError
from curate.release import Releases, load_release
from curate.workspace import find_workspace

from . import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evalrun")
def cli() -> None:
    """Run a RAG system over one release of an evaluation set and score every layer apart."""


@cli.command()
@click.argument("release")
@click.option("--workspace", "-w", type=click.Path(file_okay=False, path_type=Path), envvar="CURATE_WORKSPACE")
def verify(release: str, workspace: Path | None) -> None:
    """Check that a release (NAME@vN, or a release folder) still matches its sha256."""
    try:
        if Path(release).is_dir():
            folder = Path(release)
        else:
            name, version = parse_ref(release)
            if version is None:
                raise CurateError(f"'{release}' names no version: give NAME@vN or a release folder")
            folder = Releases(find_workspace(explicit=workspace), name).path(version)
        manifest, items = load_release(folder)
    except CurateError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    click.echo(f"{manifest.name}@{manifest.version}: {len(items)} items, content sha256 "
               f"{manifest.content_sha256} verified; KB snapshot {manifest.kb_snapshot}")


def main() -> None:
    """Entry point of the `evalrun` console script."""
    cli(prog_name="evalrun")
