"""The statistics of people checking the judge: Cohen's kappa on hand-counted tables, prediction-powered
means on hand cases (one stratum, and strata weighted by W_h), and by simulation (1,000 studies each,
seeded): the 95% intervals' coverage of the truth, the width saved by a good judge, the bias an
unweighted mean of over-sampled reviews would have, and the paired difference of two runs."""

import math
import random
import statistics

import numpy as np
import pytest

from curate.annotate.agreement import cohen_kappa as point_kappa
from evalrun.review import stats
from evalrun.review.stats import cohen_kappa, ppi_mean, ppi_paired_difference, reviews_needed, t_quantile

STUDIES = 1000
N, REVIEWED = 1000, 100


def t2(p: float) -> float:
    """Return the p quantile of Student's t with 2 degrees of freedom: (2p - 1) / sqrt(2 p (1 - p))."""
    return (2 * p - 1) / math.sqrt(2 * p * (1 - p))


# -- kappa -----------------------------------------------------------------------------------------------

def test_kappa_of_the_textbook_two_by_two():
    # a = 20 both yes, b = 5 judge yes / person no, c = 10 judge no / person yes, d = 15 both no
    judge = ["yes"] * 25 + ["no"] * 25
    person = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    a = cohen_kappa(judge, person, labels=["yes", "no"])
    po = (20 + 15) / 50
    pe = (25 / 50) * (30 / 50) + (25 / 50) * (20 / 50)
    assert (po, pe) == (0.7, 0.5)
    assert (a.n, a.agreed, a.agreement) == (50, 35, po)
    assert a.expected == pytest.approx(pe) and a.kappa == pytest.approx((po - pe) / (1 - pe)) == pytest.approx(0.4)
    assert a.labels == ("yes", "no")
    assert a.confusion == {"yes": {"yes": 20, "no": 5}, "no": {"yes": 10, "no": 15}}
    assert a.ci95[0] < a.kappa < a.ci95[1] and -1 <= a.ci95[0] and a.ci95[1] <= 1
    assert a.agreement_ci95[0] < po < a.agreement_ci95[1]
    assert a.note is None


def test_kappa_of_a_three_by_three_by_hand():
    table = {"covered": {"covered": 10, "missing": 2, "contradicted": 1},
             "missing": {"covered": 3, "missing": 8, "contradicted": 1},
             "contradicted": {"covered": 0, "missing": 1, "contradicted": 4}}
    judge = [j for j, row in table.items() for p, count in row.items() for _ in range(count)]
    person = [p for j, row in table.items() for p, count in row.items() for _ in range(count)]
    a = cohen_kappa(judge, person, labels=["covered", "missing", "contradicted"])
    # n = 30, agreed 10 + 8 + 4; judge's margins 13, 12, 5; people's 13, 11, 6
    po = 22 / 30
    pe = (13 * 13 + 12 * 11 + 5 * 6) / 30 ** 2
    assert (a.n, a.agreed) == (30, 22)
    assert a.kappa == pytest.approx((po - pe) / (1 - pe)) == pytest.approx(329 / 569)
    assert a.confusion == table
    assert a.ci95[0] <= a.kappa <= a.ci95[1]


def test_labels_given_come_first_then_the_others_seen_sorted():
    a = cohen_kappa(["no", "yes", "partly", "unsure"], ["yes", "yes", "no", "maybe"], labels=["yes", "partly", "no"])
    assert a.labels == ("yes", "partly", "no", "maybe", "unsure")
    assert list(a.confusion) == list(a.labels) and list(a.confusion["no"]) == list(a.labels)
    assert a.confusion["no"]["yes"] == 1 and a.confusion["unsure"]["maybe"] == 1


