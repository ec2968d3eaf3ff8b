"""Whether two chunks of a snapshot are copies, pair by pair (`judge`): the rules of `curate.checks.copies`
applied to the pairs its search proposes, a function of the pairs' chunks alone, so batches of pairs can
be judged in any process.

Boilerplate is the one question about the whole snapshot: whether a run one chunk holds and the other
lacks stands at the start or end of chunks of at least BOILERPLATE_DOCS documents. The judge is given what
is known (`Boilerplate`); a pair that asks about a run not known yet comes back pending, with the runs it
asked about, and is judged again once the snapshot's shards have answered (the runs a comparison asks
about depend on its two texts only, so one more round settles it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel, LCSseq

from curate.checks.clusters import Edge
from curate.checks.copy_rule import compare, edits
from curate.kb.scope_fields import scope_difference, scope_key
from curate.records import Scope, WithheldPair
from curate.text.normalize import fold, fold_with_map, normalize
from curate.text.salient import salient_difference

_HEADING_LINE = re.compile(r"\s{0,3}#{1,6}[ \t]+\S")

# what the search asks of a pair of snapshot positions (a < b but for "exact": a the text's first chunk)
EXACT, APART, NEAR = "exact", "apart", "near"


def text_difference(a: str, b: str, limit: int = 3, width: int = 24) -> str:
    """Return where two texts differ, as up to `limit` replacements "old → new".

    >>> text_difference("本文列出所有错误码", "本页列出所有错误码")
    "'文' → '页'"
    """
    parts = [f"{a[i1:i2][:width]!r} → {b[j1:j2][:width]!r}" for i1, i2, j1, j2 in edit_runs(a, b)]
    if not parts:
        return "identical text"
    return "; ".join(parts[:limit]) + (f"; and {len(parts) - limit} more" if len(parts) > limit else "")


def edit_runs(a: str, b: str) -> list[list[int]]:
    """Return where two texts differ: [a start, a end, b start, b end] of each run of edits (adjacent
    deletions and insertions joined), by rapidfuzz's alignment (difflib's takes seconds on two
    7,000-character chunks).

    >>> edit_runs("LG-4031 in 30 days", "LG-4032 in 60 days")
    [[6, 7, 6, 7], [11, 12, 11, 12]]
    """
    changes: list[list[int]] = []
    for op in Indel.opcodes(a, b):
        if op.tag == "equal":
            continue
        if changes and changes[-1][1] == op.src_start and changes[-1][3] == op.dest_start:
            changes[-1][1], changes[-1][3] = op.src_end, op.dest_end
        else:
            changes.append([op.src_start, op.src_end, op.dest_start, op.dest_end])
    return changes


def headings(text: str) -> str:
    """Return the Markdown heading lines of a chunk, one a line ('' when it has none)."""
    return "\n".join(line for line in text.splitlines() if _HEADING_LINE.match(line))


def body(text: str) -> str:
    """Return a chunk's text without its Markdown heading lines."""
    return "\n".join(line for line in text.splitlines() if not _HEADING_LINE.match(line)).strip()


def compared_text(text: str) -> str:
    """Return the folded text two chunks are compared by: without its Markdown headings (a page's title
    before its first section is no text of the section; headings are compared apart, for what they say)."""
    return fold(body(text)) if headings(text) else fold(text)


class Piece(NamedTuple):
    """What the judge reads of a chunk (a `Chunk` has these too)."""

    chunk_id: str
    text: str
    scope: Scope | None


class Boilerplate:
    """What is known of runs: run -> whether it is boilerplate; runs asked about and not known are noted."""

    def __init__(self, known: dict[str, bool] | None = None):
        self.known = known if known is not None else {}
        self.asked: set[str] = set()

    def holds(self, run: str) -> bool:
        if run in self.known:
            return self.known[run]
        self.asked.add(run)
        return False


@dataclass
class Judged:
    """The outcome of a batch: per action its edges and withheld pairs in order, None where it is pending
    (it asked about runs not known: `asked`)."""

    outcomes: list[tuple[list[Edge], list[WithheldPair]] | None] = field(default_factory=list)
    asked: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Rules:
    """What every batch is judged by: `near_min`, groups undone (chunk ids never joined again), whether the
    snapshot has scopes, and the runs known to be boilerplate or not."""

    near_min: float
    refused: tuple[frozenset[str], ...]
    scoped: bool
    known: dict[str, bool]


