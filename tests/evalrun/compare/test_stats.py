"""Paired statistics: exact sign-flip and McNemar p-values on hand cases, Monte Carlo against exact,
unscored items left out of both sides and counted, Holm and BH on the textbook example, the paired
bootstrap interval, and by simulation: the false-positive rate under no change, and power under a shift."""

import math

import numpy as np
import pytest

from evalrun.compare import (
    PairedComparison,
    bh,
    compare_paired,
    holm,
    mcnemar_exact,
    sign_flip_exact,
)

NAN = math.nan


def one(base, new, **options) -> PairedComparison:
    """Compare a single metric column over "all"."""
    base, new = np.array(base, dtype=float)[:, None], np.array(new, dtype=float)[:, None]
    return compare_paired(base, new, ["m"], **options)[("m", "all")]


def test_exact_sign_flip_on_six_items_counts_the_patterns_by_hand():
    # |d| = 1..6, T = 1+2+3+4+5-6 = 9. Flipping a set F of the |d| gives 21 - 2 sum(F), so |T*| >= 9 iff
    # sum(F) <= 6 or sum(F) >= 15: {}, {1}..{6}, {1,2}, {1,3}, {1,4}, {1,5}, {2,3}, {2,4}, {1,2,3} are 14
    # sets, and their complements 14 more: p = 28 / 64.
    d = [0.1, 0.2, 0.3, 0.4, 0.5, -0.6]
    c = one([0.5] * 6, [0.5 + x for x in d])
    assert (c.n, c.test) == (6, "sign_flip_exact")
    assert c.p_value == 28 / 64
    assert c.difference == pytest.approx((1 + 2 + 3 + 4 + 5 - 6) / 10 / 6)
    # all six the same way: only ++++++ and ------ reach |T|
    assert one([0.2] * 6, [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]).p_value == 2 / 64


def test_no_change_at_all_gives_p_one_for_either_test():
    assert one([0.3, 0.7, 0.2], [0.3, 0.7, 0.2]).p_value == 1.0
    assert one([0.3] * 40, [0.3] * 40).p_value == 1.0  # Monte Carlo: (1 + R) / (1 + R)
    assert one([1, 0, 1], [1, 0, 1]).p_value == 1.0  # McNemar without discordant pairs


def test_monte_carlo_sign_flip_agrees_with_the_exact_enumeration():
    rng = np.random.default_rng(3)
    base = rng.random(14)
    for shift in (0.0, 0.1, 0.2):
        new = np.clip(base + shift + rng.normal(0, 0.25, size=14), 0, 1)
        exact = one(base, new)
        sampled = one(base, new, exact_up_to=0, resamples=40_000, seed=1)
        assert (exact.test, sampled.test) == ("sign_flip_exact", "sign_flip")
        assert exact.p_value == sign_flip_exact(new - base)
        assert sampled.p_value == pytest.approx(exact.p_value, abs=0.01)  # 4 sd of 40,000 draws


def test_mcnemar_exact_on_eight_discordant_pairs_seven_one_way():
    # 8 discordant, 7 of them 0 -> 1: p = 2 P(X <= 1 | n = 8, 1/2) = 2 (1 + 8) / 256
    base = [0] * 7 + [1] + [1] * 5 + [0] * 3
    new = [1] * 7 + [0] + [1] * 5 + [0] * 3
    c = one(base, new)
    assert (c.test, c.binary, c.discordant, c.n) == ("mcnemar_exact", True, (1, 7), 16)
    assert c.p_value == pytest.approx(2 * (1 + 8) / 256) == pytest.approx(0.0703125)
    assert c.difference == 6 / 16
    assert mcnemar_exact(1, 7) == mcnemar_exact(7, 1)


def test_mcnemar_exact_matches_the_binomial_sum_on_many_pairs():
    worse, better = 430, 520
    n = worse + better
    tail = sum(math.comb(n, k) for k in range(worse + 1))
    assert mcnemar_exact(worse, better) == pytest.approx(2 * tail / 2**n, rel=1e-9)


