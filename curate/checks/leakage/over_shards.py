"""The copies of evaluation text in a snapshot (`kb_leaks`), found over each shard of it on an engine.

Three passes over the shards, each a function of one shard's view (`curate.index.shard_index`) and of
what every shard shares; between them the command combines what the shards found, in shard order, so the
findings are the same on every engine:

1. each item's own evidence: the chunks its evidence names (with their duplicate copies in the same
   scope) and the chunks overlapping its spans;
2. the chunks of the same folded text as those (another copy of the evidence text);
   with, beside it, each question's and long answer's best candidate chunks in each shard (by the share of
   their 4-grams), of which the best `LeakSettings.candidates` over every shard are kept;
3. the leaks of every item in each shard (`find.view_leaks`): those candidates verified where they are, its
   own evidence and whether its question and answer are copied from that evidence decided over the whole
   snapshot.

A snapshot in one shard (under 10,000 chunks) is checked in this process, as it always was. Over many
shards the same chunks are verified as in one index of the whole snapshot, so the findings are the same.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from curate.checks.leakage.accept import where_fingerprint
from curate.checks.leakage.find import (MIN_SHARE, LeakSettings, Own, extractive, long_form, matcher,
                                        taken_from_evidence, view_leaks)
from curate.engine import Engine, LocalEngine
from curate.index.kb_index import KBIndex
from curate.index.shard_index import build_lexical, map_views, shard_views
from curate.kb.scope_fields import scope_key
from curate.progress import progress
from curate.records import ChunkGroups, EvalItem, LeakFinding
from curate.text.normalize import fold

Run = Callable[[Callable, Any], list]


@dataclass(frozen=True)
class _Wanted:
    """What pass 1 looks for of one item: chunk ids (its evidence's and their copies') and spans."""

    ids: frozenset[str]
    spans: tuple[tuple[str, int, int], ...]


def kb_leaks(items: Sequence[EvalItem], index: KBIndex, settings: LeakSettings, skip_docs: set[str],
             engine: Engine | None = None) -> list[LeakFinding]:
    """Return the question, QA-pair and answer leaks of `items` in the snapshot, one per leak (the rules
    of `curate.checks.leakage.find`), its shards run on `engine` (default: the local engine)."""
    views = shard_views(index)
    engine = engine or LocalEngine()
    run = _runner(index, engine)
    if views > 1:
        build_lexical(index, engine)
    copies = index.copies if views == 1 else _raw_copies(index)
    direct = [{c for e in item.evidence for c in e.chunk_ids} for item in items]
    wanted = [_Wanted(frozenset(ids | {m for c in ids for m in copies.get(c, ())}),
                      tuple((e.doc_id, e.start, e.end) for e in item.evidence if e.doc_id is not None and e.start is not None))
              for item, ids in zip(items, direct)]
    found = _own_chunks([hit for part in run(_evidence_chunks, wanted) for hit in part], direct, copies, len(items))
    texts = [{folded for _, folded in own.values()} for own in found]
    needles = _needles(items, settings)
    parts = run(_same_text_and_candidates, (texts, [needle for _, _, needle in needles], settings.candidates))
    for part, _ in parts:
        for number, position, text, folded in part:
            found[number].setdefault(position, (text, folded))
    best = _best(np.concatenate([c for _, c in parts]), len(needles), settings.candidates)
    candidates: list[list[list[int] | None]] = [[None, None] for _ in items]
    for (number, which, _), positions in zip(needles, best):
        candidates[number][which] = positions
    owns = [Own(set(own), [own[p] for p in sorted(own)]) for own in found]
    taken = [taken_from_evidence(item, own, settings) for item, own in zip(items, owns)]
    copied = [long_form(item.reference_answer, item.language, settings)
              and extractive(item, fold(item.reference_answer or ""), own, settings) for item, own in zip(items, owns)]
    shared = (list(items), settings, set(skip_docs), [own.positions for own in owns], taken, copied, candidates,
              views == 1)
    return _one_per_copy([hit for part in run(_view_leaks, shared) for hit in part])


def _needles(items: Sequence[EvalItem], settings: LeakSettings) -> list[tuple[int, int, str]]:
    """Return (item number, 0 for its question or 1 for its answer, folded text) of every text searched for:
    questions of at least `question_min_chars` folded characters, long-form answers."""
    needles = []
    for number, item in enumerate(items):
        question = fold(item.question)
        if len(question) >= settings.question_min_chars:
            needles.append((number, 0, question))
        if long_form(item.reference_answer, item.language, settings):
            needles.append((number, 1, fold(item.reference_answer or "")))
    return needles


def _best(found: np.ndarray, count: int, limit: int) -> list[list[int]]:
    """Return, for each of `count` needles, the snapshot positions of its `limit` best candidates over every
    shard (rows of `found`: needle, position, share), by share then position: what one index of the whole
    snapshot verifies."""
    needle, position, share = found[:, 0].astype(np.int64), found[:, 1].astype(np.int64), found[:, 2]
    order = np.lexsort((position, -share, needle))
    needle, position = needle[order], position[order]
    starts = np.searchsorted(needle, np.arange(count + 1))
    return [position[a:min(b, a + limit)].tolist() for a, b in zip(starts[:-1], starts[1:])]


def _runner(index: KBIndex, engine: Engine) -> Run:
    """Return how a pass runs: on the index itself when it is one shard, else on `engine` over its shards."""
    def run(fn: Callable, shared: Any) -> list:
        return map_views(index, engine, fn, shared,
                         f"checking leakage in {index.snapshot_id} ({fn.__name__.strip('_').replace('_', ' ')})")
    return run


def _raw_copies(index: KBIndex) -> dict[str, list[str]]:
    """Chunk id -> its duplicate group as check-dups --kb stored it (scope is applied to what pass 1 finds)."""
    if not index.groups_path.exists():
        return {}
    return {c: group.chunks for group in ChunkGroups.read(index.groups_path).groups for c in group.chunks}


def _own_chunks(hits: list[tuple], direct: list[set[str]], copies: dict[str, list[str]],
                count: int) -> list[dict[int, tuple[str, str]]]:
    """Return each item's own chunks found by pass 1 (snapshot position -> (text, folded text)): a copy of
    an evidence chunk counts only in that chunk's scope (copies are interchangeable only within a scope:
    `kb_index.within_scope`)."""
    evidence: list[dict[str, object]] = [{} for _ in range(count)]
    for number, _, chunk, _, by_id in hits:
        if by_id and chunk.chunk_id in direct[number]:
            evidence[number][chunk.chunk_id] = chunk
    found: list[dict[int, tuple[str, str]]] = [{} for _ in range(count)]
    for number, position, chunk, folded, by_id in hits:
        if by_id and chunk.chunk_id not in direct[number] and not any(
                chunk.chunk_id in copies.get(c, ()) and scope_key(chunk.scope) == scope_key(e.scope)
                for c, e in evidence[number].items()):
            continue
        found[number][position] = (chunk.text, folded)
    return found


def _evidence_chunks(view: KBIndex, wanted: list[_Wanted]) -> list[tuple]:
    """Pass 1: (item number, snapshot position, chunk, folded text, found by id) of each item's evidence
    chunks (and their copies) and of the chunks overlapping its spans, among this view's own chunks."""
    hits = []
    for number, want in enumerate(wanted):
        for chunk_id in want.ids:
            position = view.position.get(chunk_id)
            if position is not None and position < view.size:
                hits.append((number, view.global_position(position), view.chunks[position], view.folded[position],
                             True))
        for doc_id, start, end in want.spans:
            for position in view.doc_positions.get(doc_id, []):
                chunk = view.chunks[position]
                if position < view.size and chunk.start is not None and chunk.start < end and chunk.end > start:
                    hits.append((number, view.global_position(position), chunk, view.folded[position], False))
    return hits


