"""Evidence maps to every chunk that holds it, also across a chunk boundary where the chunker
dropped the white space between two sentences."""

from curate.dataset.locate import Locator
from curate.kb import chunk_documents, sha256_text
from curate.records import ChunkerSettings, Document

TEXT = ("The gateway keeps its configuration during upgrades. Back up the database first.\n\n"
        "Version 3.2 raises the default timeout to 30 seconds. Only administrators can upgrade.")


def _locator(size: int) -> Locator:
    doc = Document(doc_id="d", text=TEXT, text_sha256=sha256_text(TEXT))
    chunks = chunk_documents([doc], ChunkerSettings(kind="structure", size=size))
    return Locator(chunks, [doc])


def test_a_quote_across_a_boundary_belongs_to_both_chunks():
    locator = _locator(size=60)
    ids = {c.chunk_id: c for c in locator.chunks.values()}
    quote = "during upgrades. Back up the database"
    first, second = (c for c in ids.values() if "upgrades" in c.text or "Back up" in c.text)
    assert "Back up" not in first.text and TEXT[first.end:second.start] == " "   # the chunker dropped the space
    found = locator.by_text(quote)
    assert found.chunk_ids == [first.chunk_id, second.chunk_id] and found.partial
    assert TEXT[found.start:found.end] == quote


def test_a_span_inside_one_chunk_maps_to_that_chunk_only():
    locator = _locator(size=60)
    start = TEXT.index("Version 3.2")
    found = locator.by_span("d", start, start + len("Version 3.2 raises"))
    assert len(found.chunk_ids) == 1 and not found.partial


def test_a_span_of_white_space_only_or_inverted_maps_to_nothing():
    locator = _locator(size=60)
    gap = TEXT.index("\n\n")
    assert locator.by_span("d", gap, gap + 2) is None          # between two chunks: nothing to hold
    assert locator.by_span("d", 10, 5) is None and locator.by_span("d", 7, 7) is None


SEGMENTED = "港珠澳大桥 于 2018年 10月 23日 开通 。 大桥 全长 55 公里．\n\nThe “Hong Kong–Zhuhai–Macau” bridge opened in 2018."


def _segmented() -> Locator:
    doc = Document(doc_id="news", text=SEGMENTED, text_sha256=sha256_text(SEGMENTED))
    return Locator(chunk_documents([doc], ChunkerSettings(kind="structure", size=400)), [doc])


def test_a_quote_without_the_corpus_word_spaces_is_found_at_its_original_offsets():
    found = _segmented().by_text("大桥于2018年10月23日开通")
    assert found.located_by == "normalized" and found.chunk_ids == ["news#0"]
    assert SEGMENTED[found.start:found.end] == found.text == "大桥 于 2018年 10月 23日 开通"


def test_full_stops_that_nfkc_keeps_apart_are_alike():
    found = _segmented().by_text("开通。大桥全长55公里。")                     # 。 where the corpus has ．
    assert SEGMENTED[found.start:found.end] == "开通 。 大桥 全长 55 公里．"
    found = _segmented().by_text('The "Hong Kong-Zhuhai-Macau" bridge opened in 2018。')
    assert SEGMENTED[found.start:found.end] == "The “Hong Kong–Zhuhai–Macau” bridge opened in 2018."


def test_locating_and_leakage_fold_alike():
    """A copy that differs only in what the shared canonical form makes one (segmentation spaces, 。 and
    ．, curly quotes) is located by quote search and matched by the leakage check's folding."""
    from curate.text.containment import containment
    from curate.text.normalize import fold
    quote = "大桥于2018年10月23日开通。大桥全长55公里。"
    found = _segmented().by_text(quote)
    assert found is not None and found.located_by == "normalized"
    assert containment(fold(quote), fold(SEGMENTED))[0] == 1.0 and fold(quote) == fold(found.text)


def test_quote_location_and_leakage_folding_share_one_canonical_form(monkeypatch):
    from curate.checks.leakage import find
    from curate.text import normalize as text_normalize
    seen = []
    real = text_normalize.canonical

    def spy(text):
        seen.append(text)
        return real(text)
    monkeypatch.setattr(text_normalize, "canonical", spy)
    assert _segmented().by_text("大桥于2018年10月23日开通").located_by == "normalized"
    # the corpus's marks go through it; ideographs and ASCII are their own canonical form (test_normalize)
    assert {"。", "．", "“", "–"} <= set(seen)
    seen.clear()
    find.fold("Fed rate hike 2024？")
    assert seen == ["Fed rate hike 2024？"]


