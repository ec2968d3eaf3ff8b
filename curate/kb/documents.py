"""Reading what a knowledge base is made of: documents to chunk, or production chunks as they are."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from curate.errors import InputError, InvalidRecords
from curate.fileio import dumps_json, iter_json_objects, read_text
from curate.kb.chunking import fixed_spans, structure_spans
from curate.kb.front_matter import scalar, split_front_matter
from curate.kb.scope_fields import ScopeReader
from curate.progress import progress
from curate.records import Chunk, ChunkerSettings, Document, MetadataValue

DOCUMENT_SUFFIXES = (".txt", ".md", ".jsonl")
# a record's own fields: never read as scope, whatever --map says
DOCUMENT_FIELDS = ("doc_id", "text", "title", "metadata")
CHUNK_FIELDS = ("chunk_id", "doc_id", "text", "start", "end", "title", "metadata")


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


@dataclass(frozen=True)
class Part:
    """Documents to read: a whole file, or the lines of a .jsonl file from byte `start` to byte `end` (a
    large file read by many workers)."""

    file: Path
    root: Path
    start: int = 0
    end: int | None = None

    def size(self) -> int:
        """Return how many bytes the part holds."""
        return (self.end if self.end is not None else self.file.stat().st_size) - self.start


def document_parts(paths: Iterable[Path]) -> list[Part]:
    """Return the document files at `paths`, whole: files as given, folders walked for document files."""
    found = []
    for path in map(Path, paths):
        if path.is_dir():
            for file in sorted(path.rglob("*")):
                if file.is_file() and file.suffix in DOCUMENT_SUFFIXES:
                    found.append(Part(file, path))
        elif path.suffix in DOCUMENT_SUFFIXES:
            found.append(Part(path, path.parent))
        elif not path.exists():
            raise InputError("no such file or folder", file=str(path))
        else:
            raise InputError(f"unsupported document type; expected one of {', '.join(DOCUMENT_SUFFIXES)}",
                             file=str(path))
    return found


def _part_text(part: Part, encoding: str) -> str:
    """Return the text of a part of a .jsonl file (the whole file's text when it is whole)."""
    if part.start == 0 and part.end is None:
        return read_text(part.file, encoding)
    with open(part.file, "rb") as handle:
        handle.seek(part.start)
        data = handle.read(part.end - part.start)
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError):   # the caller reads the file whole to say where
        raise InputError(f"not valid {encoding} text", file=str(part.file)) from None
    return text.removeprefix("\ufeff") if part.start == 0 else text


def read_documents(paths: Iterable[Path], encoding: str = "utf-8", scope: ScopeReader | None = None) -> list[Document]:
    """Return the documents in .txt/.md files and .jsonl records (`doc_id`, `text`, `title`, `metadata`), each
    with its scope (`scope_fields`: metadata, top-level fields, Markdown front matter, path rules)."""
    return read_parts(document_parts(paths), encoding, scope)


def read_parts(parts: Sequence[Part], encoding: str = "utf-8", scope: ScopeReader | None = None) -> list[Document]:
    """Return the documents of `parts`, in order (`read_documents`); the line numbers of a part of a .jsonl file
    count from its first line."""
    scope = scope or ScopeReader()
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

    for part in parts:
        file, root = part.file, part.root
        if file.suffix == ".jsonl":
            for line, record in iter_json_objects(file, encoding, text=_part_text(part, encoding)):
                try:
                    if isinstance(record, InputError):
                        raise record
                    doc_id = _required_string(record, "doc_id", file=str(file), line=line)
                    text = _required_string(record, "text", file=str(file), line=line)
                    title = record.get("title")
                    if title is not None and not isinstance(title, str):
                        raise InputError("must be a string", file=str(file), line=line, field="title")
                    where = {"file": str(file), "line": line}
                    own, metadata = _scope_and_metadata(record, scope, DOCUMENT_FIELDS, **where)
                    keep(Document(doc_id=doc_id, text=text, title=title, metadata=metadata,
                                  text_sha256=sha256_text(text),
                                  scope=scope.scope(own, scope.rule_layer(doc_id), **where)), file, line)
                except InputError as exc:
                    errors.append(exc)
        else:
            try:
                keep(_file_document(file, root, encoding, scope), file, None)
            except InputError as exc:
                errors.append(exc)
    if errors:
        raise InvalidRecords(errors, skippable=False)   # a KB is ingested whole: no --skip-invalid
    return documents


def _scope_and_metadata(record: dict, scope: ScopeReader, fields: tuple[str, ...], *, file: str,
                        line: int) -> tuple[dict, dict[str, MetadataValue]]:
    """Return the scope fields a JSONL record gives (top level and metadata, checked) and its metadata
    without them."""
    top, _ = scope.take(record, file=file, line=line, skip=fields)
    raw = record.get("metadata")
    if raw is not None and not isinstance(raw, dict):
        raise InputError("must be an object of key: value", file=file, line=line, field="metadata")
    given, rest = scope.take(raw or {}, file=file, line=line, prefix="metadata.")
    metadata = _scalar_metadata(rest if raw is not None else None, file=file, line=line, field="metadata")
    return scope.joined(top, given, file=file, line=line), metadata


