"""`evalrun review push|pull RUN`: people check the judge's verdicts in Argilla; `evalrun calibrate RUN`:
what their checks say about the judge and its means."""

from __future__ import annotations

from pathlib import Path

import click

from curate.cli import CommandGroup, console, workspace_of
from evalrun.cli.review_views import estimate_table, review_headline, kappa_cell
from evalrun.cli.run import WORKSPACE
from evalrun.review.argilla import pull, push

API_URL = click.option("--api-url", envvar="ARGILLA_API_URL", help="Argilla URL (env ARGILLA_API_URL); the key is "
                       "read from ARGILLA_API_KEY.")
RUN = click.argument("folder", metavar="RUN", type=click.Path(exists=True, file_okay=False, path_type=Path))


def _workspace(ctx: click.Context, command_workspace: Path | None):
    return workspace_of(ctx, command_workspace)


@click.group(cls=CommandGroup)
def review() -> None:
    """People check the judge: send a sample of a run's judged answers to Argilla, pull the reviews back."""


@review.command("push")
@RUN
@WORKSPACE
@click.option("--n", "n", type=click.IntRange(min=1), default=100, show_default=True,
              help="Items to review (a stratified sample; more weight where the judge seemed unsure).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the draw.")
@click.option("--min-reviewers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Submitted reviews a record needs before it is done.")
@click.option("--argilla-workspace", default="curate", show_default=True)
@click.option("--argilla-dataset", help="Argilla dataset name (default: review-RUNFOLDER).")
@click.option("--like", "like_run", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Reuse the sample of this run's review (to compare the two runs corrected by people): items whose "
              "answer did not change carry their reviews over; only the others are sent.")
@API_URL
@click.pass_context
def push_command(ctx: click.Context, folder: Path, command_workspace: Path | None, n: int, seed: int, min_reviewers: int, argilla_workspace: str,
                 argilla_dataset: str | None, like_run: Path | None, api_url: str | None) -> None:
    """Send a sample of a run's judged answers to Argilla; pushing again finishes a killed push, never redraws."""
    report = push(_workspace(ctx, command_workspace), folder, n=n, seed=seed, min_submitted=min_reviewers, api_url=api_url,
                  argilla_workspace=argilla_workspace, argilla_dataset=argilla_dataset, like_run=like_run)
    how = "drew" if report.drawn else "kept the sample drawn before:"
    click.echo(f"{folder.name}: {how} {report.chosen} of {report.candidates:,} judged items; strata by "
               f"{', '.join(report.dimensions) or 'nothing (too few items to stratify)'}")
    click.echo(f"  sent {report.pushed} records to Argilla dataset '{report.argilla_dataset}'"
               + ("" if report.pushed or report.carried else " (all were there already)"))
    if report.carried:
        click.echo(f"  {report.carried} items gave the same answer as in the run reused (--like): their reviews carry "
                   "over, no record sent")
    if report.unreviewable:
        click.echo(f"  {report.unreviewable} items of the sample have no reviewable verdict in this run (no answer, "
                   "or an unscored verdict): left out", err=True)
    for kind, count in sorted(report.left_out.items()):
        click.echo(f"  {count} items have more {kind} verdicts than the form shows: their {kind} metrics are not "
                   "reviewed", err=True)


@review.command("pull")
@RUN
@WORKSPACE
@API_URL
@click.pass_context
def pull_command(ctx: click.Context, folder: Path, command_workspace: Path | None, api_url: str | None) -> None:
    """Store the submitted reviews in the run folder (reviews.jsonl); refuse those of another judge or answer."""
    report = pull(_workspace(ctx, command_workspace), folder, api_url=api_url)
    out = console(markup=True)
    out.print(f"{folder.name}: {report.reviews} reviews (reviewer x item x metric) from {report.records} records; "
              f"{report.waiting} records wait for reviewers", soft_wrap=True)
    if report.carried:
        out.print(f"  {report.carried} items' reviews carried over from the run reused (--like): the same answers",
                  soft_wrap=True)
    for item_id, why in sorted(report.refused.items()):
        out.print(f"  refused {item_id}: {why}", soft_wrap=True, markup=False)
    for line in report.unreadable:
        out.print(f"  not read: {line}", soft_wrap=True, markup=False)


@click.command("calibrate")
@RUN
@WORKSPACE
@click.option("--width", type=float, help="Say how many reviews would bring each estimate's 95% interval to this "
              "full width (e.g. 0.1).")
@click.option("--against", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Another run of the same answers judged by another judge (`evalrun rejudge`): the two judges' "
              "agreement (default: the run this one was rejudged from, if it is one).")
@click.pass_context
def calibrate_command(ctx: click.Context, folder: Path, command_workspace: Path | None, width: float | None, against: Path | None) -> None:
    """How far people agree with the judge, and each judged mean corrected by the judge's measured error; with
    a rejudged run, how far the two judges agree."""
    from evalrun.records import read_run
    from evalrun.review.calibrate import calibrate_run, has_reviews
    workspace = _workspace(ctx, command_workspace)
    other = against or _rejudged_from(read_run(folder))
    if not has_reviews(folder) and other is None:
        calibrate_run(workspace, folder, width)   # says what is missing, in one line
    out = console(markup=True)
    if has_reviews(folder):
        found = calibrate_run(workspace, folder, width)
        for line in review_headline(found):
            out.print(line, soft_wrap=True)
        out.print(estimate_table(found))
        _details(out, found)
    if other is not None:
        _judges(out, workspace, other, folder)


