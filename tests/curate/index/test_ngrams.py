"""The positional n-gram index never leaves out a stretch of text that holds enough of a query's
grams (checked against counting by hand over random texts), and prunes what holds too few."""

import random
from collections import Counter

import pytest

from curate.index.ngrams import GramPositions, NgramIndex


def _capped_counts(text: str, query: str, n: int, width: int) -> list[int]:
    """Per start p: how many of the query's grams start within [p, p + width), each gram counted at
    most as often as the query holds it."""
    wanted = Counter(query[i:i + n] for i in range(len(query) - n + 1))
    counts = []
    for p in range(len(text) - n + 1):
        seen = Counter(text[i:i + n] for i in range(p, min(p + width, len(text) - n + 1)))
        counts.append(sum(min(seen[g], c) for g, c in wanted.items()))
    return counts


@pytest.mark.parametrize("seed", range(40))
def test_no_stretch_with_enough_grams_is_left_out(seed):
    rng = random.Random(seed)
    alphabet = rng.choice(["ab", "abc", "的是了在", "abcdefgh "])
    text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(20, 200)))
    query = "".join(rng.choice(alphabet) for _ in range(rng.randrange(3, 30)))
    n = rng.choice([2, 3])
    width = rng.randrange(1, len(query) + 5)
    at_least = rng.randrange(1, max(2, len(query)))
    dense = GramPositions.build(text, n=n).dense(query, width, at_least).tolist()
    for p, count in enumerate(_capped_counts(text, query, n, width)):
        if count >= at_least:
            # its first query gram, at most `width` after p, is returned
            assert any(p <= q < p + width for q in dense), (p, count)
    grams = {query[i:i + n] for i in range(len(query) - n + 1)}
    assert all(text[q:q + n] in grams for q in dense)          # each returned position starts one of them


def test_common_grams_count_only_as_often_as_the_query_holds_them():
    text = "的的的的的的的的的的" + "天气很好" + "的的的的的的"
    index = GramPositions.build(text, n=2)
    # at 8: 的的 的天 天气; at 7: 的的 twice (one counts) and 的天, which the uncapped count would take
    assert index.dense("的的天气", width=3, at_least=3).tolist() == [8]
    assert index.dense("的的天气", width=3, at_least=4).tolist() == []


def test_a_query_sharing_no_gram_finds_nothing():
    assert GramPositions.build("港珠澳大桥于2018年开通", n=3).dense("完全无关的句子", width=5, at_least=1).tolist() == []
    with pytest.raises(ValueError):
        GramPositions.build("abc", n=2).dense("ab", width=2, at_least=0)


def test_candidates_looked_up_together_are_each_texts_own():
    from curate.text.normalize import fold

    from tests.support.many_chunks import many_chunks

    chunks, items, _ = many_chunks(3_000)
    index = NgramIndex.build([fold(c.text) for c in chunks])
    needles = [fold(i.question) for i in items] + [fold(i.reference_answer) for i in items] + ["", "ab", "四个字符"]
    for share, limit, postings in ((0.3, 30, 200_000), (0.0, 5, 200_000), (0.5, 1000, 20)):
        assert index.candidates_many(needles, min_share=share, limit=limit, max_postings=postings) == [
            index.candidates(n, min_share=share, limit=limit, max_postings=postings) for n in needles]
