"""Calibration from reviews (pure): which reviews count, how reviewers are combined, what is said first."""

from __future__ import annotations

from curate.records import EvalItem, KeyPoint
from evalrun.records import ItemScores
from evalrun.review.calibrate import calibrate
from evalrun.review.records import Review, ReviewState, VerdictReview
from evalrun.review.stats import ppi_mean, reviews_needed

DIGEST = "j" * 16


def _item(k: int) -> EvalItem:
    return EvalItem(id=f"i{k:02d}", question=f"q{k}", language="zh" if k % 2 else "en", source="human",
                    key_points=[KeyPoint(text="the fact")])


def _row(k: int, correct: float) -> ItemScores:
    return ItemScores(item_id=f"i{k:02d}", answerable=True, values={"generation/correctness": correct})


def _review(k: int, judge: str, person: str | None, reviewer: str = "ann", digest: str = DIGEST) -> Review:
    value = {"covered": 1.0, "missing": 0.0, None: None}
    return Review(item_id=f"i{k:02d}", metric="generation/correctness", judge_digest=digest, answer_digest="a",
                  judge_value=value[judge], person_value=value[person], reviewer=reviewer,
                  reason=None if judge == person else f"K1 of i{k:02d}",
                  verdicts=[VerdictReview(kind="key_point", index=0, judge=judge, person=person)])


def test_reviewers_are_averaged_other_judges_left_out_and_unanswered_verdicts_not_valued():
    judged = [1.0 if k % 4 else 0.0 for k in range(40)]          # the judge: 30 correct of 40
    items = [_item(k) for k in range(40)]
    rows = [_row(k, v) for k, v in enumerate(judged)]
    state = ReviewState(judge_digest=DIGEST, seed=0, n=10, dimensions=[], strata={i.id: "all" for i in items},
                        created_at="2026-12-06T00:00:00+00:00")
    verdict = {1.0: "covered", 0.0: "missing"}
    reviews = [_review(k, verdict[judged[k]], verdict[judged[k]]) for k in range(10)]
    reviews[1] = _review(1, "covered", "missing")                 # ann: the judge was wrong on i01
    reviews.append(_review(1, "covered", "covered", reviewer="bo"))   # bo: it was right: i01 is worth 0.5
    reviews.append(_review(2, "covered", None, reviewer="bo"))         # bo left K1 of i02 unanswered
    reviews.append(_review(3, "covered", "missing", reviewer="cy", digest="x" * 16))   # another judge's verdicts

    found = calibrate(items, rows, state, reviews, threshold=0.6, min_verdicts=5)
    m = found.metrics["generation/correctness"]
    assert found.refused == 1
    assert (m.agreement.n, m.agreement.agreed) == (11, 10)       # ann 10 + bo 1 (the unanswered one is no pair)
    assert (m.reviews, m.items_reviewed) == (11, 10)
    people = [judged[k] for k in range(10)]
    people[1] = 0.5
    expected = ppi_mean(judged, list(range(10)), people, strata=["all"] * 40)
    assert (m.estimate.estimate, m.estimate.ci95) == (expected.estimate, expected.ci95)
    assert m.worst[0].item_id == "i01" and m.worst[0].reason == "K1 of i01"
    assert set(m.by_language) == {"en", "zh"}
    assert found.too_few == {} and found.untrusted == {}
    wanted = calibrate(items, rows, state, reviews, width=0.35).metrics["generation/correctness"]
    assert wanted.needed == reviews_needed(wanted.estimate, 0.35) and 10 < wanted.needed <= 40
    assert calibrate(items, rows, state, reviews, width=0.05).metrics["generation/correctness"].needed is None


def test_a_judge_below_the_kappa_threshold_is_not_trusted_and_few_verdicts_are_said_to_be_few():
    items = [_item(k) for k in range(40)]
    rows = [_row(k, 1.0) if k % 2 else _row(k, 0.0) for k in range(40)]
    state = ReviewState(judge_digest=DIGEST, seed=0, n=40, dimensions=[], strata={i.id: "all" for i in items},
                        created_at="2026-12-06T00:00:00+00:00")
    # the people agree with the judge on half the items, at random: kappa near 0
    reviews = [_review(k, "covered" if k % 2 else "missing", "covered" if k % 4 < 2 else "missing") for k in range(40)]
    found = calibrate(items, rows, state, reviews, threshold=0.6, min_verdicts=30)
    assert list(found.untrusted) == ["generation/correctness"]
    assert "below 0.6" in found.untrusted["generation/correctness"]
    few = calibrate(items, rows, state, reviews[:10], threshold=0.6, min_verdicts=30)
    assert few.untrusted == {} and "10 verdicts reviewed, fewer than 30" in few.too_few["generation/correctness"]
