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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from curate.checks.clusters import Edge, clusters
from curate.checks.copy_pairs import APART, EXACT, NEAR, Piece, Rules, judge, text_difference
from curate.checks.copy_sketch import Sketch, sketch
from curate.checks.copy_rule import BOILERPLATE_DOCS, BOILERPLATE_EDGE
from curate.engine import Engine, LocalEngine
from curate.index.kb_index import KBIndex
from curate.index.minhash import band_pairs
from curate.index.shard_index import build_lexical, map_views, shard_views
from curate.kb.scope_fields import scope_key
from curate.records import ChunkGroup, ChunkGroups, WithheldPair, now

BATCH = 20_000   # pairs judged per task of an engine


def group_id(chunk_ids: Iterable[str]) -> str:
    """Return a stable id for a group of chunks: 'g-' and 10 hex digits of the hash of its members."""
    return "g-" + hashlib.sha256("\n".join(sorted(chunk_ids)).encode("utf-8")).hexdigest()[:10]


def chunk_groups(index: KBIndex, near_min: float = 90.0, undone: Sequence[Sequence[str]] = (),
                 engine: Engine | None = None) -> tuple[list[ChunkGroup], list[WithheldPair]]:
    """Return the groups of duplicate chunks (exact after folding, or near: MinHash LSH candidates
    with a rapidfuzz ratio of at least `near_min`, saying the same in numbers, dates, versions, codes
    and negations) and the near pairs withheld because they do not. Pairs inside a group the user
    undid are never joined again. A snapshot in many shards is sketched and judged on `engine` (default:
    the local engine); the groups are the same on every engine and in one view."""
    engine = engine or (LocalEngine() if shard_views(index) > 1 else None)
    if engine is not None:
        build_lexical(index, engine)   # once: every pass below reads the shards' lexical indexes
    sketches = map_views(index, engine, sketch, None, f"finding copies in {index.snapshot_id}")
    rules = Rules(near_min, tuple(frozenset(members) for members in undone), any(s.scoped for s in sketches), {})
    actions = _actions(sketches)
    del sketches
    pieces = _pieces(index, engine, actions)
    edges: list[Edge] = []
    withheld: list[WithheldPair] = []
    again = _Again(actions)
    while len(actions):
        outcomes = _judged(index, engine, actions, pieces, rules)
        for n in sorted(outcomes):
            edges += outcomes[n][0]
            withheld += outcomes[n][1]
        actions = again.after(actions, outcomes)
    return _groups(edges, pieces), withheld


KINDS = (EXACT, APART, NEAR)


@dataclass
class _Actions:
    """The pairs to judge, in order: what to judge each for (a number into KINDS) and its two snapshot
    positions."""

    kinds: np.ndarray
    a: np.ndarray
    b: np.ndarray

    def __len__(self) -> int:
        return len(self.kinds)

    def batch(self, numbers: np.ndarray) -> list[tuple[str, int, int]]:
        return [(KINDS[k], a, b) for k, a, b in zip(self.kinds[numbers].tolist(), self.a[numbers].tolist(),
                                                     self.b[numbers].tolist())]


