"""The JSON reports checks write when asked (`--report FILE`): the check's record with everything
behind it, per finding."""

from __future__ import annotations

from pydantic import Field

from curate.records.base import Record, VersionedRecord
from curate.records.checks import ConsistencyCheck, LeakageCheck
from curate.records.kb import ChunkGroup, WithheldPair


class LeakFinding(Record):
    """One leak of one item."""

    item_id: str = Field(description="The item that leaks.")
    kind: str = Field(description="question_in_kb, qa_pair_in_kb, answer_in_kb or split_leak.")
    method: str = Field(description="exact, near_verbatim, or the duplicate rule (fuzzy, semantic) for split leaks.")
    score: float = Field(description="Similarity 0-100 (containment for KB leaks).")
    chunk_ids: list[str] = Field(default_factory=list, description="Chunk(s) holding the copy.")
    doc_id: str | None = Field(None, description="Their document.")
    matched: str = Field("", description="The text that matched, as the chunk has it.")
    other_item: str | None = Field(None, description="For a split leak: the alike item on the other side.")


class LeakageReport(LeakageCheck):
    """check-leakage --report: the record and every finding."""

    findings: list[LeakFinding] = Field(default_factory=list, description="Every leak found.")


class ConsistencyOutcome(Record):
    """One question to the judge about one item, over its repeats."""

    item: str = Field(description="Item id.")
    check: str = Field(description="answers_question, key_point_supported, answer_against_evidence, unanswerable_check.")
    label: str = Field(description="Which part of the item: answer, key point N, answerability.")
    verdicts: list[str] = Field(default_factory=list, description="The verdict of each scored repeat.")
    flagged: bool = Field(description="Most scored verdicts are the negative one (ties flag).")
    flipped: bool = Field(description="The verdicts differ between repeats.")
    unscored: str | None = Field(None, description="Why no repeat was scored, if none was.")
    reason: str = Field("", description="The judge's reason (for the negative verdict, when there is one).")


class ConsistencyReportFile(ConsistencyCheck):
    """check-consistency --report: the record and every outcome."""

    outcomes: list[ConsistencyOutcome] = Field(default_factory=list, description="Every question asked.")


class DuplicateEdge(Record):
    """Two members found alike by one method."""

    a: str = Field(description="First member.")
    b: str = Field(description="Second member.")
    method: str = Field(description="exact, fuzzy, semantic (questions), near (chunks).")
    score: float = Field(description="The method's score.")


class DuplicateCluster(Record):
    """Alike questions and the edges that joined them."""

    members: list[str] = Field(description="Item ids, in dataset order.")
    edges: list[DuplicateEdge] = Field(default_factory=list, description="What joined them.")
    conflicts: list[str] = Field(default_factory=list, description="What members disagree on.")


class DuplicatesReport(VersionedRecord):
    """check-dups --report: clusters, what was rejected, duplicate chunks."""

    clusters: list[DuplicateCluster] = Field(default_factory=list, description="Clusters of alike questions.")
    rejected: dict[str, str] = Field(default_factory=dict, description="Item id -> the item it duplicates (--fix).")
    chunk_groups: list[ChunkGroup] | None = Field(None, description="Duplicate chunks, with --kb.")
    withheld: list[WithheldPair] = Field(default_factory=list,
                                         description="Near chunks not joined: they differ in a number, date, ...")
    undone: list[str] = Field(default_factory=list, description="Duplicate-chunk groups taken apart (--undo).")
