"""Records curate writes to disk: chunks, snapshots, evidence, items, releases.

Every model carries a `schema_version`; every field says what it holds.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1

Grade = Literal[0, 1, 2]
Status = Literal["draft", "needs_evidence", "labelled", "needs_adjudication", "needs_rewrite",
                 "quarantined", "verified", "rejected"]
Source = Literal["human", "production", "synthetic"]
Split = Literal["dev", "test", "regression"]
Difficulty = Literal["easy", "medium", "hard"]
QTYPES = ("single", "multi_evidence", "confusable", "unanswerable", "conditional")
SOURCES = ("human", "production", "synthetic")
STATUSES = ("draft", "needs_evidence", "labelled", "needs_adjudication", "needs_rewrite",
            "quarantined", "verified", "rejected")
# Items in these states never enter a release.
UNRELEASED_STATUSES = ("rejected", "quarantined")


def now() -> str:
    """Return the current UTC time as an ISO 8601 string (seconds)."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Chunk(Record):
    """One retrievable unit of a knowledge base, anchored in its source document."""

    chunk_id: str = Field(description="Unique id within the snapshot (production's own id on import).")
    doc_id: str = Field(description="Id of the source document.")
    text: str = Field(description="The chunk text exactly as retrieval sees it.")
    start: int | None = Field(None, description="Character offset of the chunk in its document (None if unknown).")
    end: int | None = Field(None, description="Character offset one past the chunk's end (None if unknown).")
    text_sha256: str = Field(description="sha256 of `text` (UTF-8).")
    metadata: dict[str, str | int | float | bool | None] = Field(
        default_factory=dict, description="Free metadata: title, heading path, version, permission scope.")


class Document(Record):
    """A source document as ingested; kept so evidence spans can be re-anchored."""

    doc_id: str = Field(description="Document id (file stem, or the `doc_id` given in JSONL).")
    text: str = Field(description="Full document text; chunk offsets index into it.")
    title: str | None = Field(None, description="Title, if the source had one.")
    metadata: dict[str, str | int | float | bool | None] = Field(default_factory=dict, description="Free metadata.")
    text_sha256: str = Field(description="sha256 of `text`.")


class ChunkerSettings(Record):
    """How a snapshot was chunked."""

    kind: Literal["fixed", "structure", "one_per_document", "imported"] = Field(
        description="fixed windows, structure-aware, one chunk per document, or production chunks imported as they are.")
    size: int | None = Field(None, description="Maximum chunk length in characters.")
    overlap: int | None = Field(None, description="Characters shared by consecutive fixed windows.")


class SnapshotManifest(Record):
    """What a KB snapshot holds and how it was made; `snapshot_id` is a hash of its content."""

    schema_version: int = Field(SCHEMA_VERSION, description="Version of this record's schema.")
    snapshot_id: str = Field(description="'kb-' + the first 16 hex digits of `content_sha256`.")
    content_sha256: str = Field(description="sha256 over the documents and chunks (names and dates excluded).")
    name: str = Field(description="KB name given at ingest/import (a snapshot may carry several over time).")
    chunker: ChunkerSettings = Field(description="Chunker settings.")
    documents: int = Field(description="Number of source documents (0 for imported chunks without documents).")
    chunks: int = Field(description="Number of chunks.")
    characters: int = Field(description="Total characters over all chunks.")
    created_at: str = Field(description="When this snapshot was first written (UTC).")
    sources: list[str] = Field(default_factory=list, description="Paths the content was read from.")


class Evidence(Record):
    """A piece of evidence, anchored to the source, with the chunks it maps to in one snapshot."""

    evidence_id: str = Field(description="Id unique within its item (e1, e2, ...); key points refer to it.")
    doc_id: str | None = Field(None, description="Source document id.")
    start: int | None = Field(None, description="Character offset in the source document.")
    end: int | None = Field(None, description="Offset one past the end in the source document.")
    text: str = Field(description="The quoted evidence text (source[start:end] when offsets are known).")
    grade: Grade = Field(2, description="Relevance: 2 fully relevant, 1 partial, 0 not relevant.")
    chunk_ids: list[str] = Field(default_factory=list,
                                 description="Chunks of `kb_snapshot` that hold this evidence; any one counts.")
    kb_snapshot: str | None = Field(None, description="Snapshot the chunk ids refer to.")
    located_by: Literal["chunk_id", "span", "exact", "normalized", "fuzzy", "unmapped"] = Field(
        "chunk_id", description="How the evidence was anchored: given chunk id, source span, exact text, "
        "text equal after normalisation, fuzzy text match, or not mapped at all.")
    match_score: float = Field(100.0, description="Similarity (0-100) of the located text to the quote.")
    partial: bool = Field(False, description="True when no single chunk holds the whole span; chunk_ids then "
                          "lists the chunks that each hold part of it.")


class KeyPoint(Record):
    """One checkable fact the answer must contain, with the evidence that supports it."""

    text: str = Field(description="The fact, stated briefly.")
    evidence_ids: list[str] = Field(default_factory=list, description="Evidence ids supporting this fact.")