def _actions(sketches: list[Sketch]) -> _Actions:
    """Return the pairs to judge, in the order one index of the snapshot judges them: each chunk after the
    first of its text (and scope) against that first, then the near candidates among the first of each."""
    codes: dict[Any, int] = {}
    scope = np.concatenate([np.zeros(0, dtype=np.int64)] + [
        np.array([codes.setdefault(scope_key(scope), len(codes)) for scope in s.scopes], dtype=np.int64)[s.codes]
        for s in sketches if len(s.codes)]).tolist()
    scoped = any(s.scoped for s in sketches)
    digests = np.concatenate([s.digests for s in sketches])
    empty = np.concatenate([s.empty for s in sketches])
    kinds: list[int] = []
    a: list[int] = []
    b: list[int] = []
    first: dict[bytes, int] = {}            # text -> its first chunk
    first_scoped: dict[tuple, int] = {}     # (text, scope) -> its first chunk, when scoped
    unique = np.zeros(len(digests), dtype=bool)
    texts = digests.tolist()
    for position in np.flatnonzero(~empty).tolist():
        text = texts[position]
        if text not in first:
            first[text] = position
            unique[position] = True
            if scoped:
                first_scoped[text, scope[position]] = position
            continue
        if not scoped:
            kind, earlier = 0, first[text]   # EXACT: folding drops punctuation, "3.2" folds like "32"
        elif (text, scope[position]) in first_scoped:
            kind, earlier = 0, first_scoped[text, scope[position]]
        else:
            # the same text in another scope: said apart from the text's first chunk once; the first of each
            # scope joins its own exact copies, and is compared for near ones
            first_scoped[text, scope[position]] = position
            unique[position] = True
            kind, earlier = 1, first[text]   # APART
        kinds.append(kind)
        a.append(earlier)
        b.append(position)
    del first, first_scoped, texts
    pairs = band_pairs(np.concatenate([s.bands for s in sketches]), unique)
    pairs = pairs[digests[pairs[:, 0]] != digests[pairs[:, 1]]]   # one text in two scopes: said above
    return _Actions(np.array(kinds + [2] * len(pairs), dtype=np.int8), np.concatenate([np.array(a, dtype=np.int64), pairs[:, 0]]),
                    np.concatenate([np.array(b, dtype=np.int64), pairs[:, 1]]))


class _Again:
    """What to judge again after a round. The exact copies of one text withheld from its first chunk (a number
    or a heading that differs) are compared with the first of them, which stands for the text from then on:
    two copies that agree are joined whatever chunk came first (a page under a "2026" heading must not keep
    the page's plain copies apart), and the near candidates of the text's first chunk are compared with it."""

    def __init__(self, first: _Actions):
        near = first.kinds == 2
        self.near_a, self.near_b = first.a[near], first.b[near]
        self.stands: dict[int, list[int]] = {}   # a text's first chunk -> the copies that stand for it after it
        self.root: dict[int, int] = {}           # such a copy -> the text's first chunk

    def after(self, actions: _Actions, outcomes: dict[int, tuple[list[Edge], list[WithheldPair]]]) -> _Actions:
        held: dict[int, list[int]] = {}
        for n, (found, refused) in outcomes.items():
            if actions.kinds[n] == 0 and refused and not found:
                held.setdefault(int(actions.a[n]), []).append(int(actions.b[n]))
        exact, new = [], {}
        for earlier in sorted(held):
            copies = sorted(held[earlier])
            root = self.root.get(earlier, earlier)
            self.root[copies[0]] = root
            self.stands.setdefault(root, []).append(copies[0])
            new[copies[0]] = root
            exact += [(copies[0], other) for other in copies[1:]]
        roots = np.array(sorted(set(new.values())), dtype=np.int64)
        touched = np.isin(self.near_a, roots) | np.isin(self.near_b, roots)
        near = sorted({(min(p, q), max(p, q)) for x, y in zip(self.near_a[touched].tolist(), self.near_b[touched].tolist())
                       for p in [x, *self.stands.get(x, [])] for q in [y, *self.stands.get(y, [])]
                       if p in new or q in new})
        pairs = exact + near
        return _Actions(np.array([0] * len(exact) + [2] * len(near), dtype=np.int8),
                        np.array([a for a, _ in pairs], dtype=np.int64), np.array([b for _, b in pairs], dtype=np.int64))


def _pieces(index: KBIndex, engine: Engine | None, actions: _Actions) -> dict[int, Piece]:
    """Return what the judge reads of each chunk the actions name, by snapshot position, read by its shard."""
    wanted = np.unique(np.concatenate([actions.a, actions.b]))
    found: dict[int, Piece] = {}
    for part in map_views(index, engine, _own_pieces, wanted, f"reading copies in {index.snapshot_id}"):
        found.update(part)
    return found


def _own_pieces(view: KBIndex, wanted: np.ndarray) -> dict[int, Piece]:
    first = view.global_position(0) if view.size else 0
    lo, hi = np.searchsorted(wanted, [first, first + view.size])
    pieces = {}
    for g in wanted[lo:hi].tolist():
        chunk = view.chunks[g - first]
        pieces[g] = Piece(chunk.chunk_id, chunk.text, chunk.scope)
    return pieces


