"""The rule that turns an item's measured features into a difficulty level (easy, medium, hard),
and the rule that says whether an item's qtype fits its evidence."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class DifficultyRules:
    """Thresholds of the difficulty rule (see `curate.checks.difficulty.measure`)."""

    easy_overlap_min: float = 0.5     # easy needs at least half the question's terms in its evidence
    hard_overlap_below: float = 0.2   # under a fifth of them: the question paraphrases its evidence
    hard_constraints_min: int = 2     # conditions + negations that make an item hard
    hard_rank_beyond: int = 10        # gold outside this top in both retrievers: hard
    near_miss_share: float = 0.5      # share of a chunk's 4-grams found in a gold chunk: a near miss

def classify(features: Mapping[str, float], rules: DifficultyRules = DifficultyRules()) -> tuple[str, str]:
    """Return (difficulty, why) of an item's features under the rule of the module docstring (an item
    the system should decline, `declined`, is hard as an unanswerable one is).

    >>> classify({"answerable": 1, "evidence_groups": 1, "lexical_overlap": 0.8, "conditions": 0,
    ...           "negations": 0, "bm25_rank": 1, "confusable_above": 0})
    ('easy', 'one evidence group, ranked 1, overlap 0.80')
    >>> classify({"answerable": 1, "evidence_groups": 2, "lexical_overlap": 0.8, "conditions": 1,
    ...           "negations": 0, "bm25_rank": 3, "dense_rank": 1, "confusable_above": 0})[0]
    'medium'
    """
    if not features["answerable"]:
        # an item whose asker may use none of its evidence is one the system should decline: graded so
        return "hard", "should decline: no evidence its asker may use at its moment" if features.get(
            "declined") else "unanswerable"
    overlap = features["lexical_overlap"]
    constraints = int(features["conditions"] + features["negations"])
    confusable = int(features.get("confusable_above", 0))
    ranks = [features[r] for r in ("bm25_rank", "dense_rank") if r in features]
    best = min(ranks) if ranks else None
    hard = []
    if overlap < rules.hard_overlap_below:
        hard.append(f"overlap {overlap:.2f} < {rules.hard_overlap_below:g}")
    if constraints >= rules.hard_constraints_min:
        hard.append(_cues(constraints))
    if confusable:
        hard.append(f"{confusable} confusable chunk{'s' if confusable > 1 else ''} above gold")
    if best is None or best > rules.hard_rank_beyond:
        hard.append(f"gold not in the top {rules.hard_rank_beyond}")
    if hard:
        return "hard", "; ".join(hard)
    groups = int(features["evidence_groups"])
    short = []
    if groups != 1:
        short.append(f"{groups} evidence groups")
    if best != 1:
        short.append(f"best rank {best:g}")
    if overlap < rules.easy_overlap_min:
        short.append(f"overlap {overlap:.2f} < {rules.easy_overlap_min:g}")
    if constraints:
        short.append(_cues(constraints))
    if short:
        return "medium", "; ".join(short)
    return "easy", f"one evidence group, ranked 1, overlap {overlap:.2f}"


def _cues(count: int) -> str:
    return f"{count} condition/negation cue{'s' if count > 1 else ''}"


def type_misfit(qtype: str | None, answerable: bool, groups: int) -> str | None:
    """Return why an item's qtype does not fit its evidence, or None when it fits (or has no rule).

    >>> type_misfit("single", True, 2)
    'single needs exactly 1 evidence group, has 2'
    >>> type_misfit("unanswerable", True, 0)
    'unanswerable needs 0 evidence groups and answerable false, has 0 and answerable true'
    """
    if qtype == "multi_evidence" and groups < 2:
        return f"multi_evidence needs at least 2 evidence groups, has {groups}"
    if qtype == "single" and groups != 1:
        return f"single needs exactly 1 evidence group, has {groups}"
    if qtype == "unanswerable" and (groups or answerable):
        return (f"unanswerable needs 0 evidence groups and answerable false, "
                f"has {groups} and answerable {str(answerable).lower()}")
    return None
