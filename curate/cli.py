"""The `curate` command line: thin commands over the library; errors become one line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from . import __version__
from .dataset import DatasetStore, parse_ref
from .display import console, counts_table, table
from .errors import CurateError, InvalidRecords
from .schema import SOURCES
from .workspace import Workspace, find_workspace, init_workspace

MAX_ERRORS_SHOWN = 50


class CurateGroup(click.Group):
    """A group whose library errors reach the user as one line (traceback with --debug)."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except InvalidRecords as exc:
            if _debug(ctx):
                raise
            for error in exc.errors[:MAX_ERRORS_SHOWN]:
                click.echo(f"error: {error.located()}", err=True)
            if len(exc.errors) > MAX_ERRORS_SHOWN:
                click.echo(f"error: ... and {len(exc.errors) - MAX_ERRORS_SHOWN} more", err=True)
            click.echo(f"error: {len(exc.errors)} invalid record(s); nothing was written "
                       f"(--skip-invalid imports the valid ones)", err=True)
            ctx.exit(2)
        except CurateError as exc:
            if _debug(ctx):
                raise
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2)


def _debug(ctx: click.Context) -> bool:
    root = ctx.find_root()
    return bool((root.params or {}).get("debug")) or os.environ.get("CURATE_DEBUG") == "1"


def _workspace(ctx: click.Context) -> Workspace:
    return find_workspace(explicit=ctx.find_root().params.get("workspace"))


@click.group(cls=CurateGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--workspace", "-w", type=click.Path(file_okay=False, path_type=Path), envvar="CURATE_WORKSPACE",
              help="Workspace folder (default: the nearest folder with curate.toml, from here up).")
@click.option("--debug", is_flag=True, help="Show tracebacks (also CURATE_DEBUG=1).")
@click.version_option(__version__, prog_name="curate")
def cli(workspace: Path | None, debug: bool) -> None:
    """Build and guard versioned evaluation sets for RAG systems."""


@cli.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--kb", "default_kb", help="Default KB name or snapshot id.")
@click.option("--embedding-model", help="sentence-transformers model name or local folder.")
@click.option("--judge-base-url", help="Base URL of an OpenAI-compatible judge endpoint.")
@click.option("--judge-model", help="Judge model name.")
@click.option("--judge-api-key-env", help="NAME of the environment variable holding the judge key.")
@click.option("--guidelines", help="Folder of relevance guidelines (its hash is the guideline version).")
def init(directory: Path, **settings: str) -> None:
    """Create a workspace (curate.toml, kb/, datasets/) in DIRECTORY."""
    names = {"default_kb": "default_kb", "embedding_model": "embedding_model",
             "judge_base_url": "judge_base_url", "judge_model": "judge_model",
             "judge_api_key_env": "judge_api_key_env", "guidelines": "guidelines"}
    workspace = init_workspace(directory, **{names[k]: v for k, v in settings.items()})
    click.echo(f"created workspace {workspace.root} ({workspace.config_path.name})")


# -- knowledge base -------------------------------------------------------------------------------

@cli.group()
def kb() -> None:
    """Knowledge-base snapshots: ingest documents, import production chunks, list, show."""


@kb.command("ingest")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--name", required=True, help="KB name.")
@click.option("--chunker", type=click.Choice(["structure", "fixed"]), help="Default from curate.toml.")
@click.option("--chunk-size", type=int, help="Maximum chunk length in characters.")
@click.option("--overlap", type=int, help="Overlap of fixed windows in characters.")
@click.option("--encoding", default="utf-8", show_default=True, help="Text encoding of the files.")
@click.pass_context
def kb_ingest(ctx: click.Context, paths: tuple[Path, ...], name: str, chunker: str | None,
              chunk_size: int | None, overlap: int | None, encoding: str) -> None:
    """Chunk .txt, .md and .jsonl documents into a snapshot (chunks keep source offsets)."""
    from .kb import ingest
    manifest = ingest(_workspace(ctx), list(paths), name=name, chunker=chunker, size=chunk_size,
                      overlap=overlap, encoding=encoding)
    click.echo(f"{name}: snapshot {manifest.snapshot_id} ({manifest.documents} documents, "
               f"{manifest.chunks} chunks, chunker {manifest.chunker.kind})")


@kb.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--name", required=True, help="KB name.")
@click.option("--encoding", default="utf-8", show_default=True)
@click.option("--skip-invalid", is_flag=True, help="Import the valid lines and list the skipped ones.")
@click.pass_context
def kb_import(ctx: click.Context, path: Path, name: str, encoding: str, skip_invalid: bool) -> None:
    """Import production chunks as they are (chunk_id, doc_id, text, optional start/end, metadata)."""
    from .kb import import_chunks
    manifest, skipped = import_chunks(_workspace(ctx), path, name=name, encoding=encoding,
                                      skip_invalid=skip_invalid)
    _report_skipped(skipped)
    click.echo(f"{name}: snapshot {manifest.snapshot_id} ({manifest.chunks} chunks imported as they are)")