def _rejudged_from(run) -> Path | None:
    source = run.manifest.rejudged_from
    return Path(source) if source and Path(source).is_dir() else None


def _details(out, found) -> None:
    """Print the notes, agreement per language and difficulty, the confusion tables and the worst disagreements."""
    from rich.markup import escape

    from curate.cli import table
    from evalrun.review.form import KIND_TITLES
    from evalrun.review.verdicts import KIND_OF
    for name, m in found.metrics.items():
        if m.agreement.note:
            out.print(f"  {escape(name)}: kappa: {escape(m.agreement.note)}", soft_wrap=True)
        if m.estimate is not None and m.estimate.note:
            out.print(f"  {escape(name)}: no corrected estimate: {escape(m.estimate.note)}", soft_wrap=True)
        if m.strata_used < len(found.dimensions) and m.estimate is not None and m.estimate.estimate is not None:
            kept = ", ".join(found.dimensions[:m.strata_used]) or "none"
            out.print(f"  {escape(name)}: strata coarsened to ({kept}) so that each holds a reviewed item",
                      soft_wrap=True)
    out.print(_groups_table("agreement per language and difficulty", found.metrics))
    seen = set()
    for name, m in found.metrics.items():
        if KIND_OF[name] in seen:
            continue
        seen.add(KIND_OF[name])
        out.print(_confusion(f"{KIND_TITLES[KIND_OF[name]]} verdicts: judge (rows) x people (columns)", m.agreement))
    worst = [(name, d.item_id, d.reviewer, f"{d.judge_value:.2f}", f"{d.person_value:.2f}", d.reason or "")
             for name, m in found.metrics.items() for d in m.worst]
    if worst:
        out.print(table("worst disagreements", ("metric", "item", "reviewer", "judge", "person", "reason"), worst))


def _groups_table(title: str, metrics: dict):
    from curate.cli import table
    rows = [(name, f"{by}={group}", a.n, "—" if a.agreement is None else f"{a.agreement:.0%}", kappa_cell(a))
            for name, m in metrics.items()
            for by, split in (("language", m.by_language), ("difficulty", m.by_difficulty))
            for group, a in split.items()]
    return table(title, ("metric", "group", "verdicts", "agree", "kappa [95% CI]"), rows)


def _confusion(title: str, agreement):
    from curate.cli import table
    labels = agreement.labels
    return table(title, ("", *labels), [(j, *(agreement.confusion.get(j, {}).get(p, 0) for p in labels))
                                        for j in labels])


def _judges(out, workspace, other: Path, folder: Path) -> None:
    """Print how the judge of `other` (rows) and the judge of `folder` (columns) agree, verdict by verdict."""
    from curate import Releases, load_release
    from curate.cli import table
    from evalrun.records import scored_run
    from evalrun.review.calibrate import judges_agreement
    from evalrun.review.form import KIND_TITLES
    from evalrun.review.verdicts import KIND_OF
    first, second = scored_run(other), scored_run(folder)
    _, items = load_release(Releases(workspace, second.manifest.dataset).path(second.manifest.version))
    found = judges_agreement(items, first.scores or [], second.scores or [])
    rows_model, columns_model = (run.manifest.judge.get("model") or "?" for run in (first, second))
    out.print(f"judge against judge: {rows_model} ({other.name}, rows) and {columns_model} ({folder.name}, "
              "columns) on the same answers", soft_wrap=True)
    rows = [(name, j.items, j.agreement.n, "—" if j.agreement.agreement is None else f"{j.agreement.agreement:.0%}",
             kappa_cell(j.agreement)) for name, j in found.items()]
    out.print(table("the two judges' agreement (over verdicts)", ("metric", "answers", "verdicts", "agree",
                                                                  "kappa [95% CI]"), rows))
    out.print(_groups_table("the two judges per language and difficulty", found))
    seen = set()
    for name, j in found.items():
        if KIND_OF[name] not in seen:
            seen.add(KIND_OF[name])
            out.print(_confusion(f"{KIND_TITLES[KIND_OF[name]]} verdicts: {rows_model} (rows) x {columns_model} "
                                 "(columns)", j.agreement))


@click.command("rejudge")
@RUN
@WORKSPACE
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The new run folder (the run itself is left as it was).")
@click.option("--judge-model", help="The other judge's model (else CURATE_JUDGE_MODEL, else curate.toml).")
@click.option("--base-url", "--judge-base-url", "base_url", help="Its OpenAI-compatible endpoint (else "
              "CURATE_JUDGE_BASE_URL, else curate.toml).")
@click.option("--judge-api-key-env", help="The environment variable holding its key.")
@click.pass_context
def rejudge_command(ctx: click.Context, folder: Path, command_workspace: Path | None, out: Path, judge_model: str | None, base_url: str | None,
                    judge_api_key_env: str | None) -> None:
    """Judge a run's frozen answers again with another judge, into a new scored run; the system is not called."""
    from evalrun.records import read_run
    from evalrun.review.rejudge import rejudge
    done = rejudge(_workspace(ctx, command_workspace), folder, out, base_url=base_url, model=judge_model, api_key_env=judge_api_key_env)
    judge = read_run(done).summary.judge
    click.echo(f"{done}: {folder.name}'s answers judged again by model {judge.config.get('model') if judge.config else '?'}"
               f" ({judge.status}); `evalrun compare {folder} {done}` shows what the judge alone changes")
