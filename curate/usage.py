"""Token counts and costs as a judge or a system under test reports them, checked before anything adds
them up: a count is a whole number >= 0, a cost a finite number >= 0 (USD). Anything else (negative,
NaN, infinite, fractional tokens, text, true/false) is that reply's problem, named with its field, and
never summed: one "cost": -25 would otherwise turn a run's cost negative, one NaN make it NaN."""

from __future__ import annotations

import math
from typing import Any


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def checked_tokens(value: Any, field: str) -> tuple[int, str | None]:
    """Return (the token count, None), or (0, why `value` is no token count, naming `field`); None (not
    reported) is 0 tokens. A float with no fraction (100.0) is a count.

    >>> checked_tokens(100.0, "prompt_tokens"), checked_tokens(None, "prompt_tokens")
    ((100, None), (0, None))
    >>> checked_tokens(float("nan"), "prompt_tokens"), checked_tokens(-5, "completion_tokens")
    ((0, 'prompt_tokens nan is not a whole number'), (0, 'completion_tokens -5 is negative'))
    """
    if value is None:
        return 0, None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0, f"{field} {_shown(value)} is not a number"
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return 0, f"{field} {_shown(value)} is not a whole number"
    if value < 0:
        return 0, f"{field} {_shown(value)} is negative"
    return int(value), None


def checked_cost(value: Any, field: str = "cost") -> tuple[float | None, str | None]:
    """Return (the cost in USD, or None when not reported; None), or (None, why `value` is no cost).

    >>> checked_cost(0.25), checked_cost(None), checked_cost(-25), checked_cost("NaN")
    ((0.25, None), (None, None), (None, 'cost -25 is negative'), (None, "cost 'NaN' is not a number"))
    """
    if value is None:
        return None, None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None, f"{field} {_shown(value)} is not a number"
    if not math.isfinite(value):
        return None, f"{field} {_shown(value)} is not a finite number"
    if value < 0:
        return None, f"{field} {_shown(value)} is negative"
    return float(value), None
