"""Knowledge-base snapshots: documents chunked with source offsets, stored by content hash."""

from __future__ import annotations

import codecs
import difflib
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path

from curate.errors import InputError, NotFound
from curate.fileio import atomic_directory, dumps_json, jsonl_bytes
from curate.kb.content import content_sha256, scope_counts
from curate.engine import EngineSettings, engine_settings, open_engine
from curate.kb.documents import IMPORTED, chunk_documents, document_parts, read_parts, read_production_chunks
from curate.kb.scope_fields import ScopeReader
from curate.kb.shards import PARQUET_FROM, SHARD_CHUNKS, read_shard, write_shards
from curate.kb.staged import BATCH_BYTES, Staged, left_staged, staged_from, staged_ingest
from curate.locks import writing
from curate.records import (Chunk, ChunkerSettings, Document, KBNames, ScopeSettings, SnapshotManifest, now,
                            validate_lines)
from curate.records.kb import ShardInfo
from curate.scope import MomentError, ScopeIndex, read_scope_settings, version_order
from curate.workspace import Workspace


MAX_NAME = 100
_SNAPSHOT_LIKE = re.compile(r"kb-[0-9a-f]{4,}", re.IGNORECASE)


def check_kb_name(name: str) -> str:
    """Return `name` if it can name a KB: 1-100 characters, no '@', '/' or control character, and
    not like a snapshot id (`kb-` and hex digits), which `--kb` would read as one."""
    if not name or not name.strip():
        raise InputError("a KB name cannot be empty", field="name")
    if len(name) > MAX_NAME:
        raise InputError(f"a KB name is at most {MAX_NAME} characters, this one has {len(name)}", field="name")
    if "@" in name or "/" in name or "\\" in name or any(unicodedata.category(c).startswith("C") for c in name):
        raise InputError(f"KB name {name!r} cannot hold '@', '/', '\\' or a control character", field="name")
    if _SNAPSHOT_LIKE.fullmatch(name):
        raise InputError(f"KB name {name!r} looks like a snapshot id: choose a name --kb cannot mistake for one",
                         field="name")
    return name


def snapshot_id_of(digest: str) -> str:
    """Return the snapshot id of a content sha256: 'kb-' and its first 16 hex digits."""
    return "kb-" + digest[:16]