class StatusChange(Record):
    """One change of an item's status and why."""

    status: Status = Field(description="The new status.")
    reason: str = Field(description="Why the status changed.")
    at: str = Field(default_factory=now, description="When (UTC).")
    by: str = Field("curate", description="Who or what changed it (a command, an annotator).")


class Provenance(Record):
    """Where an item came from."""

    file: str | None = Field(None, description="File the item was imported from.")
    line: int | None = Field(None, description="Line of that file.")
    original_id: str | None = Field(None, description="The id the item had in its source, if any.")
    format: str | None = Field(None, description="Input format: jsonl, csv, beir, squad.")
    extra: str | None = Field(None, description="Unrecognised input fields, as canonical JSON.")


class EvalItem(Record):
    """One evaluation question with its reference answer, key points and evidence."""

    schema_version: int = Field(SCHEMA_VERSION, description="Version of this record's schema.")
    id: str = Field(description="Item id, unique within its dataset.")
    question: str = Field(description="The question as a user would ask it.")
    reference_answer: str | None = Field(None, description="A correct answer, if written.")
    key_points: list[KeyPoint] = Field(default_factory=list, description="Facts a correct answer must contain.")
    evidence: list[Evidence] = Field(default_factory=list, description="Evidence in the knowledge base.")
    answerable: bool = Field(True, description="False when the knowledge base cannot answer the question.")
    language: Literal["zh", "en"] = Field(description="Language of the question (zh when it is mostly CJK).")
    difficulty: Difficulty | None = Field(None, description="Graded difficulty, from `difficulty_features`.")
    difficulty_features: dict[str, float] = Field(default_factory=dict,
                                                  description="Measured features the difficulty was graded from.")
    qtype: str | None = Field(None, description="single, multi_evidence, confusable, unanswerable, conditional, ...")
    split: Split | None = Field(None, description="dev (tuning), test or regression; None until assigned.")
    source: Source = Field(description="human, production or synthetic.")
    status: Status = Field("draft", description="Curation status; history in `status_history`.")
    status_history: list[StatusChange] = Field(default_factory=list, description="Every status change, oldest first.")
    duplicate_of: str | None = Field(None, description="Id of the item this one duplicates (set by check-dups --fix).")
    kb_snapshot: str | None = Field(None, description="KB snapshot the evidence chunk ids refer to.")
    guideline_version: str | None = Field(None, description="Version of the relevance guideline labels follow.")
    tags: list[str] = Field(default_factory=list, description="Free tags; subsets are reported per tag.")
    provenance: Provenance = Field(default_factory=Provenance, description="Where the item came from.")
    created_at: str = Field(default_factory=now, description="When the item was created (UTC).")
    updated_at: str = Field(default_factory=now, description="When the item last changed (UTC).")

    def set_status(self, status: Status, reason: str, by: str = "curate") -> None:
        """Change the status and record why."""
        self.status = status
        self.status_history.append(StatusChange(status=status, reason=reason, by=by))
        self.updated_at = now()

    def content(self) -> dict:
        """Return the fields that define the item's meaning (no history, dates, provenance)."""
        return self.model_dump(mode="json", include={
            "question", "reference_answer", "key_points", "evidence", "answerable", "language",
            "difficulty", "qtype", "split", "source", "status", "kb_snapshot", "tags"})


class DatasetMeta(Record):
    """A draft dataset's own record: its KB snapshot and the checks it has passed."""

    schema_version: int = Field(SCHEMA_VERSION, description="Version of this record's schema.")
    name: str = Field(description="Dataset name.")
    kb_snapshot: str | None = Field(None, description="KB snapshot the items' evidence refers to.")
    items_sha256: str | None = Field(None, description="sha256 of items.jsonl as last saved with this record.")
    created_at: str = Field(default_factory=now, description="When the dataset was created (UTC).")
    checks: dict[str, dict] = Field(default_factory=dict,
                                    description="Results of checks (leakage, consistency, ...) by check name.")


class ReleaseManifest(Record):
    """What an immutable release holds; `content_sha256` covers every data file."""

    schema_version: int = Field(SCHEMA_VERSION, description="Version of this record's schema.")
    name: str = Field(description="Dataset name.")
    version: str = Field(description="v1, v2, ...")
    parent_version: str | None = Field(None, description="The release before this one, if any.")
    created_at: str = Field(description="When the release was written (UTC).")
    message: str = Field(description="Release message (-m).")
    content_sha256: str = Field(description="sha256 over the data files' paths and bytes, in path order.")
    files: dict[str, str] = Field(description="sha256 of each data file, by path relative to the release.")
    kb_snapshot: str | None = Field(None, description="KB snapshot id the evidence refers to.")
    guideline_version: str | None = Field(None, description="Content hash of the relevance guidelines in force.")
    items: int = Field(description="Number of items released.")
    counts: dict[str, dict[str, int]] = Field(
        description="Counts by split, difficulty, qtype, source, status, language and answerable.")
    checks: dict[str, dict] = Field(default_factory=dict, description="Check results carried from the dataset.")
    excluded: dict[str, int] = Field(default_factory=dict,
                                     description="Items left out of the release, counted by status.")
    changelog: dict[str, list[str]] = Field(
        default_factory=dict, description="Item ids added, removed and changed since the parent version.")
    curate_version: str = Field(description="Version of curate that wrote the release.")
