"""Whether two alike chunks are copies (one text, up to formatting, small edits and boilerplate) or
neighbours (overlapping windows of one page, each holding text the other lacks).

Texts are compared folded (`curate.text.normalize.fold`: width, case, white space and punctuation
gone, so formatting is already the same). The characters each text holds that the other lacks are
those outside a longest common subsequence of the two. Of those:

- runs that at least `BOILERPLATE_DOCS` documents of the snapshot hold at the start or the end of a
  chunk (a footer, a header, a copyright line) are boilerplate: they say nothing about this page and
  are set aside (a sentence that other pages quote in their middle is text of its own);
- the rest are *small edits* when they total at most max(3, 1%) of the text's folded characters
  ("本文" → "本页", a typo, a year: the number rule of `copies` decides those).

Two chunks are copies only when neither holds more than small edits beyond the other: the same text
up to formatting, or the shorter contained in the longer with nothing but boilerplate around it. A
longer chunk that adds text of its own (a sentence, not boilerplate) is not a copy of the shorter:
copies form one evidence group, and evidence in that added text would be credited to a chunk that
lacks it. Windows shifted by a sentence each lack text at the opposite end: never copies.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from rapidfuzz.distance import Indel

BOILERPLATE_DOCS = 3      # documents that must hold a text at a chunk's start or end for it to be boilerplate
BOILERPLATE_EDGE = 10     # folded characters it may sit from that start or end
BOILERPLATE_MIN = 4       # folded characters from which a run can be boilerplate (one 4-gram)
EDGE_MIN = 2              # folded characters held alone at an edge that make a shift, not an edit

Relation = Literal["copy", "contained", "overlap"]


def edits(chars: int) -> int:
    """Return how many folded characters of a text may differ from its copy as small edits.

    >>> edits(40), edits(500), edits(2000)
    (3, 5, 20)
    """
    return max(3, math.ceil(0.01 * chars))


@dataclass
class Comparison:
    """How two folded texts stand to each other: `relation`, the ratio (0-100) of their texts without
    boilerplate, what each holds that the other lacks (boilerplate aside), and the boilerplate set aside."""

    relation: Relation
    score: float
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    boilerplate: list[str] = field(default_factory=list)
    set_aside_a: list[tuple[int, int]] = field(default_factory=list)   # spans of boilerplate in a
    set_aside_b: list[tuple[int, int]] = field(default_factory=list)

    def why(self) -> str:
        """Return in a few words why two alike chunks are not copies (or what a copy sets aside)."""
        def sample(runs: list[str]) -> str:
            longest = max(runs, key=len, default="")
            return repr(longest[:24] + ("…" if len(longest) > 24 else ""))
        if self.relation == "overlap":
            return f"overlapping: each holds text the other lacks ({sample(self.only_a)} / {sample(self.only_b)})"
        if self.relation == "contained":
            runs = self.only_a or self.only_b
            return f"contained: the longer adds text of its own ({sample(runs)})"
        return f"boilerplate set aside: {sample(self.boilerplate)}" if self.boilerplate else "copy"


def compare(a: str, b: str, is_boilerplate: Callable[[str], bool] = lambda run: False) -> Comparison:
    """Return how folded texts `a` and `b` stand: copies, one contained in the other with text of its
    own added, or overlapping (see the module docstring). `is_boilerplate` says whether a folded run
    is boilerplate (asked only of runs of at least BOILERPLATE_MIN characters).

    >>> one, two, three, four = "退款须在购买后七天内申请", "逾期不予受理", "退款将原路退回到账时间为三个工作日", "发票可在订单页下载"
    >>> compare(one + two + three, two + three + four).why()
    "overlapping: each holds text the other lacks ('退款须在购买后七天内申请' / '发票可在订单页下载')"
    >>> page = one + two + three + four
    >>> compare(page, page.replace("订单页", "订单详情页")).relation
    'copy'
    >>> footer = "本文由客服中心整理转载请注明出处"
    >>> compare(page, page + footer, lambda run: run == footer).why()
    "boilerplate set aside: '本文由客服中心整理转载请注明出处'"
    >>> compare(page, page + footer).why()
    "contained: the longer adds text of its own ('本文由客服中心整理转载请注明出处')"
    """
    runs_a: list[tuple[int, int]] = []   # spans of a that b lacks
    runs_b: list[tuple[int, int]] = []
    for op in Indel.opcodes(a, b):
        if op.tag in ("delete", "replace"):
            runs_a.append((op.src_start, op.src_end))
        if op.tag in ("insert", "replace"):
            runs_b.append((op.dest_start, op.dest_end))
    def own(text: str, runs: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        kept, aside = [], []
        for start, end in runs:
            boilerplate = end - start >= BOILERPLATE_MIN and is_boilerplate(text[start:end])
            (aside if boilerplate else kept).append((start, end))
        return kept, aside

    (own_a, aside_a), (own_b, aside_b) = own(a, runs_a), own(b, runs_b)
    boilerplate = [a[s:e] for s, e in aside_a] + [b[s:e] for s, e in aside_b]
    set_aside = sum(map(len, boilerplate))
    lacking_a = sum(e - s for s, e in own_a)          # what a holds that b lacks
    lacking_b = sum(e - s for s, e in own_b)
    common = len(a) - sum(e - s for s, e in runs_a)   # the common subsequence
    core = len(a) + len(b) - set_aside
    score = round(200.0 * common / core, 1) if core else 100.0
    comparison = Comparison("copy", score, [a[s:e] for s, e in own_a], [b[s:e] for s, e in own_b], boilerplate,
                            aside_a, aside_b)
    small_a, small_b = lacking_a <= edits(len(a)), lacking_b <= edits(len(b))
    if not (small_a or small_b) or _shifted(a, b, own_a, own_b):
        comparison.relation = "overlap"
    elif not (small_a and small_b):
        comparison.relation = "contained"
    return comparison


def _shifted(a: str, b: str, own_a: list[tuple[int, int]], own_b: list[tuple[int, int]]) -> bool:
    """Return whether one text opens with text the other lacks and the other ends with text the first
    lacks: windows of one page shifted against each other."""
    def opens(runs):
        return bool(runs) and runs[0][0] == 0 and runs[0][1] >= EDGE_MIN

    def ends(runs, length):
        return bool(runs) and runs[-1][1] == length and length - runs[-1][0] >= EDGE_MIN
    return (opens(own_a) and ends(own_b, len(b))) or (opens(own_b) and ends(own_a, len(a)))