# -- Chinese quotes copied without (or with) a corpus's segmentation spaces ---------------------------

import json  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from rapidfuzz import fuzz  # noqa: E402

from curate.formats.squad import read_squad  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
PUNCTUATED = ("据统计 ， 该市人口为 “ 三百万 ” ， 面积 较大 。 \n2013 年 设市 。\n"
              "成立时间 ： 2013 年 ， 总部 位于 北京 。\n"
              "主要产品 ： MS 物业 、 Red Hat 系统 ， 2013 2014 年 连续 获奖 。")


def _locator_of(*texts: str) -> Locator:
    docs = [Document(doc_id=f"d{n}", text=t, text_sha256=sha256_text(t)) for n, t in enumerate(texts)]
    return Locator(chunk_documents(docs, ChunkerSettings(kind="structure", size=400)), docs)


@pytest.mark.parametrize("quote, original", [
    ("面积较大。2013年设市", "面积 较大 。 \n2013 年 设市"),                  # "。 \n"
    ("“三百万”，面积较大", "“ 三百万 ” ， 面积 较大"),                      # "” ，"
    ("成立时间：2013年，总部", "成立时间 ： 2013 年 ， 总部"),                  # "： 2013"
    ("MS物业、RedHat系统", "MS 物业 、 Red Hat 系统"),                      # spaces removed entirely
])
def test_a_quote_without_the_spaces_beside_cjk_punctuation_is_found_at_its_original_span(quote, original):
    found = _locator_of(PUNCTUATED).by_text(quote)
    assert found is not None and found.located_by == "normalized"
    assert PUNCTUATED[found.start:found.end] == found.text == original


def test_a_quote_with_spaces_added_around_punctuation_is_found_in_an_unspaced_corpus():
    text = "成立时间：2013年，总部位于北京。主要产品：“MS物业”。"
    found = _locator_of(text).by_text("成立时间 ： 2013 年 ， 总部位于北京 。 \n 主要产品 ： “ MS 物业 ”")
    assert found.located_by == "normalized" and found.text == "成立时间：2013年，总部位于北京。主要产品：“MS物业”"


def test_removing_spaces_never_joins_two_numbers():
    """'2013 2014年' is two years; a quote reading '20132014年' is not it (at most a fuzzy match)."""
    found = _locator_of(PUNCTUATED).by_text("20132014年连续获奖")
    assert found is None or found.located_by == "fuzzy"
    assert _locator_of(PUNCTUATED).by_text("2013 2014年连续获奖").located_by == "normalized"


def _jieba_segmented(text: str) -> str:
    import jieba
    return " ".join(w for w in jieba.cut(text) if w.strip())


def _sample_paragraphs(count: int) -> tuple[list[Document], list]:
    docs, raws = read_squad(EXAMPLES / "cmrc2018" / "cmrc2018_sample.json")
    return docs[:count], [r for r in raws if r.fields["evidence"][0]["doc_id"] in {d.doc_id for d in docs[:count]}]


def test_cmrc_sentences_copied_unsegmented_are_found_in_a_segmented_corpus():
    """The bundled CMRC 2018 paragraphs segmented into words by jieba, as many Chinese corpora are; the
    evidence sentences copied from the unsegmented text (Latin names and numbers included) are all found,
    at the place of their own words, as they were before segmentation."""
    docs, raws = _sample_paragraphs(60)
    segmented = {d.doc_id: _jieba_segmented(d.text) for d in docs}
    locator = _locator_of(*segmented.values())
    names = dict(zip((f"d{n}" for n in range(len(docs))), segmented))
    quotes = [(r.fields["evidence"][0]["doc_id"], "".join(r.fields["evidence"][0]["text"].split())) for r in raws]
    misplaced = []
    for doc_id, quote in quotes:
        found = locator.by_text(quote)
        if found is None or "".join(found.text.split()) != quote or found.located_by != "normalized":
            misplaced.append(quote)
        elif names[found.doc_id] != doc_id:
            assert quote in "".join(segmented[names[found.doc_id]].split())   # the same sentence in another paragraph
    assert len(quotes) > 150 and misplaced == []


