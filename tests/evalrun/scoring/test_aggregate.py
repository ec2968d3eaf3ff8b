"""Aggregates: means over the items with a value, failed and unscored counted, Wilson intervals for 0/1
metrics on few items, and bootstrap intervals paired across metrics and subsets (one set of resamples)."""

import math
import random

import numpy as np
import pytest

from evalrun.records import ItemScores
from evalrun.scoring.aggregate import NOT_FINITE, RESAMPLES, Z95, aggregate, wilson_interval


def row(item_id, failed=None, unscored=None, **values):
    return ItemScores(item_id=item_id, answerable=True, values=values, unscored=unscored or {}, failed=failed)


def wilson(successes, n, z=Z95):
    """The Wilson score interval as the textbook writes it."""
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_the_mean_is_over_the_items_with_a_value_and_the_others_are_counted_by_reason():
    rows = [row("a", f1=0.5), row("b", f1=0.25), row("c", unscored={"f1": "judge timeout"}),
            row("d", unscored={"f1": "judge timeout"}), row("e", unscored={"f1": ""}), row("f", other=1.0)]
    summary = aggregate(rows, ["f1"], {})["all"]["f1"]
    assert (summary.n, summary.mean) == (2, (0.5 + 0.25) / 2)
    assert summary.unscored == {"judge timeout": 2, "unscored": 1}
    assert summary.ci_method == "bootstrap"
    assert 0.25 <= summary.ci95[0] <= summary.ci95[1] <= 0.5


def test_means_are_at_full_precision_and_exactly_summed():
    rows = [row(f"i{k}", x=0.1) for k in range(10)]
    assert sum([0.1] * 10) / 10 != 0.1  # a running sum drifts ...
    assert aggregate(rows, ["x"], {})["all"]["x"].mean == 0.1  # ... fsum does not


def test_a_value_wins_over_a_reason_and_a_metric_nobody_has_is_left_out():
    rows = [row("a", unscored={"x": "late"}, x=1.0), row("b", x=0.0)]
    table = aggregate(rows, ["x", "never"], {})["all"]
    assert list(table) == ["x"]
    assert (table["x"].n, table["x"].unscored) == (2, {})


def test_failed_counts_the_valued_items_whose_target_failed():
    rows = [row("a", failed="timeout", hit=0.0, f1=0.0), row("b", failed="bad trace", hit=0.0,
            unscored={"f1": "excluded: target failed"}), row("c", hit=1.0, f1=1.0), row("d", hit=1.0, f1=0.5)]
    table = aggregate(rows, ["hit", "f1"], {"qtype=multi": ["b", "c"]})
    assert (table["all"]["hit"].n, table["all"]["hit"].failed) == (4, 2)
    assert (table["all"]["f1"].n, table["all"]["f1"].failed) == (3, 1)
    assert table["all"]["f1"].unscored == {"excluded: target failed": 1}
    assert (table["qtype=multi"]["hit"].failed, table["qtype=multi"]["f1"].failed) == (1, 0)


@pytest.mark.parametrize(("successes", "n"), [(7, 20), (0, 5), (1, 1), (0, 1), (99, 99), (3, 4)])
def test_a_0_1_metric_on_fewer_than_100_items_gets_the_wilson_interval(successes, n):
    rows = [row(f"i{k}", hit=1.0 if k < successes else 0.0) for k in range(n)]
    summary = aggregate(rows, ["hit"], {})["all"]["hit"]
    assert (summary.n, summary.mean, summary.ci_method) == (n, successes / n, "wilson")
    assert summary.ci95 == pytest.approx(wilson(successes, n), abs=1e-12)
    assert summary.ci95 == wilson_interval(successes, n)


def test_20_out_of_20_is_not_certain():
    rows = [row(f"i{k}", hit=1.0) for k in range(20)]
    low, high = aggregate(rows, ["hit"], {})["all"]["hit"].ci95
    assert low == pytest.approx(20 / (20 + Z95 * Z95)) and low < 1.0  # Wilson's lower end at p = 1
    assert high == 1.0


def test_a_0_1_metric_with_every_value_the_same_gets_wilson_whatever_n():
    rows = [row(f"i{k}", hit=1.0, miss=0.0) for k in range(200)]
    table = aggregate(rows, ["hit", "miss"], {})["all"]
    assert table["hit"].ci_method == table["miss"].ci_method == "wilson"
    assert table["hit"].ci95 == pytest.approx(wilson(200, 200), abs=1e-12)
    assert table["miss"].ci95 == pytest.approx((0.0, 1 - 200 / (200 + Z95 * Z95)), abs=1e-12)


