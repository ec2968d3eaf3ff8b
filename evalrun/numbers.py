"""Numbers formatted for people, the same in the terminal and on the report's page: milliseconds with
a sensible precision, rates as percentages, changes of a rate in percentage points, money in dollars
with as many digits as it needs, counts with thousands separators; never scientific notation.

A metric whose values lie in 0..1 (every retrieval, lexical, judged and refusal metric) is a rate;
latency (ms), tokens and cost (USD) have their own units (`unit_of`)."""

from __future__ import annotations

import math

RATE, MS, TOKENS, USD = "rate", "ms", "tokens", "usd"
# End-to-end rows of a comparison, paired per item like the metrics: lower is better for all three.
LATENCY_P95, TOKENS_PER_ITEM, COST_PER_ITEM = "e2e/latency_p95", "e2e/tokens_per_item", "e2e/cost_per_item"
UNITS = {LATENCY_P95: MS, TOKENS_PER_ITEM: TOKENS, COST_PER_ITEM: USD}


def unit_of(metric: str) -> str:
    """Return the unit of a metric's values: ms, tokens, usd, or rate (0..1) for every metric that is not
    an end-to-end measure."""
    return UNITS.get(metric, RATE)


def count(value: float | None) -> str:
    """Return a count with thousands separators.

    >>> count(16548), count(12.4), count(None)
    ('16,548', '12', '')
    """
    return "" if value is None else f"{value:,.0f}"


def ms(value: float | None) -> str:
    """Return milliseconds as a person reads them: "0.4 ms", "85 ms", "1,243 ms", "16.5 s", "2 min 5 s".

    >>> ms(0.42), ms(85.3), ms(1243.4), ms(16548.0), ms(125_000.0), ms(None)
    ('0.42 ms', '85 ms', '1,243 ms', '16.5 s', '2 min 5 s', '')
    """
    if value is None or not math.isfinite(value):
        return ""
    if abs(value) < 10:
        return f"{value:.2g} ms"
    if abs(value) < 10_000:
        return f"{value:,.0f} ms"
    seconds = value / 1000
    if abs(seconds) < 100:
        return f"{seconds:.1f} s"
    if abs(seconds) < 3600:
        return f"{int(seconds // 60)} min {seconds % 60:.0f} s"
    return f"{seconds / 3600:,.1f} h"


def usd(value: float | None) -> str:
    """Return US dollars with the digits a small amount needs: "$12.50", "$0.0034", "$0.000012".

    >>> usd(12.5), usd(0.00342), usd(0.0000123), usd(0.0), usd(None)
    ('$12.50', '$0.0034', '$0.000012', '$0', '')
    """
    if value is None or not math.isfinite(value):
        return ""
    if value == 0:
        return "$0"
    if abs(value) >= 1:
        return f"${value:,.2f}"
    digits = max(2, 1 - math.floor(math.log10(abs(value))))   # two significant digits
    return f"${value:.{digits}f}"


def percent(value: float | None, signed: bool = False) -> str:
    """Return a rate (0..1) or a relative change as a percentage with one decimal.

    >>> percent(0.8653), percent(-0.1312, signed=True), percent(None)
    ('86.5%', '-13.1%', '')
    """
    if value is None or not math.isfinite(value):
        return ""
    return f"{value:+.1%}" if signed else f"{value:.1%}"


def value(metric: str, x: float | None) -> str:
    """Return one value of `metric` in its unit: a rate as a percentage, latency in ms or s, tokens as a
    count, cost in dollars.

    >>> value("context/recall@5", 0.9166), value("e2e/latency_p95", 1243.0), value("e2e/cost_per_item", 0.0021)
    ('91.7%', '1,243 ms', '$0.0021')
    """
    unit = unit_of(metric)
    if unit == MS:
        return ms(x)
    if unit == TOKENS:
        return count(x)
    if unit == USD:
        return usd(x)
    return percent(x)


def _points(x: float) -> str:
    """Return a rate's change in points with one decimal; a change that rounds to zero reads +0.0.

    >>> _points(-0.0000004), _points(0.0521)
    ('+0.0', '+5.2')
    """
    text = f"{100 * x:+.1f}"
    return "+0.0" if text == "-0.0" else text


def difference(metric: str, d: float | None) -> str:
    """Return a difference NEW - BASE of `metric`, signed: a rate's in percentage points, the others in
    their unit.

    >>> difference("context/recall@5", 0.0521), difference("e2e/latency_p95", -150.2), difference("lexical/f1", 0.0)
    ('+5.2 pts', '-150 ms', '+0.0 pts')
    """
    if d is None or not math.isfinite(d):
        return ""
    unit = unit_of(metric)
    if unit == RATE:
        return f"{_points(d)} pts"
    text = value(metric, abs(d))
    return ("-" if d < 0 else "+") + text


def interval(metric: str, ci: tuple[float, float] | None) -> str:
    """Return a 95% interval of a difference in the difference's unit.

    >>> interval("context/recall@5", (0.0104, 0.1102)), interval("lexical/f1", None)
    ('[+1.0, +11.0] pts', '')
    """
    if ci is None:
        return ""
    if unit_of(metric) == RATE:
        return f"[{_points(ci[0])}, {_points(ci[1])}] pts"
    return f"[{difference(metric, ci[0])}, {difference(metric, ci[1])}]"


def relative(base: float | None, new: float | None) -> str:
    """Return the relative change from `base` to `new` ("+13.1%"); "" when it has no meaning (a base of 0).

    >>> relative(1099.0, 1243.0), relative(0.0, 5.0), relative(None, 1.0)
    ('+13.1%', '', '')
    """
    if base in (None, 0) or new is None or not (math.isfinite(base) and math.isfinite(new)):
        return ""
    return percent((new - base) / base, signed=True)


# How an interval was made, when not by the paired bootstrap: the mark printed after it.
CI_MARKS = {"newcombe": "N", "sign_flip_inverted": "S"}


def marked_interval(metric: str, ci: tuple[float, float] | None, method: str | None) -> str:
    """Return `interval` followed by the mark of its method (N: Newcombe's, S: the sign-flip test inverted).

    >>> marked_interval("lexical/f1", (-0.434, 0.434), "newcombe"), marked_interval("lexical/f1", None, "newcombe")
    ('[-43.4, +43.4] pts N', '')
    """
    text = interval(metric, ci)
    return f"{text} {CI_MARKS[method]}" if text and method in CI_MARKS else text


def measure(name: str, x: float | None) -> str:
    """Return a trade-off's value in the unit its name says: "(ms)", "(USD)", else a count of tokens.

    >>> measure("latency p95 total (ms)", 1243.0), measure("system cost per item (USD)", 0.0021)
    ('1,243 ms', '$0.0021')
    """
    if "(ms)" in name:
        return ms(x)
    if "(USD)" in name:
        return usd(x)
    return count(x)


def p_value(p: float | None) -> str:
    """Return a p-value as read: "<0.001" below a thousandth, three decimals otherwise.

    >>> p_value(0.0000123), p_value(0.0412), p_value(None)
    ('<0.001', '0.041', '')
    """
    if p is None or not math.isfinite(p):
        return ""
    return "<0.001" if p < 0.001 else f"{p:.3f}"