def _same_text_and_candidates(view: KBIndex, shared: tuple) -> tuple[list[tuple], np.ndarray]:
    """Pass 2: (item number, snapshot position, text, folded text) of this view's own chunks whose folded text
    is that of one of an item's evidence chunks; and the `limit` best candidates of each needle among its own
    chunks (rows: needle, snapshot position, share of the needle's 4-grams)."""
    texts, needles, limit = shared
    wanted: dict[str, list[int]] = {}
    for number, folded_texts in enumerate(texts):
        for folded in folded_texts:
            wanted.setdefault(folded, []).append(number)
    same = []
    for position in view.same_text(set(wanted)):
        text, folded = view.chunks[position].text, view.folded[position]
        same += [(number, view.global_position(position), text, folded) for number in wanted[folded]]
    rows = [(n, view.global_position(p), share)
            for n, found in enumerate(view.ngrams.candidates_many(needles, min_share=MIN_SHARE, limit=limit))
            for p, share in found]
    return same, np.array(rows, dtype=np.float64).reshape(-1, 3)


def _view_leaks(view: KBIndex, shared: tuple) -> list[tuple]:
    """Pass 3: (item number, finding, the text it copies, snapshot positions of its chunks) of every leak
    in this view."""
    items, settings, skip_docs, owns, taken, copied, candidates, alone = shared
    find = matcher(view, skip_docs, settings)
    hits = []
    shown = progress(list(enumerate(items)), "checking leakage", unit="item") if alone else enumerate(items)
    for number, item in shown:
        mine = tuple(None if positions is None else _own_of(view, positions) for positions in candidates[number])
        if not any(mine):
            continue   # none of its candidates here (None: a text not searched): nothing to verify
        own = {p for p in (view.in_view(g) for g in owns[number]) if p is not None}
        for finding, text in view_leaks(item, own, taken[number], copied[number], view, find, settings, mine):
            places = [view.position[c] for c in finding.chunk_ids]
            finding.where_sha256 = where_fingerprint([view.chunks[p] for p in places])
            hits.append((number, finding, text, [view.global_position(p) for p in places]))
    return hits


def _own_of(view: KBIndex, positions: list[int]) -> list[int]:
    """Return the positions in this view of the candidates among its own chunks (each chunk is verified by
    the one shard that holds it), in their order."""
    local = (view.in_view(g) for g in positions)
    return [p for p in local if p is not None and p < view.size]


def _one_per_copy(hits: list[tuple]) -> list[LeakFinding]:
    """Return one finding per leak: findings of one item, kind and copied text (the folded sentence
    holding a question, the answer) are one, the first in snapshot order, listing the others' chunks in
    `copies`; an answer found where a question of the item was (a QA pair there) is that finding."""
    questions = {(number, tuple(f.chunk_ids)) for number, f, _, _ in hits if f.kind != "answer_in_kb"}
    merged: dict[tuple, LeakFinding] = {}
    for number, finding, copied, _ in sorted(hits, key=lambda hit: (hit[0], hit[3])):
        if finding.kind == "answer_in_kb" and (number, tuple(finding.chunk_ids)) in questions:
            continue
        key = (number, finding.kind, copied)
        if key in merged:
            first = merged[key]
            first.copies += [c for c in finding.chunk_ids if c not in first.chunk_ids and c not in first.copies]
        else:
            merged[key] = finding
    return list(merged.values())