def test_a_0_1_metric_on_100_items_or_more_is_bootstrapped():
    rows = [row(f"i{k}", hit=float(k % 4 == 0)) for k in range(100)]
    summary = aggregate(rows, ["hit"], {})["all"]["hit"]
    assert (summary.mean, summary.ci_method) == (0.25, "bootstrap")
    assert summary.ci95[0] < 0.25 < summary.ci95[1]


def test_a_single_value_that_is_not_0_1_has_no_interval():
    summary = aggregate([row("a", f1=0.5)], ["f1"], {})["all"]["f1"]
    assert (summary.n, summary.mean, summary.ci95, summary.ci_method) == (1, 0.5, None, None)


def test_a_subset_with_one_item():
    rows = [row("a", hit=1.0, f1=0.5), row("b", hit=0.0, f1=0.25)]
    table = aggregate(rows, ["hit", "f1"], {"tag=rare": ["a"]})["tag=rare"]
    assert (table["hit"].n, table["hit"].mean, table["hit"].ci_method) == (1, 1.0, "wilson")
    assert table["hit"].ci95 == pytest.approx((1 / (1 + Z95 * Z95), 1.0), abs=1e-12)
    assert (table["f1"].n, table["f1"].mean, table["f1"].ci95) == (1, 0.5, None)


def test_two_identical_metrics_have_identical_intervals():
    values = [(k * 37 % 101) / 101 for k in range(300)]
    rows = [row(f"i{k}", a=v, b=v) for k, v in enumerate(values)]
    table = aggregate(rows, ["a", "b"], {"split=test": [f"i{k}" for k in range(0, 300, 3)]})
    for label in ("all", "split=test"):
        assert table[label]["a"].ci95 == table[label]["b"].ci95
        assert table[label]["a"].ci_method == "bootstrap"


def test_metrics_of_a_subset_share_its_resamples():
    # 0/1 values on 128 items: every resample mean is s/128 and 1 - s/128, both exact, so B = 1 - A
    # has exactly the mirrored interval only if B's resamples are A's.
    hits = [float(k % 3 == 0) for k in range(128)]
    rows = [row(f"i{k}", a=h, b=1.0 - h) for k, h in enumerate(hits)]
    table = aggregate(rows, ["a", "b"], {})["all"]
    low, high = table["a"].ci95
    assert table["a"].ci_method == table["b"].ci_method == "bootstrap"
    assert table["b"].ci95 == (1.0 - high, 1.0 - low)
    assert table["b"].mean == 1.0 - table["a"].mean


def test_values_that_are_not_0_1_are_paired_too():
    values = [random.Random(k).random() for k in range(150)]
    rows = [row(f"i{k}", a=v, b=1.0 - v) for k, v in enumerate(values)]
    table = aggregate(rows, ["a", "b"], {})["all"]
    low, high = table["a"].ci95
    assert table["b"].ci95 == pytest.approx((1.0 - high, 1.0 - low), abs=1e-12)


def test_a_resample_without_a_valued_item_is_left_out():
    # f1 has a value on 2 of 40 items; resamples that draw neither are left out, and as many resamples
    # draw only one of the two (about a quarter of them), the interval is their range.
    rows = [row(f"i{k:02d}", hit=float(k % 2)) for k in range(40)]
    rows[3].values["f1"], rows[17].values["f1"] = 0.2, 0.6
    summary = aggregate(rows, ["f1"], {})["all"]["f1"]
    assert (summary.n, summary.mean, summary.ci_method) == (2, (0.2 + 0.6) / 2, "bootstrap")
    assert summary.ci95 == (0.2, 0.6)


def test_a_constant_value_has_the_point_as_its_interval():
    rows = [row(f"i{k}", f1=0.7) for k in range(50)]
    summary = aggregate(rows, ["f1"], {})["all"]["f1"]
    assert (summary.mean, summary.ci95, summary.ci_method) == (0.7, (0.7, 0.7), "bootstrap")


