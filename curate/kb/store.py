"""Knowledge-base snapshots: documents chunked with source offsets, stored by content hash."""

from __future__ import annotations

import difflib
import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path

from curate.errors import InputError, NotFound
from curate.fileio import atomic_directory, dumps_json, jsonl_bytes
from curate.kb.documents import chunk_documents, read_documents, read_production_chunks
from curate.kb.scope_fields import ScopeReader
from curate.kb.shards import PARQUET_FROM, SHARD_CHUNKS, read_shard, write_shards
from curate.locks import writing
from curate.records import (Chunk, ChunkerSettings, Document, KBNames, ScopeCount, ScopeCounts, ScopeSettings,
                            SnapshotManifest, now, validate_lines)
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


def content_sha256(documents: Sequence[Document], chunks: Sequence[Chunk]) -> str:
    """Return the sha256 that identifies a snapshot: documents and chunks, in order."""
    digest = hashlib.sha256()
    for doc in documents:
        digest.update(b"D" + dumps_json(_hashed(doc)).encode("utf-8") + b"\n")
    for chunk in chunks:
        digest.update(b"C" + dumps_json(_hashed(chunk)).encode("utf-8") + b"\n")
    return digest.hexdigest()


def _hashed(record: Chunk | Document) -> dict:
    """Return the fields of a chunk or document that identify a snapshot: a record without scope hashes
    as it did before scope existed, so unscoped snapshots keep their ids."""
    data = record.model_dump(mode="json")
    if data.get("scope") is None:
        data.pop("scope", None)
    return data


def scope_counts(chunks: Sequence[Chunk], settings: ScopeSettings | None = None) -> ScopeCounts | None:
    """Return how many chunks each access group may see and each version holds (None when no chunk has
    a scope: an unscoped snapshot's manifest stays as it was).

    >>> from curate.records import Scope
    >>> def chunk(cid, doc, **scope):
    ...     return Chunk(chunk_id=cid, doc_id=doc, text="t", text_sha256="0", scope=Scope(**scope) if scope else None)
    >>> counts = scope_counts([chunk("p25#0", "p25", version="2025"),
    ...                        chunk("p26#0", "p26", version="2026", supersedes=["p25", "p24"]),
    ...                        chunk("pay#0", "pay", groups=["hr"]), chunk("faq#0", "faq")])
    >>> counts.everyone, [(g.name, g.chunks) for g in counts.groups], [(v.name, v.chunks) for v in counts.versions]
    (3, [('hr', 4)], [('2025', 1), ('2026', 1)])
    >>> counts.unversioned, counts.superseded, counts.unknown_superseded
    (2, 1, ['p24'])
    """
    scoped = [c.scope for c in chunks if c.scope is not None and not c.scope.is_empty()]
    if not scoped:
        return None
    settings = settings or ScopeSettings()
    everyone = len(chunks) - sum(s.groups is not None for s in scoped)
    restricted = Counter(g for s in scoped for g in s.groups or ())
    names = [g for g in settings.groups or () if g not in restricted] + sorted(restricted)
    order = version_order(settings)
    versions = Counter(s.version for s in scoped if s.version is not None)
    replaced = {target for s in scoped for target in s.supersedes}
    return ScopeCounts(
        everyone=everyone,
        groups=[ScopeCount(name=g, chunks=everyone + restricted[g]) for g in sorted(names, key=_declared(settings))],
        versions=[ScopeCount(name=v, chunks=versions[v]) for v in sorted(versions, key=order.key)],
        unversioned=len(chunks) - sum(versions.values()),
        dated=sum(s.valid_from is not None or s.valid_to is not None for s in scoped),
        superseded=sum(c.chunk_id in replaced or c.doc_id in replaced for c in chunks) if replaced else 0,
        unknown_superseded=ScopeIndex(chunks, order).unknown_superseded if replaced else [])


def _declared(settings: ScopeSettings):
    """Return a sort key: declared groups in their order, then the others by name."""
    position = {g: n for n, g in enumerate(settings.groups or ())}
    return lambda group: (position.get(group, len(position)), group)


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
        snapshot_id = snapshot_id_of(digest)
        folder = self.root / snapshot_id
        kb_dir = self.workspace.kb_dir
        with writing(kb_dir, "the KB", clean=[(kb_dir, 1), (self.root, 1)]):
            if (folder / "manifest.json").exists():
                manifest = self.manifest(snapshot_id)
            else:
                manifest = SnapshotManifest(
                    snapshot_id=snapshot_id, content_sha256=digest, name=name, chunker=chunker,
                    documents=len(documents), chunks=len(chunks), characters=sum(len(c.text) for c in chunks),
                    created_at=now(), sources=[str(s) for s in sources], scope=scope_counts(chunks, scope))
                with atomic_directory(folder) as tmp:
                    (tmp / "documents.jsonl").write_bytes(jsonl_bytes(d.model_dump(mode="json") for d in documents))
                    if len(chunks) >= parquet_from:
                        manifest.shards = write_shards(tmp, chunks, shard_size)
                    else:   # a small KB, as it always was: pyarrow is not even loaded to read it
                        (tmp / "chunks.jsonl").write_bytes(jsonl_bytes(c.model_dump(mode="json") for c in chunks))
                    manifest.write(tmp / "manifest.json")
            names = self.names()
            history = names.setdefault(name, [])
            if not history or history[-1] != snapshot_id:
                if snapshot_id in history:
                    history.remove(snapshot_id)
                history.append(snapshot_id)
                KBNames(names=names).write(self.names_path)
        return manifest

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
           mapping: Mapping[str, str] | None = None) -> SnapshotManifest:
    """Return the manifest of the snapshot `name` made of the .txt, .md and .jsonl documents at
    `paths`, chunked (`chunker` structure or fixed, `chunk_size` and `overlap` in characters; the
    defaults are curate.toml's [kb]) with each chunk's offsets in its document, and its document's
    scope (metadata, front matter, curate.toml [scope] rules; `mapping`: a team's own field names read as
    scope fields, e.g. {"acl": "groups"})."""
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
    documents = read_documents(paths, encoding, reader)
    if not documents:
        raise InputError("no .txt, .md or .jsonl documents found", file=", ".join(map(str, paths)))
    chunks = chunk_documents(documents, settings)
    return SnapshotStore(workspace).write(name, documents, chunks, settings, sources=[str(p) for p in paths],
                                          scope=reader.settings)


def import_chunks(workspace: Workspace, path: Path, *, name: str, encoding: str = "utf-8",
                  skip_invalid: bool = False, mapping: Mapping[str, str] | None = None,
                  ) -> tuple[SnapshotManifest, list[InputError]]:
    """Return the manifest of the snapshot `name` made of the production chunks at `path` (JSONL:
    chunk_id, doc_id, text, optional start/end and metadata), stored as they are with their scope
    (metadata or top-level fields, curate.toml [scope] rules; `mapping`: a team's own field names read as
    scope fields), and the
    lines skipped (bad lines raise InvalidRecords unless `skip_invalid`)."""
    reader = ScopeReader(read_scope_settings(workspace), mapping)
    chunks, skipped = read_production_chunks(Path(path), encoding, skip_invalid, reader)
    manifest = SnapshotStore(workspace).write(name, [], chunks, ChunkerSettings(kind="imported"),
                                              sources=[str(path)], scope=reader.settings)
    return manifest, skipped
