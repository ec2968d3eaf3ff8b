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
    assert "港" in seen                                          # the corpus, normalised character by character
    seen.clear()
    find.fold("Fed rate hike 2024？")
    assert seen == ["Fed rate hike 2024？"]
