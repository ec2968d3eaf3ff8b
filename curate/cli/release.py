"""`curate release`, `versions`, `diff`, `export`, `show`: immutable releases and what they hold."""

from __future__ import annotations

import json

import click

from curate.checks.difficulty import stale_grade
from curate.checks.difficulty.mix import DEFAULT_TARGET, apportion, mix_shift, parse_target
from curate.cli.base import workspace_of
from curate.cli.display import console, counts_table, table
from curate.dataset import DatasetStore, parse_ref
from curate.errors import IntegrityError, SchemaVersionError
from curate.records import DIFFICULTIES
from curate.release import EXPORT_FORMATS, Releases, counts, resolve_items
from curate.release import diff as run_diff
from curate.release.changes import synthetic_lines
from curate.release.scope import scope_lines
from curate.release.store import scope_report
from curate.release import export as run_export
from curate.release import release as run_release


@click.command()
@click.option("--dataset", required=True)
@click.option("-m", "--message", required=True, help="What changed in this release.")
@click.pass_context
def release(ctx: click.Context, dataset: str, message: str) -> None:
    """Write the next immutable version vN of a dataset."""
    workspace = workspace_of(ctx)
    manifest = run_release(workspace, dataset=dataset, message=message)
    for line in scope_lines(manifest.scope_report):   # the items to decline, unchecked askers: read first
        click.echo(line)
    stale = stale_grade(*DatasetStore(workspace).load(dataset))
    if stale:
        click.echo(stale, err=True)
    log = manifest.changelog
    click.echo(f"released {dataset}@{manifest.version}: {manifest.items} items "
               f"(+{len(log['added'])} -{len(log['removed'])} ~{len(log['changed'])}), "
               f"sha256 {manifest.content_sha256[:16]}")
    for line in log.get("production_failures", []):
        click.echo(f"changelog: {line}")
    for line in synthetic_lines(Releases(workspace, dataset).items(manifest.version), dataset):
        click.echo(line, err=line.startswith("warning:"))
    if manifest.checks.leakage is None:
        ref = f"{dataset}@{manifest.version}"
        click.echo(f"note: {ref} has no leakage check, so `evalrun run` refuses it until "
                   f"`curate check-leakage --dataset {ref}` clears it", err=True)
    if log.get("production_failures") or manifest.counts.get("split", {}).get("regression"):
        _regression_mix(workspace, dataset, manifest)
    if manifest.skipped_damaged:
        skipped = ", ".join(f"{dataset}@{v}" for v in manifest.skipped_damaged)
        click.echo(f"warning: passed over damaged or missing {skipped} (`curate versions {dataset}` says why); "
                   f"{manifest.version} follows {manifest.parent_version or 'no intact release'}", err=True)


def _regression_mix(workspace, dataset: str, manifest) -> None:
    """Print the regression split's difficulty mix before and after this release, against the target."""
    meta = DatasetStore(workspace).meta(dataset)
    target = meta.checks.difficulty.target if meta.checks.difficulty else DEFAULT_TARGET
    releases = Releases(workspace, dataset)
    before = releases.items(manifest.parent_version) if manifest.parent_version else []
    after = releases.items(manifest.version)
    shift = mix_shift([i.difficulty for i in before if i.split == "regression"],
                      [i.difficulty for i in after if i.split == "regression"], parse_target(target))
    rows = [(manifest.parent_version or "(none)", *shift.before.values()), (manifest.version, *shift.after.values())]
    rows.append((f"target {target}", *apportion(sum(shift.after.values()), shift.shares).values(), ""))
    out = console()
    out.print(f"regression split by difficulty, before and after (target {target}; ungraded: no evidence yet):")
    out.print(table(None, ("", *DIFFICULTIES, "ungraded"), rows))
    if shift.warning:
        click.echo(f"warning: the regression split's mix is skewed: {shift.warning}; `curate grade --dataset {dataset} "
                   f"--balance N` selects a balanced subset", err=True)
    if shift.after["ungraded"]:
        click.echo(f"note: {shift.after['ungraded']} regression items are ungraded until they have evidence "
                   f"(label them, then `curate grade --dataset {dataset}`)", err=True)