def test_kappa_is_undefined_when_both_gave_every_item_one_label():
    a = cohen_kappa(["supported"] * 12, ["supported"] * 12, labels=["supported", "not_supported"])
    assert (a.kappa, a.ci95, a.agreement, a.expected) == (None, None, 1.0, 1.0)
    assert "kappa is undefined" in a.note
    assert a.confusion == {"supported": {"supported": 12, "not_supported": 0},
                           "not_supported": {"supported": 0, "not_supported": 0}}
    assert a.agreement_ci95[1] == 1.0 and a.agreement_ci95[0] < 1.0  # Wilson still says something
    empty = cohen_kappa([], [])
    assert (empty.n, empty.kappa, empty.agreement, empty.note) == (0, None, None, "no items")
    with pytest.raises(ValueError, match="same items"):
        cohen_kappa(["yes"], ["yes", "no"])
    with pytest.raises(ValueError, match="twice"):
        cohen_kappa(["yes"], ["yes"], labels=["yes", "yes"])


def test_kappa_agrees_with_curates_point_kappa_and_its_interval_holds_it():
    rng = random.Random(5)
    for trial in range(20):
        n = rng.choice([2, 5, 30, 200])
        judge = [rng.choice("abc") for _ in range(n)]
        person = [x if rng.random() < 0.7 else rng.choice("abc") for x in judge]
        a = cohen_kappa(judge, person, resamples=300)
        expected = point_kappa(judge, person)
        assert (a.kappa is None) == (expected is None)
        if a.kappa is not None:
            assert a.kappa == pytest.approx(expected, abs=1e-12)
            assert -1 <= a.ci95[0] <= a.kappa <= a.ci95[1] <= 1
    perfect = cohen_kappa(["a", "b"] * 10, ["a", "b"] * 10)
    assert (perfect.kappa, perfect.ci95) == (1.0, (1.0, 1.0))  # the sample alone cannot say more
    judge, person = ["a", "b", "b", "a"] * 10, ["a", "b", "a", "b"] * 10
    assert cohen_kappa(judge, person) == cohen_kappa(judge, person)  # seeded


# -- the t quantile --------------------------------------------------------------------------------------

def test_t_quantile_in_closed_form_and_against_scipy():
    assert t_quantile(0.975, 1) == pytest.approx(math.tan(math.pi * (0.975 - 0.5)), rel=1e-12)  # Cauchy
    assert t_quantile(0.975, 2) == pytest.approx(t2(0.975), rel=1e-12)
    assert t_quantile(0.975, 2.9) == t_quantile(0.975, 2)  # rounded down: never narrower
    assert t_quantile(0.975, 10 ** 9) == pytest.approx(stats.Z95, abs=3e-5)
    with pytest.raises(ValueError):
        t_quantile(0.975, 0.5)
    scipy_stats = pytest.importorskip("scipy.stats")
    for df in [3, 4, 7, 30, 99, 1000, 54321]:
        for p in (0.6, 0.975, 0.995):
            assert t_quantile(p, df) == pytest.approx(scipy_stats.t.ppf(p, df), rel=1e-9)


# -- prediction-powered means: hand cases ----------------------------------------------------------------

def test_classic_ppi_by_hand():
    judged = [0.5, 0.25, 1.0, 0.75, 0.0, 0.5, 1.0, 0.25]  # N = 8, mean 4.25 / 8
    reviewed, people = [0, 3, 5], [1.0, 1.0, 0.25]
    residuals = [1.0 - 0.5, 1.0 - 0.75, 0.25 - 0.5]    # y - f on the reviewed
    e = ppi_mean(judged, reviewed, people, lambda_=1.0)
    assert e.judge_mean == 4.25 / 8
    assert e.estimate == pytest.approx(4.25 / 8 + sum(residuals) / 3)
    variance = statistics.variance(residuals) * (1 / 3 - 1 / 8) + statistics.variance(people) / 8
    assert e.se == pytest.approx(math.sqrt(variance))
    assert e.df == pytest.approx(2)  # one stratum: n - 1
    half = t2(0.975) * e.se
    assert e.ci95 == pytest.approx((max(0.0, e.estimate - half), min(1.0, e.estimate + half)))
    assert (e.lambda_, e.n_reviewed, e.n_items, e.note) == (1.0, 3, 8, None)
    # lambda = 0: the people's mean alone, s2_y (1 / n - 1 / N) + s2_y / N = s2_y / n
    assert e.classical == pytest.approx(2.25 / 3)
    assert e.classical_se == pytest.approx(math.sqrt(statistics.variance(people) / 3))
    alone = ppi_mean(judged, reviewed, people, lambda_=0.0)
    assert (alone.estimate, alone.se, alone.ci95) == (e.classical, e.classical_se, e.classical_ci95)


