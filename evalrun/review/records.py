"""Records of the judge review, kept in the run folder beside the scores:

- review.json (`ReviewState`): what `evalrun review push` chose and sent (the design of the sample: each
  candidate's stratum, so that estimates weight every stratum by its size), and where in Argilla;
- reviews.jsonl (`Review`, one line per reviewer, item and metric): what `evalrun review pull` stored.

`read_reviews` is the one reader of both.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from curate import ArgillaTarget, Record, VersionedRecord, dumps_json, read_jsonl
from evalrun.records import RunSummary, Trace

STATE, REVIEWS = "review.json", "reviews.jsonl"


def judge_digest(summary: RunSummary | None) -> str | None:
    """Return the hash of the judge configuration that scored a run: its model, its endpoint and its prompt
    versions (None when no judge scored it). A review is of one judge's verdicts: another hash is another judge."""
    judge = summary.judge if summary is not None else None
    if judge is None or judge.config is None:
        return None
    identity = {"model": judge.config.get("model"), "base_url": str(judge.config.get("base_url") or "").rstrip("/"),
                "prompts": judge.prompt_versions}
    return hashlib.sha256(dumps_json(identity).encode("utf-8")).hexdigest()[:16]


def answer_digest(trace: Trace) -> str:
    """Return the hash of what the judge judged about an answer: the answer and the chunk ids of its context."""
    context = [p.chunk_id for p in trace.context] if trace.context is not None else None
    return hashlib.sha256(dumps_json({"answer": trace.answer, "context": context}).encode("utf-8")).hexdigest()[:16]


class VerdictReview(Record):
    """One judge verdict as a reviewer saw it."""

    kind: Literal["key_point", "claim", "relevance"] = Field(description="What the verdict is about.")
    index: int = Field(ge=0, description="Its place among the verdicts of its kind (0-based).")
    judge: str = Field(description="The judge's verdict.")
    person: str | None = Field(description="The reviewer's verdict: the judge's when they agreed; None: not answered.")


class Review(VersionedRecord):
    """One reviewer's check of one judged metric of one item (a line of reviews.jsonl)."""

    item_id: str = Field(description="The item.")
    metric: str = Field(description="The judged metric, e.g. generation/completeness.")
    judge_digest: str = Field(description="The judge configuration whose verdicts were reviewed (`judge_digest`).")
    answer_digest: str = Field(description="The answer and context that were judged (`answer_digest`).")
    judge_value: float = Field(description="The metric's value from the judge's verdicts.")
    person_value: float | None = Field(description="The value the reviewer's verdicts give; None when one of them "
                                       "was left unanswered (the verdicts answered still count for agreement).")
    reviewer: str = Field(description="The Argilla user who reviewed.")
    reason: str | None = Field(None, description="Why the reviewer disagreed, as written.")
    verdicts: list[VerdictReview] = Field(default_factory=list, description="The verdicts the metric is made of.")
    reviewed_at: str | None = Field(None, description="When the response was last updated in Argilla (UTC).")
    carried_from: str | None = Field(None, description="--like: the run folder this review was made on (the same "
                                     "answer and context); its verdicts are set against this run's judge.")


class ReviewedItem(Record):
    """An item sent for review."""

    stratum: str = Field(description="Its stratum in the sample's design.")
    answer_digest: str = Field(description="The answer and context pushed (`answer_digest`).")
    kinds: dict[str, int] = Field(description="Verdicts shown per kind (key_point, claim, relevance).")
    left_out: dict[str, int] = Field(default_factory=dict, description="Verdicts of a kind not shown (the form "
                                     "has room for fewer): that kind's metrics are not reviewed on this item.")
    pushed: bool = Field(False, description="Its record reached Argilla.")
    carried: bool = Field(False, description="--like: the sample's run gave the same answer and context, so its "
                          "reviews carry over and no record is sent.")


class ReviewState(VersionedRecord):
    """What `evalrun review push` chose and sent (review.json in the run folder)."""

    argilla: ArgillaTarget | None = Field(None, description="Where the records live.")
    judge_digest: str = Field(description="The judge configuration whose verdicts are reviewed.")
    seed: int = Field(description="Seed of the draw.")
    n: int = Field(description="Items asked for (--n).")
    dimensions: list[str] = Field(description="Dimensions the strata were made of (`evalrun.review.select`).")
    strata: dict[str, str] = Field(description="Every candidate item -> its stratum (N_h is counted from this).")
    items: dict[str, ReviewedItem] = Field(default_factory=dict, description="The items chosen, by id.")
    min_submitted: int = Field(1, description="Reviews a record needs before it counts as done.")
    like: str | None = Field(None, description="--like: the run folder whose sample this one reuses.")
    created_at: str = Field(description="When the sample was drawn (UTC).")

    def sizes(self) -> dict[str, int]:
        """Return the candidates per stratum (N_h)."""
        sizes: dict[str, int] = {}
        for stratum in self.strata.values():
            sizes[stratum] = sizes.get(stratum, 0) + 1
        return sizes


class JudgedDifference(Record):
    """A judged metric's change corrected for the judge's error, from people's reviews of both runs
    (`evalrun.review.paired`)."""

    metric: str = Field(description="The judged metric.")
    items: int = Field(description="Items of the review's sample both runs scored (the estimate is over them).")
    reviewed: int = Field(description="Of them, items people reviewed in both runs (a review carried over counts).")
    carried: int = Field(0, description="Reviewed items whose review in one run was carried over from the other: the "
                         "same answer and context in both.")
    judge_difference: float | None = Field(None, description="The judge's mean of NEW - BASE over the items.")
    difference: float | None = Field(None, description="The prediction-powered estimate of NEW - BASE as people "
                                     "would judge it; None: see note.")
    ci95: tuple[float, float] | None = Field(None, description="Its 95% interval.")
    reviewed_only: float | None = Field(None, description="The estimate from the reviewed items alone.")
    reviewed_only_ci95: tuple[float, float] | None = Field(None, description="Its 95% interval.")
    strata: str = Field("none", description="The dimensions of the sample's strata kept for this metric.")
    note: str | None = Field(None, description="Why there is no estimate.")


@dataclass
class Reviewed:
    """A run's review, as read: the sample's design and the reviews pulled (either may be missing)."""

    state: ReviewState | None
    reviews: list[Review]


def read_reviews(folder: Path) -> Reviewed:
    """Return the review state and the reviews stored in a run folder."""
    folder = Path(folder)
    state = ReviewState.read(folder / STATE) if (folder / STATE).exists() else None
    reviews = list(read_jsonl(Review, folder / REVIEWS)) if (folder / REVIEWS).exists() else []
    return Reviewed(state, reviews)
