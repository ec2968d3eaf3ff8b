"""Duplicate chunks of a KB snapshot (`check-dups --kb`): copies of one text become one evidence
equivalence group, so finding any copy finds the evidence.

A near copy is one text up to formatting, small edits and boilerplate (`curate.checks.copy_rule`):
two windows of one page shifted by a sentence, each holding text the other lacks, are neighbours,
never copies; nor is a chunk that holds another and adds text of its own. Both are reported as
withheld (`overlap`, `contained`) when they read alike (ratio >= near_min).

Copies follow scope: two chunks whose access groups, version, validity or supersedes differ are never
copies, however equal their texts (copies are interchangeable, versions and audiences are not); alike
pairs of them are withheld as `scope`, with what differs ("groups hr ≠ everyone", "version 2025 ≠ 2026").

A near copy is a copy only when it says the same thing. Two chunks that differ in a number, a
date, a version, a code or a negation are never joined, however alike they read: the 2017 and
2018 editions of a brochure differ only in their quotas, and the 2017 chunk must not get credit
for a 2018 question. Such pairs are reported as withheld, with what differs. Every group says what
differs between its members, and a wrong one can be undone (`undo`): it is never formed again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

import numpy as np
from rapidfuzz import fuzz
from rapidfuzz.distance import Indel, LCSseq

from curate.checks.clusters import Edge, clusters
from curate.checks.copy_rule import BOILERPLATE_DOCS, BOILERPLATE_EDGE, compare, edits
from curate.index.kb_index import KBIndex
from curate.index.minhash import candidate_pairs, signatures
from curate.kb.scope_fields import scope_difference, scope_key
from curate.records import ChunkGroup, ChunkGroups, WithheldPair, now
from curate.text.normalize import fold, fold_with_map, normalize
from curate.text.salient import salient_difference

_HEADING_LINE = re.compile(r"\s{0,3}#{1,6}[ \t]+\S")


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


def group_id(chunk_ids: Iterable[str]) -> str:
    """Return a stable id for a group of chunks: 'g-' and 10 hex digits of the hash of its members."""
    return "g-" + hashlib.sha256("\n".join(sorted(chunk_ids)).encode("utf-8")).hexdigest()[:10]


def chunk_groups(index: KBIndex, near_min: float = 90.0, undone: Sequence[Sequence[str]] = (),
                 ) -> tuple[list[ChunkGroup], list[WithheldPair]]:
    """Return the groups of duplicate chunks (exact after folding, or near: MinHash LSH candidates
    with a rapidfuzz ratio of at least `near_min`, saying the same in numbers, dates, versions, codes
    and negations) and the near pairs withheld because they do not. Pairs inside a group the user
    undid are never joined again."""
    chunks = index.chunks
    # chunks are compared without their Markdown headings (a page's title before its first section
    # is no text of the section); the headings are compared apart, for what they say (a version)
    heads = [_headings(c.text) for c in chunks]
    bodies = [_body(c.text) if head else c.text for c, head in zip(chunks, heads)]
    folded = [fold(body) if head else known for body, head, known in zip(bodies, heads, index.folded)]
    ids = [c.chunk_id for c in chunks]
    refused = [set(members) for members in undone]
    # one key per scope (None: everyone, always); an unscoped snapshot compares nothing more
    scopes = [scope_key(c.scope) for c in chunks] if any(c.scope is not None for c in chunks) else None

    def allowed(a: int, b: int) -> bool:
        return not any(ids[a] in members and ids[b] in members for members in refused)

    edges: list[Edge] = []
    withheld: list[WithheldPair] = []

    def apart(a: int, b: int, score: float) -> bool:
        """Withhold a pair whose scopes differ (and say so); return whether it was."""
        if scopes is None or scopes[a] == scopes[b]:
            return False
        withheld.append(WithheldPair(a=ids[a], b=ids[b], score=round(score, 1), why="scope",
                                     differs=scope_difference(chunks[a].scope, chunks[b].scope)))
        return True

    def consider(a: int, b: int, method: str, score: float, set_aside: tuple[list, list] = ([], [])) -> None:
        if not allowed(a, b) or apart(a, b, score):
            return
        # boilerplate set aside is not compared (a footer's "© 2024" is no number of the page), nor
        # segmentation spaces ("十 万 匹" is "十万匹")
        differs = salient_difference(normalize(_without(bodies[a], set_aside[0])),
                                     normalize(_without(bodies[b], set_aside[1])))
        if differs is None and (heads[a] or heads[b]):
            differs = salient_difference(normalize(heads[a]), normalize(heads[b]))
        if differs is None:
            edges.append(Edge(ids[a], ids[b], method, score))
        else:
            withheld.append(WithheldPair(a=ids[a], b=ids[b], score=score, differs=differs))

    first: dict[str, int] = {}                  # folded text -> its first chunk
    first_scoped: dict[tuple, int] = {}         # (folded text, scope) -> its first chunk, when scoped
    unique: list[int] = []
    for position, text in enumerate(folded):
        if not text:
            continue
        if text not in first:
            first[text] = position
            unique.append(position)
            if scopes is not None:
                first_scoped[text, scopes[position]] = position
        elif scopes is None:
            consider(first[text], position, "exact", 100.0)   # folding drops punctuation: "3.2" folds like "32"
        elif (text, scopes[position]) in first_scoped:
            consider(first_scoped[text, scopes[position]], position, "exact", 100.0)
        else:
            # the same text in another scope: said apart from the text's first chunk once; the first of
            # each scope joins its own exact copies, and is compared for near ones
            first_scoped[text, scopes[position]] = position
            unique.append(position)
            if allowed(first[text], position):
                apart(first[text], position, 100.0)
    signature = signatures(index.ngrams, len(folded))
    keep = np.zeros(len(folded), dtype=bool)
    keep[unique] = True
    signature[~keep] = np.iinfo(np.uint64).max
    boilerplate = _Boilerplate(index)
    for a, b in sorted(candidate_pairs(signature)):
        if not allowed(a, b) or folded[a] == folded[b]:   # one text in two scopes: said above
            continue
        score = fuzz.ratio(folded[a], folded[b])
        if score < near_min and not _nearly_contained(folded[a], folded[b]):
            continue
        if score >= near_min and apart(a, b, score):
            continue
        comparison = compare(folded[a], folded[b], boilerplate.holds)
        if comparison.relation != "copy":
            if score >= near_min:   # alike enough to pass for copies: say why they are not
                withheld.append(WithheldPair(a=ids[a], b=ids[b], score=round(score, 1), differs=comparison.why(),
                                             why=comparison.relation))
        elif comparison.score >= near_min:
            consider(a, b, "near", comparison.score, (comparison.set_aside_a, comparison.set_aside_b))
    position = {chunk_id: n for n, chunk_id in enumerate(ids)}
    groups = []
    for cluster in clusters(edges, position):
        head = chunks[position[cluster.members[0]]].text
        groups.append(ChunkGroup(
            group_id=group_id(cluster.members), chunks=cluster.members,
            method="exact" if all(e.method == "exact" for e in cluster.edges) else "near",
            min_score=min(e.score for e in cluster.edges),
            differs=[f"{m}: {text_difference(head, chunks[position[m]].text)}" for m in cluster.members[1:]]))
    return groups, withheld


def _headings(text: str) -> str:
    """Return the Markdown heading lines of a chunk, one a line ('' when it has none)."""
    return "\n".join(line for line in text.splitlines() if _HEADING_LINE.match(line))


def _body(text: str) -> str:
    """Return a chunk's text without its Markdown heading lines."""
    return "\n".join(line for line in text.splitlines() if not _HEADING_LINE.match(line)).strip()


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


