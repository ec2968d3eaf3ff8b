"""`curate annotate ...`: evidence labelling in Argilla."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click

from curate.annotate.pull import pull, status
from curate.annotate.push import DEFAULT_STATUSES, push
from curate.annotate.suggestions import SuggestionsReport
from curate.cli import annotate_users
from curate.cli.base import CommandGroup, workspace_of
from curate.cli.display import console, table
from curate.records import STATUSES

API_URL = click.option("--api-url", envvar="ARGILLA_API_URL", help="Argilla URL (env ARGILLA_API_URL); the key is "
                       "read from ARGILLA_API_KEY.")


@click.group(cls=CommandGroup)
def annotate() -> None:
    """Label evidence in Argilla: serve a local Argilla, push items, pull labels, see progress."""


annotate.add_command(annotate_users.users)


@annotate.command("serve")
@click.option("--port", type=click.IntRange(1, 65535), default=6900, show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (local only by default).")
@click.option("--data", "data_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where Argilla keeps its SQLite database (default: WORKSPACE/argilla).")
@click.option("--argilla-workspace", default="curate", show_default=True,
              help="The Argilla workspace the team labels in (created when missing).")
@click.pass_context
def serve_command(ctx: click.Context, port: int, host: str, data_dir: Path | None, argilla_workspace: str) -> None:
    """Run a local Argilla (SQLite in the workspace) until Ctrl-C; the owner's key is ARGILLA_API_KEY if set."""
    import os

    from curate.annotate.server.process import serve  # the optional argilla extra
    workspace = workspace_of(ctx)
    serve(data_dir or workspace.root / "argilla", port=port, host=host, api_key=os.environ.get("ARGILLA_API_KEY"),
          workspace=argilla_workspace, echo=click.echo)


@annotate.command("push")
@click.option("--dataset", required=True)
@click.option("--status", "statuses", multiple=True, type=click.Choice(STATUSES), help="Push items in these statuses (default: needs_evidence, "
              "draft, needs_adjudication, needs_rewrite).")
@click.option("--pool-k", type=click.IntRange(1, 50), default=8, show_default=True, help="Candidate chunks per question.")
@click.option("--min-annotators", type=click.IntRange(min=1), default=1, show_default=True,
              help="Submitted answers a record needs before it is pulled.")
@click.option("--argilla-workspace", default="curate", show_default=True)
@click.option("--suggest-from", metavar="RUN", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Show the judge's grades of this evalrun run folder (its retrieval_grades.jsonl) as suggestions, "
              "a person's label staying the suggestion where there is one; later pushes keep showing them.")
@click.option("--no-suggestions", is_flag=True, help="Stop showing the judge's grades an earlier --suggest-from "
              "brought (they are removed from the records pushed).")
@API_URL
@click.pass_context
def push_command(ctx: click.Context, dataset: str, statuses: tuple[str, ...], pool_k: int, min_annotators: int,
                 argilla_workspace: str, suggest_from: Path | None, no_suggestions: bool, api_url: str | None) -> None:
    """Send items with their candidate chunks to Argilla; pushing again updates, never duplicates."""
    report = push(workspace_of(ctx), dataset=dataset, statuses=statuses or DEFAULT_STATUSES, pool_k=pool_k,
                  min_submitted=min_annotators, api_url=api_url, argilla_workspace=argilla_workspace,
                  suggest_from=suggest_from, no_suggestions=no_suggestions)
    if not report.pushed:
        held = ", ".join(f"{n} {s}" for s, n in sorted(report.statuses_here.items())) or "none"
        click.echo(f"{dataset}: nothing to push: no item is in status {', '.join(statuses or DEFAULT_STATUSES)} "
                   f"(items here: {held}); --status chooses others")
        return
    sizes = ", ".join(f"{n} with {k}" for k, n in sorted(report.pool_sizes.items(), reverse=True)) or "none"
    click.echo(f"{dataset}: pushed {report.pushed} items to Argilla; candidates: {sizes}; "
               f"guideline {report.guideline_version}")
    for name, count in report.records.items():
        made = " (rebuilt: " + report.rebuilt[name] + ")" if name in report.rebuilt else (
            " (created)" if name in report.created_datasets else "")
        click.echo(f"  Argilla dataset '{name}': {count} record{'' if count == 1 else 's'}{made}")
    for item_id, name in sorted(report.moved.items()):
        click.echo(f"  {item_id} moved to '{name}' (its number of candidates changed)")
    for item_id, why in sorted(report.held.items()):
        click.echo(f"  {item_id} not pushed: {why}")
    for item_id, old in sorted(report.kept.items()):
        click.echo(f"  {item_id}: its old record in '{old}' holds answers, so it was kept there")
    if report.scoped:
        click.echo("  records show who asks and when, and mark each candidate the asker may not use at that moment")
    if report.judge is not None:
        _echo_judge(report.judge)
    if report.judge_dropped:
        click.echo(f"  removed {report.judge_dropped} earlier judge's suggestions (their slots suggest nothing now)")
    for name in report.without_scope_field:
        click.echo(f"note: Argilla dataset '{name}' was made before scope and holds answers, so it cannot take the "
                   f"'Who asks, and when' field: its candidates carry the marks, its records not the asker line "
                   f"(push to another --argilla-workspace to show it)", err=True)