@kb.command("list")
@click.pass_context
def kb_list(ctx: click.Context) -> None:
    """List KB names and their snapshots (newest last)."""
    from .kb import SnapshotStore
    store = SnapshotStore(_workspace(ctx))
    rows = []
    for name, ids in sorted(store.names().items()):
        for snapshot_id in ids:
            m = store.manifest(snapshot_id)
            rows.append((name, snapshot_id, m.chunker.kind, m.documents, m.chunks, m.created_at,
                         "current" if snapshot_id == ids[-1] else ""))
    console().print(table(None, ("kb", "snapshot", "chunker", "documents", "chunks", "created", ""), rows))


@kb.command("show")
@click.argument("ref")
@click.option("--json", "as_json", is_flag=True, help="Print the manifest as JSON.")
@click.pass_context
def kb_show(ctx: click.Context, ref: str, as_json: bool) -> None:
    """Show a snapshot (a KB name means its newest): id, counts, chunker settings."""
    from .kb import SnapshotStore
    store = SnapshotStore(_workspace(ctx))
    manifest = store.manifest(store.resolve(ref))
    if as_json:
        click.echo(json.dumps(manifest.model_dump(mode="json"), ensure_ascii=False, indent=2))
        return
    chunks = store.chunks(manifest.snapshot_id)
    lengths = sorted(len(c.text) for c in chunks)
    settings = ", ".join(f"{k}={v}" for k, v in manifest.chunker.model_dump().items() if v is not None)
    rows = [("snapshot", manifest.snapshot_id), ("name", manifest.name), ("content sha256", manifest.content_sha256),
            ("chunker", settings), ("documents", manifest.documents), ("chunks", manifest.chunks),
            ("characters", manifest.characters),
            ("chunk length", f"min {lengths[0]}, median {lengths[len(lengths) // 2]}, max {lengths[-1]}"),
            ("created", manifest.created_at), ("sources", ", ".join(manifest.sources))]
    console().print(table(None, ("", ""), rows))


# -- items ----------------------------------------------------------------------------------------

@cli.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--dataset", required=True, help="Dataset to add the items to (created if new).")
@click.option("--source", required=True, type=click.Choice(SOURCES), help="Where the questions come from.")
@click.option("--kb", help="KB name or snapshot (JSONL/CSV); name of the KB to create (beir/squad).")
@click.option("--format", "fmt", type=click.Choice(["auto", "beir", "squad"]), default="auto", show_default=True,
              help="auto: JSONL or CSV by extension; beir: a BEIR folder; squad: a SQuAD/CMRC2018 file.")
@click.option("--map", "mapping", multiple=True, metavar="OLD=NEW", help="Read input field OLD as NEW.")
@click.option("--encoding", default="utf-8", show_default=True)
@click.option("--skip-invalid", is_flag=True, help="Import the valid records and list every skipped one.")
@click.option("--min-score", type=float, default=90.0, show_default=True,
              help="Lowest fuzzy score (0-100) at which quoted evidence counts as found.")
@click.option("--chunker", type=click.Choice(["structure", "fixed"]),
              help="squad only: chunk paragraphs instead of one chunk per paragraph.")
@click.option("--chunk-size", type=int, help="squad only: chunk size for --chunker.")
@click.pass_context
def import_(ctx: click.Context, path: Path, dataset: str, source: str, kb: str | None, fmt: str,
            mapping: tuple[str, ...], encoding: str, skip_invalid: bool, min_score: float,
            chunker: str | None, chunk_size: int | None) -> None:
    """Import questions with their answers, key points and evidence into a draft dataset."""
    from .dataset_import import import_items
    report = import_items(_workspace(ctx), path, dataset=dataset, source=source, kb=kb, format=fmt,
                          mapping=mapping, encoding=encoding, skip_invalid=skip_invalid, min_score=min_score,
                          chunker=chunker, chunk_size=chunk_size)
    _report_skipped(report.skipped)
    located = ", ".join(f"{n} {how}" for how, n in sorted(report.located_by.items())) or "none"
    click.echo(f"{dataset}: imported {len(report.imported)} items against KB snapshot {report.kb_snapshot}; "
               f"evidence located: {located}")


def _report_skipped(skipped) -> None:
    for error in skipped:
        click.echo(f"skipped: {error.located()}", err=True)
    if skipped:
        click.echo(f"skipped {len(skipped)} invalid record(s)", err=True)


