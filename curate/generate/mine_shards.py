"""Mining for `curate generate` over a snapshot in shards on an engine (`mine_index`): the pairs `mine` finds over
every chunk in one process, in the same order, with the same ids and scores, and the same counts of what was left
out.

Each shard's worker sketches its own chunks (`curate.generate.mine_sketch`: passages, their digests and MinHash
bands, the codes its lines state). The command joins the sketches language by language as one process sees the
snapshot: the first passage of a folded text in snapshot order stands for it, a shape is boilerplate by the
documents of every shard, the candidates are the pairs of those first passages sharing a band (`band_pairs`:
`candidate_pairs`, sorted), a code family is every code any shard states, and a code's passage is the one of least
(offset, snapshot position) about it that does not name the other code. Then it reads the chunks of those pairs
only, from their shards, and judges the near-copy candidates on the engine in batches.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rapidfuzz import fuzz

from curate.engine import Engine, LocalEngine
from curate.generate.mine import (BANDS, NEAR_MIN, NEVER_APART, Mined, boilerplate_shapes, code_pair, code_pairs,
                                  copy_pair, mine, shape)
from curate.generate.mine_sketch import MineSketch, mine_sketch
from curate.generate.passages import ChunkPassage
from curate.index.kb_index import KBIndex
from curate.index.minhash import band_pairs
from curate.index.shard_index import map_views, shard_views
from curate.records import Chunk, MinedPair
from curate.text.normalize import fold

BATCH = 20_000   # near-copy candidates judged per task of an engine
Span = tuple[int, int, int]   # a passage: its chunk's snapshot position, its start and end in the chunk's text


@dataclass
class _Language:
    """What the sketches say of one language: its near-copy candidates and its near codes."""

    spans: np.ndarray           # (u, 3) int64: each passage first of its folded text, in snapshot order
    pairs: np.ndarray           # (c, 2): the candidates, numbers into `spans`, sorted
    boilerplate: set[bytes]     # digests of the shapes that are boilerplate
    shapes: np.ndarray          # (u,) S16: the digest of each passage's shape
    codes: list[tuple[str, str, Span | None, Span | None]]   # each near-code pair and the passage of each code


def mine_index(index: KBIndex, engine: Engine | None = None) -> Mined:
    """Return `mine(index.chunks)`: in this process for a snapshot in one shard, else over its shards on `engine`
    (default: the local engine), reading only the chunks of the pairs it judges."""
    if shard_views(index) == 1:
        return mine(index.chunks)
    engine = engine or LocalEngine()
    sketches = map_views(index, engine, mine_sketch, None, f"finding passages in {index.snapshot_id}")
    languages = [_language(sketches, language) for language in sorted({n for s in sketches for n in s.languages})]
    del sketches
    chunks: dict[int, Chunk] = {}
    for part in map_views(index, engine, _own_chunks, _wanted(languages), f"reading passages of {index.snapshot_id}"):
        chunks.update(part)
    judged = _judged(index, engine, languages, chunks)
    mined = Mined()
    for found, outcomes in zip(languages, judged):
        for outcome in outcomes:
            if isinstance(outcome, str):
                mined.left_out[outcome] += 1
            elif outcome is not None:
                mined.pairs.append(outcome)
        for x, y, a, b in found.codes:
            if a is None or b is None:
                mined.left_out[NEVER_APART] += 1
            else:
                mined.pairs.append(code_pair(chunks, _passage(chunks, a), _passage(chunks, b), x, y))
    return mined


def _wanted(languages: list[_Language]) -> np.ndarray:
    """Return the snapshot positions of the chunks the pairs of every language name, sorted."""
    copies = [found.spans[np.unique(found.pairs), 0] for found in languages]
    codes = [span[0] for found in languages for *_, a, b in found.codes for span in (a, b) if span is not None]
    return np.unique(np.concatenate([np.array(codes, dtype=np.int64), *copies]))


def _passage(chunks: dict[int, Chunk], span: Span) -> ChunkPassage:
    position, start, end = span
    return ChunkPassage(position, start, end, fold(chunks[position].text[start:end]))


def _language(sketches: list[MineSketch], language: str) -> _Language:
    """Return what the sketches say of `language`, as one process over the snapshot would find it."""
    spans, digests, shapes, docs, bands, documents = [], [], [], [], [], set()
    where: dict[str, list[tuple[int, int, int, int, frozenset[str]]]] = {}   # code -> (offset, *span, names)
    codes: set[str] = set()
    for s in sketches:
        if language not in s.languages:
            continue
        number = s.languages.index(language)
        ours = s.chunks[:, 0] == number
        documents.update(s.doc_ids[d] for d in np.unique(s.chunks[ours, 1]).tolist())
        kept = ours[s.passages[:, 0]]
        at = s.passages[kept].astype(np.int64)
        at[:, 0] += s.first
        spans.append(at)
        digests.append(s.digests[kept])
        shapes.append(s.shapes[kept])
        docs.append(np.array(s.doc_ids, dtype=object)[s.chunks[s.passages[kept, 0], 1]])
        bands.append((s.bands, kept))   # only the rows of first passages are gathered below
        codes.update(s.codes[c] for c in s.found[s.found[:, 0] == number, 1].tolist())
        names: dict[int, set[str]] = {}
        for row, other in s.named.tolist():
            names.setdefault(row, set()).add(s.codes[other])
        for row, (code, chunk, start, end, offset) in enumerate(s.stated.tolist()):
            if ours[chunk]:
                where.setdefault(s.codes[code], []).append(
                    (offset, s.first + chunk, start, end, frozenset(names.get(row, ()))))
    _, first = np.unique(np.concatenate(digests), return_index=True)   # the first of each folded text
    first.sort()
    shapes_of = np.concatenate(shapes)[first]
    in_docs: dict[bytes, set[str]] = {}
    for digest, doc in zip(shapes_of.tolist(), np.concatenate(docs)[first].tolist()):
        in_docs.setdefault(digest, set()).add(doc)
    pairs = band_pairs(_rows(bands, first), np.ones(len(first), dtype=bool))
    found = [(x, y, _apart(where, x, y), _apart(where, y, x)) for x, y in code_pairs(codes)]
    return _Language(np.concatenate(spans)[first], pairs, boilerplate_shapes(in_docs, len(documents)), shapes_of, found)


def _rows(parts: list[tuple[np.ndarray, np.ndarray]], rows: np.ndarray) -> np.ndarray:
    """Return `rows` (sorted) of the concatenation of each part's array's kept rows, without making the
    concatenation (the band hashes of every passage of a language, most of them later copies)."""
    found, at = [np.zeros((0, BANDS), dtype=np.uint64)], 0
    for array, kept in parts:
        own = np.flatnonzero(kept)
        lo, hi = np.searchsorted(rows, [at, at + len(own)])
        found.append(array[own[rows[lo:hi] - at]])
        at += len(own)
    return np.concatenate(found)


def _apart(where: dict[str, list[tuple[int, int, int, int, frozenset[str]]]], code: str, other: str) -> Span | None:
    """Return the passage of least (offset, snapshot position, start) about `code` that does not name `other`
    (`curate.generate.mine._stated_apart`), or None."""
    apart = [(offset, position, start, end) for offset, position, start, end, names in where.get(code, [])
             if other not in names]
    return tuple(min(apart)[1:]) if apart else None


def _own_chunks(view: KBIndex, wanted: np.ndarray) -> dict[int, Chunk]:
    """Return the chunks of this view's own that are `wanted` (snapshot positions, sorted)."""
    first = view.global_position(0) if view.size else 0
    lo, hi = np.searchsorted(wanted, [first, first + view.size])
    return {g: view.chunks[g - first] for g in wanted[lo:hi].tolist()}


