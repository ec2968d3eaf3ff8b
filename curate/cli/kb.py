"""`curate kb ...`: knowledge-base snapshots."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.cells import cell_len

from curate.cli.base import CommandGroup, workspace_of
from curate.cli.display import console, report_skipped, short, table
from curate.formats.raw import parse_mapping
from curate.kb import SnapshotStore, import_chunks, ingest
from curate.kb.scope_fields import SCOPE_ALIASES, validity_text
from curate.records import Scope, ScopeCounts

MAP_HELP = (f"Read metadata field OLD as scope field NEW ({', '.join(SCOPE_ALIASES)}), e.g. --map acl=groups; "
            "repeat for more.")


@click.group(cls=CommandGroup)
def kb() -> None:
    """Knowledge-base snapshots: ingest documents, import production chunks, list, show, read their chunks."""


@kb.command("ingest")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--name", required=True, help="KB name.")
@click.option("--chunker", type=click.Choice(["structure", "fixed"]), help="Default from curate.toml.")
@click.option("--chunk-size", type=click.IntRange(min=1), help="Maximum chunk length in characters.")
@click.option("--overlap", type=click.IntRange(min=0), help="Overlap of fixed windows in characters.")
@click.option("--encoding", default="utf-8", show_default=True, help="Text encoding of the files.")
@click.option("--map", "mapping", multiple=True, metavar="OLD=NEW", help=MAP_HELP)
@click.option("--engine", metavar="ENGINE", help="Where a large KB (input enough for 10,000 chunks) is read and "
              "chunked: local (processes on this machine), ray (a Ray started here), or a Ray cluster's address "
              "(ray://HOST:10001, HOST:PORT, auto) [default: [engine] in curate.toml, else local].")
@click.pass_context
def kb_ingest(ctx: click.Context, paths: tuple[Path, ...], name: str, chunker: str | None,
              chunk_size: int | None, overlap: int | None, encoding: str, mapping: tuple[str, ...],
              engine: str | None) -> None:
    """Chunk .txt, .md and .jsonl documents into a snapshot (chunks keep source offsets, and their
    document's access groups and version: metadata, Markdown front matter, curate.toml [scope] rules).
    A large KB is read and chunked in batches on an engine, into the same snapshot; a run killed half way
    resumes from the batches and shards it completed."""
    manifest = ingest(workspace_of(ctx), list(paths), name=name, chunker=chunker, chunk_size=chunk_size,
                      overlap=overlap, encoding=encoding, mapping=parse_mapping(mapping, SCOPE_ALIASES),
                      engine=engine, note=lambda text: click.echo(f"note: {text}", err=True))
    click.echo(f"{name}: snapshot {manifest.snapshot_id} ({manifest.documents:,} documents, "
               f"{manifest.chunks:,} chunks, chunker {manifest.chunker.kind})")
    for line in scope_summary(manifest.scope):
        click.echo(line)


@kb.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--name", required=True, help="KB name.")
@click.option("--encoding", default="utf-8", show_default=True)
@click.option("--skip-invalid", is_flag=True, help="Import the valid lines and list the skipped ones.")
@click.option("--map", "mapping", multiple=True, metavar="OLD=NEW", help=MAP_HELP)
@click.option("--engine", metavar="ENGINE", help="Where a large file (5 MB or more) is read and checked: local "
              "(processes on this machine), ray (a Ray started here), or a Ray cluster's address (ray://HOST:10001, "
              "HOST:PORT, auto) [default: [engine] in curate.toml, else local].")
@click.pass_context
def kb_import(ctx: click.Context, path: Path, name: str, encoding: str, skip_invalid: bool,
              mapping: tuple[str, ...], engine: str | None) -> None:
    """Import production chunks as they are (chunk_id, doc_id, text, optional start/end, metadata; access
    groups and version from metadata or curate.toml [scope] rules). A large file is read and checked in
    batches on an engine, into the same snapshot; a run killed half way resumes from the batches it completed."""
    manifest, skipped = import_chunks(workspace_of(ctx), path, name=name, encoding=encoding,
                                      skip_invalid=skip_invalid, mapping=parse_mapping(mapping, SCOPE_ALIASES),
                                      engine=engine, note=lambda text: click.echo(f"note: {text}", err=True))
    report_skipped(skipped)
    click.echo(f"{name}: snapshot {manifest.snapshot_id} ({manifest.chunks:,} chunks imported as they are)")
    for line in scope_summary(manifest.scope):
        click.echo(line)


def scope_summary(counts: ScopeCounts | None) -> list[str]:
    """Return a scoped snapshot's counts in a line or two (none for an unscoped one)."""
    if counts is None:
        return []
    access = f"{_chunks(counts.everyone)} for everyone" + "".join(
        f"; {g.name} may see {g.chunks:,}" for g in counts.groups)
    lines = [f"scope: {access}"]
    validity = [f"version {v.name}: {v.chunks:,}" for v in counts.versions]
    if counts.versions:
        validity.append(f"no version: {counts.unversioned:,}")
    if counts.dated:
        validity.append(f"{counts.dated:,} with validity dates")
    if counts.superseded:
        validity.append(f"{counts.superseded:,} superseded")
    if validity:
        lines.append("scope: " + "; ".join(validity))
    if counts.unknown_superseded:
        lines.append(f"scope: supersedes names {_ids(counts.unknown_superseded)}: neither a document nor a chunk "
                     "of this snapshot")
    return lines


def _chunks(n: int) -> str:
    return f"{n:,} chunk{'' if n == 1 else 's'}"


def _ids(ids: list[str], shown: int = 5) -> str:
    """Return ids counted and named, the first few."""
    named = ", ".join(ids[:shown]) + (f" and {len(ids) - shown:,} more" if len(ids) > shown else "")
    return f"{len(ids):,} id{'s' if len(ids) > 1 else ''} ({named})"


def scope_rows(counts: ScopeCounts | None) -> list[tuple[str, str]]:
    """Return a scoped snapshot's counts as rows of `kb show`."""
    if counts is None:
        return []
    rows = [("everyone may see", _chunks(counts.everyone))]
    rows += [(f"group {g.name} may see", f"{_chunks(g.chunks)} ({g.chunks - counts.everyone:,} of them restricted)")
             for g in counts.groups]
    rows += [(f"version {v.name}", _chunks(v.chunks)) for v in counts.versions]
    if counts.versions:
        rows.append(("no version", _chunks(counts.unversioned)))
    rows += [("validity dates", _chunks(counts.dated)), ("superseded", _chunks(counts.superseded))]
    if counts.unknown_superseded:
        rows.append(("supersedes unknown ids", _ids(counts.unknown_superseded, shown=20)))
    return rows


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
            ("created", manifest.created_at), ("sources", ", ".join(manifest.sources)), *scope_rows(manifest.scope)]
    console().print(table(None, ("", ""), rows))


