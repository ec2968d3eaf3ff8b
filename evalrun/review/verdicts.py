"""The judge's verdicts a person can check, and the metric values a set of verdicts gives (pure).

Three kinds of verdict carry the judged generation metrics (`evalrun.scoring.generation`):

- key_point (covered / missing / contradicted): correctness, completeness, key_points_contradicted;
- claim (supported / not_supported): faithfulness, hallucination_rate;
- relevance (yes / partly / no): answer_relevance.

Citation verdicts are not reviewed: whether a chunk supports a claim is the claim question asked of one
passage, and a form that asked both would be twice as long for the same check.

A kind is reviewable on an item only when every verdict of it came back (an unscored verdict leaves its
metrics unscored) and its verdicts give back the values the run scored (`metric_values`): what a person
corrects is then exactly what the numbers were made of.
"""

from __future__ import annotations

from dataclasses import dataclass

from curate import EvalItem
from evalrun.records import ItemScores

VALUES: dict[str, tuple[str, ...]] = {"key_point": ("covered", "missing", "contradicted"),
                                      "claim": ("supported", "not_supported"),
                                      "relevance": ("yes", "partly", "no")}
"""The verdicts of each kind, as the judge gives them and as a reviewer may correct them."""

METRICS: dict[str, tuple[str, ...]] = {
    "key_point": ("generation/correctness", "generation/completeness", "generation/key_points_contradicted"),
    "claim": ("generation/faithfulness", "generation/hallucination_rate"),
    "relevance": ("generation/answer_relevance",)}
"""The metrics each kind of verdict makes."""

KIND_OF = {metric: kind for kind, metrics in METRICS.items() for metric in metrics}
RELEVANCE = {"yes": 1.0, "partly": 0.5, "no": 0.0}


@dataclass(frozen=True)
class JudgedVerdict:
    """One verdict the judge gave about an answer: its kind, its place among that kind (0-based), what it
    is about (the key point or claim; the question for relevance), the verdict and the judge's reason."""

    kind: str
    index: int
    about: str
    verdict: str
    reason: str


def metric_values(kind: str, verdicts: list[str]) -> dict[str, float]:
    """Return the values of the kind's metrics that `verdicts` give (none when there is no verdict).

    >>> metric_values("key_point", ["covered", "contradicted", "covered", "missing"])
    {'generation/correctness': 0.0, 'generation/completeness': 0.5, 'generation/key_points_contradicted': 0.25}
    >>> metric_values("claim", ["supported", "not_supported"])
    {'generation/faithfulness': 0.5, 'generation/hallucination_rate': 0.5}
    >>> metric_values("relevance", ["partly"])
    {'generation/answer_relevance': 0.5}
    """
    if not verdicts:
        return {}
    n = len(verdicts)
    if kind == "key_point":
        covered = verdicts.count("covered") / n
        return {"generation/correctness": 1.0 if covered == 1.0 else 0.0, "generation/completeness": covered,
                "generation/key_points_contradicted": verdicts.count("contradicted") / n}
    if kind == "claim":
        supported = verdicts.count("supported") / n
        return {"generation/faithfulness": supported, "generation/hallucination_rate": 1.0 - supported}
    return {"generation/answer_relevance": RELEVANCE[verdicts[0]]}


def _said(entry) -> tuple[str, str] | None:
    """Return (verdict, reason) of one stored judge answer, or None when it has no verdict."""
    if not isinstance(entry, dict) or not isinstance(entry.get("verdict"), str):
        return None
    return entry["verdict"], str(entry.get("reason") or "")


def judged_verdicts(item: EvalItem, row: ItemScores) -> dict[str, list[JudgedVerdict]]:
    """Return, per reviewable kind, the judge's verdicts on the item's answer, in order: the kinds whose
    verdicts all came back and give back the values the run scored (see the module)."""
    details = row.generation or {}
    claims = details.get("claims") or []
    stored = {"key_point": [(k.text, e) for k, e in zip(item.key_points, details.get("key_point_verdicts") or [])],
              "claim": [(c, e) for c, e in zip(claims, details.get("claim_verdicts") or [])],
              "relevance": [(item.question, details["relevance_verdict"])] if "relevance_verdict" in details else []}
    expected = {"key_point": len(item.key_points), "claim": len(details.get("claim_verdicts") or []),
                "relevance": 1}
    found: dict[str, list[JudgedVerdict]] = {}
    for kind, pairs in stored.items():
        said = [_said(entry) for _, entry in pairs]
        if not said or len(said) != expected[kind] or None in said:
            continue
        if any(verdict not in VALUES[kind] for verdict, _ in said):
            continue
        values = metric_values(kind, [verdict for verdict, _ in said])
        if any(row.values.get(metric) != value for metric, value in values.items()):
            continue   # the scored values were not made of these verdicts alone (an empty context, say)
        found[kind] = [JudgedVerdict(kind, k, about, verdict, reason)
                       for k, ((about, _), (verdict, reason)) in enumerate(zip(pairs, said))]
    return found