@cli.command()
@click.option("--dataset", required=True)
@click.option("--kb", required=True, help="Target KB snapshot (id, id prefix, or KB name for its newest).")
@click.option("--min-score", type=float, default=90.0, show_default=True, help="Lowest fuzzy score accepted.")
@click.option("--dry-run", is_flag=True, help="Report without writing.")
@click.pass_context
def remap(ctx: click.Context, dataset: str, kb: str, min_score: float, dry_run: bool) -> None:
    """Map every evidence span onto another snapshot; report what cannot be mapped (exit 1)."""
    from .remap import remap as run_remap
    report = run_remap(_workspace(ctx), dataset=dataset, kb=kb, min_score=min_score, dry_run=dry_run)
    mapped = ", ".join(f"{n} by {how}" for how, n in sorted(report.mapped.items())) or "none"
    click.echo(f"{dataset}: {report.source_snapshot} -> {report.target_snapshot}: mapped {mapped}; "
               f"unmapped {len(report.unmapped)}" + ("" if report.written else " (dry run, nothing written)"))
    if report.unmapped:
        rows = [(u.item_id, u.evidence_id, u.doc_id, u.text[:60]) for u in report.unmapped]
        console().print(table("evidence not mapped (items set to needs_evidence)",
                              ("item", "evidence", "document", "text"), rows))
        ctx.exit(1)


# -- releases -------------------------------------------------------------------------------------

@cli.command()
@click.option("--dataset", required=True)
@click.option("-m", "--message", required=True, help="What changed in this release.")
@click.pass_context
def release(ctx: click.Context, dataset: str, message: str) -> None:
    """Write the next immutable version vN of a dataset."""
    from .release import release as run_release
    manifest = run_release(_workspace(ctx), dataset=dataset, message=message)
    log = manifest.changelog
    click.echo(f"released {dataset}@{manifest.version}: {manifest.items} items "
               f"(+{len(log['added'])} -{len(log['removed'])} ~{len(log['changed'])}), "
               f"sha256 {manifest.content_sha256[:16]}")


@cli.command()
@click.argument("name")
@click.pass_context
def versions(ctx: click.Context, name: str) -> None:
    """List the releases of a dataset."""
    from .release import Releases
    releases = Releases(_workspace(ctx), name)
    DatasetStore(releases.workspace).meta(name)
    rows = []
    for version in releases.versions():
        m = releases.manifest(version)
        rows.append((version, m.created_at, m.items, m.kb_snapshot, m.content_sha256[:16], m.message))
    console().print(table(None, ("version", "created", "items", "kb snapshot", "sha256", "message"), rows))


@cli.command()
@click.argument("old")
@click.argument("new")
@click.option("--json", "as_json", is_flag=True, help="Print the difference as JSON.")
@click.pass_context
def diff(ctx: click.Context, old: str, new: str, as_json: bool) -> None:
    """Compare two versions (NAME@vN, or NAME for the draft): items and counts."""
    from .release import diff as run_diff
    result = run_diff(_workspace(ctx), old=old, new=new)
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


@cli.command()
@click.argument("ref")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "ragas", "beir"]), default="jsonl", show_default=True)
@click.option("--out", required=True, help="File (folder for beir); '-' writes JSONL to standard output.")
@click.pass_context
def export(ctx: click.Context, ref: str, fmt: str, out: str) -> None:
    """Export NAME@vN (or NAME, the draft) as JSONL, ragas rows or a BEIR folder."""
    from .export import export as run_export
    written = run_export(_workspace(ctx), ref=ref, format=fmt, out=out)
    if out != "-":
        click.echo(f"wrote {out}: " + ", ".join(f"{v} {k}" for k, v in written.items()), err=True)


@cli.command()
@click.argument("ref")
@click.pass_context
def show(ctx: click.Context, ref: str) -> None:
    """Summarise a dataset (NAME: the draft) or a release (NAME@vN): counts by source, answerability..."""
    from .release import counts, resolve_items
    workspace = _workspace(ctx)
    name, version = parse_ref(ref)
    items, manifest, snapshot = resolve_items(workspace, ref)
    if version is None:
        items = DatasetStore(workspace).items(name)
    head = f"{ref}: {len(items)} items, KB snapshot {snapshot}"
    if manifest is not None:
        head += f", sha256 {manifest.content_sha256[:16]}, guideline {manifest.guideline_version or 'none'}"
    out = console()
    out.print(head)
    out.print(counts_table(None, counts(items), ("source", "answerable", "language", "qtype", "split",
                                                 "difficulty", "status")))


def main() -> None:
    """Entry point of the `curate` console script."""
    cli(prog_name="curate")


if __name__ == "__main__":
    sys.exit(main())


from . import cli_checks  # noqa: E402,F401  (registers the guard commands)
from . import cli_judge  # noqa: E402,F401  (registers the judge commands)
from . import cli_annotate  # noqa: E402,F401  (registers the annotation commands)
