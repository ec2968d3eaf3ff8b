"""Which verdicts can be reviewed (pure): only those the scored values were made of."""

from __future__ import annotations

from curate.records import EvalItem, KeyPoint
from evalrun.records import ItemScores
from evalrun.review.verdicts import judged_verdicts, metric_values

ITEM = EvalItem(id="a", question="What does LG-4031 mean?", language="en", source="human",
                key_points=[KeyPoint(text="the token expired"), KeyPoint(text="log in again")])


def _row(values: dict, **details) -> ItemScores:
    return ItemScores(item_id="a", answerable=True, values=values, generation=details)


def test_every_kind_whose_verdicts_make_the_scored_values_is_reviewable():
    row = _row({**metric_values("key_point", ["covered", "missing"]), **metric_values("claim", ["supported"]),
                "generation/answer_relevance": 1.0},
               key_point_verdicts=[{"verdict": "covered", "reason": "says so"}, {"verdict": "missing", "reason": "no"}],
               claims=["The token expired."], claim_verdicts=[{"verdict": "supported", "reason": "chunk 1"}],
               relevance_verdict={"verdict": "yes", "reason": "on topic"})
    found = judged_verdicts(ITEM, row)
    assert [(v.kind, v.index, v.about, v.verdict) for v in found["key_point"]] == [
        ("key_point", 0, "the token expired", "covered"), ("key_point", 1, "log in again", "missing")]
    assert found["claim"][0].about == "The token expired." and found["relevance"][0].reason == "on topic"


def test_an_unscored_verdict_or_values_made_without_verdicts_leave_the_kind_out():
    row = _row({"generation/faithfulness": 0.0, "generation/hallucination_rate": 1.0},   # an empty context: no
               key_point_verdicts=[{"verdict": "covered", "reason": ""}, {"unscored": "judge timed out"}],  # question
               claims=["The token expired."], claim_verdicts=[], relevance_verdict={"unscored": "bad JSON"})
    assert judged_verdicts(ITEM, row) == {}
    changed = _row({"generation/answer_relevance": 0.5}, relevance_verdict={"verdict": "yes", "reason": ""})
    assert judged_verdicts(ITEM, changed) == {}            # the value is not what the verdict gives
