"""Every variant of a probe run, built from a release's items and its KB snapshot: items and chunks in,
variants and skips out (the pure core under `evalrun probe`; the builders of one item are in
`evalrun.probes.variants`).

Each item asked gets a clean variant (its gold chunks as the context; none end to end) that the probes
are paired to, then the variants of each probe run in this mode. An item that cannot be probed (no gold
chunk in the snapshot, its evidence not mapped to chunks) is a skip with the reason, never dropped
silently. End to end, the negative probe asks questions about content the KB does not hold (codes,
years and names mined as absent, `curate.mined_candidates`), one variant each.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from curate import Chunk, EvalItem, mined_candidates
from evalrun.probes.injections import TEMPLATES
from evalrun.probes.records import PlantedChunk, ProbeSkip, ProbeVariant
from evalrun.probes.variants import (
    Index,
    counterfactual_variant,
    filler_chunks,
    hard_negatives,
    injection_variant,
    negative_variant,
    noise_variants,
    rewrite_variants,
)
from evalrun.scoring.score import references as accepted_answers   # every accepted answer, the reference among them

PLANTED = ("noise", "negative", "counterfactual", "injection")   # probes that plant a context
NEEDS_CONTEXT = "it plants a context, and the target retrieves its own (give it generate(question, context))"


@dataclass
class Neighbours:
    """Where hard negatives come from besides an item's near misses: BM25 over the chunks and, when the
    chunks are embedded, their vectors (rows in chunk order)."""

    bm25: Index | None = None
    vectors: np.ndarray | None = None
    note: str = ""
    allowed: Callable[[EvalItem, str], bool] | None = None
    """Whether the item's asker may be given a chunk at its moment (None: anyone may see anything): a
    planted negative or filler the asker may not see would be a leak evalrun made itself."""
    confusable: Mapping[str, list[str]] = field(default_factory=dict)
    _unit: np.ndarray | None = field(default=None, repr=False)
    """Chunk id -> the chunks mined as confusable with it (`confusable_chunks`): a near code, a near copy."""

    def near_misses(self, item: EvalItem) -> list[str]:
        """Return an item's near misses: its grade-0 evidence, then the chunks confusable with its gold."""
        gold = set(gold_ids(item))
        mined = [c for g in gold_ids(item) for c in self.confusable.get(g, ()) if c not in gold]
        return list(dict.fromkeys([*near_miss_ids(item), *mined]))

    def usable(self, item: EvalItem, found: Sequence[Chunk], k: int) -> list[Chunk]:
        """Return the first `k` of `found` the item's asker may be given."""
        return [c for c in found if self.allowed is None or self.allowed(item, c.chunk_id)][:k]

    def semantic(self, chunks: Sequence[Chunk], gold: Sequence[int], k: int) -> list[str]:
        """Return the ids of the `k` chunks nearest the gold chunks (positions) by cosine, nearest first."""
        if self.vectors is None or not gold:
            return []
        if self._unit is None:   # once per run: every item's neighbours are read off the same unit vectors
            vectors = np.asarray(self.vectors, dtype=np.float32)
            norms = np.linalg.norm(vectors, axis=1)
            norms[norms == 0] = 1.0
            self._unit = vectors / norms[:, None]
        similarity = (self._unit @ self._unit[gold].T).max(axis=1)
        similarity[gold] = -np.inf
        order = np.argsort(-similarity, kind="stable")[:k + len(gold)]
        return [chunks[int(p)].chunk_id for p in order if np.isfinite(similarity[p])][:k]


@dataclass
class Built:
    """The variants of a probe run and the skips, in the order they are asked."""

    variants: list[ProbeVariant] = field(default_factory=list)
    skips: list[ProbeSkip] = field(default_factory=list)

    def add(self, made: ProbeVariant | ProbeSkip | Sequence[ProbeVariant | ProbeSkip]) -> None:
        for one in made if isinstance(made, (list, tuple)) else [made]:
            (self.skips if isinstance(one, ProbeSkip) else self.variants).append(one)


