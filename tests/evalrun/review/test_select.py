"""The review sample (pure): strata, allocation, weight on unsure items, reproducibility, inclusion."""

from __future__ import annotations

from collections import Counter

import pytest

from evalrun.review.select import DIMENSIONS, Candidate, allocate, select


def _candidate(k: int, language: str = "en", correct: str = "correct", unsure: bool = False) -> Candidate:
    keys = {d: "x" for d in DIMENSIONS} | {"unsure": "unsure" if unsure else "sure", "correct": correct,
                                          "language": language}
    return Candidate(f"i{k:03d}", keys, ("repeats disagree",) if unsure else ())


def test_allocation_gives_each_stratum_two_then_shares_by_size_and_weight():
    assert allocate({"a": 90, "b": 10}, {"a": 1.0, "b": 1.0}, 20) == {"a": 2 + 14, "b": 2 + 1 + 1}  # 14.4, 1.6
    assert allocate({"a": 90, "b": 10}, {"a": 1.0, "b": 3.0}, 20) == {"a": 2 + 12, "b": 2 + 4}  # 30 of 120 is b's
    assert allocate({"a": 1, "b": 50}, {"a": 1.0, "b": 1.0}, 10) == {"a": 1, "b": 9}         # a has only one
    assert sum(allocate({"a": 7, "b": 7, "c": 7}, {"a": 1, "b": 1, "c": 1}, 10).values()) == 10


def test_unsure_items_are_oversampled_and_their_inclusion_probability_says_so():
    found = [_candidate(k, unsure=k < 20) for k in range(200)]          # 20 unsure, 180 sure
    chosen = select(found, 40, seed=1)
    taken = Counter(chosen.stratum_of[i] for i in chosen.chosen)
    unsure = next(h for h in taken if h.startswith("unsure"))
    sure = next(h for h in taken if h.startswith("sure"))
    # 2 each, then 36 by size x weight: unsure 20 x 3 = 60 of 240 -> 9, sure 180 of 240 -> 27
    assert (taken[unsure], taken[sure]) == (11, 29)
    assert chosen.inclusion("i000") == 11 / 20 and chosen.inclusion("i150") == 29 / 180
    assert len(set(chosen.chosen)) == 40


def test_the_same_seed_draws_the_same_items_and_another_seed_others():
    found = [_candidate(k, language=("en", "zh")[k % 2]) for k in range(100)]
    assert select(found, 10, seed=3).chosen == select(found, 10, seed=3).chosen
    assert select(found, 10, seed=3).chosen != select(found, 10, seed=4).chosen


def test_dimensions_are_dropped_from_the_least_important_until_every_stratum_gets_two():
    found = [_candidate(k, language=("en", "zh", "ja")[k % 3], correct=("correct", "not correct")[k % 2])
             for k in range(60)]
    assert select(found, 100, seed=0).dimensions == DIMENSIONS                      # all 60 fit
    few = select(found, 8, seed=0)      # 6 strata of correct x language need 12: language goes, 2 strata of 4 fit
    assert few.dimensions == ("unsure", "correct") and len(few.chosen) == 8


def test_asking_for_more_than_there_is_takes_everything_and_no_items_is_an_error():
    found = [_candidate(k) for k in range(5)]
    everything = select(found, 50)
    assert sorted(everything.chosen) == [c.item_id for c in found]
    assert all(everything.inclusion(c.item_id) == 1.0 for c in found)
    with pytest.raises(ValueError):
        select(found, 0)