def test_stratified_estimate_weights_each_stratum_by_its_size():
    # "sure": 8 items, 2 reviewed; "unsure": 2 items, both reviewed (over-sampled: 1 in 4 vs 2 in 2)
    strata = ["sure"] * 8 + ["unsure"] * 2
    judged = [1, 0, 0, 0, 1, 0, 0, 1] + [1, 0]
    reviewed, people = [1, 2, 8, 9], [1, 0, 1, 1]
    e = ppi_mean(judged, reviewed, people, strata=strata, lambda_=1.0)
    w_sure, w_unsure = 8 / 10, 2 / 10
    sure = 3 / 8 + ((1 - 0) + (0 - 0)) / 2     # mean of f over the stratum + mean of y - f over its reviews
    unsure = 1 / 2 + ((1 - 1) + (1 - 0)) / 2
    assert e.estimate == pytest.approx(w_sure * sure + w_unsure * unsure) == pytest.approx(0.9)
    # the unsure stratum is fully reviewed: 1 / n_h - 1 / N_h = 0 and its s2_y = 0
    variance = w_sure ** 2 * (statistics.variance([1, 0]) * (1 / 2 - 1 / 8) + statistics.variance([1, 0]) / 8)
    assert e.se == pytest.approx(math.sqrt(variance)) == pytest.approx(0.4)
    assert e.df == pytest.approx(1)
    assert e.classical == pytest.approx(w_sure * (1 + 0) / 2 + w_unsure * (1 + 1) / 2) == pytest.approx(0.6)
    assert statistics.mean(people) == 0.75  # the unweighted mean of the reviews over-counts "unsure"


def test_a_stratum_with_one_review_borrows_the_pooled_variance():
    strata = ["a"] * 4 + ["b"] * 4 + ["c"] * 2
    judged = [0.0] * 10
    reviewed, people = [0, 1, 2, 4, 5, 8], [0.0, 1.0, 0.5, 0.25, 0.75, 1.0]
    e = ppi_mean(judged, reviewed, people, strata=strata, lambda_=0.0)
    pooled = (statistics.variance([0.0, 1.0, 0.5]) * 2 + statistics.variance([0.25, 0.75]) * 1) / 3
    parts = [(4 / 10) ** 2 * statistics.variance([0.0, 1.0, 0.5]) / 3,
             (4 / 10) ** 2 * statistics.variance([0.25, 0.75]) / 2,
             (2 / 10) ** 2 * pooled / 1]      # (1 / n_h - 1 / N_h) + 1 / N_h = 1 / n_h at lambda = 0
    assert e.estimate == pytest.approx(0.4 * 0.5 + 0.4 * 0.5 + 0.2 * 1.0)
    assert e.se == pytest.approx(math.sqrt(sum(parts)))
    dfs = [2, 1, 3]  # n_h - 1, and the pooled df for the stratum on the pooled variance
    assert e.df == pytest.approx(sum(parts) ** 2 / sum(p * p / d for p, d in zip(parts, dfs)))


def test_the_jackknife_of_a_fixed_lambda_is_the_formula(monkeypatch):
    rng = np.random.default_rng(3)
    strata = rng.integers(0, 3, 60)
    judged = rng.random(60)
    people_all = np.clip(judged + rng.normal(0, 0.2, 60), 0, 1)
    reviewed = np.concatenate([np.flatnonzero(strata == k)[:m] for k, m in zip(range(3), (5, 2, 8))])
    fixed = ppi_mean(judged, reviewed, people_all[reviewed], strata=strata, lambda_=0.37)
    monkeypatch.setattr(stats, "_slope", lambda a, b: np.full(np.shape(a), 0.37))  # no re-tuning
    jackknifed = ppi_mean(judged, reviewed, people_all[reviewed], strata=strata)
    assert jackknifed.lambda_ == 0.37
    assert jackknifed.se == pytest.approx(fixed.se, rel=1e-12)