class SnapshotStore:
    """The snapshots of a workspace: kb/snapshots/<id>/ plus kb/names.json."""

    def __init__(self, workspace: Workspace):
        self.workspace = workspace
        self.root = workspace.kb_dir / "snapshots"
        self.names_path = workspace.kb_dir / "names.json"

    def names(self) -> dict[str, list[str]]:
        """Return {name: [snapshot ids, oldest first]}."""
        if not self.names_path.exists():
            return {}
        return KBNames.read(self.names_path).names

    def write(self, name: str, documents: Sequence[Document], chunks: Sequence[Chunk],
              chunker: ChunkerSettings, sources: Sequence[str] = (),
              scope: ScopeSettings | None = None, shard_size: int = SHARD_CHUNKS,
              parquet_from: int = PARQUET_FROM) -> SnapshotManifest:
        """Store a snapshot (once per content) under `name` and return its manifest (its scope counts
        ordered as the `scope` settings declare groups and versions). Its chunks: in Parquet shards of
        `shard_size` chunks from `parquet_from` chunks on, else in one chunks.jsonl (`curate.kb.shards`)."""
        check_kb_name(name)
        if not chunks:
            raise InputError("no chunks: the input holds no text", field="text")
        ids = [c.chunk_id for c in chunks]
        if len(set(ids)) != len(ids):
            raise InputError("chunk ids are not unique", field="chunk_id")
        digest = content_sha256(documents, chunks)
        manifest = SnapshotManifest(
            snapshot_id=snapshot_id_of(digest), content_sha256=digest, name=name, chunker=chunker,
            documents=len(documents), chunks=len(chunks), characters=sum(len(c.text) for c in chunks),
            created_at=now(), sources=[str(s) for s in sources], scope=scope_counts(chunks, scope))

        def fill(folder: Path) -> list[ShardInfo]:
            (folder / "documents.jsonl").write_bytes(jsonl_bytes(d.model_dump(mode="json") for d in documents))
            if len(chunks) >= parquet_from:
                return write_shards(folder, chunks, shard_size)
            # a small KB, as it always was: pyarrow is not even loaded to read it
            (folder / "chunks.jsonl").write_bytes(jsonl_bytes(c.model_dump(mode="json") for c in chunks))
            return []

        return self.keep(manifest, fill)

    def keep(self, manifest: SnapshotManifest, fill: Callable[[Path], list[ShardInfo]]) -> SnapshotManifest:
        """Store a snapshot under its name unless its content is stored already (then under its name too), and
        return its manifest: `fill(folder)` writes its documents and chunks into the folder being written and
        returns its shards."""
        check_kb_name(manifest.name)
        folder = self.root / manifest.snapshot_id
        kb_dir = self.workspace.kb_dir
        with writing(kb_dir, "the KB", clean=[(kb_dir, 1), (self.root, 1)]):
            if (folder / "manifest.json").exists():
                stored = self.manifest(manifest.snapshot_id)
            else:
                with atomic_directory(folder) as tmp:
                    manifest.shards = fill(tmp)
                    manifest.write(tmp / "manifest.json")
                stored = manifest
            names = self.names()
            history = names.setdefault(manifest.name, [])
            if not history or history[-1] != manifest.snapshot_id:
                if manifest.snapshot_id in history:
                    history.remove(manifest.snapshot_id)
                history.append(manifest.snapshot_id)
                KBNames(names=names).write(self.names_path)
        return stored

    def all_ids(self) -> list[str]:
        """Return every stored snapshot id."""
        if not self.root.exists():
            return []
        return sorted(p.name for p in self.root.iterdir() if (p / "manifest.json").exists())

    def resolve(self, ref: str | None) -> str:
        """Return the snapshot id a reference names: an id, an id prefix, a KB name (its newest
        snapshot), NAME@ID-PREFIX, or None for the workspace's default KB."""
        if not ref:
            ref = self.workspace.setting("kb", "default")
            if not ref:
                names = self.names()
                if len(names) == 1:
                    ref = next(iter(names))
                else:
                    raise InputError("no KB given: pass --kb NAME or set [kb] default in curate.toml"
                                     + (f" (KBs: {', '.join(sorted(names))})" if names else ""), field="kb")
        names = self.names()
        name, _, prefix = ref.partition("@")
        if prefix:
            candidates = [i for i in names.get(name, []) if i.startswith(prefix) or i[3:].startswith(prefix)]
        elif ref in names:
            return names[ref][-1]
        else:
            candidates = [i for i in self.all_ids() if i.startswith(ref) or i[3:].startswith(ref)]
        if len(candidates) == 1:
            return candidates[0]
        if not candidates:
            known = ", ".join(sorted(names)) or "none yet"
            raise NotFound(f"no KB snapshot '{ref}' (KB names: {known})")
        raise NotFound(f"KB snapshot '{ref}' is ambiguous: {', '.join(candidates)}")

    def manifest(self, snapshot_id: str) -> SnapshotManifest:
        """Return the manifest of a stored snapshot."""
        path = self.root / snapshot_id / "manifest.json"
        if not path.exists():
            raise NotFound(f"no KB snapshot '{snapshot_id}'")
        return SnapshotManifest.read(path)

    def chunks(self, snapshot_id: str) -> list[Chunk]:
        """Return a snapshot's chunks in order: its shards read one after the other."""
        return [chunk for number in range(self.shard_count(snapshot_id))
                for chunk in self.shard_chunks(snapshot_id, number)]

    def shards(self, snapshot_id: str) -> list[ShardInfo]:
        """Return the Parquet shards of a snapshot's chunks, in chunk order; empty when its chunks are in one
        chunks.jsonl (a small KB, or one written before shards)."""
        return self.manifest(snapshot_id).shards

    def shard_count(self, snapshot_id: str) -> int:
        """Return how many shards a snapshot's chunks are in (a chunks.jsonl is one)."""
        return len(self.shards(snapshot_id)) or 1

    def shard_chunks(self, snapshot_id: str, number: int) -> tuple[Chunk, ...]:
        """Return the chunks of one shard of a snapshot (cached while its file is unchanged): what one
        worker reads, never the whole snapshot. Shard 0 of a snapshot without Parquet shards is its
        chunks.jsonl."""
        shards = self.shards(snapshot_id)
        if not shards:
            if number != 0:
                raise IndexError(f"KB snapshot {snapshot_id} is one shard (chunks.jsonl), not {number + 1}")
            return _load_records(self.root / snapshot_id / "chunks.jsonl", Chunk)
        path = self.root / snapshot_id / shards[number].file
        if not path.exists():
            raise NotFound(f"missing {path}")
        stat = path.stat()
        return _shard_cached(str(path), stat.st_mtime_ns, stat.st_size)

    def select_chunks(self, snapshot_id: str, *, doc_id: str | None = None,
                      chunk_id: str | None = None) -> list[Chunk]:
        """Return a snapshot's chunks in order, only those of `doc_id` and only `chunk_id` when given;
        raise NotFound naming the closest ids when none is."""
        chunks = self.chunks(snapshot_id)
        for field, wanted, known in (("doc", doc_id, [c.doc_id for c in chunks]),
                                     ("chunk", chunk_id, [c.chunk_id for c in chunks])):
            if wanted is None:
                continue
            chunks = [c for c in chunks if (c.doc_id if field == "doc" else c.chunk_id) == wanted]
            if not chunks:
                close = difflib.get_close_matches(wanted, list(dict.fromkeys(known)), n=3, cutoff=0.5)
                raise NotFound(f"no {field} '{wanted}' in KB snapshot {snapshot_id}"
                               + (f" (did you mean {', '.join(close)}?)" if close else ""))
        return chunks

    def documents(self, snapshot_id: str) -> list[Document]:
        """Return a snapshot's source documents (empty for imported production chunks)."""
        return list(_load_records(self.root / snapshot_id / "documents.jsonl", Document))

    def scope_index(self, snapshot_id: str) -> ScopeIndex:
        """Return the scope of a snapshot's chunks under the workspace's [scope] version order: whom each
        chunk may be shown to, and when (`ScopeIndex.usable`)."""
        try:
            return ScopeIndex(self.chunks(snapshot_id), version_order(read_scope_settings(self.workspace)))
        except MomentError as exc:   # [scope] versions changed since the snapshot was ingested
            raise InputError(f"KB snapshot {snapshot_id}: {exc}: add it to [scope] versions", file="curate.toml",
                             field="scope.versions") from None


