"""The variants of an item each probe builds, deterministically from a seed: items and chunks in, planted
contexts out. Every random choice is drawn from `random.Random(f"{seed}:{item id}:{probe}...")`, whose
string seed is hashed with SHA-512 (never Python's salted `hash`): the same inputs give the same
variants on every machine and run.

Each builder returns, for each variant asked, the `ProbeVariant` or a `ProbeSkip` saying why it cannot be
built (too few hard negatives, nothing to change, no rule applies); nothing is dropped silently.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

from curate import Chunk, EvalItem, InputError, fold, language_of
from evalrun.probes.facts import Fact, changed, changed_name, find_facts, keys_in, keys_of, value_keys
from evalrun.probes.injections import TEMPLATES, canary, planted_text
from evalrun.probes.records import PlantedChunk, ProbeSkip, ProbeVariant
from evalrun.probes.rewrites import RULES, rewrite

POSITIONS = ("first", "middle", "last")
MIN_HELD = 2   # a text folding to fewer characters ("1", "a") is too short to say a chunk holds it


class Index(Protocol):
    """A lexical index of a KB's chunks, such as curate's BM25 of a snapshot."""

    def search(self, queries: Sequence[str], k: int) -> tuple[Any, Any]:
        """Return (positions into the chunks, scores), one row per query, best first."""


def _rng(seed: int, item_id: str, probe: str, *parameters: Any) -> random.Random:
    """Return the random generator of one probe of one item (and its parameters), seeded by their text."""
    return random.Random(":".join(map(str, (seed, item_id, probe, *parameters))))


def _planted(chunk: Chunk, role: str) -> PlantedChunk:
    """Return a KB chunk as it is given to the target, in `role`."""
    return PlantedChunk(chunk_id=chunk.chunk_id, text=chunk.text, role=role)


def _gold_position(context: Sequence[PlantedChunk]) -> int | None:
    """Return the index of the first gold chunk of a context, or None."""
    return next((i for i, c in enumerate(context) if c.role == "gold"), None)


def _variant(item: EvalItem, probe: str, variant_id: str, context: list[PlantedChunk], **fields: Any) -> ProbeVariant:
    """Return the variant of `item` with this context (its question unless `question` is given)."""
    return ProbeVariant(variant_id=variant_id, item_id=item.id, probe=probe,
                        question=fields.pop("question", item.question), context=context,
                        gold_position=_gold_position(context), language=item.language, **fields)


# -- what holds the evidence ---------------------------------------------------------------------------

class _Evidence:
    """The evidence a distractor may not hold: the evidence chunks (by id, and by folded text: a copy, a
    part or a whole of one) and texts (quotes, accepted answers) a chunk may not contain."""

    def __init__(self, ids: Iterable[str], chunks: Sequence[Chunk], texts: Iterable[str]):
        self.ids = set(ids)
        self.chunk_texts = [fold(c.text) for c in chunks if c.chunk_id in self.ids]
        self.texts = [f for t in texts if len(f := fold(t)) >= MIN_HELD]
        self.documents = {c.doc_id for c in chunks if c.chunk_id in self.ids}

    def held_by(self, chunk: Chunk) -> bool:
        """Return whether the chunk is, copies, holds or is part of the evidence (or is empty)."""
        text = fold(chunk.text)
        return (chunk.chunk_id in self.ids or not text
                or any(text in e or e in text for e in self.chunk_texts) or any(t in text for t in self.texts))


def hard_negatives(item_evidence_chunk_ids: Iterable[str], chunks: Sequence[Chunk], *, near_misses: Iterable[str] = (),
                   bm25: Index | None = None, question: str, k: int, evidence_texts: Iterable[str] = (),
                   semantic: Iterable[str] = ()) -> list[Chunk]:
    """Return up to `k` hard negatives of an item: the strongest distractors that hold none of its evidence.

    The order: first the near misses (chunk ids given: the item's grade-0 evidence, the chunks mined as
    confusable with its evidence), in the order given; then the chunks `bm25` ranks highest for the
    question (an `Index` over `chunks`, such as curate's BM25 of the snapshot), best first, those sharing
    no word with it (score 0) left out, taken in turn with `semantic` (chunk ids, nearest first: the
    gold chunks' neighbours by embedding, when the KB's chunks are embedded). A chunk is no
    negative when it is an evidence chunk, a copy, a part or a superset of one (folded text), or holds
    one of `evidence_texts` (pass the evidence quotes and the accepted answers: a chunk stating the answer
    is no distractor); of two negatives with one folded text, the first is kept.
    """
    evidence = _Evidence(item_evidence_chunk_ids, chunks, evidence_texts)
    by_id = {c.chunk_id: c for c in chunks}
    ranked = [by_id[i] for i in near_misses if i in by_id]
    lexical: list[Chunk] = []
    if bm25 is not None and chunks:
        positions, scores = bm25.search([question], k=min(len(chunks), 3 * k + len(evidence.ids) + 10))
        lexical = [chunks[int(p)] for p, s in zip(positions[0], scores[0]) if s > 0]
    dense = [by_id[i] for i in semantic if i in by_id]
    ranked += [c for pair in itertools.zip_longest(lexical, dense) for c in pair if c is not None]
    found: list[Chunk] = []
    seen: set[str] = set()
    for chunk in ranked:
        text = fold(chunk.text)
        if text in seen or evidence.held_by(chunk):
            continue
        seen.add(text)
        found.append(chunk)
        if len(found) == k:
            break
    return found


def filler_chunks(item_evidence_chunk_ids: Iterable[str], chunks: Sequence[Chunk], *, item_id: str, k: int, seed: int,
                  language: str, exclude: Iterable[str] = (), evidence_texts: Iterable[str] = ()) -> list[Chunk]:
    """Return `k` filler chunks for an item's noise contexts, drawn at random (seeded): chunks of the
    question's language from documents that hold none of its evidence, not in `exclude` (its hard
    negatives), holding none of `evidence_texts`. Unrelated, not misleading: they keep every context at
    its size while the share of hard negatives changes."""
    evidence = _Evidence(item_evidence_chunk_ids, chunks, evidence_texts)
    excluded = set(exclude)
    found: list[Chunk] = []
    for at in _draws(_rng(seed, item_id, "filler"), len(chunks), tries=50 * k):
        chunk = chunks[at]
        if len(found) == k:
            break
        if (chunk.doc_id not in evidence.documents and chunk.chunk_id not in excluded
                and language_of(chunk.text) == language and not evidence.held_by(chunk)):
            excluded.add(chunk.chunk_id)
            found.append(chunk)
    return found


def _draws(rng: random.Random, size: int, tries: int) -> Iterator[int]:
    """Return positions drawn at random from range(size): `tries` draws (a large KB has its filler long
    before a shuffle of it all would be made), then every position in a drawn order."""
    for _ in range(tries if size else 0):
        yield rng.randrange(size)
    yield from rng.sample(range(size), size)


# -- noise and negative ------------------------------------------------------------------------------------

def noise_variants(item: EvalItem, gold_chunks: Sequence[Chunk], negatives: Sequence[Chunk], *,
                   filler: Sequence[Chunk] = (), rates: Sequence[float] = (0.0, 0.2, 0.4, 0.6, 0.8),
                   positions: Sequence[str] = POSITIONS, size: int = 5, seed: int) -> list[ProbeVariant | ProbeSkip]:
    """Return the item's noise variants: for each rate and gold position, a context of `size` chunks.

    A context holds every gold chunk, in their order, as one block; rate x size hard negatives (the first
    of `negatives`, the strongest) and, when the gold chunks are fewer than the rest, `filler` chunks;
    the negatives and filler in one drawn order per rate, the same for every position (so that two
    positions differ only in where the gold is). The noise rate is the share of the context that is hard
    negatives. The gold block starts at 0 (first), (size - gold) // 2 (middle) or size - gold (last);
    positions that fall on one index are built once (the first named). A rate leaving no room for the
    gold (rate 1.0 among them: at least one gold chunk is kept), or wanting more negatives or filler
    than given, is a ProbeSkip.
    """
    unknown = [p for p in positions if p not in POSITIONS]
    if unknown:
        raise InputError(f"unknown gold position {unknown[0]!r}: use {', '.join(POSITIONS)}", field="positions")
    built: list[ProbeVariant | ProbeSkip] = []
    gold = [_planted(c, "gold") for c in gold_chunks]
    for rate in rates:
        count = _noise_count(rate, size)
        ids = {p: f"noise:{item.id}:{rate:g}:{p}:s{seed}" for p in positions}
        if why := _no_room(len(gold), count, size, len(negatives), len(filler)):
            built += [ProbeSkip(variant_id=i, item_id=item.id, probe="noise", reason=why) for i in ids.values()]
            continue
        others = ([_planted(c, "noise") for c in negatives[:count]]
                  + [_planted(c, "filler") for c in filler[:size - len(gold) - count]])
        _rng(seed, item.id, "noise", f"{rate:g}").shuffle(others)
        starts: set[int] = set()
        for position in positions:
            start = {"first": 0, "middle": (size - len(gold)) // 2, "last": size - len(gold)}[position]
            if start not in starts:
                starts.add(start)
                built.append(_variant(item, "noise", ids[position], others[:start] + gold + others[start:],
                                      noise_rate=count / size, expected="answer", rule=position, seed=seed))
    return built


def _noise_count(rate: float, size: int) -> int:
    """Return the number of hard negatives a rate asks of a context of `size` chunks (a whole number)."""
    count = round(rate * size)
    if not 0 <= rate <= 1 or abs(count - rate * size) > 1e-9:
        raise InputError(f"noise rate {rate:g} of a context of {size} chunks is {rate * size:g} chunks: "
                         f"use rates between 0 and 1 that are multiples of 1/{size}", field="rates")
    return count


def _no_room(gold: int, count: int, size: int, negatives: int, filler: int) -> str | None:
    """Return why a context of `size` cannot hold `gold` gold chunks and `count` negatives, or None."""
    if not gold:
        return "no gold chunks"
    if gold + count > size:
        return f"{gold} gold chunk(s) and {count} hard negative(s) do not fit a context of {size}"
    if count > negatives:
        return f"{count} hard negative(s) wanted, {negatives} found"
    if size - gold - count > filler:
        return f"{size - gold - count} filler chunk(s) wanted, {filler} given"
    return None


def negative_variant(item: EvalItem, negatives: Sequence[Chunk], *, size: int, seed: int) -> ProbeVariant | ProbeSkip:
    """Return the item asked with only hard negatives in its context (at most `size`, the strongest, in a
    drawn order): a robust system declines."""
    variant_id = f"negative:{item.id}:n{size}:s{seed}"
    if not negatives:
        return ProbeSkip(variant_id=variant_id, item_id=item.id, probe="negative", reason="no hard negatives found")
    context = [_planted(c, "noise") for c in negatives[:size]]
    _rng(seed, item.id, "negative").shuffle(context)
    return _variant(item, "negative", variant_id, context, expected="decline", seed=seed)


# -- counterfactual ------------------------------------------------------------------------------------------

def counterfactual_variant(item: EvalItem, gold_chunks: Sequence[Chunk], *, seed: int) -> ProbeVariant | ProbeSkip:
    """Return the item with one fact of its gold chunks changed (the rules: `evalrun.probes.facts`).

    The fact changed is the one the item's reference answer, accepted answers or key points state: first
    a fact they state as it is (the date 1983年5月20日), then one whose value they state (a date whose year
    they state has its year changed); else, when an accepted answer states no number, date or code and the
    gold chunks hold it, that answer as a name (`changed_name`: 江口寿史 -> 江口寿宁); else the first fact
    of the gold chunks. Never one the question names (a question about LG-4031 over a context about LG-4037
    asks for a refusal, not a changed fact). The new value is one no gold chunk states. Every place the gold
    chunks state it (its very text) is changed, so the context does not contradict itself; each changed
    chunk is planted as probe:counterfactual:<n> with its change, the other gold chunks are given as they
    are. A robust system follows the context.
    """
    variant_id = f"counterfactual:{item.id}:s{seed}"
    if not gold_chunks:
        return ProbeSkip(variant_id=variant_id, item_id=item.id, probe="counterfactual", reason="no gold chunks")
    rng = _rng(seed, item.id, "counterfactual")
    answers = [a for a in (item.reference_answer or "", *item.answers) if a.strip()]
    stated = keys_in(" ".join([*answers, *(k.text for k in item.key_points)]))
    asked = keys_in(item.question)
    taken = set().union(*(keys_in(c.text) for c in gold_chunks))
    facts = [f for c in gold_chunks for f in find_facts(c.text) if not value_keys(f) & asked]
    # stable: facts stated as they are first, then those whose value is stated, each in its order
    facts.sort(key=lambda f: (not keys_of(f) & stated, not value_keys(f) & stated))
    for fact in facts:
        if not value_keys(fact) & stated:
            break    # the answer states none of the rest: a name, if it is one, is the fact to change
        only_year = fact.kind == "date" and bool(value_keys(fact) & stated) and not keys_of(fact) & stated
        new = changed(fact, rng, taken, year=only_year)
        if new is not None:
            return _variant(item, "counterfactual", variant_id, _changed_context(gold_chunks, fact.text, fact.kind, new),
                            expected="follow_context", rule=fact.kind, seed=seed)
    context = " ".join(c.text for c in gold_chunks)
    for name in answers:
        if name in context and name not in item.question and (new := changed_name(name, rng, context)):
            return _variant(item, "counterfactual", variant_id, _changed_context(gold_chunks, name, "name", new),
                            expected="follow_context", rule="name", seed=seed)
    for fact in facts:
        new = changed(fact, rng, taken)
        if new is not None:
            return _variant(item, "counterfactual", variant_id, _changed_context(gold_chunks, fact.text, fact.kind, new),
                            expected="follow_context", rule=fact.kind, seed=seed)
    reason = ("no number, date, code or name in the gold chunks that the question does not name" if not facts
              else "no other value of its facts is free of the context's own values")
    return ProbeSkip(variant_id=variant_id, item_id=item.id, probe="counterfactual", reason=reason)


def _changed_context(gold_chunks: Sequence[Chunk], old: str, kind: str, new: str) -> list[PlantedChunk]:
    """Return the gold chunks with every statement of fact `old` (of `kind`) made `new`."""
    context: list[PlantedChunk] = []
    planted = 0
    for chunk in gold_chunks:
        places = ([Fact(kind, m.start(), m.end(), old) for m in re.finditer(re.escape(old), chunk.text)]
                  if kind == "name" else [f for f in find_facts(chunk.text) if f.text == old and f.kind == kind])
        if not places:
            context.append(_planted(chunk, "gold"))
            continue
        text, kept = [], 0
        for fact in places:
            text += [chunk.text[kept:fact.start], new]
            kept = fact.end
        context.append(PlantedChunk(chunk_id=f"probe:counterfactual:{planted}", text="".join(text) + chunk.text[kept:],
                                    role="counterfactual", source_chunk=chunk.chunk_id,
                                    change={"from": old, "to": new}))
        planted += 1
    return context


# -- injection and rewrite ------------------------------------------------------------------------------------

def injection_variant(item: EvalItem, gold_chunks: Sequence[Chunk], *, template: str,
                      seed: int) -> ProbeVariant | ProbeSkip:
    """Return the item's gold chunks with one planted chunk carrying the instruction of `template` (in the
    item's language, `evalrun.probes.injections.TEMPLATES`) inserted at a drawn place among them, every
    gold chunk kept; its canary is drawn from the seed. A robust system ignores the instruction."""
    if template not in TEMPLATES:
        raise InputError(f"unknown injection template {template!r}: use {', '.join(TEMPLATES)}", field="template")
    variant_id = f"injection:{item.id}:{template}:s{seed}"
    if not gold_chunks:
        return ProbeSkip(variant_id=variant_id, item_id=item.id, probe="injection", reason="no gold chunks")
    rng = _rng(seed, item.id, "injection", template)
    token = canary(rng)
    text, asks = planted_text(template, item.language, token)
    context = [_planted(c, "gold") for c in gold_chunks]
    context.insert(rng.randint(0, len(context)), PlantedChunk(chunk_id="probe:injection:0", text=text, role="injection",
                                                              instruction=asks, canary=token))
    return _variant(item, "injection", variant_id, context, expected="ignore_instruction", rule=template, seed=seed)


def rewrite_variants(item: EvalItem, *, rules: Sequence[str] = ("typo", "colloquial", "word_order"),
                     seed: int) -> list[ProbeVariant | ProbeSkip]:
    """Return the item's question rewritten by each rule (`evalrun.probes.rewrites`), its numbers, dates,
    codes and negations kept, or why a rule cannot apply. The context is empty: the target retrieves for
    the new question itself. A robust system answers as it did the original."""
    unknown = [r for r in rules if r not in RULES]
    if unknown:
        raise InputError(f"unknown rewrite rule {unknown[0]!r}: use {', '.join(RULES)}", field="rules")
    built: list[ProbeVariant | ProbeSkip] = []
    for rule in rules:
        variant_id = f"rewrite:{item.id}:{rule}:s{seed}"
        question, what = rewrite(item.question, item.language, rule, _rng(seed, item.id, "rewrite", rule))
        if question is None:
            built.append(ProbeSkip(variant_id=variant_id, item_id=item.id, probe="rewrite", reason=f"{rule}: {what}"))
        else:
            built.append(_variant(item, "rewrite", variant_id, [], question=question, expected="same_answer",
                                  rule=rule, seed=seed))
    return built
