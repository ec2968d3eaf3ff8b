"""`curate kb ...`: knowledge-base snapshots."""

from __future__ import annotations

import json
from pathlib import Path

import click

from curate.cli.base import workspace_of
from curate.cli.display import console, report_skipped, table
from curate.kb import SnapshotStore, import_chunks, ingest


@click.group()
def kb() -> None:
    """Knowledge-base snapshots: ingest documents, import production chunks, list, show."""


@kb.command("ingest")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--name", required=True, help="KB name.")
@click.option("--chunker", type=click.Choice(["structure", "fixed"]), help="Default from curate.toml.")
@click.option("--chunk-size", type=click.IntRange(min=1), help="Maximum chunk length in characters.")
@click.option("--overlap", type=click.IntRange(min=0), help="Overlap of fixed windows in characters.")
@click.option("--encoding", default="utf-8", show_default=True, help="Text encoding of the files.")
@click.pass_context
def kb_ingest(ctx: click.Context, paths: tuple[Path, ...], name: str, chunker: str | None,
              chunk_size: int | None, overlap: int | None, encoding: str) -> None:
    """Chunk .txt, .md and .jsonl documents into a snapshot (chunks keep source offsets)."""
    manifest = ingest(workspace_of(ctx), list(paths), name=name, chunker=chunker, chunk_size=chunk_size,
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
    manifest, skipped = import_chunks(workspace_of(ctx), path, name=name, encoding=encoding,
                                      skip_invalid=skip_invalid)
    report_skipped(skipped)
    click.echo(f"{name}: snapshot {manifest.snapshot_id} ({manifest.chunks} chunks imported as they are)")


@kb.command("list")
@click.pass_context
def kb_list(ctx: click.Context) -> None:
    """List KB names and their snapshots (newest last)."""
    store = SnapshotStore(workspace_of(ctx))
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
    store = SnapshotStore(workspace_of(ctx))
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
