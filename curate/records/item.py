"""Records of evaluation items: evidence anchored to the source, key points, status history.

An item is one line of a dataset's items.jsonl and one row of a release's data files.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field

from curate.records.base import Record, VersionedRecord, now
from curate.records.generated import Generation

RelevanceGrade = Literal[0, 1, 2]
Status = Literal["draft", "needs_evidence", "labelled", "needs_adjudication", "needs_rewrite",
                 "quarantined", "verified", "rejected"]
Source = Literal["human", "production", "synthetic"]
Split = Literal["dev", "test", "regression"]
Difficulty = Literal["easy", "medium", "hard"]
QType = Literal["single", "multi_evidence", "confusable", "unanswerable", "conditional"]
Language = Literal["zh", "en"]
LocatedBy = Literal["chunk_id", "span", "exact", "normalized", "fuzzy", "unmapped"]

STATUSES: tuple[str, ...] = get_args(Status)
SOURCES: tuple[str, ...] = get_args(Source)
SPLITS: tuple[str, ...] = get_args(Split)
DIFFICULTIES: tuple[str, ...] = get_args(Difficulty)
QTYPES: tuple[str, ...] = get_args(QType)
# Items in these states never enter a release.
UNRELEASED_STATUSES: tuple[str, ...] = ("rejected", "quarantined")


class Evidence(Record):
    """A piece of evidence, anchored to the source, with the chunks it maps to in one snapshot."""

    evidence_id: str = Field(description="Id unique within its item (e1, e2, ...); key points refer to it.")
    doc_id: str | None = Field(None, description="Source document id.")
    start: int | None = Field(None, description="Character offset in the source document.")
    end: int | None = Field(None, description="Offset one past the end in the source document.")
    text: str = Field(description="The quoted evidence text (source[start:end] when offsets are known).")
    grade: RelevanceGrade = Field(2, description="Relevance: 2 fully relevant, 1 partial, 0 not relevant.")
    chunk_ids: list[str] = Field(default_factory=list,
                                 description="Chunks of `kb_snapshot` that hold this evidence; any one counts.")
    kb_snapshot: str | None = Field(None, description="Snapshot the chunk ids refer to.")
    located_by: LocatedBy = Field(
        "chunk_id", description="How the evidence was anchored: given chunk id, source span, exact text, "
        "text equal after normalisation, fuzzy text match, or not mapped at all.")
    match_score: float = Field(100.0, description="Similarity (0-100) of the located text to the quote.")
    partial: bool = Field(False, description="True when no single chunk holds the whole span; chunk_ids then "
                          "lists every chunk that holds part of it (more than white space), and any one counts.")
    any_of: str | None = Field(
        None, description="A label shared by evidence that state the same fact: alternatives, of which finding "
        "any one counts (`import --evidence-mode any` gives every relevant evidence of an item one label).")
    copies: list[str] = Field(
        default_factory=list, description="The chunk ids in `chunk_ids` that are duplicate copies of its own "
        "chunks (added by check-dups --kb), kept apart so a wrong group can be undone.")


class KeyPoint(Record):
    """One checkable fact the answer must contain, with the evidence that supports it. Every key
    point of an item is required; the evidence it cites are alternatives (any one states the fact)."""

    text: str = Field(description="The fact, stated briefly.")
    evidence_ids: list[str] = Field(default_factory=list,
                                    description="Evidence ids stating this fact; finding any one of them counts.")


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


class ProductionAsked(Record):
    """How often production's failing rows asked an item in one batch of logs (`curate add-failures`)."""

    month: str = Field(description="The month of the logs, YYYY-MM.")
    batch: str = Field(description="The batch that counted them (datasets/NAME/failures/BATCH.json).")
    count: int = Field(description="Failing rows that asked it (itself, or a duplicate of it).")
    users: int = Field(0, description="Distinct sessions or users among them (their ids are never stored).")


class Production(Record):
    """What production did with a question it failed on, kept so the failure can be attributed later;
    every text is masked of personal data before it is stored."""

    answer: str | None = Field(None, description="Production's answer, personal data masked.")
    retrieved: list[str] = Field(default_factory=list,
                                 description="Chunk ids production retrieved (those of the item's KB snapshot).")
    failed_by: list[str] = Field(default_factory=list, description="The failure rules its row matched.")
    hints: list[str] = Field(default_factory=list,
                             description="Hints of failure its rows carried (escalated, follow_up): not proof.")
    run_id: str | None = Field(None, description="The evalrun run it came from (evalrun export-failures), if any.")
    asked: list[ProductionAsked] = Field(default_factory=list, description="Failing rows per batch, oldest first.")


