"""The records of a comparison, as `evalrun compare --json` prints them: the verdict, each row
(one metric on one subset), the trade-offs and the gate's decision. Computed by
`evalrun.compare.comparison` (the rows) and `evalrun.compare.verdict` (the verdict)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from curate import Record
from evalrun.compare.flips import FlipCount, ItemFlip
from evalrun.review.records import JudgedDifference
from evalrun.compare.stats import RESAMPLES

ALPHA = 0.05
# A p95 latency change smaller than this is too small for anyone to wait for: significant or not, it makes
# a change neither better nor worse (sub-millisecond timings on a busy machine move by more than that).
NEGLIGIBLE_MS = 10.0

Outcome = Literal["better", "worse", "mixed", "no detectable difference", "no verdict"]

class Verdict(Record):
    """The verdict of a comparison and the lines that support it, as printed first."""

    outcome: Outcome = Field(description="better, worse, mixed, no detectable difference, or no verdict (no primary "
                             "metric compared).")
    sentence: str = Field(description="The verdict in one sentence.")
    improved: list[str] = Field(default_factory=list, description="Primary rows significantly better.")
    worsened: list[str] = Field(default_factory=list, description="Primary rows significantly worse.")
    unchanged: list[str] = Field(default_factory=list, description="Primary rows without a detectable change.")
    changes: list[str] = Field(default_factory=list, description="One line per primary row: base -> new, the change, "
                               "its 95% interval, the corrected p-value, n.")
    costs: list[str] = Field(default_factory=list, description="Tokens, p95 latency and cost per item, base -> new.")
    against: list[str] = Field(default_factory=list, description="Subsets that moved significantly (uncorrected, "
                               "exploratory) against their metric's overall direction.")
    judge: list[str] = Field(default_factory=list, description="Per judged primary metric: its change held against "
                             "the judge's own flip rate.")
    caveats: list[str] = Field(default_factory=list, description="What limits the verdict.")

    @property
    def lines(self) -> list[str]:
        """Return every line of the verdict in the order printed."""
        return [self.sentence, *self.caveats, *self.changes, *self.costs, *self.against, *self.judge]


class CompareRow(Record):
    """One metric on one subset, paired over the items both runs scored."""

    metric: str = Field(description="The metric.")
    subset: str = Field(description="'all', or a subset label such as 'difficulty=hard'.")
    n: int = Field(description="Items with a value in both runs (the pairs compared).")
    left_out: int = Field(description="Items of the subset with a value in one run only (left out of both sides).")
    base: float | None = Field(None, description="BASE's mean over the n pairs.")
    new: float | None = Field(None, description="NEW's mean over the n pairs.")
    difference: float | None = Field(None, description="Mean of NEW - BASE over the pairs.")
    ci95: tuple[float, float] | None = Field(None, description="95% interval of the difference (see ci_method).")
    ci_method: str | None = Field(None, description="bootstrap (paired percentile bootstrap), or newcombe: Newcombe's "
                                  "score interval for paired proportions, for a 0/1 metric on fewer than 100 pairs or "
                                  "without a discordant pair, where the bootstrap is too narrow; or sign_flip_inverted: "
                                  "the shifts the sign-flip test does not reject, where the bootstrap interval and the "
                                  "test disagree about 0 (few items changed, all one way).")
    p_value: float | None = Field(None, description="Paired test's p-value (see test).")
    primary: bool = Field(False, description="In the primary family: corrected with the family (Holm); otherwise "
                          "exploratory.")
    p_adjusted: float | None = Field(None, description="Primary rows: the p-value corrected by Holm's method over the "
                                     "primary family. None for exploratory rows.")
    q_value: float | None = Field(None, description="Exploratory rows: the Benjamini-Hochberg q-value over every "
                                  "exploratory row (the false discovery rate at which it would count). None for "
                                  "primary rows.")
    test: str | None = Field(None, description="mcnemar_exact (0/1 values), sign_flip_exact or sign_flip (a "
                             "Monte Carlo permutation test of the mean difference), swap_permutation (p95 latency: "
                             "each item's two timings swapped at random).")
    discordant: tuple[int, int] | None = Field(None, description="0/1 metrics: items that went 1 -> 0, and 0 -> 1.")
    fell: int = Field(0, description="Pairs whose value is lower in NEW.")
    rose: int = Field(0, description="Pairs whose value is higher in NEW.")
    significant: bool = Field(False, description="Primary: p_adjusted below alpha. Exploratory: q_value below "
                              "alpha (a lead to follow, not a finding).")
    negligible: bool = Field(False, description="Significant, but a p95 latency change under NEGLIGIBLE_MS: no "
                             "user waits for it, so it is neither better nor worse in the verdict.")
    better: bool = Field(False, description="Significant and in the better direction.")
    worse: bool = Field(False, description="Significant and in the worse direction (a fall; a rise for the "
                        "metrics where lower is better).")


class TradeOff(Record):
    """One end-to-end measure of both runs side by side."""

    measure: str = Field(description="e.g. 'latency p95 total (ms)', 'system cost per item (USD)'.")
    base: float | None = Field(None, description="BASE's value.")
    new: float | None = Field(None, description="NEW's value.")
    change: float | None = Field(None, description="Relative change (NEW - BASE) / BASE, when BASE is not 0.")


class GateResult(Record):
    """What the gate decided: every rule checked, and the ones that failed, one line each."""

    source: str = Field(description="Where the rules came from.")
    passed: bool = Field(description="Every rule held (and none was unable to fail, unless --allow-weak-rules).")
    checked: list[str] = Field(default_factory=list, description="Every rule checked, one line each.")
    failed: list[str] = Field(default_factory=list, description="The rules that failed, one line each.")
    weak: list[str] = Field(default_factory=list, description="Guards that could not have failed whatever NEW did "
                            "(too few pairs for any p-value to get below alpha after the correction), one line "
                            "each; they fail the gate unless --allow-weak-rules.")


class ScopeSide(Record):
    """One run's permission leaks as a comparison reads them (from its summary's scope section)."""

    checked: bool = Field(description="Scored with scope checks; False: scored before them, nothing below is known.")
    access_groups: bool = Field(False, description="Its KB gives some chunk access groups (leaks are possible).")
    askers: int | None = Field(None, description="Items that name an asker (their leaks checked).")
    unchecked: int | None = Field(None, description="Items that name no asker: not checked.")
    leak_items: int | None = Field(None, description="Items with a permission leak in any layer; 0 when no chunk has "
                                   "access groups; None when not checked (scored before the checks, or access "
                                   "groups and no item naming an asker).")
    leaks: dict[str, int] = Field(default_factory=dict, description="Layer -> items with a leak in it.")
    leak_ids: list[str] = Field(default_factory=list, description="The items with a permission leak.")
    stale_evidence: int | None = Field(None, description="Items whose answer is built on stale chunks; None when not "
                                       "checked.")


class ScopeComparison(Record):
    """Permission leaks of BASE and NEW side by side: printed before the verdict, held to the gate."""

    base: ScopeSide = Field(description="BASE's leaks.")
    new: ScopeSide = Field(description="NEW's leaks.")


class Comparison(Record):
    """A comparison of NEW against BASE, as `evalrun compare --json` prints it: the verdict first."""

    verdict: Verdict | None = Field(None, description="Better, worse, mixed or no detectable difference, in words "
                                    "(see evalrun.compare.verdict).")
    base: str = Field(description="BASE's run folder.")
    new: str = Field(description="NEW's run folder.")
    base_target: str = Field(description="BASE's system under test.")
    new_target: str = Field(description="NEW's system under test.")
    alpha: float = Field(ALPHA, description="Significance level of p_adjusted (primary) and q_value (exploratory).")
    primary_source: str = Field("default", description="Where the primary family came from: default, --primary, "
                                "curate.toml; '+ gate' when the gate's rules joined it.")
    family: list[str] = Field(default_factory=list, description="The primary rows, 'metric' (on all) or "
                              "'metric on subset' (a gate rule's): the rows Holm corrects together.")
    family_missing: list[str] = Field(default_factory=list, description="Declared primary metrics with no row to "
                                      "decide on, one line each (the verdict cannot speak for them).")
    family_notes: list[str] = Field(default_factory=list, description="How the default family fell back (lexical "
                                    "generation without a judge, ...).")
    compared: int = Field(0, description="Primary rows with a p-value: the number Holm corrects for.")
    exploratory: int = Field(0, description="Exploratory rows with a p-value: the number the q-values are over.")
    resamples: int = Field(RESAMPLES, description="Resamples of the bootstrap and of the Monte Carlo sign-flip test "
                           "(whose p-value is never below 1 / (1 + resamples)).")
    items: int = Field(description="Items both runs scored.")
    base_only: list[str] = Field(default_factory=list, description="Items only BASE scored.")
    new_only: list[str] = Field(default_factory=list, description="Items only NEW scored.")
    apart: int = Field(0, description="Items scored apart in either run, in no row.")
    subsets: bool = Field(True, description="False when the release could not be read: 'all' only.")
    warnings: list[str] = Field(default_factory=list, description="Lines to read before any number.")
    uncontrolled: list[str] = Field(default_factory=list, description="What differs besides the system; empty "
                                    "for a controlled comparison.")
    new_diagnostic: bool = Field(False, description="NEW is an --oracle-context run (never the NEW side of a gate).")
    rows: list[CompareRow] = Field(default_factory=list, description="Every metric x subset compared.")
    trade_offs: list[TradeOff] = Field(default_factory=list, description="Latency, tokens and cost side by side.")
    warmup_note: str | None = Field(None, description="How many warm-up calls each run timed apart (left out of "
                                    "latency), when either did.")
    flips: list[ItemFlip] = Field(default_factory=list, description="Per 0/1 metric, the items that went from pass "
                                  "to fail and back, with their attribution before and after.")
    flip_counts: list[FlipCount] = Field(default_factory=list, description="Per 0/1 metric, its flips, held against "
                                         "the judge's own flip rate where a run measured it (--judge-repeats).")
    gate: GateResult | None = Field(None, description="The gate's verdict, when the comparison was held to one "
                                    "(--gate); None otherwise.")
    scope: ScopeComparison | None = Field(None, description="Permission leaks of both runs, said before anything "
                                          "else; None in a comparison made before scope was checked.")
    judge_corrected: list[JudgedDifference] = Field(default_factory=list, description="Judged metrics' changes "
                                                    "corrected for the judge's error, when people reviewed the runs "
                                                    "(`evalrun review`); empty otherwise.")

    def row(self, metric: str, subset: str = "all") -> CompareRow | None:
        """Return the row of one metric on one subset, if it was compared."""
        return next((r for r in self.rows if r.metric == metric and r.subset == subset), None)