@lru_cache(maxsize=8)
def _load_cached(path: str, mtime_ns: int, size: int, model: type) -> tuple:
    return tuple(validate_lines(model, Path(path)))


@lru_cache(maxsize=64)
def _shard_cached(path: str, mtime_ns: int, size: int) -> tuple:
    return tuple(read_shard(Path(path)))


def _load_records(path: Path, model: type) -> tuple:
    """Return the validated records of one of a snapshot's JSONL files (cached while unchanged)."""
    if not path.exists():
        raise NotFound(f"missing {path}")
    stat = path.stat()
    return _load_cached(str(path), stat.st_mtime_ns, stat.st_size, model)


def ingest(workspace: Workspace, paths: Sequence[Path], *, name: str, chunker: str | None = None,
           chunk_size: int | None = None, overlap: int | None = None, encoding: str = "utf-8",
           mapping: Mapping[str, str] | None = None, engine: str | None = None,
           note: Callable[[str], None] | None = None, shard_size: int = SHARD_CHUNKS,
           parquet_from: int = PARQUET_FROM, batch_bytes: int = BATCH_BYTES) -> SnapshotManifest:
    """Return the manifest of the snapshot `name` made of the .txt, .md and .jsonl documents at
    `paths`, chunked (`chunker` structure or fixed, `chunk_size` and `overlap` in characters; the
    defaults are curate.toml's [kb]) with each chunk's offsets in its document, and its document's
    scope (metadata, front matter, curate.toml [scope] rules; `mapping`: a team's own field names read as
    scope fields, e.g. {"acl": "groups"}).

    Input enough for `parquet_from` chunks (`staged_from`) is read and chunked in batches of `batch_bytes` on
    the engine `engine` names (local, ray, a Ray address; else curate.toml's [engine], else local), resuming
    from the batches and shards a killed run completed (`curate.kb.staged`); `note` is told where it ran.
    The snapshot is the one a single process writes, byte for byte."""
    chunker = chunker or workspace.setting("kb", "chunker", "structure")
    size = chunk_size or int(workspace.setting("kb", "chunk_size", 500))
    overlap = overlap if overlap is not None else int(workspace.setting("kb", "chunk_overlap", 50))
    if chunker not in ("fixed", "structure"):
        raise InputError(f"unknown chunker {chunker!r} (fixed or structure)", field="chunker")
    if size <= 0 or (chunker == "fixed" and not 0 <= overlap < size):
        raise InputError(f"need chunk size > 0 and 0 <= overlap < size (size={size}, overlap={overlap})",
                         field="chunk_size")
    settings = ChunkerSettings(kind=chunker, size=size, overlap=overlap if chunker == "fixed" else None)
    reader = ScopeReader(read_scope_settings(workspace), mapping)
    parts = document_parts(paths)
    chosen = engine_settings(workspace, engine)
    sources = [str(p) for p in paths]
    store = SnapshotStore(workspace)
    if sum(part.size() for part in parts) < staged_from(size, parquet_from):
        documents = read_parts(parts, encoding, reader)
        if not documents:
            raise InputError("no .txt, .md or .jsonl documents found", file=", ".join(map(str, paths)))
        chunks = chunk_documents(documents, settings)
        return store.write(name, documents, chunks, settings, sources=sources, scope=reader.settings,
                           shard_size=shard_size, parquet_from=parquet_from)
    running = open_engine(chosen, shard_size)
    try:
        with staged_ingest(workspace, paths, parts, encoding=encoding, reader=reader, chunker=settings,
                           engine=running, batch_bytes=batch_bytes, shard_size=shard_size,
                           parquet_from=parquet_from) as staged:
            if not staged.documents:
                raise InputError("no .txt, .md or .jsonl documents found", file=", ".join(map(str, paths)))
            check_kb_name(name)
            if not staged.chunks:
                raise InputError("no chunks: the input holds no text", field="text")
            manifest = _keep_staged(store, staged, name, settings, sources)
    finally:
        running.close()
    if note is not None:
        _say_staged(workspace, note, "read and chunked", staged, chosen)
    return manifest


