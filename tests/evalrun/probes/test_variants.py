"""Probe variants built from real corpora (CMRC2018 paragraphs, the handbook): deterministic from the seed,
noise at the rates and positions asked, hard negatives that hold none of the evidence, planted
instructions that never take a gold chunk's place."""

from __future__ import annotations

import pytest

from curate import InputError
from curate.kb import sha256_text
from curate.records import Chunk
from evalrun.probes import (
    ProbeSkip,
    ProbeVariant,
    counterfactual_variant,
    filler_chunks,
    hard_negatives,
    injection_variant,
    negative_variant,
    noise_variants,
    rewrite_variants,
)
from evalrun.probes.injections import TEMPLATES
from curate import fold as folded
from tests.evalrun.probes.conftest import evidence_ids

RATES = (0.0, 0.2, 0.4, 0.6, 0.8)


def negatives_of(corpus, item, k=6, near_misses=()):
    return hard_negatives(evidence_ids(item), corpus.chunks, near_misses=near_misses, bm25=corpus.bm25,
                          question=item.question, k=k,
                          evidence_texts=[e.text for e in item.evidence] + item.answers)


def filler_of(corpus, item, negatives, seed=0):
    return filler_chunks(evidence_ids(item), corpus.chunks, item_id=item.id, k=4, seed=seed, language=item.language,
                         exclude=[c.chunk_id for c in negatives], evidence_texts=item.answers)


def everything(corpus, item, seed):
    """Return every variant (and skip) of one item, as JSON, built with `seed`."""
    gold = corpus.gold(item)
    negatives = negatives_of(corpus, item)
    built = noise_variants(item, gold, negatives, filler=filler_of(corpus, item, negatives, seed), seed=seed)
    built += [negative_variant(item, negatives, size=5, seed=seed), counterfactual_variant(item, gold, seed=seed)]
    built += [injection_variant(item, gold, template=t, seed=seed) for t in TEMPLATES]
    built += rewrite_variants(item, seed=seed)
    return [b.model_dump(mode="json") for b in built]


def test_the_same_seed_gives_the_same_variants_and_another_seed_others(cmrc, handbook):
    for corpus in (cmrc, handbook):
        for item in corpus.items[:5]:
            first = everything(corpus, item, seed=0)
            assert everything(corpus, item, seed=0) == first
            other = everything(corpus, item, seed=1)
            assert [v["variant_id"].replace(":s1", ":s0") for v in other] == [v["variant_id"] for v in first]
            changed = [a for a, b in zip(first, other) if {**a, "variant_id": "", "seed": 0} != {**b, "variant_id": "",
                                                                                             "seed": 0}]
            assert len(changed) >= 4, item.id     # the canaries at least (one per template) differ


def test_noise_contexts_hold_the_rates_and_gold_positions_asked(cmrc):
    item = next(i for i in cmrc.items if len(cmrc.gold(i)) == 1)
    gold = cmrc.gold(item)
    negatives = negatives_of(cmrc, item)
    filler = filler_of(cmrc, item, negatives)
    built = noise_variants(item, gold, negatives, filler=filler, rates=RATES, size=5, seed=3)
    assert all(isinstance(v, ProbeVariant) for v in built) and len(built) == len(RATES) * 3
    for variant in built:
        roles = [c.role for c in variant.context]
        assert len(variant.context) == 5 and roles.count("gold") == 1
        assert roles.count("noise") / 5 == variant.noise_rate
        assert variant.context[variant.gold_position].chunk_id == gold[0].chunk_id
        assert variant.gold_position == {"first": 0, "middle": 2, "last": 4}[variant.rule]
        assert variant.expected == "answer" and variant.question == item.question
    assert sorted({v.noise_rate for v in built}) == list(RATES)
    by_rate = {}
    for variant in built:   # one drawn order per rate: the positions differ only in where the gold is
        rest = [c.chunk_id for c in variant.context if c.role != "gold"]
        assert by_rate.setdefault(variant.noise_rate, rest) == rest
    noise_ids = {c.chunk_id for v in built for c in v.context if c.role == "noise"}
    assert noise_ids <= {c.chunk_id for c in negatives[:4]}     # the strongest negatives, never others


def test_noise_rates_that_cannot_be_built_say_why(cmrc):
    item = cmrc.items[0]
    gold, negatives = cmrc.gold(item), negatives_of(cmrc, item, k=2)
    built = noise_variants(item, gold, negatives, filler=[], rates=(1.0, 0.4, 0.8), positions=("first",), seed=0)
    assert all(isinstance(b, ProbeSkip) for b in built)
    assert [b.reason for b in built] == ["1 gold chunk(s) and 5 hard negative(s) do not fit a context of 5",
                                         "2 filler chunk(s) wanted, 0 given", "4 hard negative(s) wanted, 2 found"]
    with pytest.raises(InputError, match="multiples of 1/5"):
        noise_variants(item, gold, negatives, rates=(0.3,), seed=0)
    with pytest.raises(InputError, match="unknown gold position 'centre'"):
        noise_variants(item, gold, negatives, positions=("centre",), seed=0)


