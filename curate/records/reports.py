"""The JSON reports checks write when asked (`--report FILE`): the check's record with everything
behind it, per finding."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from curate.records.base import Record, VersionedRecord
from curate.records.checks import ConsistencyCheck, LeakageCheck
from curate.records.kb import ChunkGroup, WithheldPair


class LeakageReport(LeakageCheck):
    """check-leakage --report: the record, which holds every finding with its status."""


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
    method: str = Field(description="exact (after folding), form (the same but for politeness particles), fuzzy, "
                        "semantic (questions); near (chunks).")
    score: float = Field(description="The method's score.")


class DuplicateCluster(Record):
    """Alike questions and the edges that joined them."""

    members: list[str] = Field(description="Item ids, in dataset order.")
    edges: list[DuplicateEdge] = Field(default_factory=list, description="What joined them.")
    conflicts: list[str] = Field(default_factory=list, description="What members disagree on.")


class DuplicatesReport(VersionedRecord):
    """check-dups --report: clusters, what was rejected, duplicate chunks."""

    clusters: list[DuplicateCluster] = Field(default_factory=list, description="Clusters of alike questions.")
    rejected: dict[str, str] = Field(default_factory=dict, description="Item id -> the item it duplicates (--fix): "
                                     "only form-only duplicates (the same question but for width, punctuation, "
                                     "spacing or politeness particles).")
    review: dict[str, str] = Field(default_factory=dict, description="Item id -> the item it resembles (--fix): "
                                   "alike by fuzzy or semantic match, or with labels that disagree; for a person "
                                   "to look at, never rejected.")
    semantic: dict[str, Any] = Field(default_factory=dict, description="The semantic pass: used, partial or skipped, "
                                     "why, the model and its threshold.")
    chunk_groups: list[ChunkGroup] | None = Field(None, description="Duplicate chunks, with --kb.")
    withheld: list[WithheldPair] = Field(default_factory=list,
                                         description="Near chunks not joined: they differ in a number, date, ...")
    undone: list[str] = Field(default_factory=list, description="Duplicate-chunk groups taken apart (--undo).")
    scope_apart: list[DuplicateEdge] = Field(
        default_factory=list, description="The same question asked for another asker or at another moment "
        "(asker_groups, as_of): different samples, never duplicates; one pair per further asker or moment.")