def _judged(index: KBIndex, engine: Engine, languages: list[_Language], chunks: dict[int, Chunk],
            ) -> list[list[MinedPair | str | None]]:
    """Return, per language, the outcome of each near-copy candidate in order: the pair, why it is left out, or
    None (not alike enough). Judged in batches on `engine`, the passages and chunks sent to each worker once."""
    shared = []
    for found in languages:
        involved = np.unique(found.pairs).tolist()
        passages = {k: _passage(chunks, tuple(found.spans[k].tolist())) for k in involved}
        boilerplate = {shape(passages[k].folded) for k in involved if found.shapes[k] in found.boilerplate}
        shared.append((found.pairs, passages, boilerplate))
    tasks = [(n, at, min(at + BATCH, len(found.pairs))) for n, found in enumerate(languages)
             for at in range(0, len(found.pairs), BATCH)]
    outcomes: list[list[MinedPair | str | None]] = [[] for _ in languages]
    if tasks:
        results = engine.map(_judge_batch, tasks, shared=(shared, chunks), label=f"mining {index.snapshot_id}",
                             unit="batch")
        for (n, _, _), result in zip(tasks, results):
            outcomes[n] += result
    return outcomes


def _judge_batch(task: tuple[int, int, int], shared) -> list[MinedPair | str | None]:
    """Judge the near-copy candidates `task` names (a language, a range of its candidates)."""
    languages, chunks = shared
    n, start, end = task
    pairs, passages, boilerplate = languages[n]
    outcomes: list[MinedPair | str | None] = []
    for x, y in pairs[start:end].tolist():
        a, b = passages[x], passages[y]
        score = fuzz.ratio(a.folded, b.folded)
        outcomes.append(None if score < NEAR_MIN else copy_pair(chunks, a, b, score, boilerplate))
    return outcomes
