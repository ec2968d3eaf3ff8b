"""`evalrun run` and `evalrun verify`."""

from __future__ import annotations

from pathlib import Path

import click

from curate import CurateError, InputError, Releases, load_release, parse_ref
from curate.cli import workspace_of
from evalrun.api import run as run_release
from evalrun.api import workspace_from
from evalrun.cli.show import print_summary
from evalrun.records import MAX_JUDGE_REPEATS, MAX_K, RunSettings
from evalrun.scoring.failures import export_failures
from evalrun.views import ATTRIBUTIONS, next_steps
from evalrun.scoring.trec import export_run

WORKSPACE = click.option("--workspace", "-w", "command_workspace", type=click.Path(file_okay=False, path_type=Path),
                         help="The curate workspace (default: the root --workspace, else found from here up).")


def named_workspace(ctx: click.Context, explicit: Path | None) -> Path | None:
    """Return the workspace folder the command names (its own --workspace, else the root's), or None: the
    library function then finds it from here up, after checking the options (a bad option is named first)."""
    return explicit or ctx.find_root().params.get("workspace")


def parse_ks(text: str) -> list[int]:
    """Return the cutoffs of '1,3,5,10', or raise InputError.

    >>> parse_ks("10, 1,3")
    [1, 3, 10]
    """
    try:
        cutoffs = sorted({int(k) for k in text.split(",") if k.strip()})
    except ValueError:
        cutoffs = []
    if not cutoffs or min(cutoffs) < 1:
        raise InputError(f"--k {text!r}: give positive whole numbers, e.g. 1,3,5,10")
    if max(cutoffs) > MAX_K:
        raise InputError(f"--k {text!r}: at most {MAX_K} (a larger cutoff is a typo, not a measurement), "
                         f"e.g. 1,3,5,10")
    return cutoffs


@click.command()
@click.argument("release")
@WORKSPACE
@click.pass_context
def verify(ctx: click.Context, release: str, command_workspace: Path | None) -> None:
    """Check that a release (NAME@vN, or a release folder) still matches its sha256."""
    if Path(release).is_dir():
        folder = Path(release)
    else:
        name, version = parse_ref(release)
        if version is None:
            raise CurateError(f"'{release}' names no version: give NAME@vN or a release folder")
        folder = Releases(workspace_of(ctx, command_workspace), name).path(version)
    manifest, items = load_release(folder)
    click.echo(f"{manifest.name}@{manifest.version}: {len(items)} items, content sha256 "
               f"{manifest.content_sha256} verified; KB snapshot {manifest.kb_snapshot}")


@click.command("run")
@click.option("--dataset", "ref", required=True, help="The release to run: NAME@vN.")
@click.option("--target", help="path/to/file.py:function or module:function (called with the question, returns a "
              "trace), or http(s)://URL.")
@click.option("--traces", type=click.Path(dir_okay=False, path_type=Path),
              help="Traces a system already logged (JSONL), or a TREC run file (retrieval only).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Run folder (default: runs/NAME-vN-TIME).")
@click.option("--resume", is_flag=True, help="Finish a run folder a kill interrupted, with the judge it started with "
              "(another judge endpoint or model is refused, naming both).")
