"""Records of the judge's grading of retrieved chunks (`evalrun run --judge-retrieval`) and of a run's judge
budget, part of the run folder that `evalrun.records.read_run` reads:

- `JudgedRetrieval` (in summary.json): who graded, what, what was not graded and why, the estimate and
  the budget, agreement with the labelled evidence (`GradeAgreement`);
- `JudgeSpend` (judge_spend.json): what the judge has cost a run with a budget so far.

The grades themselves are in retrieval_grades.jsonl (`curate.JudgedGrades`: curate reads them).
"""

from __future__ import annotations

from pydantic import Field

from curate import Record, VersionedRecord


class JudgeSpend(VersionedRecord):
    """RUN/judge_spend.json: what the judge has cost this run so far, kept while a run with a judge budget
    (--budget, --budget-tokens) is scored, so that a run killed and resumed starts from it."""

    tokens: int = Field(0, description="Tokens spent (as the endpoint counted them; a call without a count: its "
                        "most).")
    usd: float = Field(0.0, description="USD spent, at [judge.prices] (0 when unpriced).")


class JudgeEstimate(Record):
    """What the judge will be asked, estimated before it is asked."""

    requests: int = Field(description="Requests not in the cache (to be sent).")
    cached: int = Field(0, description="Requests answered from the cache (free).")
    prompt_tokens: int = Field(description="Their prompt tokens, estimated from the texts (one per CJK character, "
                               "one per three other characters).")
    answer_tokens_most: int = Field(description="The most answer tokens (max_tokens per request).")
    usd_most: float | None = Field(None, description="The most it costs at [judge.prices]; None when unpriced.")


class GradeAgreement(Record):
    """How the judge's grades of chunks agree with the labelled evidence."""

    chunks: int = Field(description="Graded chunks of labelled items compared (a chunk nobody labelled counts as "
                        "labelled 0: that is where holes in the labels are).")
    items: int = Field(description="Items they belong to.")
    agreement: float | None = Field(None, description="Share of chunks both call relevant (>= 1) or both not.")
    kappa: float | None = Field(None, description="Cohen's kappa of relevant or not.")
    kappa_ci95: tuple[float, float] | None = Field(None, description="95% percentile bootstrap interval of kappa, "
                                                   "over the items (an item's chunks resampled together).")
    note: str | None = Field(None, description="Why kappa or its interval is None.")
    confusion: dict[str, dict[str, int]] = Field(default_factory=dict, description="Judge grade -> labelled grade "
                                                 "-> chunks.")


class JudgedRetrieval(Record):
    """What the judge did for the retrieval layer (--judge-retrieval): its grades of the top K candidates and
    the context, the metrics under judged/, holes in the labels, agreement with them."""

    status: str = Field(description="'scored', or 'unscored: <why>'.")
    model: str | None = Field(None, description="The judge model that graded.")
    prompt_versions: dict[str, str] = Field(default_factory=dict, description="Grading prompt versions.")
    guideline_versions: dict[str, str] = Field(default_factory=dict, description="Per language, the hash of the "
                                               "guideline text the judge was given.")
    k: int = Field(description="Candidates graded per item (the top K).")
    items: int = Field(0, description="Answerable items whose trace was graded.")
    unlabelled_items: int = Field(0, description="Of those, items with no labelled evidence the asker may use: the "
                                  "judged metrics are their only retrieval figures.")
    chunks: int = Field(0, description="Chunks graded (copies with the same text graded once).")
    grades: dict[str, int] = Field(default_factory=dict, description="Chunks per grade (0, 1, 2).")
    not_graded: dict[str, int] = Field(default_factory=dict, description="Chunks without a grade, by reason.")
    estimate: JudgeEstimate | None = Field(None, description="What grading was estimated to ask before it asked.")
    budget: str | None = Field(None, description="The judge budget of the run (USD and/or tokens), if any.")
    budget_refused: int = Field(0, description="Requests not sent because the budget would have been exceeded.")
    requests: int = Field(0, description="Requests sent.")
    cache_hits: int = Field(0, description="Grades from the disk cache.")
    prompt_tokens: int = Field(0, description="Prompt tokens.")
    completion_tokens: int = Field(0, description="Completion tokens.")
    cost: float | None = Field(None, description="USD, when priced.")
    unscored_items: dict[str, int] = Field(default_factory=dict, description="Items whose judged metrics are "
                                           "unscored, by reason.")
    possibly_missing: dict[str, list[str]] = Field(default_factory=dict, description="Labelled item -> chunks "
                                                   "graded 2 that are neither evidence nor a copy of it.")
    agreement: GradeAgreement | None = Field(None, description="Judge grades against labelled evidence.")
    agreement_by_language: dict[str, GradeAgreement] = Field(default_factory=dict, description="The same per "
                                                             "language.")
