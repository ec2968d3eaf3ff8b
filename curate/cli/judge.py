"""The judge commands of the `curate` CLI."""

from __future__ import annotations

from pathlib import Path

import click

from curate.checks.consistency import check_consistency
from curate.cli.base import EXIT_FINDINGS, workspace_of
from curate.cli.display import console, table
from curate.judge.config import resolve


def judge_options(command):
    """Add the judge's flags (each overrides CURATE_JUDGE_* and curate.toml)."""
    options = [
        click.option("--judge-base-url", help="OpenAI-compatible base URL (env CURATE_JUDGE_BASE_URL)."),
        click.option("--judge-model", help="Model name (env CURATE_JUDGE_MODEL)."),
        click.option("--judge-api-key-env", help="NAME of the variable holding the key (env CURATE_JUDGE_API_KEY_ENV)."),
        click.option("--judge-timeout", type=click.FloatRange(min=0, min_open=True), help="Seconds per request (env CURATE_JUDGE_TIMEOUT; default 60)."),
        click.option("--concurrency", type=click.IntRange(min=1), help="Requests at once (default 4)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def resolve_judge(ctx: click.Context, judge_base_url, judge_model, judge_api_key_env, judge_timeout, concurrency):
    """Return the judge settings from the flags, the environment and curate.toml."""
    return resolve(workspace_of(ctx), base_url=judge_base_url, model=judge_model, api_key_env=judge_api_key_env,
                   timeout=judge_timeout, concurrency=concurrency)


@click.command("check-consistency")
@click.option("--dataset", required=True)
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True, help="Judge each question N times; report flips.")
@click.option("--k", type=click.IntRange(min=1), default=5, show_default=True, help="Chunks retrieved for an unanswerable item.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path), help="Write JSON here.")
@judge_options
@click.pass_context
def check_consistency_command(ctx: click.Context, dataset: str, repeat: int, k: int, report_path: Path | None,
                              **judge) -> None:
    """Ask the judge whether each item holds together; flagged items become needs_rewrite (exit 1)."""
    if report_path:
        workspace_of(ctx).refuse_state(report_path, field="report")
    config = resolve_judge(ctx, **judge)
    report = check_consistency(workspace_of(ctx), dataset=dataset, config=config, repeat=repeat, k=k)
    record, stats = report.record, report.judge.stats
    out = console()
    unscored = sum(report.unscored.values())
    out.print(f"{dataset}: {record.items} items, {record.tasks} checks x {repeat}: "
              f"{len(report.flagged)} items flagged, {len(report.unstable)} unstable, {unscored} checks unscored")
    if unscored:
        out.print("unscored (never counted as pass or fail): "
                  + ", ".join(f"{n} {reason}" for reason, n in report.unscored.most_common()))
    cost = "unknown cost" if stats.cost is None else f"${stats.cost:.4f}"
    out.print(f"judge {config.model} at {config.base_url}: {stats.requests} requests, {stats.cache_hits} from cache, "
              f"{stats.retries} retries, {stats.prompt_tokens}+{stats.completion_tokens} tokens, {cost}")
    if stats.scrubbed:
        click.echo(f"warning: {stats.scrubbed} answers of the judge quoted its API key (an echoed Authorization "
                   "header?): the key was replaced by *** before they were cached or used", err=True)
    if stats.usage_left_out:
        problems = record.usage.usage_problems
        out.print(f"{stats.usage_left_out} judge replies reported a usage that is no token count, left "
                  f"out of the tokens and cost above (the verdicts stand): " + "; ".join(problems[:3])
                  + ("; ..." if len(problems) > 3 or stats.usage_left_out > len(problems) else ""), soft_wrap=True)
    rows = [(item_id, reason) for item_id, reasons in sorted(report.flagged.items()) for reason in reasons]
    if rows:
        out.print(table("flagged (status needs_rewrite)", ("item", "why"), rows))
    if report.unstable:
        out.print(table("verdicts that flipped between repeats", ("item", "checks"),
                        [(i, ", ".join(c)) for i, c in sorted(report.unstable.items())]))
    if report_path:
        report.write(report_path)
    ctx.exit(0 if record.clean else EXIT_FINDINGS)