@click.option("--k", "ks", default="1,3,5,10", show_default=True, help="Cutoffs for retrieval metrics.")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True)
@click.option("--warmup", type=click.IntRange(min=0), default=RunSettings().warmup, show_default=True,
              help="Calls per worker timed apart as warm-up (imports, model loading, connections): the first "
              "warmup x concurrency calls are left out of the latency percentiles, counted and shown apart (their "
              "tokens and cost still count); a --resume warms up again. 0: none. --traces has none.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              help="Seconds per item for the target, from the moment its call starts.")
@click.option("--max-response-bytes", type=click.IntRange(min=1), default=RunSettings().max_response_bytes,
              show_default=True, help="Largest response body an HTTP target may send; a larger one fails that item.")
@click.option("--precision-denominator", type=click.Choice(["k", "returned"]), default="k", show_default=True,
              help="Precision@K divides by K (trec_eval) or by the number returned when fewer.")
@click.option("--oracle-context", is_flag=True, help="Diagnostic: give target.generate(question, context) the "
              "verified evidence as context.")
@click.option("--allow-unchecked", is_flag=True, help="Run although the leakage check is missing or failed.")
@click.option("--exclude-errors", is_flag=True, help="Leave items whose target failed out of every metric (listed "
              "as unscored with the reason) instead of scoring them as a system that returned nothing.")
@click.option("--price-input", type=click.FloatRange(min=0), help="USD per million prompt tokens of the system (when traces give no cost).")
@click.option("--price-output", type=click.FloatRange(min=0), help="USD per million completion tokens of the system.")
@click.option("--judge-repeats", type=click.IntRange(1, MAX_JUDGE_REPEATS), default=1, show_default=True,
              help="Judge each answer this many times (each repeat asked anew): the first verdicts score, the others "
              "measure the judge's own flip rate, which `evalrun compare --flips` holds item flips against.")
@click.option("--no-judge", is_flag=True, help="Ask no judge (none is contacted): the judged metrics are not "
              "computed and counted as unscored, not 0; everything else is scored.")
@click.option("--judge-retrieval/--no-judge-retrieval", default=None, help="Have the judge grade each item's top K "
              "candidates and its context 0/1/2 under the relevance guideline: metrics under judged/ (apart from the "
              "labelled ones), possibly missing evidence, agreement with the labels. Default: curate.toml's [judge] "
              "retrieval, else off.")
@click.option("--judge-retrieval-k", type=click.IntRange(1, MAX_K), help="Candidates graded per item (default: the "
              "largest --k).")
@click.option("--budget", type=click.FloatRange(min=0, min_open=True), help="The most the judge may cost in this "
              "run, in USD (needs [judge.prices]): no request is sent that could go past it; the questions left "
              "unasked are unscored with the reason.")
@click.option("--budget-tokens", type=click.IntRange(min=1), help="The same limit in tokens (prompt and answer).")
@WORKSPACE
@click.pass_context
def run_command(ctx: click.Context, ref, target, traces, out, resume, ks, concurrency, warmup, timeout,
                max_response_bytes, precision_denominator, oracle_context, allow_unchecked, exclude_errors,
                price_input, price_output, judge_repeats, no_judge, judge_retrieval, judge_retrieval_k, budget,
                budget_tokens, command_workspace) -> None:
    """Run a RAG system over a release and score every layer apart.

    Ctrl-C stops the run cleanly (exit 130) and names the `--resume` command that finishes it. A
    resumed run is scored with the settings it was started with (K, precision, --exclude-errors,
    prices: its manifest's) and by the judge it was started with: with another judge endpoint or model
    configured, --resume is refused before any call."""
    workspace = named_workspace(ctx, command_workspace)
    done = run_release(ref, target=target, traces=traces, workspace=workspace, out=out,
                       resume=resume, ks=parse_ks(ks), concurrency=concurrency, warmup=warmup, timeout=timeout,
                       max_response_bytes=max_response_bytes, precision_denominator=precision_denominator,
                       oracle_context=oracle_context, allow_unchecked=allow_unchecked, exclude_errors=exclude_errors,
                       price_input=price_input, price_output=price_output, judge_repeats=judge_repeats,
                       no_judge=no_judge, judge_retrieval=judge_retrieval, judge_retrieval_k=judge_retrieval_k,
                       budget_usd=budget, budget_tokens=budget_tokens)
    print_summary(done.folder)
    click.echo("\n".join(["", *next_steps(done.folder, workspace_from(workspace).root)]))


@click.command("export-run")
@click.argument("run_folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--layer", type=click.Choice(["candidates", "context"]), default="candidates", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="The TREC run file.")
@click.option("--chunks", is_flag=True, help="Write the chunk ids as the system returned them, not evidence groups.")
@WORKSPACE
@click.pass_context
def export_run_command(ctx: click.Context, run_folder: Path, layer: str, out: Path, chunks: bool,
                       command_workspace: Path | None) -> None:
    """Write one layer of a run as a TREC run, in the evidence-group terms of `curate export --format beir`'s
    groups/ qrels, so trec_eval or ranx give evalrun's values."""
    counts = export_run(workspace_of(ctx, command_workspace), run_folder, out, layer=layer, chunks=chunks)
    click.echo(f"wrote {out}: " + ", ".join(f"{n} {what}" for what, n in counts.items()), err=True)


@click.command("export-failures")
@click.argument("run_folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="The log file (JSONL); default: "
              "standard output.")
@click.option("--attribution", "attributions", multiple=True, type=click.Choice(ATTRIBUTIONS),
              help="Export items failed this way (repeat; default: every attribution).")
@WORKSPACE
@click.pass_context
def export_failures_command(ctx: click.Context, run_folder: Path, out: Path | None, attributions: tuple[str, ...],
                            command_workspace: Path | None) -> None:
    """Write a scored run's failed items as a production log `curate add-failures` reads (question, answer,
    retrieved chunk ids, tag `wrong` and the attributions, run id); items already in the dataset count as
    duplicates there."""
    data, rows = export_failures(workspace_of(ctx, command_workspace), run_folder, out,
                                 attributions=attributions or ATTRIBUTIONS)
    if out is None:
        click.echo(data.decode("utf-8"), nl=False)
    click.echo(f"{rows} failed items" + (f" written to {out}" if out else ""), err=True)