def gold_ids(item: EvalItem) -> list[str]:
    """Return the chunk ids of an item's evidence (grade 1 and 2), in the evidence's order, once each."""
    return list(dict.fromkeys(i for e in item.evidence if e.grade > 0 for i in e.chunk_ids))


def near_miss_ids(item: EvalItem) -> list[str]:
    """Return the chunk ids of an item's grade-0 evidence: the near misses a person or mining marked."""
    gold = set(gold_ids(item))
    return [i for e in item.evidence if e.grade == 0 for i in e.chunk_ids if i not in gold]


def _planted(chunks: Sequence[Chunk]) -> list[PlantedChunk]:
    return [PlantedChunk(chunk_id=c.chunk_id, text=c.text, role="gold") for c in chunks]


def _clean(item: EvalItem, gold: Sequence[Chunk], oracle: bool, seed: int) -> ProbeVariant:
    """Return the item unprobed: its gold chunks as the context (none end to end)."""
    context = _planted(gold) if oracle else []
    return ProbeVariant(variant_id=f"clean:{item.id}:s{seed}", item_id=item.id, probe="clean", question=item.question,
                        context=context, gold_position=0 if context else None,
                        expected="answer" if item.answerable else "decline", seed=seed, language=item.language)


def _skip(item: EvalItem, probe: str, seed: int, reason: str) -> ProbeSkip:
    return ProbeSkip(variant_id=f"{probe}:{item.id}:s{seed}", item_id=item.id, probe=probe, reason=reason)


def _rephrased(item: EvalItem, rephrased: Mapping[str, tuple[str | None, str]], seed: int) -> ProbeVariant | ProbeSkip:
    """Return the item's rewrite by the model (`evalrun.probes.paraphrase`), or why there is none."""
    variant_id = f"rewrite:{item.id}:llm:s{seed}"
    question, why = rephrased.get(item.id, (None, "llm: not asked"))
    if question is None:
        return ProbeSkip(variant_id=variant_id, item_id=item.id, probe="rewrite", reason=why)
    return ProbeVariant(variant_id=variant_id, item_id=item.id, probe="rewrite", question=question, context=[],
                        expected="same_answer", rule="llm", seed=seed, language=item.language)


def item_variants(item: EvalItem, chunks: Sequence[Chunk], by_id: dict[str, int], probes: Sequence[str], *,
                  oracle: bool, neighbours: Neighbours, settings,
                  rephrased: Mapping[str, tuple[str | None, str]] | None = None) -> Built:
    """Return the clean variant of one item and those of each of `probes` (a skip for each that cannot be built)."""
    built, seed = Built(), settings.seed
    wanted = gold_ids(item)
    gold = [chunks[by_id[i]] for i in wanted if i in by_id]
    if oracle and (not item.answerable or not gold):
        why = ("unanswerable: no gold chunk to plant" if not item.answerable else
               "its evidence names no chunk of the KB snapshot" if not wanted else
               f"its evidence chunks ({', '.join(wanted[:3])}) are not in the KB snapshot")
        built.add([_skip(item, probe, seed, why) for probe in ("clean", *probes)])
        return built
    built.add(_clean(item, gold, oracle, seed))
    texts = [e.text for e in item.evidence if e.grade > 0 and e.text] + accepted_answers(item)
    negatives: list[Chunk] = []
    if oracle and {"noise", "negative"} & set(probes):
        semantic = neighbours.semantic(chunks, [by_id[c.chunk_id] for c in gold], 3 * settings.size)
        negatives = neighbours.usable(item, hard_negatives(
            wanted, chunks, near_misses=neighbours.near_misses(item), bm25=neighbours.bm25, question=item.question,
            k=3 * settings.size, evidence_texts=texts, semantic=semantic), settings.size)
    for probe in probes:
        if probe == "noise":
            filler = neighbours.usable(item, filler_chunks(
                wanted, chunks, item_id=item.id, k=3 * settings.size, seed=seed, language=item.language,
                exclude=[c.chunk_id for c in negatives], evidence_texts=texts), settings.size)
            built.add(noise_variants(item, gold, negatives, filler=filler, rates=settings.rates,
                                     positions=settings.positions, size=settings.size, seed=seed))
        elif probe == "negative" and oracle:
            built.add(negative_variant(item, negatives, size=settings.size, seed=seed))
        elif probe == "counterfactual":
            built.add(counterfactual_variant(item, gold, seed=seed))
        elif probe == "injection":
            built.add([injection_variant(item, gold, template=t, seed=seed) for t in settings.templates or TEMPLATES])
        elif probe == "rewrite":
            made = rewrite_variants(item, rules=[r for r in settings.rewrite_rules if r != "llm"], seed=seed)
            if "llm" in settings.rewrite_rules:
                made.append(_rephrased(item, rephrased or {}, seed))
            # with a given context the rewrite is asked over the gold chunks: the generator's reading of it
            built.add([v.model_copy(update={"context": _planted(gold), "gold_position": 0})
                       if oracle and isinstance(v, ProbeVariant) else v for v in made])
    return built