def _keep_staged(store: SnapshotStore, staged: Staged, name: str, chunker: ChunkerSettings,
                 sources: list[str]) -> SnapshotManifest:
    """Store a snapshot staged on an engine under `name`; return its manifest."""
    return store.keep(SnapshotManifest(
        snapshot_id=snapshot_id_of(staged.content_sha256), content_sha256=staged.content_sha256, name=name,
        chunker=chunker, documents=staged.documents, chunks=staged.chunks, characters=staged.characters,
        created_at=now(), sources=sources, scope=staged.scope), staged.fill)


def _say_staged(workspace: Workspace, note: Callable[[str], None], done: str, staged: Staged,
                chosen: EngineSettings) -> None:
    """Tell `note` where the batches were `done`, and of staged ingests and imports that were killed and never
    finished (disk nobody uses)."""
    shards = max(len(staged.shards), 1)
    note(f"{done} {staged.batches:,} batch{'es' * (staged.batches > 1)} into {shards:,} "
         f"shard{'s' * (shards > 1)} on {chosen.describe()}")
    for folder, size in left_staged(workspace):
        note(f"{folder} holds {size / 2**20:,.1f} MB staged by an ingest or import that was killed and not run "
             "again with the same input: run it again to finish it, or remove the folder")


def import_chunks(workspace: Workspace, path: Path, *, name: str, encoding: str = "utf-8",
                  skip_invalid: bool = False, mapping: Mapping[str, str] | None = None, engine: str | None = None,
                  note: Callable[[str], None] | None = None, shard_size: int = SHARD_CHUNKS,
                  parquet_from: int = PARQUET_FROM, batch_bytes: int = BATCH_BYTES,
                  ) -> tuple[SnapshotManifest, list[InputError]]:
    """Return the manifest of the snapshot `name` made of the production chunks at `path` (JSONL:
    chunk_id, doc_id, text, optional start/end and metadata), stored as they are with their scope
    (metadata or top-level fields, curate.toml [scope] rules; `mapping`: a team's own field names read as
    scope fields), and the lines skipped (bad lines raise InvalidRecords unless `skip_invalid`).

    A file large enough for `parquet_from` chunks (`staged_from`) is read and checked in batches of `batch_bytes`
    on the engine `engine` names (local, ray, a Ray address; else curate.toml's [engine], else local), resuming
    from the batches and shards a killed run completed (`curate.kb.staged_import`); `note` is told where it
    ran. The snapshot and the lines named are those of one process, byte for byte."""
    reader = ScopeReader(read_scope_settings(workspace), mapping)
    path = Path(path)
    store = SnapshotStore(workspace)
    chosen = engine_settings(workspace, engine)
    if not path.is_file() or path.stat().st_size < staged_from(500, parquet_from) or not _known(encoding):
        chunks, skipped = read_production_chunks(path, encoding, skip_invalid, reader)
        manifest = store.write(name, [], chunks, IMPORTED, sources=[str(path)], scope=reader.settings,
                               shard_size=shard_size, parquet_from=parquet_from)
        return manifest, skipped
    check_kb_name(name)
    running = open_engine(chosen, shard_size)
    try:
        from curate.kb.staged_import import staged_import   # loaded only for a large file
        with staged_import(workspace, path, encoding=encoding, reader=reader, engine=running,
                           skip_invalid=skip_invalid, batch_bytes=batch_bytes, shard_size=shard_size,
                           parquet_from=parquet_from) as (staged, skipped):
            manifest = _keep_staged(store, staged, name, IMPORTED, [str(path)])
    finally:
        running.close()
    if note is not None:
        _say_staged(workspace, note, "read and checked", staged, chosen)
    return manifest, skipped


def _known(encoding: str) -> bool:
    """Return whether `encoding` names a codec (an unknown one is reported as one process reports it)."""
    try:
        codecs.lookup(encoding)
    except LookupError:
        return False
    return True
