"""Duplicate chunks of a KB snapshot (`check-dups --kb`): copies of one text become one evidence
equivalence group, so finding any copy finds the evidence.

A near copy is a copy only when it says the same thing. Two chunks that differ in a number, a
date, a version, a code or a negation are never joined, however alike they read: the 2017 and
2018 editions of a brochure differ only in their quotas, and the 2017 chunk must not get credit
for a 2018 question. Such pairs are reported as withheld, with what differs. Every group says what
differs between its members, and a wrong one can be undone (`undo`): it is never formed again.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Iterable, Sequence

import numpy as np
from rapidfuzz import fuzz

from curate.checks.clusters import Edge, clusters
from curate.index.kb_index import KBIndex
from curate.index.minhash import candidate_pairs, signatures
from curate.records import ChunkGroup, ChunkGroups, WithheldPair, now
from curate.text.salient import salient_difference


def text_difference(a: str, b: str, limit: int = 3, width: int = 24) -> str:
    """Return where two texts differ, as up to `limit` replacements "old → new".

    >>> text_difference("本文列出所有错误码", "本页列出所有错误码")
    "'文' → '页'"
    """
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    parts = [f"{a[i1:i2][:width]!r} → {b[j1:j2][:width]!r}" for tag, i1, i2, j1, j2 in matcher.get_opcodes()
             if tag != "equal"]
    if not parts:
        return "identical text"
    return "; ".join(parts[:limit]) + (f"; and {len(parts) - limit} more" if len(parts) > limit else "")


def group_id(chunk_ids: Iterable[str]) -> str:
    """Return a stable id for a group of chunks: 'g-' and 10 hex digits of the hash of its members."""
    return "g-" + hashlib.sha256("\n".join(sorted(chunk_ids)).encode("utf-8")).hexdigest()[:10]


def chunk_groups(index: KBIndex, near_min: float = 90.0, undone: Sequence[Sequence[str]] = (),
                 ) -> tuple[list[ChunkGroup], list[WithheldPair]]:
    """Return the groups of duplicate chunks (exact after folding, or near: MinHash LSH candidates
    with a rapidfuzz ratio of at least `near_min`, saying the same in numbers, dates, versions, codes
    and negations) and the near pairs withheld because they do not. Pairs inside a group the user
    undid are never joined again."""
    folded = index.folded
    chunks = index.chunks
    ids = [c.chunk_id for c in chunks]
    refused = [set(members) for members in undone]

    def allowed(a: int, b: int) -> bool:
        return not any(ids[a] in members and ids[b] in members for members in refused)

    edges: list[Edge] = []
    withheld: list[WithheldPair] = []

    def consider(a: int, b: int, method: str, score: float) -> None:
        if not allowed(a, b):
            return
        differs = salient_difference(chunks[a].text, chunks[b].text)
        if differs is None:
            edges.append(Edge(ids[a], ids[b], method, score))
        else:
            withheld.append(WithheldPair(a=ids[a], b=ids[b], score=score, differs=differs))

    first: dict[str, int] = {}
    unique: list[int] = []
    for position, text in enumerate(folded):
        if not text:
            continue
        if text in first:
            consider(first[text], position, "exact", 100.0)   # folding drops punctuation: "3.2" folds like "32"
        else:
            first[text] = position
            unique.append(position)
    signature = signatures(index.ngrams, len(folded))
    keep = np.zeros(len(folded), dtype=bool)
    keep[unique] = True
    signature[~keep] = np.iinfo(np.uint64).max
    for a, b in sorted(candidate_pairs(signature)):
        score = fuzz.ratio(folded[a], folded[b])
        if score >= near_min:
            consider(a, b, "near", round(score, 1))
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