class EvalItem(VersionedRecord):
    """One evaluation question with its reference answer, key points and evidence."""

    SCHEMA = 5  # 2: accepted answers, alternative evidence (any_of), evidence copies; 3: production; 4: asker, as_of;
    # 5: generation
    id: str = Field(description="Item id, unique within its dataset.")
    question: str = Field(description="The question as a user would ask it.")
    reference_answer: str | None = Field(None, description="A correct answer, if written.")
    answers: list[str] = Field(default_factory=list,
                               description="Every accepted answer (SQuAD and CMRC2018 keep all of theirs); the "
                               "reference answer is one of them.")
    key_points: list[KeyPoint] = Field(default_factory=list, description="Facts a correct answer must contain.")
    evidence: list[Evidence] = Field(default_factory=list, description="Evidence in the knowledge base.")
    answerable: bool = Field(True, description="False when the knowledge base cannot answer the question.")
    language: Language = Field(description="Language of the question (zh when it is mostly CJK).")
    difficulty: Difficulty | None = Field(None, description="Measured difficulty, from `difficulty_features`.")
    difficulty_features: dict[str, float] = Field(default_factory=dict,
                                                  description="Measured features the difficulty was assessed from.")
    qtype: QType | None = Field(None, description="single, multi_evidence, confusable, unanswerable or conditional.")
    split: Split | None = Field(None, description="dev (tuning), test or regression; None until assigned.")
    source: Source = Field(description="human, production or synthetic.")
    status: Status = Field("draft", description="Curation status; history in `status_history`.")
    status_history: list[StatusChange] = Field(default_factory=list, description="Every status change, oldest first.")
    duplicate_of: str | None = Field(None, description="Id of the item this one duplicates (set by check-dups --fix).")
    kb_snapshot: str | None = Field(None, description="KB snapshot the evidence chunk ids refer to.")
    asker_groups: list[str] | None = Field(
        None, description="Access groups of the person asking; [] may see only what everyone may; None: not "
        "known, so what the asker may see is not checked (counted wherever scope is reported).")
    asker_role: str | None = Field(
        None, description="The named role (curate.toml [scope.roles]) `asker_groups` was taken from, if any.")
    as_of: str | None = Field(
        None, description="The moment the question is asked at: an ISO date (YYYY-MM-DD) or a KB version label; "
        "None: the latest (whatever is superseded is stale).")
    guideline_version: str | None = Field(None, description="Version of the relevance guideline labels follow.")
    tags: list[str] = Field(default_factory=list, description="Free tags; subsets are reported per tag.")
    provenance: Provenance = Field(default_factory=Provenance, description="Where the item came from.")
    production: Production | None = Field(
        None, description="What production retrieved and answered, and how often its failing rows asked this "
        "question (curate add-failures); None for an item production never failed on.")
    generation: Generation | None = Field(
        None, description="How a question made from the KB was made (curate generate): mined or written by a "
        "model, from which chunks, by which template or prompt; None for any other item.")
    created_at: str = Field(default_factory=now, description="When the item was created (UTC).")
    updated_at: str = Field(default_factory=now, description="When the item last changed (UTC).")

    def set_status(self, status: Status, reason: str, by: str = "curate") -> None:
        """Change the status and record why."""
        self.status = status
        self.status_history.append(StatusChange(status=status, reason=reason, by=by))
        self.updated_at = now()

    def content(self) -> dict:
        """Return the fields that define the item's meaning (no history, dates, provenance)."""
        content = self.model_dump(mode="json", include={
            "question", "reference_answer", "key_points", "evidence", "answerable", "language",
            "difficulty", "qtype", "split", "source", "status", "kb_snapshot", "tags"})
        # the asker and moment only when set, so an item without them keeps the digest it had before
        for key in ("asker_groups", "as_of"):
            if getattr(self, key) is not None:
                content[key] = getattr(self, key)
        return content


REVIEWED = ("labelled", "verified")


def reviewed_by_person(item: EvalItem) -> bool:
    """Return whether a person has reviewed the item: its status is labelled or verified, and a change
    to that status was made by people (annotators through `curate annotate pull`, or a named
    adjudicator), not by a command that makes or moves items. A synthetic item counts as verified only
    then: one whose file says `verified` without such a change is not.

    >>> item = EvalItem(id="s1", question="What does LG-4031 mean?", language="en", source="synthetic")
    >>> item.set_status("verified", "edited by hand", by="curate import")
    >>> reviewed_by_person(item)
    False
    >>> item.set_status("labelled", "labelled by ann", by="curate annotate pull")
    >>> reviewed_by_person(item)
    True
    """
    return item.status in REVIEWED and any(
        change.status == item.status and (change.by.startswith("curate annotate") or not change.by.startswith("curate"))
        for change in item.status_history)
