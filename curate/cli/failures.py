"""`curate add-failures`: the month's production failures into the regression split."""

from __future__ import annotations

from pathlib import Path

import click

from curate.cli.display import console, report_skipped, short, table
from curate.cli.base import asker_defaults, asker_options, push_options, workspace_of
from curate.failures.add import add_failures
from curate.failures.pii import NOT_MASKED


@click.command("add-failures")
@click.argument("logs", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--dataset", required=True, help="Dataset whose regression split takes the failures (created if new).")
@click.option("--month", required=True, metavar="YYYY-MM", help="The month of the logs; its items are tagged with it.")
@click.option("--kb", help="KB name or snapshot (default: the dataset's).")
@click.option("--map", "mapping", multiple=True, metavar="OLD=NEW", help="Read log field OLD as NEW (question, "
              "answer, retrieved_ids, contexts, feedback, rating, tags, escalated, follow_up, timestamp, session, id, "
              "run_id).")
@click.option("--encoding", default="utf-8", show_default=True)
@click.option("--skip-invalid", is_flag=True, help="Leave out bad rows (counted) instead of stopping.")
@click.option("--no-semantic", is_flag=True, help="Skip the embedding pass of the duplicate check (said in the "
              "batch record: not semantically deduplicated).")
@click.option("--push", is_flag=True, help="Send the new items to Argilla, production's retrieved chunks among "
              "their candidates.")
@push_options
@asker_options
@click.pass_context
def add_failures_command(ctx: click.Context, logs: tuple[Path, ...], dataset: str, month: str, kb: str | None,
                         mapping: tuple[str, ...], encoding: str, skip_invalid: bool, no_semantic: bool, push: bool,
                         pool_k: int, argilla_workspace: str, api_url: str | None, asker_role: str | None,
                         asker_groups: str | None, as_of: str | None) -> None:
    """Add the questions production failed on (JSONL/CSV logs, or `evalrun export-failures`) to the regression
    split: personal data masked, duplicates counted on the item they repeat, leaks quarantined, one batch per month."""
    report = add_failures(workspace_of(ctx), logs, dataset=dataset, month=month, kb=kb, mapping=mapping,
                          encoding=encoding, skip_invalid=skip_invalid, semantic=not no_semantic, push=push,
                          pool_k=pool_k, api_url=api_url, argilla_workspace=argilla_workspace,
                          asker=asker_defaults(asker_role, asker_groups, as_of))
    batch = report.batch
    if report.already:
        click.echo(f"{dataset}: these {month} logs were added before, in batch {batch.batch} ({batch.at}): "
                   f"nothing added")
        click.echo(f"note: {NOT_MASKED}")
        return
    report_skipped(report.skipped)
    for note in report.notes:
        click.echo(f"warning: {note}", err=True)
    if report.semantic and report.semantic.note:
        click.echo(report.semantic.note + " (this batch is not semantically deduplicated)", err=True)
    counts = batch.counts
    out = console()
    files = ", ".join(s.name for s in batch.sources)
    out.print(f"{dataset}: batch {batch.batch}: {counts.get('rows', 0)} rows read from {files}; "
              f"{counts.get('failing_rows', 0)} failing rows ({counts.get('failing_questions', 0)} questions)")
    dropped = [(k.replace("_", " "), counts[k]) for k in ("outside_month", "already_added", "invalid_rows")
               if counts.get(k)]
    if dropped:
        out.print("left out: " + ", ".join(f"{n} {what}" for what, n in dropped))
    if batch.unnamed_feedback:
        values = ", ".join(f"{value!r} {n}" for value, n in batch.unnamed_feedback.items())
        out.print(f"feedback values no rule names (not counted as failures): {values}; add those that mean a "
                  f"failure to [failures] negative_feedback in curate.toml", soft_wrap=True)
    rows = [("failure rule", name, n) for name, n in batch.by_rule.items()]
    rows += [("hint (not a failure alone)", name, n) for name, n in batch.by_hint.items()]
    rows += [("personal data masked", kind, n) for kind, n in batch.personal_data.items()]
    rows += [("duplicate, counted", method, n) for method, n in batch.duplicates.items()]
    if rows:
        out.print(table(None, ("", "", "rows"), rows))
    out.print(f"added {counts.get('added', 0)} (needs_evidence), duplicates "
              f"{counts.get('duplicates', 0)}, leaks {counts.get('leaks', 0)} (quarantined), personal data masked "
              f"{counts.get('personal_data_masked', 0)}")
    out.print(f"note: {NOT_MASKED}", soft_wrap=True)
    if batch.numbers_differ:
        new, old = batch.numbers_differ[0]
        out.print(f"kept apart, though alike: {len(batch.numbers_differ)} new items whose numbers or codes differ from "
                  f"an item's (e.g. {new} beside {old}); added, not counted as duplicates")
    if counts.get("unknown_chunk_ids"):
        out.print(f"note: {counts['unknown_chunk_ids']} chunk ids production retrieved are not in the KB snapshot "
                  f"and were dropped from the items' provenance (was the log written against another snapshot?)")
    out.print(f"regression split: {counts.get('regression_before', 0)} -> {counts.get('regression_after', 0)} items")
    asked = {d.item_id: 0 for d in batch.counted_on}
    for duplicate in batch.counted_on:
        asked[duplicate.item_id] += duplicate.rows
    listed = [(i, "added") for i in batch.added] + [(i, "leak: quarantined") for i in batch.leaked]
    listed += [(i, f"+{n} asked") for i, n in asked.items() if i not in batch.added]
    if listed:
        out.print(table(None, ("item", "", "question"), [(i, what, short(report.questions.get(i), 60))
                                                         for i, what in listed[:50]]))
        if len(listed) > 50:
            out.print(f"... and {len(listed) - 50} more (datasets/{dataset}/failures/{batch.batch}.json)")
    if report.pushed is not None:
        out.print(f"pushed {report.pushed.pushed} new items to Argilla dataset '{report.pushed.argilla_dataset}'")
