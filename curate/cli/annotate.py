"""`curate annotate ...`: evidence labelling in Argilla."""

from __future__ import annotations

from pathlib import Path

import click

from curate.annotate.pull import pull, status
from curate.annotate.push import DEFAULT_STATUSES, push
from curate.cli.base import workspace_of
from curate.cli.display import console, table
from curate.records import STATUSES

API_URL = click.option("--api-url", envvar="ARGILLA_API_URL", help="Argilla URL (env ARGILLA_API_URL); the key is "
                       "read from ARGILLA_API_KEY.")


@click.group()
def annotate() -> None:
    """Label evidence in Argilla: serve a local Argilla, push items, pull labels, see progress."""


@annotate.command("serve")
@click.option("--port", type=click.IntRange(1, 65535), default=6900, show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (local only by default).")
@click.option("--data", "data_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where Argilla keeps its SQLite database (default: WORKSPACE/argilla).")
@click.pass_context
def serve_command(ctx: click.Context, port: int, host: str, data_dir: Path | None) -> None:
    """Run a local Argilla (SQLite in the workspace) until Ctrl-C; the owner's key is ARGILLA_API_KEY if set."""
    import os

    from curate.annotate.server.process import serve  # the optional argilla extra
    workspace = workspace_of(ctx)
    serve(data_dir or workspace.root / "argilla", port=port, host=host, api_key=os.environ.get("ARGILLA_API_KEY"),
          echo=click.echo)


@annotate.command("push")
@click.option("--dataset", required=True)
@click.option("--status", "statuses", multiple=True, type=click.Choice(STATUSES), help="Push items in these statuses (default: needs_evidence, "
              "draft, needs_adjudication, needs_rewrite).")
@click.option("--pool-k", type=click.IntRange(1, 50), default=8, show_default=True, help="Candidate chunks per question.")
@click.option("--min-annotators", type=click.IntRange(min=1), default=1, show_default=True,
              help="Submitted answers a record needs before it is pulled.")
@click.option("--argilla-workspace", default="curate", show_default=True)
@API_URL
@click.pass_context
def push_command(ctx: click.Context, dataset: str, statuses: tuple[str, ...], pool_k: int, min_annotators: int,
                 argilla_workspace: str, api_url: str | None) -> None:
    """Send items with their candidate chunks to Argilla; pushing again updates, never duplicates."""
    report = push(workspace_of(ctx), dataset=dataset, statuses=statuses or DEFAULT_STATUSES, pool_k=pool_k,
                  min_submitted=min_annotators, api_url=api_url, argilla_workspace=argilla_workspace)
    sizes = ", ".join(f"{n} with {k}" for k, n in sorted(report.pool_sizes.items(), reverse=True)) or "none"
    click.echo(f"{dataset}: pushed {report.pushed} items to Argilla dataset '{report.argilla_dataset}'"
               f"{' (created)' if report.created else ''}; candidates: {sizes}; guideline {report.guideline_version}")


@annotate.command("pull")
@click.option("--dataset", required=True)
@click.option("--adjudicator", help="A user whose submitted answer settles a disagreement.")
@API_URL
@click.pass_context
def pull_command(ctx: click.Context, dataset: str, adjudicator: str | None, api_url: str | None) -> None:
    """Apply submitted labels; report agreement, disagreements (needs_adjudication) and local conflicts."""
    report = pull(workspace_of(ctx), dataset=dataset, api_url=api_url, adjudicator=adjudicator)
    labelled = [a for a in report.applied if a.outcome == "labelled"]
    disputed = [a for a in report.applied if a.outcome == "needs_adjudication"]
    agreement = report.agreement
    out = console()
    out.print(f"{dataset}: labelled {len(labelled)}, needs adjudication {len(disputed)}, conflicts "
              f"{len(report.conflicts)}, waiting for annotators {report.pending}")
    out.print(f"agreement: relevance alpha {agreement['relevance_alpha']} over {agreement['units']} doubly graded "
              f"candidates; answerability kappa {agreement['answerability_kappa']}")
    pairs = [(pair, v["agreement"], v["units"], agreement["answerability_kappa_pairs"].get(pair, {}).get("agreement"))
             for pair, v in agreement["relevance_alpha_pairs"].items()]
    if pairs:
        out.print(table(None, ("annotators", "alpha", "units", "kappa"), pairs))
    if disputed:
        out.print(table("needs adjudication", ("item", "answers"), [(a.item_id, a.detail) for a in disputed]))
    if report.conflicts:
        out.print(table("left alone (changed locally after push)", ("item", "why"), sorted(report.conflicts.items())))


@annotate.command("status")
@click.option("--dataset", required=True)
@API_URL
@click.pass_context
def status_command(ctx: click.Context, dataset: str, api_url: str | None) -> None:
    """Progress per annotator (in Argilla) and items per status (here)."""
    result = status(workspace_of(ctx), dataset=dataset, api_url=api_url)
    out = console()
    out.print(table(f"{dataset}: items per status", ("status", "items"), sorted(result["statuses"].items())))
    progress = result["argilla"]
    if progress:
        out.print(f"Argilla: {progress.get('completed', 0)} of {progress.get('total', 0)} records completed, "
                  f"{progress.get('pending', 0)} pending")
        rows = []
        for user, counts in sorted((progress.get("users") or {}).items()):
            done = counts.get("completed", {})
            rows.append((user, done.get("submitted", 0), done.get("draft", 0), done.get("discarded", 0),
                         sum((counts.get("pending") or {}).values())))
        if rows:
            out.print(table(None, ("annotator", "submitted", "draft", "discarded", "on pending records"), rows))