def test_power_tuning_gives_a_useless_judge_no_weight():
    rng = np.random.default_rng(0)
    judged = rng.random(500)                           # unrelated to what people say
    reviewed = rng.choice(500, 80, replace=False)
    people = (rng.random(80) < 0.4).astype(float)
    e = ppi_mean(judged, reviewed, people)
    assert e.lambda_ < 0.2
    assert e.se < 1.1 * e.classical_se


def test_what_cannot_be_estimated_is_none_with_a_note():
    judged = [1, 0, 1, 1]
    assert ppi_mean(judged, [2], [1]).note == "fewer than 2 reviewed items (1)"
    assert ppi_mean(judged, [], []).estimate is None
    outside = ppi_mean(judged, [1, 4], [1, 0])
    assert (outside.estimate, outside.judge_mean) == (None, 0.75) and "position 4" in outside.note
    assert "position -1" in ppi_mean(judged, [1, -1], [1, 0]).note
    unreviewed = ppi_mean(judged, [0, 1], [1, 0], strata=["a", "a", "b", "b"])
    assert unreviewed.estimate is None and unreviewed.note.startswith("stratum b has 2 items and none reviewed")
    singles = ppi_mean(judged, [0, 2], [1, 0], strata=["a", "a", "b", "b"])
    assert singles.estimate is None and "no stratum has 2 reviewed items" in singles.note
    assert reviews_needed(singles, 0.1) is None