def test_the_same_rows_give_the_same_intervals_in_any_order():
    rows = [row(f"i{k}", f1=(k * 7 % 13) / 13, hit=float(k % 5 == 0)) for k in range(120)]
    subsets = {"qtype=single": [f"i{k}" for k in range(0, 120, 2)], "tag=x": [f"i{k}" for k in range(30)]}
    first = aggregate(rows, ["f1", "hit"], subsets)
    shuffled = rows[:]
    random.Random(1).shuffle(shuffled)
    assert aggregate(rows, ["f1", "hit"], subsets) == first
    assert aggregate(shuffled, ["f1", "hit"], {k: v[::-1] for k, v in subsets.items()}) == first
    # one set of resamples serves every label: the same items under two labels, or under "all", have
    # the same interval
    twin = aggregate(rows, ["f1"], {"a": [f"i{k}" for k in range(120)], "b": [f"i{k}" for k in range(120)]})
    assert twin["a"]["f1"].ci95 == twin["b"]["f1"].ci95 == twin["all"]["f1"].ci95


def test_a_small_subset_of_the_shared_resamples_keeps_its_coverage():
    # A subset's resample is its items' draws in a resample of every row: about n draws, not exactly n.
    # Its interval is no narrower than the subset's own bootstrap, and covers the true mean about 95% of
    # the time (values uniform on [0, 1]: true mean 0.5; a subset of 15 of 300 rows).
    rng = np.random.default_rng(7)
    covered, ratios = 0, []
    for trial in range(150):
        values = rng.random(300)
        rows = [row(f"i{k:03d}", f1=float(v)) for k, v in enumerate(values)]
        small = [f"i{k:03d}" for k in range(0, 300, 20)]
        shared = aggregate(rows, ["f1"], {"tag=small": small})["tag=small"]["f1"].ci95
        own = aggregate([r for r in rows if r.item_id in small], ["f1"], {})["all"]["f1"].ci95
        covered += shared[0] <= 0.5 <= shared[1]
        ratios.append((shared[1] - shared[0]) / (own[1] - own[0]))
    assert covered / 150 >= 0.9
    assert 1.0 <= float(np.median(ratios)) < 1.2


def test_labels_are_all_first_then_sorted_and_unknown_or_repeated_ids_do_not_count():
    rows = [row("a", f1=0.5), row("b", f1=0.25)]
    table = aggregate(rows, ["f1"], {"tag=z": ["a", "a", "ghost"], "difficulty=easy": ["ghost"]})
    assert list(table) == ["all", "difficulty=easy", "tag=z"]
    assert table["difficulty=easy"] == {}
    assert (table["tag=z"]["f1"].n, table["tag=z"]["f1"].mean) == (1, 0.5)


def test_no_mean_or_interval_is_ever_nan_or_infinite():
    rows = [row("a", f1=float("nan"), hit=1.0), row("b", f1=float("inf"), hit=0.0), row("c", f1=0.5),
            row("d", unscored={"hit": "no trace"}), row("e", f1=-float("inf"))]
    table = aggregate(rows, ["f1", "hit"], {"tag=t": ["a", "b"], "tag=u": ["d"], "tag=v": []})
    assert table["all"]["f1"].unscored == {NOT_FINITE: 3}
    assert (table["all"]["f1"].n, table["all"]["f1"].mean) == (1, 0.5)
    assert table["tag=t"]["f1"].n == 0 and table["tag=t"]["f1"].mean is None and table["tag=t"]["f1"].ci95 is None
    assert table["tag=u"]["hit"].mean is None and table["tag=u"]["hit"].unscored == {"no trace": 1}
    for subset in table.values():
        for summary in subset.values():
            numbers = [summary.mean, *(summary.ci95 or ())]
            assert all(x is None or math.isfinite(x) for x in numbers)
            assert (summary.ci95 is None) == (summary.ci_method is None)


def test_a_large_subset_is_resampled_in_blocks_with_the_same_count():
    rows = [row(f"i{k:05d}", f1=(k % 10) / 10) for k in range(5000)]
    summary = aggregate(rows, ["f1"], {})["all"]["f1"]
    # 0..0.9 uniformly: mean 0.45, standard error sqrt(0.0825 / 5000) ~ 0.0041, so the 95% interval is
    # about 0.45 +- 0.008
    assert summary.ci95[0] == pytest.approx(0.45 - 1.96 * math.sqrt(0.0825 / 5000), abs=0.002)
    assert summary.ci95[1] == pytest.approx(0.45 + 1.96 * math.sqrt(0.0825 / 5000), abs=0.002)
    assert RESAMPLES == 1000