class _Boilerplate:
    """Says whether a folded text is boilerplate: at least BOILERPLATE_DOCS documents of the snapshot hold it
    at the start or the end of a chunk (a header, a footer, a closing "popular questions" block), give or
    take BOILERPLATE_EDGE folded characters; a sentence quoted in the middle of pages is not."""

    def __init__(self, index: KBIndex):
        self.index = index
        self.known: dict[str, bool] = {}

    def holds(self, run: str) -> bool:
        if run not in self.known:
            folded, chunks = self.index.folded, self.index.chunks
            docs: set[str] = set()
            for position, _ in self.index.ngrams.candidates(run, min_share=1.0, limit=len(chunks),
                                                            max_postings=len(chunks)):
                at = folded[position].find(run)
                if at >= 0 and (at <= BOILERPLATE_EDGE or at + len(run) >= len(folded[position]) - BOILERPLATE_EDGE):
                    docs.add(chunks[position].doc_id)
                    if len(docs) >= BOILERPLATE_DOCS:
                        break
            self.known[run] = len(docs) >= BOILERPLATE_DOCS
        return self.known[run]


def write_chunk_groups(index: KBIndex, groups: list[ChunkGroup], withheld: list[WithheldPair], near_min: float,
                       undone: list[ChunkGroup]) -> None:
    """Store the groups as the snapshot's evidence equivalence groups, with the withheld pairs and
    the groups undone (never formed again)."""
    with index.building():
        ChunkGroups(snapshot=index.snapshot_id, at=now(), near_min=near_min, groups=groups, withheld=withheld,
                    undone=undone).write(index.groups_path)
    index.__dict__.pop("copies", None)


def stored_groups(index: KBIndex) -> ChunkGroups | None:
    """Return the snapshot's stored duplicate groups, if check-dups --kb ran on it."""
    return ChunkGroups.read(index.groups_path) if index.groups_path.exists() else None
