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


def _workspace(workspace: Path | None):
    return find_workspace(explicit=workspace)


WORKSPACE = click.option("--workspace", "-w", type=click.Path(file_okay=False, path_type=Path),
                         envvar="CURATE_WORKSPACE", help="The curate workspace (default: found from here up).")


@cli.command()
@click.option("--dataset", "ref", required=True, help="The release to run: NAME@vN.")
@click.option("--target", help="module:function (called with the question, returns a trace) or http(s)://URL.")
@click.option("--traces", type=click.Path(dir_okay=False, path_type=Path),
              help="Traces a system already logged (JSONL), or a TREC run file (retrieval only).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Run folder (default: runs/NAME-vN-TIME).")
@click.option("--resume", is_flag=True, help="Finish a run folder a kill interrupted.")
@click.option("--k", "ks", default="1,3,5,10", show_default=True, help="Cutoffs for retrieval metrics.")
@click.option("--concurrency", type=int, default=4, show_default=True)
@click.option("--timeout", type=float, default=60.0, show_default=True, help="Seconds per item for the target.")
@click.option("--precision-denominator", type=click.Choice(["k", "returned"]), default="k", show_default=True,
              help="Precision@K divides by K (trec_eval) or by the number returned when fewer.")
@click.option("--oracle-context", is_flag=True, help="Diagnostic: give target.generate(question, context) the "
              "verified evidence as context.")
@click.option("--allow-unchecked", is_flag=True, help="Run although the leakage check is missing or failed.")
@click.option("--price-input", type=float, help="USD per million prompt tokens of the system (when traces give no cost).")
@click.option("--price-output", type=float, help="USD per million completion tokens of the system.")
@WORKSPACE
def run(ref, target, traces, out, resume, ks, concurrency, timeout, precision_denominator, oracle_context,
        allow_unchecked, price_input, price_output, workspace) -> None:
    """Run a RAG system over a release and score every layer apart."""
    from .runner import RunSettings
    from .runner import run as run_release
    try:
        cutoffs = tuple(sorted({int(k) for k in ks.split(",") if k.strip()}))
        if not cutoffs or min(cutoffs) < 1:
            raise ValueError
    except ValueError:
        click.echo(f"error: --k {ks!r}: give positive whole numbers, e.g. 1,3,5,10", err=True)
        sys.exit(2)
    settings = RunSettings(ks=cutoffs, concurrency=concurrency, timeout=timeout, oracle_context=oracle_context,
                           allow_unchecked=allow_unchecked, precision_denominator=precision_denominator,
                           price_input=price_input, price_output=price_output)
    try:
        folder = run_release(_workspace(workspace), ref=ref, target=target, traces=traces, out=out, resume=resume,
                             settings=settings)
    except CurateError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    from .show import print_summary
    print_summary(folder)


@cli.command()
@click.argument("run_folder", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--failures", is_flag=True, help="List the items behind each failure attribution.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def show(run_folder: Path, failures: bool, as_json: bool) -> None:
    """Print a run's summary: unscored items first, retrieval per layer, end to end, attribution."""
    from .show import print_failures, print_summary
    if as_json:
        click.echo((run_folder / "summary.json").read_text(encoding="utf-8"))
    elif failures:
        print_failures(run_folder)
    else:
        print_summary(run_folder)


def main() -> None:
    """Entry point of the `evalrun` console script."""
    cli(prog_name="evalrun")