@pytest.mark.parametrize("call, message", [
    (lambda: ppi_mean([0.5, 0.5], [0, 1], [1.0]), "must match"),
    (lambda: ppi_mean([0.5, 0.5], [0, 0], [1.0, 1.0]), "more than once"),
    (lambda: ppi_mean([0.5, 0.5], [0.0, 1.0], [1.0, 1.0]), "integers"),
    (lambda: ppi_mean([0.5, math.nan], [0, 1], [1.0, 1.0]), r"judged\[1\] = nan"),
    (lambda: ppi_mean([0.5, 0.5], [0, 1], [1.0, 2.0]), r"people\[1\] = 2.0 is no finite number in \[0.0, 1.0\]"),
    (lambda: ppi_mean([0.5, 0.5], [0, 1], [1.0, 1.0], strata=["a"]), "one stratum per judged item"),
    (lambda: ppi_mean([0.5, 0.5], [0, 1], [1.0, 1.0], lambda_=1.5), "lambda_"),
    (lambda: ppi_mean([0.5, 0.5], [0, 1], [1.0, 1.0], low=1.0, high=0.0), "range"),
    (lambda: ppi_paired_difference([0.5, 0.5], [0.5], [0], [1.0], [1.0]), "same items"),
])
def test_programmer_errors_raise(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_estimates_stay_in_the_metrics_range():
    e = ppi_mean([0.0] * 20 + [1.0] * 2, [20, 21, 0, 1], [0.0, 0.0, 0.0, 0.0], lambda_=1.0)
    # 2 / 22 + (-1 - 1 + 0 + 0) / 4 < 0: moved to 0, the interval with it
    assert e.estimate == 0.0 and e.ci95[0] == 0.0 <= e.ci95[1] <= 1.0
    scaled = ppi_mean([2.0, 4.0, 3.0, 5.0], [0, 1, 2], [2.0, 5.0, 3.0], lambda_=1.0, low=1.0, high=5.0)
    assert scaled.estimate == pytest.approx(3.5 + 1 / 3) and 1.0 <= scaled.ci95[0] <= scaled.ci95[1] <= 5.0


def test_paired_difference_by_hand():
    base_judged = [0, 0, 1, 1, 0, 1]
    new_judged = [1, 0, 1, 1, 1, 1]                    # judge's differences: 1, 0, 0, 0, 1, 0 (mean 1/3)
    reviewed, base_people, new_people = [0, 1, 4], [0, 1, 0], [1, 1, 0]   # people's: 1, 0, 0
    e = ppi_paired_difference(base_judged, new_judged, reviewed, base_people, new_people, lambda_=1.0)
    assert e.judge_mean == pytest.approx(1 / 3)
    assert e.estimate == pytest.approx(1 / 3 + ((1 - 1) + (0 - 0) + (0 - 1)) / 3)
    assert (e.low, e.high) == (-1.0, 1.0)
    d_people, d_residual = [1, 0, 0], [0, 0, -1]
    variance = statistics.variance(d_residual) * (1 / 3 - 1 / 6) + statistics.variance(d_people) / 6
    assert e.se == pytest.approx(math.sqrt(variance))
    assert e.classical == pytest.approx(1 / 3)


def test_reviews_needed():
    e = ppi_mean([1, 0] * 50, range(10), [1, 1, 0, 0, 1, 0, 1, 0, 1, 1], lambda_=0.0)
    s2 = statistics.variance([1, 1, 0, 0, 1, 0, 1, 0, 1, 1])
    assert s2 == pytest.approx(4 / 15)

    def width(n):  # at lambda = 0 and one stratum: V(n) = s2 (1 / n - 1 / N) + s2 / N = s2 / n, df = n - 1
        return 2 * t_quantile(0.975, n - 1) * math.sqrt(s2 / n)

    assert width(67) > 0.25 >= width(68)
    assert reviews_needed(e, 0.25) == 68
    assert reviews_needed(e, width(10) * (1 + 1e-12)) == 10  # the width it has now takes the reviews made
    assert width(100) > 0.2 and reviews_needed(e, 0.2) is None  # all 100 items reviewed is not enough
    assert reviews_needed(e, 0.5) < reviews_needed(e, 0.3)


# -- simulations ------------------------------------------------------------------------------------------

def simple_samples(rng: np.random.Generator) -> np.ndarray:
    """Return STUDIES simple random samples of REVIEWED of the N items (rows)."""
    return np.argsort(rng.random((STUDIES, N)), axis=1)[:, :REVIEWED]


def run(truth: float, judged: np.ndarray, people: np.ndarray, samples: np.ndarray, strata=None,
        low: float = 0.0, high: float = 1.0) -> dict[str, float]:
    """Return the coverage of `truth` and the average width of the PPI and the reviewed-only intervals,
    and the mean error of the PPI estimate and of the unweighted mean of the reviews, over the studies
    (rows of `judged`, `people` and `samples`)."""
    found = {"covered": 0, "classical_covered": 0, "width": 0.0, "classical_width": 0.0, "error": 0.0,
             "naive_error": 0.0}
    for f, y, sample in zip(judged, people, samples):
        e = ppi_mean(f, sample, y[sample], strata=strata, low=low, high=high)
        found["covered"] += e.ci95[0] <= truth <= e.ci95[1]
        found["classical_covered"] += e.classical_ci95[0] <= truth <= e.classical_ci95[1]
        found["width"] += e.ci95[1] - e.ci95[0]
        found["classical_width"] += e.classical_ci95[1] - e.classical_ci95[0]
        found["error"] += e.estimate - truth
        found["naive_error"] += y[sample].mean() - truth
    return {key: value / len(samples) for key, value in found.items()}


@pytest.mark.parametrize("judge", ["flips 10%", "says 1 for 20% of the 0s"])
def test_ppi_covers_a_rate_and_a_good_judge_narrows_it(judge):
    rng = np.random.default_rng(11 if judge == "flips 10%" else 12)
    p = 0.3
    people = (rng.random((STUDIES, N)) < p).astype(float)
    if judge == "flips 10%":
        judged = np.where(rng.random((STUDIES, N)) < 0.1, 1 - people, people)
    else:
        judged = np.where((people == 0) & (rng.random((STUDIES, N)) < 0.2), 1.0, people)
    found = run(p, judged, people, simple_samples(rng))
    assert found["covered"] >= 0.93
    assert found["classical_covered"] >= 0.93
    assert abs(found["error"]) < 0.005
    assert found["width"] < 0.8 * found["classical_width"]  # measured: 0.68 (flips), 0.72 (biased)


def test_ppi_covers_the_mean_of_a_graded_metric():
    rng = np.random.default_rng(13)
    levels, probabilities = np.array([0, 0.25, 0.5, 0.75, 1]), np.array([0.1, 0.15, 0.2, 0.25, 0.3])
    people = rng.choice(levels, size=(STUDIES, N), p=probabilities)
    off = rng.choice([-0.25, 0.0, 0.25], size=(STUDIES, N), p=[0.15, 0.7, 0.15])  # one grade off, 30%
    judged = np.clip(people + off, 0, 1)
    found = run(float(levels @ probabilities), judged, people, simple_samples(rng))
    assert found["covered"] >= 0.93
    assert found["width"] < 0.6 * found["classical_width"]  # measured: 0.47


def stratified_samples(rng: np.random.Generator, sizes: np.ndarray, taken: np.ndarray) -> np.ndarray:
    """Return STUDIES stratified samples (rows): `taken[h]` of the `sizes[h]` items of each stratum, the
    strata laid out one after the other."""
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return np.hstack([start + np.argsort(rng.random((STUDIES, size)), axis=1)[:, :take]
                      for start, size, take in zip(starts, sizes, taken)])


@pytest.mark.parametrize("design", ["two strata", "twelve strata"])
def test_over_sampling_the_unsure_items_biases_the_plain_mean_not_ours(design):
    rng = np.random.default_rng(14 if design == "two strata" else 15)
    if design == "two strata":
        # the judge is sure of 800 items (wrong on 3%), unsure of 200 (wrong on 30%); 50 reviews from each
        sizes, taken = np.array([800, 200]), np.array([50, 50])
        rates, wrong = np.array([0.2, 0.5]), np.array([0.03, 0.3])
    else:
        # as evalrun.review.select draws: 2 per stratum, the rest by size, unsure strata (the last 4) x 3
        sizes = np.array([300, 150, 120, 100, 80, 60, 50, 40, 40, 30, 20, 10])
        taken = np.array([21, 11, 10, 8, 7, 6, 5, 4, 10, 8, 6, 4])
        rates, wrong = np.linspace(0.1, 0.8, 12), np.array([0.04] * 8 + [0.3] * 4)
    stratum = np.repeat(np.arange(len(sizes)), sizes)
    people = (rng.random((STUDIES, N)) < rates[stratum]).astype(float)
    judged = np.where(rng.random((STUDIES, N)) < wrong[stratum], 1 - people, people)
    truth = float(sizes @ rates / N)
    found = run(truth, judged, people, stratified_samples(rng, sizes, taken), strata=stratum)
    assert found["naive_error"] > 0.05                 # measured: +0.09 (two strata), +0.095 (twelve)
    assert abs(found["error"]) < 0.005
    assert found["covered"] >= 0.93 and found["classical_covered"] >= 0.93
    assert found["width"] < 0.7 * found["classical_width"]


def test_paired_difference_covers_the_true_difference():
    rng = np.random.default_rng(16)
    base = (rng.random((STUDIES, N)) < 0.6).astype(float)
    changed = rng.random((STUDIES, N)) < 0.3            # 30% of the items answered anew, right 75% of the time
    new = np.where(changed, (rng.random((STUDIES, N)) < 0.75).astype(float), base)
    truth = 0.3 * (0.75 - 0.6)
    flip = rng.random((2, STUDIES, N)) < 0.1
    base_judged, new_judged = np.where(flip[0], 1 - base, base), np.where(flip[1], 1 - new, new)
    covered = width = classical_width = 0.0
    for b, n_, fb, fn, sample in zip(base, new, base_judged, new_judged, simple_samples(rng)):
        e = ppi_paired_difference(fb, fn, sample, b[sample], n_[sample])
        covered += e.ci95[0] <= truth <= e.ci95[1]
        width += e.ci95[1] - e.ci95[0]
        classical_width += e.classical_ci95[1] - e.classical_ci95[0]
    assert covered / STUDIES >= 0.93
    assert width < classical_width
