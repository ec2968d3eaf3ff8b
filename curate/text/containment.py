"""Near-verbatim containment: is a text (a question, an answer) copied inside another?

A copy survives width and punctuation changes (texts are folded first) and words inserted
into it; a question that merely reuses phrases of its evidence does not count, because it
keeps its own question words, which the evidence does not have.
"""

from __future__ import annotations

import math

from rapidfuzz import fuzz
from rapidfuzz.distance import LCSseq

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
