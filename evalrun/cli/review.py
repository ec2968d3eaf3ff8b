"""`evalrun review push|pull RUN`: people check the judge's verdicts in Argilla; `evalrun calibrate RUN`:
what their checks say about the judge and its means."""

from __future__ import annotations

from pathlib import Path

import click

from curate.cli import console
from curate.cli.base import CommandGroup, workspace_of
from evalrun.review.argilla import pull, push

API_URL = click.option("--api-url", envvar="ARGILLA_API_URL", help="Argilla URL (env ARGILLA_API_URL); the key is "
                       "read from ARGILLA_API_KEY.")
RUN = click.argument("folder", metavar="RUN", type=click.Path(exists=True, file_okay=False, path_type=Path))


@click.group(cls=CommandGroup)
def review() -> None:
    """People check the judge: send a sample of a run's judged answers to Argilla, pull the reviews back."""


@review.command("push")
@RUN
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
def push_command(ctx: click.Context, folder: Path, n: int, seed: int, min_reviewers: int, argilla_workspace: str,
                 argilla_dataset: str | None, like_run: Path | None, api_url: str | None) -> None:
    """Send a sample of a run's judged answers to Argilla; pushing again finishes a killed push, never redraws."""
    report = push(workspace_of(ctx), folder, n=n, seed=seed, min_submitted=min_reviewers, api_url=api_url,
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
@API_URL
@click.pass_context
def pull_command(ctx: click.Context, folder: Path, api_url: str | None) -> None:
    """Store the submitted reviews in the run folder (reviews.jsonl); refuse those of another judge or answer."""
    report = pull(workspace_of(ctx), folder, api_url=api_url)
    out = console()
    out.print(f"{folder.name}: {report.reviews} reviews (reviewer x item x metric) from {report.records} records; "
              f"{report.waiting} records wait for reviewers", soft_wrap=True)
    for item_id, why in sorted(report.refused.items()):
        out.print(f"  refused {item_id}: {why}", soft_wrap=True, markup=False)
    for line in report.unreadable:
        out.print(f"  not read: {line}", soft_wrap=True, markup=False)


def _kappa(a) -> str:
    if a.kappa is None:
        return "— (see below)" if a.note else "—"
    return f"{a.kappa:.2f}" + (f" [{a.ci95[0]:.2f}, {a.ci95[1]:.2f}]" if a.ci95 else "")


def _interval(value: float | None, ci: tuple[float, float] | None) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def review_headline(found) -> list[str]:
    """Return the lines a calibration says before any number: too few reviews, an untrusted judge."""
    from rich.markup import escape
    lines = [f"[bold]TOO FEW REVIEWS to judge the judge on {escape(metric)}[/bold]: {escape(why)}"
             for metric, why in found.too_few.items()]
    lines += [f"[bold red]JUDGE NOT TRUSTED on {escape(metric)}[/bold red]: {escape(why)}; the judge's mean is not "
              "to be reported alone: read the corrected estimate beside it" for metric, why in found.untrusted.items()]
    if found.refused:
        lines.append(f"[bold]{found.refused} reviews of another judge configuration left out[/bold]")
    return lines


def estimate_table(found):
    """Return the table of agreement and estimates per judged metric."""
    from curate.cli import table
    width = found.width
    rows = []
    for name, m in found.metrics.items():
        e = m.estimate
        rows.append((name, f"{m.items_reviewed} of {e.n_items:,}" if e else str(m.items_reviewed), m.agreement.n,
                     "—" if m.agreement.agreement is None else f"{m.agreement.agreement:.0%}", _kappa(m.agreement),
                     "—" if e is None or e.judge_mean is None else f"{e.judge_mean:.3f}",
                     _interval(e.estimate, e.ci95) if e else "—", _interval(e.classical, e.classical_ci95) if e else "—",
                     *((("—" if m.needed is None else f"{m.needed:,}"),) if width else ())))
    return table("the judge checked by people (agreement over verdicts; means over the items that could be reviewed)",
                 ("metric", "items reviewed", "verdicts", "agree", "kappa [95% CI]", "judge mean",
                  "corrected (PPI) [95% CI]", "reviewed only [95% CI]",
                  *((f"reviews for width {width:g}",) if width else ())), rows)


@click.command("calibrate")
@RUN
@click.option("--width", type=float, help="Say how many reviews would bring each estimate's 95% interval to this "
              "full width (e.g. 0.1).")
@click.pass_context
def calibrate_command(ctx: click.Context, folder: Path, width: float | None) -> None:
    """How far people agree with the judge, and each judged mean corrected by the judge's measured error."""
    from rich.markup import escape

    from curate.cli import table
    from evalrun.review.calibrate import calibrate_run
    from evalrun.review.form import KIND_TITLES
    from evalrun.review.verdicts import KIND_OF
    found = calibrate_run(workspace_of(ctx), folder, width)
    out = console()
    for line in review_headline(found):
        out.print(line, soft_wrap=True)
    out.print(estimate_table(found))
    for name, m in found.metrics.items():
        if m.agreement.note:
            out.print(f"  {escape(name)}: kappa: {escape(m.agreement.note)}", soft_wrap=True)
        if m.estimate is not None and m.estimate.note:
            out.print(f"  {escape(name)}: no corrected estimate: {escape(m.estimate.note)}", soft_wrap=True)
        if m.strata_used < len(found.dimensions) and m.estimate is not None and m.estimate.estimate is not None:
            kept = ", ".join(found.dimensions[:m.strata_used]) or "none"
            out.print(f"  {escape(name)}: strata coarsened to ({kept}) so that each holds a reviewed item",
                      soft_wrap=True)
    groups = [(name, f"{by}={group}", a.n, "—" if a.agreement is None else f"{a.agreement:.0%}", _kappa(a))
              for name, m in found.metrics.items()
              for by, split in (("language", m.by_language), ("difficulty", m.by_difficulty))
              for group, a in split.items()]
    out.print(table("agreement per language and difficulty", ("metric", "group", "verdicts", "agree", "kappa [95% CI]"),
                    groups))
    seen = set()
    for name, m in found.metrics.items():
        labels = m.agreement.labels
        if labels in seen:
            continue
        seen.add(labels)
        out.print(table(f"{KIND_TITLES[KIND_OF[name]]} verdicts: judge (rows) x people (columns)",
                        ("judge \\ people", *labels),
                        [(j, *(m.agreement.confusion.get(j, {}).get(p, 0) for p in labels)) for j in labels]))
    worst = [(name, d.item_id, d.reviewer, f"{d.judge_value:.2f}", f"{d.person_value:.2f}", d.reason or "")
             for name, m in found.metrics.items() for d in m.worst]
    if worst:
        out.print(table("worst disagreements", ("metric", "item", "reviewer", "judge", "person", "reason"), worst))


@click.command("rejudge")
@RUN
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The new run folder (the run itself is left as it was).")
@click.option("--judge-model", help="The other judge's model (else CURATE_JUDGE_MODEL, else curate.toml).")
@click.option("--base-url", "--judge-base-url", "base_url", help="Its OpenAI-compatible endpoint (else "
              "CURATE_JUDGE_BASE_URL, else curate.toml).")
@click.option("--judge-api-key-env", help="The environment variable holding its key.")
@click.pass_context
def rejudge_command(ctx: click.Context, folder: Path, out: Path, judge_model: str | None, base_url: str | None,
                    judge_api_key_env: str | None) -> None:
    """Judge a run's frozen answers again with another judge, into a new scored run; the system is not called."""
    from evalrun.records import read_run
    from evalrun.review.rejudge import rejudge
    done = rejudge(workspace_of(ctx), folder, out, base_url=base_url, model=judge_model, api_key_env=judge_api_key_env)
    judge = read_run(done).summary.judge
    click.echo(f"{done}: {folder.name}'s answers judged again by model {judge.config.get('model') if judge.config else '?'}"
               f" ({judge.status}); `evalrun compare {folder} {done}` shows what the judge alone changes")