def _file_document(file: Path, root: Path, encoding: str, scope: ScopeReader) -> Document:
    """Return the document a .txt or .md file holds; a Markdown file's front matter gives its title, scope
    and metadata, and its text is what follows the front matter."""
    text = read_text(file, encoding)
    doc_id = file.relative_to(root).as_posix()
    title, own, metadata = None, {}, {}
    found = split_front_matter(text, file=str(file)) if file.suffix == ".md" else None
    if found is not None:
        values = dict(found.values)
        title = values.pop("title", None)
        if title is not None and not isinstance(title, str):
            raise InputError(f"must be text, got {type(title).__name__}", file=str(file),
                             line=found.lines.get("title"), field="title")
        title = title.strip() or None if title is not None else None
        own, rest = scope.take(values, file=str(file), line=None, lines=found.lines)
        metadata = _scalar_metadata({k: scalar(v) for k, v in rest.items()}, file=str(file), line=None,
                                    field="front matter")
        text = found.body
    if title is None and file.suffix == ".md":
        title = _markdown_title(text)
    return Document(doc_id=doc_id, text=text, title=title, metadata=metadata, text_sha256=sha256_text(text),
                    scope=scope.scope(own, scope.rule_layer(doc_id), file=str(file), line=None))


def chunk_documents(documents: Sequence[Document], settings: ChunkerSettings, bar: bool = True) -> list[Chunk]:
    """Return the chunks of `documents` under `settings`; each chunk's text is source[start:end] (`bar`: a
    progress bar on a terminal; a worker chunking a batch draws none)."""
    chunks: list[Chunk] = []
    for doc in progress(documents, "chunking", unit="doc") if bar else documents:
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
                                end=len(doc.text), text_sha256=doc.text_sha256, metadata=base | doc.metadata,
                                scope=doc.scope))
            continue
        for index, span in enumerate(spans):
            text = doc.text[span.start:span.end]
            metadata = base | doc.metadata | ({"section": span.section} if getattr(span, "section", "") else {})
            chunks.append(Chunk(chunk_id=f"{doc.doc_id}#{index}", doc_id=doc.doc_id, text=text,
                                start=span.start, end=span.end, text_sha256=sha256_text(text),
                                metadata=metadata, scope=doc.scope))
    return chunks


IMPORTED = ChunkerSettings(kind="imported")   # the chunker of a snapshot of production chunks


def read_production_chunks(path: Path, encoding: str = "utf-8", skip_invalid: bool = False,
                           scope: ScopeReader | None = None) -> tuple[list[Chunk], list[InputError]]:
    """Return the chunks of a production JSONL file as they are, each with its scope (its metadata or
    top-level fields, over the path rule of its doc_id), and the lines skipped."""
    scope = scope or ScopeReader()
    file = str(path)
    chunks: list[Chunk] = []
    errors: list[InputError] = []
    seen: dict[str, int] = {}
    for line, record in iter_json_objects(Path(path), encoding):
        found = production_chunk(record, scope, file=file, line=line)
        if isinstance(found, Chunk) and found.chunk_id in seen:
            found = duplicate_chunk_id(found.chunk_id, seen[found.chunk_id], file=file, line=line)
        if isinstance(found, InputError):
            errors.append(found)
            continue
        seen[found.chunk_id] = line
        chunks.append(found)
    if errors and not skip_invalid:
        raise InvalidRecords(errors)
    return chunks, errors


def duplicate_chunk_id(chunk_id: str, first: int, *, file: str, line: int) -> InputError:
    """Return the error of a line that repeats the chunk_id of line `first`."""
    return InputError(f"duplicate chunk_id '{chunk_id}' (first on line {first})", file=file, line=line,
                      field="chunk_id")


def production_chunk(record: dict | InputError, scope: ScopeReader, *, file: str, line: int) -> Chunk | InputError:
    """Return the chunk one line of a production JSONL file holds (chunk_id, doc_id, text, optional start/end,
    metadata, scope fields), or the error that names what is wrong with it."""
    try:
        if isinstance(record, InputError):
            raise record
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
        own, metadata = _scope_and_metadata(record, scope, CHUNK_FIELDS, file=file, line=line)
        if isinstance(record.get("title"), str):
            metadata.setdefault("title", record["title"])
        chunk_scope = scope.scope(own, scope.rule_layer(doc_id), file=file, line=line)
        return Chunk(chunk_id=chunk_id, doc_id=doc_id, text=text, start=start, end=end,
                     text_sha256=sha256_text(text), metadata=metadata, scope=chunk_scope)
    except InputError as exc:
        return exc
    except ValidationError as exc:
        return InputError.from_validation(exc, file=file, line=line)
