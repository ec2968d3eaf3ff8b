"""Building a probe run's variants from a release's items and its KB: confusable chunks mined from the KB
come first among an item's hard negatives, then BM25 and the embeddings' neighbours in turn; a planted chunk
is one the item's asker may see."""

from __future__ import annotations

import numpy as np

from evalrun.probes.build import Neighbours, confusable_chunks, item_variants
from evalrun.probes.folder import ProbeSettings
from evalrun.probes.variants import hard_negatives


def _code_item(corpus):
    """An item of the handbook whose gold chunk states an error code that has a near code elsewhere."""
    confusable = confusable_chunks(corpus.chunks)
    for item in corpus.items:
        gold = [c.chunk_id for c in corpus.gold(item)]
        if len(gold) == 1 and confusable.get(gold[0]):
            return item, gold[0], confusable
    raise AssertionError("no handbook item with a confusable gold chunk")


def test_the_chunks_mined_as_confusable_with_the_gold_are_the_first_negatives(handbook):
    item, gold, confusable = _code_item(handbook)
    neighbours = Neighbours(bm25=handbook.bm25, confusable=confusable)
    found = hard_negatives([gold], handbook.chunks, near_misses=neighbours.near_misses(item), bm25=handbook.bm25,
                           question=item.question, k=5)
    first = [c.chunk_id for c in found[:len(confusable[gold])]]
    assert first == [c for c in confusable[gold] if c in first] and set(first) <= set(confusable[gold])
    assert gold not in [c.chunk_id for c in found]


def test_semantic_neighbours_alternate_with_bm25_and_never_include_the_gold(handbook):
    item, gold, _ = _code_item(handbook)
    position = {c.chunk_id: n for n, c in enumerate(handbook.chunks)}
    vectors = np.random.default_rng(0).normal(size=(len(handbook.chunks), 8)).astype(np.float32)
    nearest = position[next(c.chunk_id for c in handbook.chunks if c.chunk_id != gold and c.text.strip())]
    vectors[nearest] = vectors[position[gold]]          # a twin by embedding
    neighbours = Neighbours(bm25=handbook.bm25, vectors=vectors)
    semantic = neighbours.semantic(handbook.chunks, [position[gold]], 4)
    assert semantic[0] == handbook.chunks[nearest].chunk_id and gold not in semantic


def test_a_chunk_the_asker_may_not_see_is_never_planted(handbook):
    item, gold, confusable = _code_item(handbook)
    hidden = set(confusable[gold])
    neighbours = Neighbours(bm25=handbook.bm25, confusable=confusable, allowed=lambda it, cid: cid not in hidden)
    position = {c.chunk_id: n for n, c in enumerate(handbook.chunks)}
    built = item_variants(item, handbook.chunks, position, ["noise", "negative"], oracle=True, neighbours=neighbours,
                          settings=ProbeSettings(probes=["noise", "negative"]))
    planted = {c.chunk_id for v in built.variants for c in v.context}
    assert built.variants and not planted & hidden
