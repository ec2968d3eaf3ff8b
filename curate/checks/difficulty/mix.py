"""The easy:medium:hard target mix, how a set of difficulty levels compares with it, and a balanced
subset that meets it as closely as the pool allows."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from curate.errors import InputError
from curate.records import DIFFICULTIES

DEFAULT_TARGET = "2:5:3"   # easy:medium:hard, what `curate grade` aims at unless told otherwise


def parse_target(text: str) -> dict[str, Fraction]:
    """Return the easy, medium and hard shares of a mix written 'EASY:MEDIUM:HARD'.

    >>> {k: float(v) for k, v in parse_target("2:5:3").items()}
    {'easy': 0.2, 'medium': 0.5, 'hard': 0.3}
    """
    parts = text.split(":")
    try:
        weights = [Fraction(p.strip()) for p in parts]
    except (ValueError, ZeroDivisionError):
        weights = []
    if len(parts) != 3 or len(weights) != 3 or any(w < 0 for w in weights) or sum(weights) == 0:
        raise InputError(f"target {text!r} must be three non-negative numbers EASY:MEDIUM:HARD, e.g. 2:5:3",
                         field="target")
    return {d: w / sum(weights) for d, w in zip(DIFFICULTIES, weights)}


def apportion(n: int, shares: Mapping[str, Fraction]) -> dict[str, int]:
    """Return whole counts summing to n in proportion to `shares` (largest remainder, ties in order).

    >>> apportion(4, parse_target("2:5:3"))
    {'easy': 1, 'medium': 2, 'hard': 1}
    """
    total = sum(shares.values())
    exact = {d: n * Fraction(s) / total for d, s in shares.items()}
    counts = {d: int(v) for d, v in exact.items()}
    by_remainder = sorted(shares, key=lambda d: -(exact[d] - counts[d]))
    for d in by_remainder[:n - sum(counts.values())]:
        counts[d] += 1
    return counts


@dataclass
class Mix:
    """Measured items of one group per difficulty, beside the counts the target asks of that many."""

    items: int
    counts: dict[str, int]
    target: dict[str, int]


def mix_of(difficulties: Sequence[str], shares: Mapping[str, Fraction]) -> Mix:
    """Return the mix of some measured items against the target shares."""
    counted = Counter(difficulties)
    return Mix(len(difficulties), {d: counted[d] for d in DIFFICULTIES}, apportion(len(difficulties), shares))


@dataclass
class Balance:
    """A subset of measured items chosen to meet the target mix."""

    size: int                    # items asked for
    tag: str                     # tag the selected items carry
    selected: list[str]          # item ids, in dataset order
    counts: dict[str, int]       # selected items per difficulty
    target: dict[str, int]       # what the target mix asks of `size` items
    missing: list[str]           # what the pool lacks, e.g. "short of 12 hard items"


def _order(item_id: str) -> str:
    return hashlib.sha256(item_id.encode("utf-8")).hexdigest()


def select_balanced(pool: Sequence[tuple[str, str]], size: int,
                    shares: Mapping[str, Fraction]) -> tuple[set[str], dict[str, int], list[str]]:
    """Return (selected ids, target counts, what is missing) for `size` of the (id, difficulty)
    pool: each difficulty's candidates in sha256(id) order, its target count first; slots a
    difficulty cannot fill go to the others in proportion to their shares (equally if all zero).

    >>> pool = [("a", "easy"), ("b", "easy"), ("c", "medium"), ("d", "medium"), ("e", "hard")]
    >>> chosen, target, missing = select_balanced(pool, 4, parse_target("0:1:1"))
    >>> sorted(chosen), target, missing  # the free slot goes to an easy item: b precedes a by sha256
    (['b', 'c', 'd', 'e'], {'easy': 0, 'medium': 2, 'hard': 2}, ['short of 1 hard item'])
    """
    left = {d: sorted((i for i, g in pool if g == d), key=_order) for d in DIFFICULTIES}
    target = apportion(size, shares)
    chosen: list[str] = []
    missing = []
    for d in DIFFICULTIES:
        taken = left[d][:target[d]]
        chosen += taken
        left[d] = left[d][target[d]:]
        short = target[d] - len(taken)
        if short:
            missing.append(f"short of {short} {d} item{'s' if short > 1 else ''}")
    while len(chosen) < size and any(left.values()):
        open_ = {d: shares[d] for d in DIFFICULTIES if left[d]}
        weights = open_ if sum(open_.values()) else {d: Fraction(1) for d in open_}
        for d, extra in apportion(size - len(chosen), weights).items():
            chosen += left[d][:extra]
            left[d] = left[d][extra:]
    if len(chosen) < size:
        missing.append(f"the pool holds {len(pool)} measured items, {size} asked")
    return set(chosen), target, missing


TOLERANCE = Fraction(1, 10)


@dataclass
class MixShift:
    """The difficulty mix of one split before and after a change, beside the target."""

    before: dict[str, int]       # per difficulty, and "ungraded" (no difficulty yet: no evidence)
    after: dict[str, int]
    shares: dict[str, Fraction]  # the target
    warning: str | None          # set when the change moved the graded mix away from the target


def _counted(levels: Sequence[str | None]) -> dict[str, int]:
    counted = Counter(level or "ungraded" for level in levels)
    return {d: counted[d] for d in (*DIFFICULTIES, "ungraded")}


def _off(counts: Mapping[str, int], shares: Mapping[str, Fraction]) -> tuple[Fraction, str | None]:
    """Return how far the graded items' mix is from the target (the largest gap of one level) and that level."""
    graded = sum(counts[d] for d in DIFFICULTIES)
    if not graded:
        return Fraction(0), None
    gaps = {d: abs(Fraction(counts[d], graded) - shares[d]) for d in DIFFICULTIES}
    worst = max(gaps, key=gaps.get)
    return gaps[worst], worst


def mix_shift(before: Sequence[str | None], after: Sequence[str | None], shares: Mapping[str, Fraction],
              tolerance: Fraction = TOLERANCE) -> MixShift:
    """Return the mix of a split's difficulty levels (None: ungraded) before and after a change, with a
    warning when the graded mix is off the target by more than `tolerance` in some level and further
    off than before; ungraded items are counted, never dropped.

    >>> shift = mix_shift(["easy", "medium", "medium", "hard"], ["easy"] * 4 + ["medium", "medium", "hard", None],
    ...                   parse_target("2:5:3"))
    >>> shift.after, shift.warning
    ({'easy': 4, 'medium': 2, 'hard': 1, 'ungraded': 1}, 'easy is 57% of the graded items (target 20%), was 25%')
    """
    old, new = _counted(before), _counted(after)
    was, _ = _off(old, shares)
    now, level = _off(new, shares)
    warning = None
    if level is not None and now > tolerance and now > was:
        graded = {name: sum(c[d] for d in DIFFICULTIES) for name, c in (("old", old), ("new", new))}
        share = lambda c, n: f"{float(Fraction(c[level], n)):.0%}" if n else "none graded"  # noqa: E731
        warning = (f"{level} is {share(new, graded['new'])} of the graded items (target {float(shares[level]):.0%}), "
                   f"was {share(old, graded['old'])}")
    return MixShift(old, new, dict(shares), warning)