def _judged(index: KBIndex, engine: Engine | None, actions: _Actions, pieces: dict[int, Piece],
            rules: Rules) -> dict[int, tuple[list[Edge], list[WithheldPair]]]:
    """Return the outcome of every action that found something, by its number: judged in batches (on `engine`
    over many shards: the actions and pieces sent to each worker once, each task a range of them), the pairs
    that asked about runs not known judged again once the shards have said which are boilerplate."""
    found: dict[int, tuple[list[Edge], list[WithheldPair]]] = {}
    todo = np.arange(len(actions))
    while len(todo):
        batches = [todo[at:at + BATCH] for at in range(0, len(todo), BATCH)]
        shared = (actions, pieces, rules)
        if engine is None:
            results = [_judge_batch(batch, shared) for batch in batches]
        else:
            results = engine.map(_judge_batch, batches, shared=shared, label=f"judging copies in {index.snapshot_id}",
                                 unit="batch")
        pending: list[int] = []
        asked: set[str] = set()
        for outcomes, left, runs in results:
            found.update(outcomes)
            pending += left
            asked |= runs
        todo = np.array(pending, dtype=np.int64)
        runs = sorted(asked - rules.known.keys())
        if len(todo) and not runs:
            raise RuntimeError("pairs left pending with every run they asked about known")
        if runs:
            known = {**rules.known, **_boilerplate(index, engine, runs)}
            rules = Rules(rules.near_min, rules.refused, rules.scoped, known)
    return found


def _judge_batch(numbers: np.ndarray, shared: tuple[_Actions, dict[int, Piece], Rules],
                 ) -> tuple[dict[int, tuple[list[Edge], list[WithheldPair]]], list[int], set[str]]:
    """Judge the actions `numbers`; return the outcomes that found something, the actions left pending and the
    runs they asked about."""
    actions, pieces, rules = shared
    batch = actions.batch(numbers)
    judged = judge(batch, {p: pieces[p] for _, a, b in batch for p in (a, b)}, rules)
    found = {n: outcome for n, outcome in zip(numbers.tolist(), judged.outcomes) if outcome and (outcome[0] or outcome[1])}
    return found, [n for n, outcome in zip(numbers.tolist(), judged.outcomes) if outcome is None], judged.asked


def _boilerplate(index: KBIndex, engine: Engine | None, runs: list[str]) -> dict[str, bool]:
    """Return whether each run is boilerplate: at least BOILERPLATE_DOCS documents of the snapshot hold it at
    the start or the end of a chunk (a header, a footer, a closing "popular questions" block), give or take
    BOILERPLATE_EDGE folded characters; a sentence quoted in the middle of pages is not."""
    docs: list[set[str]] = [set() for _ in runs]
    for part in map_views(index, engine, _edge_docs, runs, f"finding boilerplate in {index.snapshot_id}"):
        for held, found in zip(docs, part):
            held |= found
    return {run: len(held) >= BOILERPLATE_DOCS for run, held in zip(runs, docs)}


def _edge_docs(view: KBIndex, runs: list[str]) -> list[set[str]]:
    """Return, per run, up to BOILERPLATE_DOCS documents of this view's own chunks holding it at an edge."""
    found = []
    for run in runs:
        docs: set[str] = set()
        for position in view.ngrams.holders_of_rarest(run).tolist():
            text = view.folded[position]
            at = text.find(run)
            if at >= 0 and (at <= BOILERPLATE_EDGE or at + len(run) >= len(text) - BOILERPLATE_EDGE):
                docs.add(view.doc_of(position))
                if len(docs) >= BOILERPLATE_DOCS:
                    break
        found.append(docs)
    return found


def _groups(edges: list[Edge], chunks: dict[int, Piece]) -> list[ChunkGroup]:
    """Return the groups the edges form, members in snapshot order, each saying how it differs from the first."""
    position = {chunk.chunk_id: p for p, chunk in chunks.items()}
    text = {chunk.chunk_id: chunk.text for chunk in chunks.values()}
    groups = []
    for cluster in clusters(edges, position):
        head = text[cluster.members[0]]
        groups.append(ChunkGroup(
            group_id=group_id(cluster.members), chunks=cluster.members,
            method="exact" if all(e.method == "exact" for e in cluster.edges) else "near",
            min_score=min(e.score for e in cluster.edges),
            differs=[f"{m}: {text_difference(head, text[m])}" for m in cluster.members[1:]]))
    return groups


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
