import random

import numpy as np
import pytest

from curate.annotate.agreement import cohen_kappa, krippendorff_alpha, pairwise


@pytest.mark.parametrize("metric", ["nominal", "ordinal", "interval"])
def test_alpha_equals_the_reference_implementation(metric):
    krippendorff = pytest.importorskip("krippendorff")
    rng = random.Random(metric)
    for _ in range(5):
        units = {u: {c: (rng.choice([0, 1, 2]) if rng.random() > 0.25 else None) for c in "abc"} for u in range(30)}
        data = np.array([[np.nan if units[u][c] is None else units[u][c] for u in range(30)] for c in "abc"])
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement=metric, value_domain=[0, 1, 2])
        assert krippendorff_alpha(units, metric) == pytest.approx(expected, abs=1e-9)


def test_kappa_by_hand():
    # p_o = 3/4; p_e = (3*2 + 1*2) / 16 = 1/2; kappa = (3/4 - 1/2) / (1/2)
    assert cohen_kappa(["y", "y", "y", "n"], ["y", "y", "n", "n"]) == (3 / 4 - 1 / 2) / (1 / 2)
    assert cohen_kappa(["y", "y"], ["y", "y"]) is None  # chance agreement is total: undefined


def test_pairwise_keeps_only_units_both_coded():
    units = {1: {"ann": 2, "bo": 2, "cy": 0}, 2: {"ann": 0, "bo": 0}, 3: {"ann": 1, "cy": 1}}
    result = pairwise(units, "alpha", "ordinal")
    assert result["ann|bo"] == {"agreement": 1.0, "units": 2}
    assert result["bo|cy"] == {"agreement": 0.0, "units": 1}  # as the reference library gives
