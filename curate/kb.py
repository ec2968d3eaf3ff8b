"""Knowledge-base snapshots: documents chunked with source offsets, stored by content hash."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

from pydantic import ValidationError

from .chunking import fixed_spans, structure_spans
from .errors import InputError, InvalidRecords, NotFound
from .fileio import atomic_directory, atomic_write_json, dumps_json, iter_jsonl_lenient, jsonl_bytes, read_text
from .progress import progress
from .schema import Chunk, ChunkerSettings, Document, SnapshotManifest, now
from .workspace import Workspace

DOCUMENT_SUFFIXES = (".txt", ".md", ".jsonl")
MetadataValue = str | int | float | bool | None


def sha256_text(text: str) -> str:
    """Return the hex sha256 of `text` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _markdown_title(text: str) -> str | None:
    for line in text.splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip() or None
        if line.strip():
            return None
    return None


def _scalar_metadata(value: object, *, file: str, line: int | None, field: str) -> dict[str, MetadataValue]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError("must be an object of key: value", file=file, line=line, field=field)
    out = {}
    for key, item in value.items():
        if isinstance(item, (list, dict)):
            item = dumps_json(item)
        out[str(key)] = item
    return out


def _required_string(record: dict, key: str, *, file: str, line: int) -> str:
    value = record.get(key)
    if value is None or value == "":
        raise InputError("missing", file=file, line=line, field=key)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and key.endswith("id"):
        return str(value)
    if not isinstance(value, str):
        raise InputError(f"must be a string, got {type(value).__name__}", file=file, line=line, field=key)
    return value


def _expand(paths: Iterable[Path]) -> list[tuple[Path, Path]]:
    """Return (file, root) pairs: files as given, folders walked for document files."""
    found = []
    for path in map(Path, paths):
        if path.is_dir():
            for file in sorted(path.rglob("*")):
                if file.is_file() and file.suffix in DOCUMENT_SUFFIXES:
                    found.append((file, path))
        elif path.suffix in DOCUMENT_SUFFIXES:
            found.append((path, path.parent))
        elif not path.exists():
            raise InputError("no such file or folder", file=str(path))
        else:
            raise InputError(f"unsupported document type; expected one of {', '.join(DOCUMENT_SUFFIXES)}",
                             file=str(path))
    return found


def read_documents(paths: Iterable[Path], encoding: str = "utf-8") -> list[Document]:
    """Return the documents in .txt/.md files and .jsonl records (`doc_id`, `text`, `title`, `metadata`)."""
    documents: list[Document] = []
    seen: dict[str, str] = {}
    errors: list[InputError] = []

    def keep(doc: Document, file: Path, line: int | None) -> None:
        where = f"{file}:{line}" if line else str(file)
        if doc.doc_id in seen:
            errors.append(InputError(f"duplicate doc_id '{doc.doc_id}' (first at {seen[doc.doc_id]})",
                                     file=str(file), line=line, field="doc_id"))
            return
        seen[doc.doc_id] = where
        documents.append(doc)

    for file, root in _expand(paths):
        if file.suffix == ".jsonl":
            for line, record in iter_jsonl_lenient(file, encoding):
                try:
                    if isinstance(record, InputError):
                        raise record
                    if not isinstance(record, dict):
                        raise InputError("each line must be a JSON object", file=str(file), line=line)
                    doc_id = _required_string(record, "doc_id", file=str(file), line=line)
                    text = _required_string(record, "text", file=str(file), line=line)
                    title = record.get("title")
                    if title is not None and not isinstance(title, str):
                        raise InputError("must be a string", file=str(file), line=line, field="title")
                    metadata = _scalar_metadata(record.get("metadata"), file=str(file), line=line, field="metadata")
                    keep(Document(doc_id=doc_id, text=text, title=title, metadata=metadata,
                                  text_sha256=sha256_text(text)), file, line)
                except InputError as exc:
                    errors.append(exc)
        else:
            text = read_text(file, encoding)
            doc_id = file.relative_to(root).as_posix()
            title = _markdown_title(text) if file.suffix == ".md" else None
            keep(Document(doc_id=doc_id, text=text, title=title, text_sha256=sha256_text(text)), file, None)
    if errors:
        raise InvalidRecords(errors)
    return documents