def judge(actions: Sequence[tuple[str, int, int]], chunks: dict[int, Piece], rules: Rules) -> Judged:
    """Judge each (kind, position a, position b) of `actions` over `chunks` (snapshot position -> its piece)."""
    pair = _Pair(chunks, rules)
    judged = Judged()
    for kind, a, b in actions:
        boilerplate = Boilerplate(rules.known)
        edges, withheld = [], []
        pair.run(kind, a, b, boilerplate, edges, withheld)
        judged.outcomes.append(None if boilerplate.asked else (edges, withheld))
        judged.asked |= boilerplate.asked
    return judged


class _Pair:
    """The rules for one pair of chunks, each chunk's compared texts worked out once per batch."""

    def __init__(self, chunks: dict[int, Piece], rules: Rules):
        self.chunks, self.rules = chunks, rules
        self.heads = {p: headings(c.text) for p, c in chunks.items()}
        self.bodies = {p: body(c.text) if self.heads[p] else c.text for p, c in chunks.items()}
        self.folded = {p: fold(self.bodies[p]) if self.heads[p] else fold(c.text) for p, c in chunks.items()}

    def run(self, kind: str, a: int, b: int, boilerplate: Boilerplate, edges: list, withheld: list) -> None:
        if not self.allowed(a, b):
            return
        if kind == EXACT:
            self.consider(a, b, "exact", 100.0, edges, withheld)
        elif kind == APART:
            self.apart(a, b, 100.0, withheld)
        else:
            self.near(a, b, boilerplate, edges, withheld)

    def allowed(self, a: int, b: int) -> bool:
        ids = self.chunks[a].chunk_id, self.chunks[b].chunk_id
        return not any(ids[0] in members and ids[1] in members for members in self.rules.refused)

    def apart(self, a: int, b: int, score: float, withheld: list) -> bool:
        """Withhold a pair whose scopes differ (and say so); return whether it was."""
        one, two = self.chunks[a], self.chunks[b]
        if not self.rules.scoped or scope_key(one.scope) == scope_key(two.scope):
            return False
        withheld.append(WithheldPair(a=one.chunk_id, b=two.chunk_id, score=round(score, 1), why="scope",
                                     differs=scope_difference(one.scope, two.scope)))
        return True

    def consider(self, a: int, b: int, method: str, score: float, edges: list, withheld: list,
                 set_aside: tuple[list, list] = ([], [])) -> None:
        if self.apart(a, b, score, withheld):
            return
        # boilerplate set aside is not compared (a footer's "© 2024" is no number of the page), nor
        # segmentation spaces ("十 万 匹" is "十万匹")
        differs = salient_difference(normalize(_without(self.bodies[a], set_aside[0])),
                                     normalize(_without(self.bodies[b], set_aside[1])))
        if differs is None and (self.heads[a] or self.heads[b]):
            differs = salient_difference(normalize(self.heads[a]), normalize(self.heads[b]))
        ids = self.chunks[a].chunk_id, self.chunks[b].chunk_id
        if differs is None:
            edges.append(Edge(ids[0], ids[1], method, score))
        else:
            withheld.append(WithheldPair(a=ids[0], b=ids[1], score=score, differs=differs))

    def near(self, a: int, b: int, boilerplate: Boilerplate, edges: list, withheld: list) -> None:
        one, two, near_min = self.folded[a], self.folded[b], self.rules.near_min
        score = fuzz.ratio(one, two)
        if score < near_min and not _nearly_contained(one, two):
            return
        if score >= near_min and self.apart(a, b, score, withheld):
            return
        comparison = compare(one, two, boilerplate.holds)
        if comparison.relation != "copy":
            if score >= near_min:   # alike enough to pass for copies: say why they are not
                withheld.append(WithheldPair(a=self.chunks[a].chunk_id, b=self.chunks[b].chunk_id,
                                             score=round(score, 1), differs=comparison.why(), why=comparison.relation))
        elif comparison.score >= near_min:
            self.consider(a, b, "near", comparison.score, edges, withheld,
                          (comparison.set_aside_a, comparison.set_aside_b))


def _nearly_contained(a: str, b: str) -> bool:
    """Return whether the shorter of two folded texts lies in the longer but for small edits."""
    shorter = min(len(a), len(b))
    return LCSseq.similarity(a, b) >= shorter - edits(shorter)


def _without(text: str, folded_spans: list[tuple[int, int]]) -> str:
    """Return `text` without the stretches that the spans of its folded text cover."""
    if not folded_spans:
        return text
    _, offsets = fold_with_map(text)
    kept, at = [], 0
    for start, end in sorted(folded_spans):
        kept.append(text[at:offsets[start]])
        at = offsets[end - 1] + 1
    return "".join(kept) + text[at:]
