"""Near-verbatim containment: is a text (a question, an answer) copied inside another?

A copy survives width and punctuation changes (texts are folded first) and words inserted
into it; a question that merely reuses phrases of its evidence does not count, because it
keeps its own question words, which the evidence does not have.
"""

from __future__ import annotations

import math

from rapidfuzz import fuzz
from rapidfuzz.distance import LCSseq

from curate.text.normalize import KEPT_SYMBOLS

# The aligned window is widened on each side by this share of the needle's length.
SLACK = 0.3


def containment(needle: str, haystack: str) -> tuple[float, int, int]:
    """Return (score, start, end): the share (0-1) of `needle`'s characters found in order within
    the window of `haystack` that best aligns with it, widened by 30% of the needle's length on
    each side (room for inserted words), and that window.

    Both texts should be folded (curate.text.normalize.fold). 1.0 means every character of the needle
    is there, in order, with at most a few inserted between.

    >>> containment("谁发明了电话", "据说贝尔发明了电话")[0] < 1.0
    True
    >>> round(containment("谁发明了电话", "问谁最早发明了电话答贝尔")[0], 2)
    1.0
    """
    if not needle or not haystack:
        return 0.0, 0, 0
    if needle in haystack:
        start = haystack.index(needle)
        return 1.0, start, start + len(needle)
    if len(needle) > len(haystack):
        # the window can be no longer than the haystack itself
        return LCSseq.similarity(needle, haystack) / len(needle), 0, len(haystack)
    alignment = fuzz.partial_ratio_alignment(needle, haystack)
    slack = max(3, math.ceil(SLACK * len(needle)))
    start = max(0, alignment.dest_start - slack)
    end = min(len(haystack), alignment.dest_end + slack)
    best = LCSseq.similarity(needle, haystack[start:end]) / len(needle)
    return best, start, end


def copy_span(needle: str, haystack: str, start: int = 0, end: int | None = None) -> tuple[int, int]:
    """Return the shortest span of haystack[start:end] that holds every character of `needle` in
    order, ending where the first such run ends; (start, end) when the window holds no full copy.

    The copy itself, for containment 1.0, where `containment` returns its widened window.

    >>> text = "问谁最早发明了电话答贝尔"
    >>> a, b = copy_span("谁发明了电话", text, *containment("谁发明了电话", text)[1:])
    >>> text[a:b]
    '谁最早发明了电话'
    """
    end = len(haystack) if end is None else end
    if not needle:
        return start, start
    at = haystack.find(needle, start, end)
    if at >= 0:
        return at, at + len(needle)
    k, stop = 0, None
    for position in range(start, end):
        if haystack[position] == needle[k]:
            k += 1
            if k == len(needle):
                stop = position + 1
                break
    if stop is None:
        return start, end
    k, begin = len(needle) - 1, stop
    for position in range(stop - 1, start - 1, -1):
        if haystack[position] == needle[k]:
            k -= 1
            if k < 0:
                begin = position
                break
    return begin, stop


_ATTACHED_BEFORE = "+#$€¥£"     # a symbol right before a number changes what it says: +86, #5, $5


def symbols_agree(needle: str, haystack: str, start: int, end: int) -> bool:
    """Return whether the copy haystack[start:end] of `needle` says what it says: the same symbols
    kept by folding (+ # % ° currency) inside it, and none attached at either edge (right after it:
    A+, C#, 50%, 5€; right before a number: +86, $5).

    >>> symbols_agree("gradea", "gradea+", 0, 6), symbols_agree("c", "c#", 0, 1), symbols_agree("50", "占50%", 1, 3)
    (False, False, False)
    >>> symbols_agree("a+", "gradea+", 5, 7), symbols_agree("python", "c++python", 3, 9)
    (True, True)
    """
    inside = sorted(c for c in haystack[start:end] if c in KEPT_SYMBOLS)
    if inside != sorted(c for c in needle if c in KEPT_SYMBOLS):
        return False
    if end < len(haystack) and haystack[end] in KEPT_SYMBOLS and needle[-1:].isalnum():
        return False
    return not (start > 0 and haystack[start - 1] in _ATTACHED_BEFORE and needle[:1].isdigit())