def test_unscored_items_are_left_out_of_both_sides_and_counted():
    base = [1.0, 0.5, NAN, 0.25, NAN]
    new = [0.5, NAN, 0.75, 0.75, NAN]  # compared: items 0 and 3; item 1 and 2 in one run only; 4 in neither
    c = one(base, new)
    assert (c.n, c.left_out) == (2, 2)
    assert (c.base_mean, c.new_mean) == ((1.0 + 0.25) / 2, (0.5 + 0.75) / 2)
    assert c.difference == c.new_mean - c.base_mean == 0.0
    nothing = one([NAN, 1.0], [0.0, NAN])
    assert (nothing.n, nothing.left_out, nothing.p_value, nothing.ci95, nothing.test) == (0, 2, None, None, None)


def test_subsets_as_masks_or_indices_and_0_1_detected_per_subset():
    base = np.array([[0.0], [1.0], [0.5], [1.0]])
    new = np.array([[1.0], [1.0], [0.75], [0.0]])
    by_index = compare_paired(base, new, ["m"], {"a": np.array([0, 1, 3])})
    by_mask = compare_paired(base, new, ["m"], {"a": np.array([True, True, False, True])})
    assert by_index == by_mask
    assert list(by_index) == [("m", "all"), ("m", "a")]
    assert (by_index[("m", "a")].binary, by_index[("m", "a")].test) == (True, "mcnemar_exact")
    assert (by_index[("m", "all")].binary, by_index[("m", "all")].test) == (False, "sign_flip_exact")


