"""The judge's grades of retrieved chunks: RUN/retrieval_grades.jsonl, one item a line.

`evalrun run --judge-retrieval` writes it; `curate annotate push --suggest-from RUN` reads it (the
grades become Argilla suggestions, never answers). It lives in curate because curate reads it:
evalrun depends on curate, never the reverse.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from curate.errors import InputError
from curate.records.base import Record, VersionedRecord, read_jsonl

RETRIEVAL_GRADES = "retrieval_grades.jsonl"


class ChunkGrade(Record):
    """The judge's grade of one chunk for one question, under the relevance guideline."""

    chunk_id: str = Field(description="The chunk graded.")
    grade: Literal[0, 1, 2] = Field(description="0 not relevant, 1 partly (a part of a needed fact, or context "
                                    "needed to read it), 2 states a fact the answer needs.")
    reason: str = Field("", description="The judge's reason, in one sentence.")
    copy_of: str | None = Field(None, description="When this chunk's text is the same as another graded chunk's: "
                                "that chunk (graded once, the grade given to both).")


class JudgedGrades(VersionedRecord):
    """The judge's grades of the chunks one item's trace retrieved (its top K candidates and its context)."""

    item_id: str = Field(description="The item.")
    kb_snapshot: str | None = Field(None, description="The KB snapshot the chunk ids belong to.")
    judge_model: str = Field(description="The judge model that graded.")
    prompt_version: str = Field(description="Version hash of the grading prompt.")
    guideline_version: str = Field(description="Hash of the relevance guideline text the judge was given.")
    labelled: bool = Field(description="Whether the item has labelled evidence the asker may use (else the grades "
                           "are its only retrieval figures).")
    grades: list[ChunkGrade] = Field(default_factory=list, description="Every chunk graded, in chunk id order.")
    not_graded: dict[str, str] = Field(default_factory=dict, description="Chunk -> why it has no grade (not usable "
                                       "for the asker, text unknown, the judge failed, the budget reached).")
    possibly_missing: list[str] = Field(default_factory=list, description="On a labelled item: chunks graded 2 that "
                                        "are neither labelled evidence nor a copy of it (holes in the gold labels).")

    def grade_of(self) -> dict[str, int]:
        """Return {chunk id: grade}."""
        return {g.chunk_id: g.grade for g in self.grades}


def read_judged_grades(run_folder: Path) -> dict[str, JudgedGrades]:
    """Return the judge's grades of a run folder by item id; a folder without them (a run made without
    --judge-retrieval) is one line saying so."""
    path = Path(run_folder) / RETRIEVAL_GRADES
    if not path.exists():
        raise InputError(f"no {RETRIEVAL_GRADES}: the run was made without --judge-retrieval "
                         f"(evalrun run ... --judge-retrieval)", file=str(run_folder))
    return {record.item_id: record for record in read_jsonl(JudgedGrades, path)}