def _echo_judge(judge: SuggestionsReport) -> None:
    """Print what a push showed of the judge's grades, and every grade it could not use."""
    models = ", ".join(judge.models) or "none"
    click.echo(f"  judge's suggestions from {judge.run} (judge model {models}): {judge.items} items; "
               f"{judge.suggested} candidates suggest the judge's grade, {judge.under_people} keep a person's label "
               f"(the judge's grade in their text); {judge.joined} chunks joined the pools as judged")
    if judge.not_shown:
        click.echo(f"  {judge.not_shown} graded chunks are not among their item's candidates (a full pool, or an "
                   f"answered record's kept candidates)")
    skipped = sum(judge.skipped.values())
    if skipped:
        reasons = ", ".join(f"{why} {n}" for why, n in sorted(judge.skipped.items()) if n)
        click.echo(f"  {skipped} grades skipped: {reasons}")


@annotate.command("pull")
@click.option("--dataset", required=True)
@click.option("--adjudicator", help="A user whose submitted answer settles a disagreement.")
@API_URL
@click.pass_context
def pull_command(ctx: click.Context, dataset: str, adjudicator: str | None, api_url: str | None) -> None:
    """Apply submitted labels; report agreement, disagreements (needs_adjudication) and local conflicts."""
    report = pull(workspace_of(ctx), dataset=dataset, api_url=api_url, adjudicator=adjudicator)
    labelled = [a for a in report.applied if a.outcome == "labelled"]
    adjudicated = [a for a in labelled if a.adjudicated_by]
    agreement = report.agreement
    out = console()
    out.print(f"{dataset}: labelled {len(labelled)} ({len(adjudicated)} by adjudication), open disputes "
              f"{len(report.open_disputes)}, conflicts {len(report.conflicts)}, waiting for annotators "
              f"{report.pending}; status updated on {report.status_updates} Argilla records")
    if report.rejected:
        out.print(f"rejected {len(report.rejected)} generated questions their reviewers discarded: "
                  f"{', '.join(report.rejected)}", soft_wrap=True)
    out.print(f"agreement: relevance alpha {agreement['relevance_alpha']} over {agreement['units']} doubly graded "
              f"candidates; answerability kappa {agreement['answerability_kappa']}")
    pairs = [(pair, v["agreement"], v["units"], agreement["answerability_kappa_pairs"].get(pair, {}).get("agreement"))
             for pair, v in agreement["relevance_alpha_pairs"].items()]
    if pairs:
        out.print(table(None, ("annotators", "alpha", "units", "kappa"), pairs))
    if adjudicated:
        out.print(table("settled by adjudication", ("item", "by"),
                        [(a.item_id, ", ".join(a.adjudicated_by)) for a in adjudicated]))
    notes = [(a.item_id, note) for a in labelled for note in a.notes]
    if notes:
        out.print(table("merged or differing texts (for a person to check)", ("item", "note"), notes))
    if report.open_disputes:
        where = f" (adjudicate in Argilla dataset '{report.adjudication_dataset}')" if report.adjudication_dataset else ""
        out.print(table(f"needs adjudication{where}", ("item", "answers"), sorted(report.open_disputes.items())))
    if report.conflicts:
        out.print(table("left alone (changed locally after push)", ("item", "why"), sorted(report.conflicts.items())))
    if report.judge is not None:
        changed = report.judge.changed()
        moves = Counter((c.judge_grade, c.person_grade) for _, c in changed)
        said = ", ".join(f"judge {j} → person {p} on {n}" for (j, p), n in sorted(moves.items(), key=lambda m: -m[1]))
        said = f" ({said})" if said else ""
        out.print(f"judge's suggestions: {report.judge.kept()} kept, {len(changed)} changed{said}")
        if changed:
            out.print(table("grades annotators changed from the judge's suggestion",
                            ("item", "candidate", "chunk", "judge", "person", "annotator"),
                            [(item_id, c.slot, c.chunk_id, c.judge_grade, c.person_grade, c.user)
                             for item_id, c in changed]))


@annotate.command("status")
@click.option("--dataset", required=True)
@API_URL
@click.pass_context
def status_command(ctx: click.Context, dataset: str, api_url: str | None) -> None:
    """Progress per annotator (in Argilla) and items per status (here)."""
    result = status(workspace_of(ctx), dataset=dataset, api_url=api_url)
    out = console()
    out.print(f"{dataset}: items per status")
    out.print(table(None, ("status", "items"), sorted(result["statuses"].items())))
    progress = result["argilla"]
    if not progress:
        return
    columns = ("submitted", "draft", "discarded", "pending", "completed_by_others", "records")
    headings = ("submitted", "draft", "discarded", "pending", "done by others", "records")
    names = ", ".join(f"'{name}'" for name in progress["datasets"])
    out.print(f"Argilla ({names}): {progress['completed']} of {progress['records']} records completed")
    rows = [(user, *(counts[c] for c in columns)) for user, counts in progress["users"].items()]
    if rows:
        out.print(table(None, ("annotator", *headings), rows))
    if len(progress["datasets"]) > 1:
        rows = [(name, user, *(counts[c] for c in columns)) for name, held in progress["datasets"].items()
                for user, counts in held["users"].items()]
        out.print(table("per Argilla dataset", ("dataset", "annotator", *headings), rows))
    adjudication = progress.get("adjudication")
    if adjudication:
        out.print(f"adjudication ('{adjudication['dataset']}'): {adjudication['open']} of "
                  f"{adjudication['records']} records open")
        rows = [(user, *(counts[c] for c in columns)) for user, counts in adjudication["users"].items()]
        if rows:
            out.print(table(None, ("reviewer", *headings), rows))