def test_the_bootstrap_interval_is_paired_and_matches_a_plain_paired_bootstrap():
    rng = np.random.default_rng(5)
    base = rng.random(400)
    new = np.clip(base + 0.05 + rng.normal(0, 0.1, size=400), 0, 1)
    c = one(base, new, resamples=4000)
    d = new - base
    means = d[np.random.default_rng(9).integers(0, 400, size=(4000, 400))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    assert c.ci95[0] <= c.difference <= c.ci95[1]
    assert c.ci95 == pytest.approx((low, high), abs=0.003)
    # the runs' own spread (sd ~0.29 each) would give an interval ~4x as wide: the pairing is what narrows it
    assert c.ci95[1] - c.ci95[0] < 0.3 * 2 * 1.96 * math.sqrt(2 * base.var() / 400)
    constant = one([0.2, 0.3, 0.4], [0.3, 0.4, 0.5])
    assert constant.ci95 == pytest.approx((0.1, 0.1))


def test_one_compared_item_has_a_difference_but_no_interval_and_p_one():
    c = one([0.2, NAN], [0.5, 0.1])
    assert (c.n, c.left_out, c.ci95, c.p_value, c.test) == (1, 1, None, 1.0, "sign_flip_exact")
    assert c.difference == pytest.approx(0.3)


def test_left_out_is_counted_per_subset_and_bad_shapes_are_refused():
    base = np.array([[1.0], [NAN], [0.0], [1.0]])
    new = np.array([[1.0], [0.0], [NAN], [0.0]])
    table = compare_paired(base, new, ["hit"], {"a": np.array([0, 1]), "b": np.array([2, 3])})
    assert [(table[("hit", s)].n, table[("hit", s)].left_out) for s in ("all", "a", "b")] == [(2, 2), (1, 1), (1, 1)]
    with pytest.raises(ValueError, match="2 metrics"):
        compare_paired(base, new, ["hit", "recall"])
    with pytest.raises(ValueError, match="subset 'a'"):
        compare_paired(base, new, ["hit"], {"a": np.array([True, False])})


def test_the_same_seed_gives_the_same_table():
    rng = np.random.default_rng(2)
    base, new = rng.random((60, 3)), rng.random((60, 3))
    assert compare_paired(base, new, list("abc"), seed=4) == compare_paired(base, new, list("abc"), seed=4)


def test_holm_and_bh_on_the_textbook_example():
    p = [0.01, 0.04, 0.03, 0.005]  # Holm (1979) as Wikipedia tells it: reject the 0.005 and 0.01 at 0.05
    assert holm(p) == pytest.approx([3 * 0.01, max(1 * 0.04, 2 * 0.03), 2 * 0.03, 4 * 0.005])
    assert (holm(p) < 0.05).tolist() == [True, False, False, True]
    assert bh(p) == pytest.approx([4 * 0.01 / 2, 0.04, min(4 * 0.03 / 3, 0.04), 4 * 0.005])
    adjusted = holm([0.5, None, 0.9, 0.001])
    assert np.isnan(adjusted[1]) and adjusted[[0, 2, 3]].tolist() == [1.0, 1.0, 0.003]


def test_holm_is_a_monotone_step_down_capped_at_one():
    rng = np.random.default_rng(0)
    for _ in range(50):
        p = rng.random(12) ** 3
        adjusted = holm(p)
        order = np.argsort(p)
        assert np.all(np.diff(adjusted[order]) >= 0) and np.all(adjusted <= 1) and np.all(adjusted >= p)
        naive = [min(1.0, max((12 - i) * p[order[i]] for i in range(k + 1))) for k in range(12)]
        assert adjusted[order] == pytest.approx(naive)


def _runs(rng: np.random.Generator, items: int, shift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Return (base, new) items x 10 metrics: 5 0/1 and 5 continuous, each item with its own difficulty
    shared by both runs (so the runs are paired), the new run's values moved up by `shift`."""
    difficulty = rng.normal(0, 1, size=(items, 1))

    def run(moved: float) -> np.ndarray:
        latent = difficulty + rng.normal(0, 1, size=(items, 10)) + np.linspace(-1, 1, 10) + moved
        values = 1 / (1 + np.exp(-latent))
        values[:, :5] = rng.random((items, 5)) < values[:, :5]
        return values

    return run(0.0), run(shift)


def test_no_change_is_called_significant_at_most_about_five_percent_of_the_time():
    metrics = [f"m{k}" for k in range(10)]
    significant, families = 0, 0
    for repetition in range(300):
        base, new = _runs(np.random.default_rng(repetition), 200)
        p = np.array([c.p_value for c in compare_paired(base, new, metrics, resamples=1000, seed=repetition).values()])
        significant += int(np.count_nonzero(p < 0.05))
        families += int(np.any(holm(p) < 0.05))
    assert significant / 3000 <= 0.08
    assert families / 300 <= 0.06


def test_a_real_shift_is_detected():
    base, new = _runs(np.random.default_rng(1), 200, shift=1.5)
    table = compare_paired(base, new, [f"m{k}" for k in range(10)])
    adjusted = holm([c.p_value for c in table.values()])
    assert all(c.difference > 0 and c.ci95[0] > 0 for c in table.values())
    assert np.all(adjusted < 0.05)


def test_newcombes_paired_interval_covers_the_true_difference_on_few_items():
    """Its coverage on 20 pairs, over tables from nearly all concordant to lopsided, is near the 95% it claims
    (measured: 0.92 to 1.0). A percentile bootstrap of the same pairs covered 43% on the (0.97, 0, 0.03)
    table, and says [0, 0] whenever no pair is discordant."""
    from evalrun.compare.stats import newcombe_paired
    rng = np.random.default_rng(7)
    cells = [(0.90, 0.02, 0.02), (0.60, 0.10, 0.05), (0.40, 0.05, 0.25), (0.97, 0.0, 0.03), (0.30, 0.20, 0.20)]
    coverages = []
    for both, better, worse in cells:
        truth = better - worse
        draws = rng.multinomial(20, [both, better, worse, 1 - both - better - worse], size=2000)
        inside = [low - 1e-12 <= truth <= high + 1e-12
                  for low, high in (newcombe_paired(int(e), int(f), int(g), 20) for e, f, g, _ in draws)]
        coverages.append(np.mean(inside))
    assert min(coverages) >= 0.90 and np.mean(coverages) >= 0.94, coverages


def test_a_small_0_1_table_uses_newcombe_and_a_large_one_the_bootstrap():
    small = compare_paired(np.ones(5), np.ones(5), ["hit"], resamples=200)[("hit", "all")]
    assert small.ci_method == "newcombe" and small.ci95[0] < -0.4 and small.ci95[1] > 0.4
    base = (np.arange(400) % 3 == 0).astype(float)
    new = base.copy()
    new[:40] = 1.0
    large = compare_paired(base, new, ["hit"], resamples=2000)[("hit", "all")]
    assert large.ci_method == "bootstrap" and large.ci95[0] > 0
    f1 = compare_paired(np.full(5, 0.5), np.full(5, 0.7), ["f1"], resamples=200)[("f1", "all")]
    assert f1.ci_method == "bootstrap"
