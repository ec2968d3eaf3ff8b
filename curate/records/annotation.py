"""The local record of what was pushed to Argilla (datasets/NAME/annotation.json), and of what
annotators did with the judge's suggestions (datasets/NAME/judge_suggestions.json)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from curate.records.base import Record, VersionedRecord, now


class JudgeSuggestion(Record):
    """One candidate slot whose suggested grade was the judge's (`annotate push --suggest-from`)."""

    slot: int = Field(description="The candidate slot (1 first).")
    chunk_id: str = Field(description="The chunk the slot showed.")
    grade: Literal[0, 1, 2] = Field(description="The grade the judge gave it, suggested to annotators.")
    judge_model: str = Field(description="The judge model that graded it.")


class PushedItem(Record):
    """One item as it was pushed: its candidate slots and the digest of its labels then."""

    slots: list[str] = Field(description="Chunk id of each candidate slot, slot 1 first.")
    digest: str = Field(description="Hash of what annotation may change, at push time (a change means a local edit).")
    pushed_at: str = Field(description="When it was last pushed (UTC).")
    applied: str | None = Field(None, description="Signature of the answers last applied, if any.")
    argilla_dataset: str | None = Field(None, description="The Argilla dataset its record lives in (records with "
                                        "fewer candidates than the pool size have their own); None: the main one.")
    judge: list[JudgeSuggestion] = Field(default_factory=list, description="The slots whose suggestion was the "
                                         "judge's grade (a slot with a person's label suggests that label instead).")


class ArgillaTarget(Record):
    """Where a dataset's records live in Argilla (the key is never stored)."""

    api_url: str = Field(description="Argilla's URL.")
    dataset: str = Field(description="Argilla dataset name.")
    workspace: str = Field(description="Argilla workspace name.")


class AnnotationState(VersionedRecord):
    """What was pushed for one dataset."""

    SCHEMA = 4  # 3: PushedItem.argilla_dataset, push_started; 4: PushedItem.judge, judge_run (older files read
    # unchanged: their defaults say no judge's suggestion was pushed)
    items: dict[str, PushedItem] = Field(default_factory=dict, description="Pushed items by id.")
    argilla: ArgillaTarget | None = Field(None, description="The Argilla dataset, once pushed.")
    pool_k: int | None = Field(None, description="Candidate slots per record (fixed once pushed).")
    guideline_version: str | None = Field(None, description="Guideline version pushed with the dataset.")
    min_submitted: int = Field(1, description="Submitted answers a record needs before it is pulled.")
    push_started: str | None = Field(None, description="When a push began that has not finished (UTC): records in "
                                     "Argilla may be newer than this file until a push completes.")
    judge_run: str | None = Field(None, description="The run folder whose judge's grades pushes show as suggestions "
                                  "(`--suggest-from`, kept for later pushes until `--no-suggestions`); relative to "
                                  "the workspace when inside it.")

    def dataset_of(self, item_id: str) -> str:
        """Return the name of the Argilla dataset a pushed item's record lives in (KeyError if never pushed)."""
        if self.argilla is None:
            raise KeyError(item_id)
        return self.items[item_id].argilla_dataset or self.argilla.dataset


class JudgeCheck(Record):
    """One annotator's submitted grade of a candidate whose suggestion was the judge's grade."""

    slot: int = Field(description="The candidate slot (1 first).")
    chunk_id: str = Field(description="The chunk the slot showed.")
    judge_grade: Literal[0, 1, 2] = Field(description="The judge's grade, suggested.")
    person_grade: Literal[0, 1, 2] = Field(description="The grade the annotator submitted.")
    user: str = Field(description="The annotator.")
    judge_model: str = Field(description="The judge model that graded.")


class JudgeSuggestionsPulled(VersionedRecord):
    """What annotators did with the judge's suggested grades, as of the last pull: every submitted grade of a
    slot whose suggestion was the judge's, kept (the same grade) or changed."""

    pulled_at: str = Field(default_factory=now, description="When the pull read the answers (UTC).")
    items: dict[str, list[JudgeCheck]] = Field(default_factory=dict, description="Item id -> its judged slots as "
                                               "each annotator graded them.")

    def changed(self) -> list[tuple[str, JudgeCheck]]:
        """Return (item id, check) of every submitted grade that differs from the judge's."""
        return [(item_id, c) for item_id, checks in sorted(self.items.items()) for c in checks
                if c.person_grade != c.judge_grade]

    def kept(self) -> int:
        """Return how many submitted grades are the judge's."""
        return sum(c.person_grade == c.judge_grade for checks in self.items.values() for c in checks)