def confusable_chunks(chunks: Sequence[Chunk]) -> dict[str, list[str]]:
    """Return, for each chunk that has any, the chunks mined as confusable with it (`curate generate`'s
    mining, no model: codes one digit apart, sentences that differ only in a number, date, name or
    negation), in both directions."""
    found: dict[str, list[str]] = {}
    for candidate in mined_candidates(chunks, ["confusable"], run="evalrun-probe").candidates:
        asked = [e.passage.chunk_id for e in candidate.evidence if e.grade == 2]
        near = [e.passage.chunk_id for e in candidate.evidence if e.grade == 0]
        for one in asked:
            for other in near:
                if other != one:
                    found.setdefault(one, []).append(other)
                    found.setdefault(other, []).append(one)
    return {chunk: list(dict.fromkeys(others)) for chunk, others in found.items()}


def absent_variants(chunks: Sequence[Chunk], count: int, seed: int) -> Built:
    """Return up to `count` negative variants asking about content no chunk holds (end to end: the
    system retrieves for itself and must decline), drawn in a seeded order from the mined probes."""
    built = Built()
    if count <= 0:
        return built
    made = mined_candidates(chunks, ["unanswerable"], run="evalrun-probe").candidates
    random.Random(f"{seed}:absent").shuffle(made)
    for candidate in made[:count]:
        probe_id = candidate.generation.probe_id or candidate.candidate_id
        near = [e.passage.chunk_id for e in candidate.evidence]
        built.add(ProbeVariant(variant_id=f"negative:absent:{probe_id}:s{seed}", item_id=f"absent:{probe_id}",
                               probe="negative", question=candidate.question, context=[], expected="decline",
                               rule=f"absent {(candidate.generation.template or '').rpartition('/')[2] or 'token'}"
                                    + (f" (near chunks: {', '.join(near[:3])})" if near else ""),
                               seed=seed, language=candidate.language))
    return built


def build(items: Iterable[EvalItem], chunks: Sequence[Chunk], probes: Sequence[str], *, oracle: bool,
          neighbours: Neighbours, settings,
          rephrased: Mapping[str, tuple[str | None, str]] | None = None) -> Built:
    """Return every variant of a probe run: per item, its clean variant and each probe's (`item_variants`;
    `rephrased`: the model's rewrites by item id, `evalrun.probes.paraphrase`); end to end, the questions
    about absent content as the negative probe."""
    by_id = {c.chunk_id: n for n, c in enumerate(chunks)}
    built = Built()
    per_item = [p for p in probes if oracle or p not in PLANTED]
    for item in items:
        one = item_variants(item, chunks, by_id, per_item, oracle=oracle, neighbours=neighbours, settings=settings,
                            rephrased=rephrased)
        built.variants += one.variants
        built.skips += one.skips
    if not oracle and "negative" in probes:
        absent = absent_variants(chunks, settings.absent, settings.seed)
        built.variants += absent.variants
    return built