@click.command()
@click.argument("name")
@click.pass_context
def versions(ctx: click.Context, name: str) -> None:
    """List the releases of a dataset."""
    releases = Releases(workspace_of(ctx), name)
    DatasetStore(releases.workspace).meta(name)
    rows = []
    present = releases.versions()
    for version in sorted({*present, *releases.recorded()}, key=lambda v: int(v[1:])):
        try:
            m = releases.manifest(version)
        except (IntegrityError, SchemaVersionError) as exc:
            # One row per release, intact or not: a damaged one must not hide the others.
            state = ("newer schema" if isinstance(exc, SchemaVersionError) else
                     "damaged" if version in present else "missing")
            rows.append((version, state, "", "", "", "", str(exc).removeprefix(f"release {name}@{version} ")))
            continue
        rows.append((version, "intact", m.created_at, m.items, m.kb_snapshot, m.content_sha256[:16], m.message))
    console().print(table(None, ("version", "state", "created", "items", "kb snapshot", "sha256", "message"), rows))


@click.command()
@click.argument("old")
@click.argument("new")
@click.option("--json", "as_json", is_flag=True, help="Print the difference as JSON.")
@click.pass_context
def diff(ctx: click.Context, old: str, new: str, as_json: bool) -> None:
    """Compare two versions (NAME@vN, or NAME for the draft): items and counts."""
    result = run_diff(workspace_of(ctx), old=old, new=new)
    if as_json:
        click.echo(json.dumps(result, ensure_ascii=False, indent=2))
        return
    out = console()
    out.print(f"{old} -> {new}: {result['items'][0]} -> {result['items'][1]} items; "
              f"added {len(result['added'])}, removed {len(result['removed'])}, changed {len(result['changed'])}")
    rows = [("added", i, "") for i in result["added"]] + [("removed", i, "") for i in result["removed"]]
    rows += [("changed", i, ", ".join(result["changed_fields"][i])) for i in result["changed"]]
    if rows:
        out.print(table(None, ("", "item", "fields"), rows))
    count_rows = [(t, k, a, b, f"{b - a:+d}") for t, values in sorted(result["counts"].items())
                  for k, (a, b) in values.items()]
    if count_rows:
        out.print(table("count changes", ("by", "value", old, new, "change"), count_rows))


@click.command()
@click.argument("ref")
@click.option("--format", "fmt", type=click.Choice(EXPORT_FORMATS), default="jsonl", show_default=True,
              help="jsonl: the items; ragas: ragas rows; beir: a BEIR folder; hf: a Hugging Face dataset (Parquet).")
@click.option("--out", required=True, help="File (a folder for beir and hf); '-' writes JSONL to standard output.")
@click.option("--force", is_flag=True, help="Replace an existing file, or what an existing folder holds.")
@click.pass_context
def export(ctx: click.Context, ref: str, fmt: str, out: str, force: bool) -> None:
    """Export NAME@vN (or NAME, the draft) as JSONL, ragas rows, a BEIR folder or a Hugging Face dataset."""
    written = run_export(workspace_of(ctx), ref=ref, format=fmt, out=out, force=force)
    if out != "-":
        click.echo(f"wrote {out}: " + ", ".join(f"{v} {k}" for k, v in written.items()), err=True)


@click.command()
@click.argument("ref")
@click.pass_context
def show(ctx: click.Context, ref: str) -> None:
    """Summarise a dataset (NAME: the draft) or a release (NAME@vN): counts by source, answerability..."""
    workspace = workspace_of(ctx)
    name, version = parse_ref(ref)
    items, manifest, snapshot = resolve_items(workspace, ref)
    if version is None:
        meta, items = DatasetStore(workspace).load(name)
        stale = stale_grade(meta, items)
        if stale:
            click.echo(stale, err=True)
    head = f"{ref}: {len(items)} items, KB snapshot {snapshot}"
    if manifest is not None:
        head += f", sha256 {manifest.content_sha256[:16]}, guideline {manifest.guideline_version or 'none'}"
        scope = manifest.scope_report
    else:   # a draft: as a release of it now would report it
        scope = scope_report(workspace, items, snapshot)
    out = console()
    out.print(head)
    for line in scope_lines(scope):
        click.echo(line)
    out.print(counts_table(None, counts(items), ("source", "synthetic", "answerable", "language", "qtype", "split",
                                                 "difficulty", "status")))
    for line in synthetic_lines(items, name):
        click.echo(line, err=line.startswith("warning:"))
