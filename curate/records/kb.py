"""Records of a knowledge-base snapshot: its documents, chunks and manifest, the KB names, and the
groups of duplicate chunks that `check-dups --kb` finds."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from curate.records.base import Record, VersionedRecord
from curate.records.scope import Scope

MetadataValue = str | int | float | bool | None


class Chunk(Record):
    """One retrievable unit of a knowledge base, anchored in its source document.

    A row of a snapshot's Parquet shards (chunks.jsonl before them), read under the schema version of the snapshot's manifest
    (the chunk's own fields go into the snapshot's content hash, so a line carries no version)."""

    chunk_id: str = Field(description="Unique id within the snapshot (production's own id on import).")
    doc_id: str = Field(description="Id of the source document.")
    text: str = Field(description="The chunk text exactly as retrieval sees it.")
    start: int | None = Field(None, ge=0, description="Character offset of the chunk in its document (None if unknown).")
    end: int | None = Field(None, ge=0, description="Character offset one past the chunk's end (None if unknown).")
    text_sha256: str = Field(description="sha256 of `text` (UTF-8).")
    metadata: dict[str, MetadataValue] = Field(
        default_factory=dict, description="Free metadata: title, heading path, section.")
    scope: Scope | None = Field(
        None, description="Access groups and validity (its document's, with the chunk's own on top); None: "
        "everyone, always.")


class Document(Record):
    """A source document as ingested; kept so evidence spans can be re-anchored (a line of
    documents.jsonl, read under the manifest's schema version)."""

    doc_id: str = Field(description="Document id (file stem, or the `doc_id` given in JSONL).")
    text: str = Field(description="Full document text; chunk offsets index into it.")
    title: str | None = Field(None, description="Title, if the source had one.")
    metadata: dict[str, MetadataValue] = Field(default_factory=dict, description="Free metadata.")
    text_sha256: str = Field(description="sha256 of `text`.")
    scope: Scope | None = Field(None, description="Access groups and validity; None: everyone, always.")


ChunkerKind = Literal["fixed", "structure", "one_per_document", "imported"]


class ChunkerSettings(Record):
    """How a snapshot was chunked."""

    kind: ChunkerKind = Field(
        description="fixed windows, structure-aware, one chunk per document, or production chunks imported as they are.")
    size: int | None = Field(None, description="Maximum chunk length in characters.")
    overlap: int | None = Field(None, description="Characters shared by consecutive fixed windows.")


class ScopeCount(Record):
    """Chunks of one access group or one version."""

    name: str = Field(description="The group or version label.")
    chunks: int = Field(description="How many chunks.")


class ScopeCounts(Record):
    """How a snapshot's chunks are scoped: who may see how many, and which versions they belong to."""

    everyone: int = Field(description="Chunks with no groups: everyone may see them.")
    groups: list[ScopeCount] = Field(
        default_factory=list, description="Chunks each access group may see: those whose groups name it, and "
        "everyone's (declared groups in their order, then the others by name).")
    versions: list[ScopeCount] = Field(default_factory=list, description="Chunks of each version label, oldest first.")
    unversioned: int = Field(0, description="Chunks with no version label.")
    dated: int = Field(0, description="Chunks with a valid_from or valid_to date.")
    superseded: int = Field(0, description="Chunks that a chunk of the snapshot supersedes (by its id or its "
                            "document's).")
    unknown_superseded: list[str] = Field(
        default_factory=list, description="Ids named in `supersedes` that are neither a document nor a chunk of "
        "the snapshot (a typo, or a document not ingested).")


class ShardInfo(Record):
    """One Parquet shard of a snapshot's chunks (`curate.kb.shards`)."""

    file: str = Field(description="Its path inside the snapshot folder: chunks/part-NNNNN.parquet.")
    chunks: int = Field(description="Chunks it holds.")
    first: int = Field(description="Index of its first chunk in the snapshot's chunk order.")
    sha256: str = Field(description="sha256 of the file's bytes.")
    foreign: list[int] | None = Field(
        None, description="Positions of the chunks of its documents that other shards hold (a worker reads them "
        "too); empty when its documents are whole in it, as when chunks are listed document by document; None "
        "in shards written before this was recorded (found out by reading every shard).")


class SnapshotManifest(VersionedRecord):
    """What a KB snapshot holds and how it was made (kb/snapshots/ID/manifest.json); `snapshot_id`
    is a hash of its content."""

    SCHEMA = 3  # 3: the chunks in Parquet shards (`shards`)
    snapshot_id: str = Field(description="'kb-' + the first 16 hex digits of `content_sha256`.")
    content_sha256: str = Field(description="sha256 over the documents and chunks (names and dates excluded).")
    name: str = Field(description="KB name given at ingest/import (a snapshot may carry several over time).")
    chunker: ChunkerSettings = Field(description="Chunker settings.")
    documents: int = Field(description="Number of source documents (0 for imported chunks without documents).")
    chunks: int = Field(description="Number of chunks.")
    characters: int = Field(description="Total characters over all chunks.")
    created_at: str = Field(description="When this snapshot was first written (UTC).")
    sources: list[str] = Field(default_factory=list, description="Paths the content was read from.")
    scope: ScopeCounts | None = Field(
        None, description="Chunks per access group and version; None when no chunk has a scope (schema 1 had none).")
    shards: list[ShardInfo] = Field(default_factory=list, description="The Parquet shards holding the chunks, in "
                                    "chunk order (chunks/part-NNNNN.parquet); empty: the snapshot was written before "
                                    "shards, its chunks are in chunks.jsonl (still read as they are).")


class KBNames(VersionedRecord):
    """kb/names.json: which snapshots each KB name has had, oldest first (the last is current)."""

    SCHEMA = 2
    names: dict[str, list[str]] = Field(default_factory=dict, description="KB name -> snapshot ids, oldest first.")

    @classmethod
    def upgrade(cls, data: dict) -> dict:
        """Schema 1 was the bare mapping {name: [snapshot ids]}."""
        return data if "names" in data else {"names": {k: v for k, v in data.items() if k != "schema_version"}}


class ChunkGroup(Record):
    """Chunks that are copies of one another: finding any one of them finds the others' evidence."""

    group_id: str = Field("", description="'g-' and a hash of the members: what `check-dups --kb --undo` names.")
    chunks: list[str] = Field(description="Chunk ids of the group, in snapshot order.")
    method: Literal["exact", "near"] = Field(description="exact after folding, or near (MinHash, then rapidfuzz).")
    min_score: float = Field(description="Lowest similarity (0-100) among the pairs that joined the group.")
    differs: list[str] = Field(default_factory=list,
                               description="For each member after the first: where its text differs from the first.")


class WithheldPair(Record):
    """Two alike chunks that are not copies: they differ in a number, date, version, code or negation
    (`differs`), they overlap (windows of one page, each holding text the other lacks), or one holds the
    other and adds text of its own (`contained`)."""

    a: str = Field(description="One chunk id.")
    b: str = Field(description="The other.")
    score: float = Field(description="Their rapidfuzz ratio (0-100) on folded text.")
    differs: str = Field(description="What differs, e.g. '2017 ≠ 2018', or what each holds that the other lacks.")
    why: Literal["differs", "overlap", "contained", "scope"] = Field(
        "differs", description="differs: a number, date, version, code or negation; overlap: each holds text the "
        "other lacks; contained: the longer adds text of its own (not boilerplate); scope: their access groups, "
        "version, validity or supersedes differ (`differs` says how), so they are not interchangeable.")


class ChunkGroups(VersionedRecord):
    """kb/index/ID/groups.json: the snapshot's evidence equivalence groups, from `check-dups --kb`."""

    SCHEMA = 3  # 3: a pair can be withheld for its scope
    snapshot: str = Field(description="Snapshot id the chunk ids belong to.")
    at: str = Field(description="When the groups were found (UTC).")
    near_min: float = Field(description="rapidfuzz ratio from which two chunks were near copies.")
    groups: list[ChunkGroup] = Field(default_factory=list, description="The groups of two or more chunks.")
    withheld: list[WithheldPair] = Field(default_factory=list,
                                         description="Alike pairs not joined: they differ in what matters, or are "
                                         "neighbours rather than copies (see `WithheldPair.why`).")
    undone: list[ChunkGroup] = Field(default_factory=list,
                                     description="Groups a person undid (--undo): their members are never joined again.")


class LexicalIndexMeta(VersionedRecord):
    """kb/index/ID/lexical/meta.json: what the cached folded texts (folded.txt) and 4-gram index
    (ngram_keys.npy) were built from.
    A cache: rebuilt whenever it is missing, damaged or of another `version`."""

    version: int = Field(description="Version of the way the lexical index is built.")
    n: int = Field(description="Characters per gram.")
    chunks: int = Field(description="Chunks indexed.")
    snapshot: str = Field(description="Snapshot id.")
    folded_crc32: int | None = Field(None, description="CRC-32 of folded.txt (the folded texts, one a line): "
                                     "other bytes are a damaged cache.")


class CopySketchMeta(VersionedRecord):
    """kb/index/ID/.../sketch/meta.json: what `check-dups --kb` found out about the chunks of one shard (or of a
    snapshot in one shard) before comparing any pair; beside it, per chunk, digests.npy (the digest of its
    compared text), empty.npy (it has none), codes.npy (its scope, a number into `scopes`) and bands.npy (the
    hashes of its 16 MinHash bands). A cache: made again whenever it is missing, damaged or of another `version`."""

    version: int = Field(description="Version of the way the sketch is made.")
    chunks: int = Field(description="Chunks sketched.")
    snapshot: str = Field(description="Snapshot id.")
    scopes: list[Scope | None] = Field(description="The distinct scopes of the chunks (null: everyone, always).")


class MineSketchMeta(VersionedRecord):
    """kb/index/ID/shards/PART/mining/meta.json: what `curate generate` found out about the chunks of one shard
    of a snapshot in many before mining any pair (`curate.generate.mine_sketch`); beside it, chunks.npy (each chunk's
    language and document, numbers into the lists below), passages.npy, digests.npy, shapes.npy and bands.npy (each
    sentence passage first of its folded text in the shard: its span, digests of its folded text and shape, the
    hashes of its 32 MinHash bands), found.npy, stated.npy and named.npy (the codes its line passages state, and
    where one is about a code, the other codes it names). A cache: made again whenever it is missing, damaged or of
    another `version`."""

    version: int = Field(description="Version of the way the sketch is made.")
    chunks: int = Field(description="Chunks sketched.")
    snapshot: str = Field(description="Snapshot id.")
    languages: list[str] = Field(description="The languages of the chunks.")
    doc_ids: list[str] = Field(description="The documents of the chunks.")
    codes: list[str] = Field(description="The codes the chunks state or name.")


class TermIndexMeta(VersionedRecord):
    """kb/index/ID/shards/PART/bm25-vN/meta.json: one shard's BM25 terms, counted once for `curate grade`
    over a snapshot in shards; beside it vocab.json (the shard's tokens), indptr.npy, docs.npy and tf.npy (per
    token, the chunks holding it and how often) and lengths.npy (tokens per chunk). The snapshot's document
    frequencies and average length are summed from every shard's at search time. A cache: counted again
    whenever it is missing, damaged or of another `version`."""

    version: int = Field(description="Version of the BM25 tokens (the whole snapshot's index has the same).")
    snapshot: str = Field(description="Snapshot id.")
    chunks: int = Field(description="Chunks of the shard counted.")
    tokens: int = Field(description="Tokens of those chunks, all counted (the average length's numerator).")


class DenseIndexMeta(VersionedRecord):
    """kb/index/ID/dense/KEY/meta.json: what `curate grade --dense` found out about embedding a snapshot's
    chunks with one model, and whether vectors.npy beside it holds every chunk's vector. A cache."""

    version: int = Field(description="Version of the way the dense index is built.")
    model: str = Field(description="Embedding model, as configured.")
    snapshot: str = Field(description="Snapshot id.")
    chunks: int = Field(description="Chunks in the snapshot.")
    sampled: int = Field(description="Chunks whose readability was checked, spread evenly over the snapshot.")
    unreadable: int = Field(description="Sampled chunks the model cannot read (mostly unknown tokens).")
    chunks_per_second: float | None = Field(None, description="Embedding speed measured on this machine.")
    built: bool = Field(False, description="True when vectors.npy holds every chunk's vector, in chunk order.")


class EmbeddingKeys(VersionedRecord):
    """keys.json beside vectors.npy: the sha256 of the text each row of vectors embeds.
    A cache: started again whenever it is missing, damaged or does not match the vectors."""

    keys: list[str] = Field(default_factory=list, description="sha256 of each embedded text, in row order.")


class StagedLine(Record):
    """A bad line of a staged import: where it is and what is wrong with it."""

    line: int = Field(description="Its line number: in the batch (errors) or in the file (repeated ids).")
    message: str = Field(description="What is wrong, as one process words it.")
    field: str | None = Field(None, description="The field at fault, where one is.")


class StagedBatch(VersionedRecord):
    """kb/ingesting/KEY/batches/NNNNN/summary.json: one batch of a large `kb ingest` or `kb import` read by a
    worker (beside it: its chunks as shard rows, chunks.arrow; the lines it adds to the snapshot's sha256,
    documents.hash and chunks.hash; its documents, documents.jsonl; layout.npz: per document its chunk count
    and a digest of its id, or per imported chunk digests of its id and document, its start and line). Staging:
    removed once the snapshot is stored, kept across a kill so the same command resumes."""

    documents: int = Field(description="Documents read (0 for imported chunks).")
    chunks: int = Field(description="Chunks made or imported.")
    characters: int = Field(description="Characters of those chunks.")
    scoped: int = Field(0, description="Chunks with a scope.")
    restricted: int = Field(0, description="Scoped chunks with access groups.")
    groups: dict[str, int] = Field(default_factory=dict, description="Chunks per access group.")
    versions: dict[str, int] = Field(default_factory=dict, description="Chunks per version.")
    dated: int = Field(0, description="Chunks with validity dates.")
    supersedes: list[str] = Field(default_factory=list, description="The ids the batch's chunks supersede.")
    newlines: int = Field(0, description="Newlines in the batch's bytes (imports: line numbers of later batches).")
    errors: list[StagedLine] = Field(default_factory=list,
                                     description="Bad lines of an imported batch, numbered in the batch.")
    repeated: list[StagedLine] = Field(default_factory=list, description="Lines left out of an imported batch "
                                       "because an earlier line of the file has their chunk_id, numbered in the file.")
    undecodable: int | None = Field(None, description="Byte of the file where the batch stops being text in its "
                                    "encoding (imports), or null.")
    undecodable_newlines: int = Field(0, description="Newlines of the batch before that byte.")


class StagedShard(VersionedRecord):
    """kb/ingesting/KEY/chunks/part-NNNNN.json: one shard of a large ingest or import written by a worker,
    beside its .parquet file (staging, like StagedBatch)."""

    shard: ShardInfo = Field(description="What the manifest records of the shard.")
    superseded: int = Field(description="Its chunks that another chunk or document supersedes.")
    held: list[str] = Field(description="The superseded ids it holds (chunk or document ids).")