def chunk_documents(documents: Sequence[Document], settings: ChunkerSettings) -> list[Chunk]:
    """Return the chunks of `documents` under `settings`; each chunk's text is source[start:end]."""
    chunks: list[Chunk] = []
    for doc in progress(documents, "chunking", unit="doc"):
        if settings.kind == "fixed":
            spans = fixed_spans(doc.text, size=settings.size, overlap=settings.overlap or 0)
        elif settings.kind == "structure":
            spans = structure_spans(doc.text, size=settings.size)
        elif settings.kind == "one_per_document":
            spans = None
        else:
            raise ValueError(f"cannot chunk with {settings.kind!r}")
        base: dict[str, MetadataValue] = {"title": doc.title} if doc.title else {}
        if spans is None:
            chunks.append(Chunk(chunk_id=doc.doc_id, doc_id=doc.doc_id, text=doc.text, start=0,
                                end=len(doc.text), text_sha256=doc.text_sha256, metadata=base | doc.metadata))
            continue
        for index, span in enumerate(spans):
            text = doc.text[span.start:span.end]
            metadata = base | doc.metadata | ({"section": span.section} if getattr(span, "section", "") else {})
            chunks.append(Chunk(chunk_id=f"{doc.doc_id}#{index}", doc_id=doc.doc_id, text=text,
                                start=span.start, end=span.end, text_sha256=sha256_text(text),
                                metadata=metadata))
    return chunks


def read_production_chunks(path: Path, encoding: str = "utf-8",
                           skip_invalid: bool = False) -> tuple[list[Chunk], list[InputError]]:
    """Return the chunks of a production JSONL file as they are, and the lines skipped."""
    file = str(path)
    chunks: list[Chunk] = []
    errors: list[InputError] = []
    seen: dict[str, int] = {}
    for line, record in iter_jsonl_lenient(Path(path), encoding):
        try:
            if isinstance(record, InputError):
                raise record
            if not isinstance(record, dict):
                raise InputError("each line must be a JSON object", file=file, line=line)
            chunk_id = _required_string(record, "chunk_id", file=file, line=line)
            doc_id = _required_string(record, "doc_id", file=file, line=line)
            text = _required_string(record, "text", file=file, line=line)
            start, end = record.get("start"), record.get("end")
            if (start is None) != (end is None):
                raise InputError("give both start and end, or neither", file=file, line=line,
                                 field="end" if end is None else "start")
            for key, value in (("start", start), ("end", end)):
                if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                    raise InputError("must be a non-negative integer", file=file, line=line, field=key)
            if start is not None and end - start != len(text):
                raise InputError(f"end - start = {end - start} but the text has {len(text)} characters",
                                 file=file, line=line, field="end")
            if chunk_id in seen:
                raise InputError(f"duplicate chunk_id '{chunk_id}' (first on line {seen[chunk_id]})",
                                 file=file, line=line, field="chunk_id")
            metadata = _scalar_metadata(record.get("metadata"), file=file, line=line, field="metadata")
            if isinstance(record.get("title"), str):
                metadata.setdefault("title", record["title"])
            seen[chunk_id] = line
            chunks.append(Chunk(chunk_id=chunk_id, doc_id=doc_id, text=text, start=start, end=end,
                                text_sha256=sha256_text(text), metadata=metadata))
        except InputError as exc:
            errors.append(exc)
        except ValidationError as exc:
            errors.append(InputError(exc.errors()[0]["msg"], file=file, line=line,
                                     field=".".join(map(str, exc.errors()[0]["loc"]))))
    if errors and not skip_invalid:
        raise InvalidRecords(errors)
    return chunks, errors


