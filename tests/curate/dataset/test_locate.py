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
