"""Agreement between annotators: Krippendorff's alpha on graded relevance, Cohen's kappa on
answerability."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Mapping, Sequence
from itertools import combinations

Value = int | str


def _distance(metric: str, values: Sequence[Value], counts: Mapping[Value, float]):
    """Return the squared distance function of Krippendorff's nominal, ordinal or interval metric."""
    if metric == "nominal":
        return lambda a, b: 0.0 if a == b else 1.0
    if metric == "interval":
        return lambda a, b: float(a - b) ** 2
    if metric == "ordinal":
        ranked = sorted(values)

        def ordinal(a, b):
            lo, hi = sorted((ranked.index(a), ranked.index(b)))
            between = sum(counts[ranked[k]] for k in range(lo, hi + 1)) - (counts[ranked[lo]] + counts[ranked[hi]]) / 2
            return between ** 2
        return ordinal
    raise ValueError(f"unknown metric {metric!r}")


def krippendorff_alpha(units: Mapping[Hashable, Mapping[str, Value]], metric: str = "ordinal") -> float | None:
    """Return Krippendorff's alpha over units {unit: {coder: value}} (units with one value are
    left out), or None when nothing is pairable or all values are equal.

    alpha = 1 - D_o / D_e, from the coincidence matrix o[c][k] = sum over units of
    (pairs of values c, k in the unit) / (m_u - 1).

    >>> krippendorff_alpha({1: {"a": 2, "b": 2}, 2: {"a": 0, "b": 0}, 3: {"a": 1, "b": 1}})
    1.0
    >>> round(krippendorff_alpha({1: {"a": 1, "b": 2}, 2: {"a": 0, "b": 0}, 3: {"a": 2, "b": 2}}, "interval"), 4)
    0.8276
    """
    coincidence: dict[tuple[Value, Value], float] = defaultdict(float)
    for coded in units.values():
        values = [v for v in coded.values() if v is not None]
        if len(values) < 2:
            continue
        for i, a in enumerate(values):
            for j, b in enumerate(values):
                if i != j:
                    coincidence[(a, b)] += 1.0 / (len(values) - 1)
    if not coincidence:
        return None
    totals: Counter = Counter()
    for (a, _), weight in coincidence.items():
        totals[a] += weight
    n = sum(totals.values())
    values = sorted(totals)
    if len(values) < 2:
        return None
    delta = _distance(metric, values, totals)
    observed = sum(w * delta(a, b) for (a, b), w in coincidence.items())
    expected = sum(totals[a] * totals[b] * delta(a, b) for a in values for b in values) / (n - 1)
    return 1.0 - observed / expected if expected else None


def cohen_kappa(first: Sequence[Value], second: Sequence[Value]) -> float | None:
    """Return Cohen's kappa of two coders' labels on the same units, or None when undefined.

    kappa = (p_o - p_e) / (1 - p_e).

    >>> cohen_kappa(["y", "y", "n", "n"], ["y", "y", "n", "y"])
    0.5
    """
    if len(first) != len(second) or not first:
        return None
    n = len(first)
    observed = sum(a == b for a, b in zip(first, second)) / n
    left, right = Counter(first), Counter(second)
    expected = sum(left[k] * right[k] for k in left) / (n * n)
    if expected == 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def pairwise(units: Mapping[Hashable, Mapping[str, Value]], measure: str, metric: str = "ordinal") -> dict:
    """Return {"coder_a|coder_b": {"agreement": value, "units": n}} over units both coded."""
    coders = sorted({c for coded in units.values() for c in coded})
    result = {}
    for a, b in combinations(coders, 2):
        both = {u: {a: coded[a], b: coded[b]} for u, coded in units.items()
                if coded.get(a) is not None and coded.get(b) is not None}
        if measure == "alpha":
            value = krippendorff_alpha(both, metric)
        else:
            value = cohen_kappa([v[a] for v in both.values()], [v[b] for v in both.values()])
        result[f"{a}|{b}"] = {"agreement": None if value is None else round(value, 4), "units": len(both)}
    return result