def content_sha256(documents: Sequence[Document], chunks: Sequence[Chunk]) -> str:
    """Return the sha256 that identifies a snapshot: documents and chunks, in order."""
    digest = hashlib.sha256()
    for doc in documents:
        digest.update(b"D" + dumps_json(doc.model_dump(mode="json")).encode("utf-8") + b"\n")
    for chunk in chunks:
        digest.update(b"C" + dumps_json(chunk.model_dump(mode="json")).encode("utf-8") + b"\n")
    return digest.hexdigest()


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
        import json
        if not self.names_path.exists():
            return {}
        return json.loads(self.names_path.read_text(encoding="utf-8"))

    def write(self, name: str, documents: Sequence[Document], chunks: Sequence[Chunk],
              chunker: ChunkerSettings, sources: Sequence[str] = ()) -> SnapshotManifest:
        """Store a snapshot (once per content) under `name` and return its manifest."""
        if not name or "@" in name or "/" in name:
            raise InputError(f"KB name {name!r} must be non-empty and contain no '@' or '/'", field="name")
        if not chunks:
            raise InputError("no chunks: the input holds no text", field="text")
        ids = [c.chunk_id for c in chunks]
        if len(set(ids)) != len(ids):
            raise InputError("chunk ids are not unique", field="chunk_id")
        digest = content_sha256(documents, chunks)
        snapshot_id = snapshot_id_of(digest)
        folder = self.root / snapshot_id
        if (folder / "manifest.json").exists():
            manifest = self.manifest(snapshot_id)
        else:
            manifest = SnapshotManifest(
                snapshot_id=snapshot_id, content_sha256=digest, name=name, chunker=chunker,
                documents=len(documents), chunks=len(chunks), characters=sum(len(c.text) for c in chunks),
                created_at=now(), sources=[str(s) for s in sources])
            with atomic_directory(folder) as tmp:
                (tmp / "documents.jsonl").write_bytes(jsonl_bytes(d.model_dump(mode="json") for d in documents))
                (tmp / "chunks.jsonl").write_bytes(jsonl_bytes(c.model_dump(mode="json") for c in chunks))
                atomic_write_json(tmp / "manifest.json", manifest.model_dump(mode="json"))
        names = self.names()
        history = names.setdefault(name, [])
        if not history or history[-1] != snapshot_id:
            if snapshot_id in history:
                history.remove(snapshot_id)
            history.append(snapshot_id)
            atomic_write_json(self.names_path, names)
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
        return SnapshotManifest.model_validate_json(path.read_text(encoding="utf-8"))

    def chunks(self, snapshot_id: str) -> list[Chunk]:
        """Return a snapshot's chunks in order."""
        return list(_load_records(self.root / snapshot_id / "chunks.jsonl", Chunk))

    def documents(self, snapshot_id: str) -> list[Document]:
        """Return a snapshot's source documents (empty for imported production chunks)."""
        return list(_load_records(self.root / snapshot_id / "documents.jsonl", Document))


@lru_cache(maxsize=8)
def _load_cached(path: str, mtime_ns: int, model: type) -> tuple:
    import json
    with open(path, encoding="utf-8") as handle:
        return tuple(model.model_construct(**json.loads(line)) for line in handle if line.strip())


def _load_records(path: Path, model: type) -> tuple:
    if not path.exists():
        raise NotFound(f"missing {path}")
    return _load_cached(str(path), path.stat().st_mtime_ns, model)


def ingest(workspace: Workspace, paths: Sequence[Path], *, name: str, chunker: str | None = None,
           size: int | None = None, overlap: int | None = None, encoding: str = "utf-8") -> SnapshotManifest:
    """Read documents, chunk them and store the snapshot; return its manifest."""
    chunker = chunker or workspace.setting("kb", "chunker", "structure")
    size = size or int(workspace.setting("kb", "chunk_size", 500))
    overlap = overlap if overlap is not None else int(workspace.setting("kb", "chunk_overlap", 50))
    if chunker not in ("fixed", "structure"):
        raise InputError(f"unknown chunker {chunker!r} (fixed or structure)", field="chunker")
    if size <= 0 or (chunker == "fixed" and not 0 <= overlap < size):
        raise InputError(f"need chunk size > 0 and 0 <= overlap < size (size={size}, overlap={overlap})",
                         field="chunk_size")
    settings = ChunkerSettings(kind=chunker, size=size, overlap=overlap if chunker == "fixed" else None)
    documents = read_documents(paths, encoding)
    if not documents:
        raise InputError("no .txt, .md or .jsonl documents found", file=", ".join(map(str, paths)))
    chunks = chunk_documents(documents, settings)
    return SnapshotStore(workspace).write(name, documents, chunks, settings, sources=[str(p) for p in paths])


def import_chunks(workspace: Workspace, path: Path, *, name: str, encoding: str = "utf-8",
                  skip_invalid: bool = False) -> tuple[SnapshotManifest, list[InputError]]:
    """Store production chunks as they are; return the manifest and the lines skipped."""
    chunks, skipped = read_production_chunks(Path(path), encoding, skip_invalid)
    manifest = SnapshotStore(workspace).write(name, [], chunks, ChunkerSettings(kind="imported"),
                                              sources=[str(path)])
    return manifest, skipped