def _perturbed(text: str, rng: random.Random) -> str:
    letters = [i for i, c in enumerate(text) if c.isalpha()]
    chars = list(text)
    for i in rng.sample(letters, max(1, len(letters) // 20)):
        chars[i] = "的" if chars[i] != "的" else "是"
    return "".join(chars)


def test_a_changed_character_in_an_unsegmented_copy_is_found_fuzzily_in_the_segmented_corpus():
    docs, raws = _sample_paragraphs(30)
    segmented = [_jieba_segmented(d.text) for d in docs]
    locator = _locator_of(*segmented)
    rng = random.Random(3)
    sentences = [r.fields["evidence"][0]["text"] for r in raws if len(r.fields["evidence"][0]["text"]) >= 20][:40]
    found = [locator.by_text(_perturbed("".join(s.split()), rng)) for s in sentences]
    assert sum(f is not None and f.located_by == "fuzzy" and f.match_score >= 90 for f in found) >= 0.9 * len(found)


# -- the fuzzy prefilter loses nothing ---------------------------------------------------------------

def _mixed_corpus() -> Locator:
    docs, _ = _sample_paragraphs(300)
    science = [json.loads(line) for line in (EXAMPLES / "scifact" / "corpus.jsonl").read_text("utf-8").splitlines()]
    texts = [d.text for d in docs] + [(row.get("title", "") + "\n\n" + row["text"]) for row in science[:300]]
    return _locator_of(*texts)


@pytest.fixture(scope="module")
def mixed() -> Locator:
    return _mixed_corpus()


@pytest.mark.parametrize("min_score", [90.0, 75.0])
def test_every_text_the_fuzzy_score_could_reach_is_a_candidate(mixed, min_score):
    """Brute force over every text of the bundled CMRC and SciFact samples: each text on which
    partial_ratio reaches min_score for a perturbed quote (or a quote of another paragraph) survives
    the n-gram prefilter, and the located match scores what the best text scores."""
    rng = random.Random(7)
    for squeezed in (True, False):
        form = mixed._corpus.form(squeezed)
        slots = range(len(form.starts))
        texts = [form.text[a:b] for a, b in map(form.bounds, slots)]
        pool = texts[:300] if squeezed else texts[300:]
        for _ in range(12):
            source = rng.choice(pool)
            length = rng.choice([12, 30, 80, 300])
            at = rng.randrange(max(1, len(source) - length))
            target = form.prepare(_perturbed(source[at:at + length], rng))
            reach = {s for s in slots if len(texts[s]) >= len(target)
                     and fuzz.partial_ratio(target, texts[s], score_cutoff=min_score)}
            assert reach <= set(form.candidates(target, min_score)), target


def test_a_quote_found_nowhere_is_aligned_with_few_texts(mixed):
    """What makes a missing quote cheap: the prefilter rules out nearly every text (here 600) for
    sentences the KB does not hold, Chinese and English."""
    missing = ["该公司于二〇一九年在深圳成立，主要从事新能源汽车电池的研发与生产，员工超过三千人。",
               "The gateway rejects tokens older than one hour and logs each rejection with its client address."]
    for quote in missing:
        form = mixed._corpus.form(squeezed=quote[0] == "该")
        assert len(form.candidates(form.prepare(quote), 90.0)) <= 6
        assert mixed.by_text(quote) is None


def test_a_fuzzy_match_is_the_best_over_every_text(mixed):
    rng = random.Random(11)
    form = mixed._corpus.form(True)
    texts = [form.text[a:b] for a, b in map(form.bounds, range(len(form.starts)))]
    for source in rng.sample(texts[:300], 10):
        quote = _perturbed(source[10:70], rng)
        target = form.prepare(quote)
        best = max(fuzz.partial_ratio(target, t) for t in texts if len(t) >= len(target))
        found = mixed.by_text(quote)
        assert found is not None and found.located_by == "fuzzy"
        own = texts[mixed._corpus.slots[found.doc_id]]
        assert math.isclose(fuzz.partial_ratio(target, own), best)        # a text that scores best
        assert found.match_score >= round(best, 1)                         # its span widened, never worse


def test_a_fuzzy_copy_longer_than_the_quote_is_found_whole():
    """partial_ratio's window is as long as the quote; where the quote lost letters, the copy is longer
    and the window would drop its first or last characters ('UP-41' would read as another code)."""
    text = "# Errors\n\nUploads larger than 2 GB are rejected with error UP-413 and are never stored."
    found = _locator_of(text).by_text("Uploads larger than 2 GB are rejectd with eror UP-413.")
    assert found.located_by == "fuzzy" and found.text == "Uploads larger than 2 GB are rejected with error UP-413"
    found = _locator_of("据报道，大桥 于 2018年 10月 23日 正式 开通 运营。").by_text("大桥于2018年10月23日正开通运")
    assert found.located_by == "fuzzy" and found.text == "大桥 于 2018年 10月 23日 正式 开通 运"