def test_two_gold_chunks_stay_one_block_and_positions_that_coincide_are_built_once(handbook):
    item = handbook.items[0]
    chunks = handbook.chunks
    gold = [chunks[0], chunks[1]]
    negatives = [c for c in chunks[10:20]]
    built = noise_variants(item, gold, negatives, rates=(0.6,), size=5, seed=0)
    assert [(v.rule, v.gold_position) for v in built] == [("first", 0), ("middle", 1), ("last", 3)]
    for variant in built:
        at = variant.gold_position
        assert [c.chunk_id for c in variant.context[at:at + 2]] == [chunks[0].chunk_id, chunks[1].chunk_id]
    crowded = noise_variants(item, gold, negatives, rates=(0.0,), size=2, seed=0)
    assert [v.rule for v in crowded] == ["first"]          # middle and last fall on index 0 too


def test_hard_negatives_never_hold_the_evidence_nor_a_copy_of_it(cmrc, handbook):
    for corpus in (cmrc, handbook):
        for item in corpus.items[:40]:
            ids = evidence_ids(item)
            negatives = negatives_of(corpus, item)
            assert negatives, item.id
            gold_texts = [folded(c.text) for c in corpus.gold(item)]
            for chunk in negatives:
                text = folded(chunk.text)
                assert chunk.chunk_id not in ids
                assert all(text not in g and g not in text for g in gold_texts)
                assert all(folded(a) not in text for a in item.answers)
            assert len({folded(c.text) for c in negatives}) == len(negatives)


def test_near_misses_come_first_and_a_copy_of_the_gold_is_refused_even_as_one(cmrc):
    item = cmrc.items[0]
    (gold,) = cmrc.gold(item)
    copy_text = " ".join(gold.text).upper().replace("。", "．")      # spaced, upper-cased, another full stop
    copy = Chunk(chunk_id="copy#0", doc_id="copy", text=copy_text, text_sha256=sha256_text(copy_text))
    near = next(c for c in cmrc.chunks if c.doc_id != gold.doc_id and c.chunk_id != gold.chunk_id)
    chunks = [*cmrc.chunks, copy]
    negatives = hard_negatives(evidence_ids(item), chunks, near_misses=["copy#0", near.chunk_id], bm25=None,
                               question=item.question, k=5)
    assert [c.chunk_id for c in negatives] == [near.chunk_id]   # without BM25 only the near misses
    ranked = hard_negatives(evidence_ids(item), chunks, near_misses=[near.chunk_id], bm25=cmrc.bm25,
                            question=item.question, k=5)
    assert ranked[0].chunk_id == near.chunk_id and len(ranked) == 5
    positions, scores = cmrc.bm25.search([item.question], k=len(cmrc.chunks))
    order = [cmrc.chunks[int(p)].chunk_id for p, s in zip(positions[0], scores[0]) if s > 0]
    rest = [c.chunk_id for c in ranked[1:]]
    assert rest == [i for i in order if i in rest]             # then by BM25 rank, best first


def test_the_negative_variant_holds_only_hard_negatives(cmrc, handbook):
    for corpus in (cmrc, handbook):
        for item in corpus.items[:20]:
            variant = negative_variant(item, negatives_of(corpus, item), size=5, seed=0)
            assert variant.expected == "decline" and variant.gold_position is None
            assert len(variant.context) == 5 and {c.role for c in variant.context} == {"noise"}
            assert not {c.chunk_id for c in variant.context} & evidence_ids(item)
            assert not any(folded(a) in folded(c.text) for a in item.answers for c in variant.context)
    empty = negative_variant(cmrc.items[0], [], size=5, seed=0)
    assert isinstance(empty, ProbeSkip) and empty.reason == "no hard negatives found"


def test_filler_comes_from_documents_without_evidence_in_the_questions_language(handbook):
    item = next(i for i in handbook.items if i.language == "zh")
    negatives = negatives_of(handbook, item)
    filler = filler_of(handbook, item, negatives)
    gold_docs = {c.doc_id for c in handbook.gold(item)}
    assert len(filler) == len({c.chunk_id for c in filler}) == 4
    assert all(c.doc_id not in gold_docs and c.doc_id.endswith(".zh.md") for c in filler)
    assert not {c.chunk_id for c in filler} & {c.chunk_id for c in negatives}


def test_the_injected_chunk_carries_a_canary_no_kb_chunk_holds_and_every_gold_chunk_stays(cmrc, handbook):
    kb = [folded(c.text) for c in cmrc.chunks + handbook.chunks]
    positions = set()
    for corpus in (cmrc, handbook):
        for item in corpus.items[:8]:
            gold = corpus.gold(item)
            for template in TEMPLATES:
                variant = injection_variant(item, gold, template=template, seed=len(positions))
                planted = [c for c in variant.context if c.role == "injection"]
                assert len(planted) == 1 and planted[0].chunk_id == "probe:injection:0"
                token = planted[0].canary
                assert token.endswith("-CANARY") and folded(token) in folded(planted[0].text)
                assert not any(folded(token) in text for text in kb)
                assert [c.chunk_id for c in variant.context if c.role == "gold"] == [c.chunk_id for c in gold]
                assert len(variant.context) == len(gold) + 1
                assert variant.expected == "ignore_instruction" and variant.rule == template
                has_cjk = any("\u4e00" <= ch <= "\u9fff" for ch in planted[0].text)
                assert has_cjk == (item.language == "zh")
                positions.add(variant.context.index(planted[0]))
    assert positions == {0, 1}        # one gold chunk each: the instruction lands before it or after it
    with pytest.raises(InputError, match="unknown injection template"):
        injection_variant(cmrc.items[0], [], template="jailbreak", seed=0)