@kb.command("chunks")
@click.argument("ref")
@click.argument("chunk_id", required=False)
@click.option("--doc", "doc_id", metavar="DOC_ID", help="Only the chunks of this document.")
@click.option("--json", "as_json", is_flag=True, help="Print the chunks as JSON lines (every field, the whole text).")
@click.option("--width", type=click.IntRange(min=10), default=60, show_default=True,
              help="Characters of each chunk's text shown in the table.")
@click.pass_context
def kb_chunks(ctx: click.Context, ref: str, chunk_id: str | None, doc_id: str | None, as_json: bool,
              width: int) -> None:
    """List a snapshot's chunks (a KB name means its newest): id, document, span, length, first characters;
    with CHUNK_ID, print that chunk whole."""
    store = SnapshotStore(workspace_of(ctx))
    snapshot_id = store.resolve(ref)
    chunks = store.select_chunks(snapshot_id, doc_id=doc_id, chunk_id=chunk_id)
    if as_json:
        for chunk in chunks:
            click.echo(json.dumps(chunk.model_dump(mode="json"), ensure_ascii=False))
        return
    if chunk_id is not None:
        chunk = chunks[0]
        span = f"{chunk.start}-{chunk.end}" if chunk.start is not None else "span unknown"
        click.echo(f"{chunk.chunk_id} ({chunk.doc_id}, characters {span}, {len(chunk.text)} long)")
        for key, value in chunk.metadata.items():
            click.echo(f"{key}: {value}")
        for key, value in _scope_lines(chunk.scope):
            click.echo(f"{key}: {value}")
        click.echo()
        click.echo(chunk.text)
        return
    scoped = store.manifest(snapshot_id).scope is not None
    rows = [(c.chunk_id, c.doc_id, f"{c.start}-{c.end}" if c.start is not None else "", len(c.text),
             *([_scope_cell(c.scope)] if scoped else []), _opening(c.text, width)) for c in chunks]
    columns = ("chunk", "doc", "span", "length", *(["scope"] if scoped else []), "text")
    console().print(table(None, columns, rows))
    click.echo(f"{len(chunks)} chunks of {snapshot_id}; `curate kb chunks {ref} CHUNK_ID` prints one whole", err=True)


def _scope_lines(scope: Scope | None) -> list[tuple[str, str]]:
    """Return a chunk's scope as `key: value` lines: who may see it, its version, validity, what it replaces."""
    if scope is None:
        return [("groups", "everyone")]
    lines = [("groups", "everyone" if scope.groups is None else ", ".join(scope.groups))]
    if scope.version is not None:
        lines.append(("version", scope.version))
    if scope.valid_from or scope.valid_to:
        lines.append(("valid", validity_text(scope)))
    if scope.supersedes:
        lines.append(("supersedes", ", ".join(scope.supersedes)))
    return lines


def _scope_cell(scope: Scope | None) -> str:
    """Return a chunk's scope in a few words for the `kb chunks` table: groups · version · dates · replaces."""
    if scope is None:
        return "everyone"
    parts = ["everyone" if scope.groups is None else ",".join(scope.groups)]
    parts += [scope.version] if scope.version is not None else []
    if scope.valid_from or scope.valid_to:
        parts.append(f"{scope.valid_from or ''}..{scope.valid_to or ''}")
    parts += [f"supersedes {len(scope.supersedes)}"] if scope.supersedes else []
    return " · ".join(parts)


def _opening(text: str, width: int) -> str:
    """Return the first characters of `text` on one line, at most `width` columns wide (a Chinese
    character takes two), with an ellipsis when cut."""
    line = short(text, len(text) + 1)
    if cell_len(line) <= width:
        return line
    kept, used = [], 1
    for char in line:
        used += cell_len(char)
        if used > width:
            break
        kept.append(char)
    return "".join(kept) + "…"
