"""Locate evidence in a KB snapshot: by chunk id, by source span, or by quoted text
(exact, then equal after normalisation, then fuzzy with rapidfuzz)."""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from curate.records import Chunk, Document, Evidence
from curate.text.normalize import normalize_with_map
from curate.text.salient import salient_difference

_SEPARATOR = "\x00"
NOT_FOUND = "its text is not in the snapshot (exact, normalised or fuzzy)"


@dataclass
class Location:
    """Where a piece of evidence sits in one snapshot."""

    doc_id: str | None
    start: int | None
    end: int | None
    text: str
    chunk_ids: list[str]
    located_by: str
    match_score: float = 100.0
    partial: bool = False


@dataclass
class _Corpus:
    """Texts joined by a separator, so one str.find searches them all."""

    keys: list[str]
    offsets: list[int]
    joined: str
    norm: str | None = None
    norm_map: object = None
    slots: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.slots = {key: slot for slot, key in enumerate(self.keys)}

    @classmethod
    def build(cls, pairs: Sequence[tuple[str, str]]) -> _Corpus:
        keys, offsets, parts, position = [], [], [], 0
        for key, text in pairs:
            keys.append(key)
            offsets.append(position)
            parts.append(text)
            position += len(text) + 1
        return cls(keys, offsets, _SEPARATOR.join(parts))

    def where(self, position: int) -> tuple[str, int]:
        """Return (key, offset within that text) of a position in the joined text."""
        slot = bisect.bisect_right(self.offsets, position) - 1
        return self.keys[slot], position - self.offsets[slot]

    def find(self, needle: str, key: str | None = None) -> tuple[str, int, int] | None:
        """Return (key, start, end) of the first exact occurrence, optionally within one text."""
        lo, hi = 0, len(self.joined)
        if key is not None:
            slot = self.slots[key]
            lo = self.offsets[slot]
            hi = self.offsets[slot + 1] - 1 if slot + 1 < len(self.offsets) else len(self.joined)
        hit = self.joined.find(needle, lo, hi)
        if hit < 0:
            return None
        found_key, offset = self.where(hit)
        return found_key, offset, offset + len(needle)

    def find_normalized(self, needle: str, key: str | None = None) -> tuple[str, int, int] | None:
        """Return (key, start, end) in original offsets of a match after normalisation."""
        if self.norm is None:
            self.norm, self.norm_map = normalize_with_map(self.joined)
        target = normalize_with_map(needle)[0].strip()
        if not target:
            return None
        lo, hi = 0, len(self.norm)
        if key is not None:
            slot = self.slots[key]
            lo = bisect.bisect_left(self.norm_map, self.offsets[slot])
            if slot + 1 < len(self.offsets):
                hi = bisect.bisect_left(self.norm_map, self.offsets[slot + 1])
        hit = self.norm.find(target, lo, hi)
        if hit < 0:
            return None
        start = self.norm_map[hit]
        end = self.norm_map[hit + len(target) - 1] + 1
        found_key, offset = self.where(start)
        return found_key, offset, offset + (end - start)


class Locator:
    """Finds evidence in one snapshot's documents and chunks."""

    def __init__(self, chunks: Sequence[Chunk], documents: Sequence[Document] = (), min_score: float = 90.0):
        self.chunks = {c.chunk_id: c for c in chunks}
        self.documents = {d.doc_id: d for d in documents}
        self.min_score = min_score
        self._by_doc: dict[str, list[Chunk]] = defaultdict(list)
        for chunk in chunks:
            self._by_doc[chunk.doc_id].append(chunk)
        # Search the source documents when we have them, else the chunk texts.
        if self.documents:
            self._corpus = _Corpus.build([(d.doc_id, d.text) for d in documents])
        else:
            self._corpus = _Corpus.build([(c.chunk_id, c.text) for c in chunks])

    # -- anchoring -------------------------------------------------------------------------------

    def by_chunk_id(self, chunk_id: str) -> Location | None:
        """Return the location of a whole chunk, or None if the snapshot has no such chunk."""
        chunk = self.chunks.get(chunk_id)
        if chunk is None:
            return None
        return Location(chunk.doc_id, chunk.start, chunk.end, chunk.text, [chunk_id], "chunk_id")

    def by_span(self, doc_id: str, start: int, end: int, text: str | None = None) -> Location | None:
        """Return the chunks holding source span [start, end) of `doc_id`, if the span is valid here.

        The chunks that hold all of the span, when any does; else every chunk that holds more than
        white space of it (`partial`: a quote across a chunk boundary belongs to both chunks, also
        where the chunker dropped the white space between them). None when no chunk holds any of it.
        With `text`, the span is valid only if the document still reads `text` there.
        """
        if end <= start:
            return None
        pieces = [c for c in self._by_doc.get(doc_id, ()) if c.start is not None and c.start < end and c.end > start]
        if not pieces:
            return None
        if doc_id in self.documents:
            source = self.documents[doc_id].text
            if end > len(source) or (text is not None and source[start:end] != text):
                return None
            span_text = source[start:end]
        else:
            # No document: every piece must agree with the text where it overlaps the span.
            span_text = text
            for c in pieces:
                a, b = max(start, c.start), min(end, c.end)
                if text is not None and c.text[a - c.start:b - c.start] != text[a - start:b - start]:
                    return None
            if span_text is None:
                return None
        whole = [c.chunk_id for c in pieces if c.start <= start and c.end >= end]
        if whole:
            return Location(doc_id, start, end, span_text, whole, "span")
        holding = [c.chunk_id for c in pieces
                   if c.text[max(start, c.start) - c.start:min(end, c.end) - c.start].strip()]
        if not holding:
            return None
        return Location(doc_id, start, end, span_text, holding, "span", partial=True)

    def by_text(self, quote: str, doc_id: str | None = None) -> Location | None:
        """Return where `quote` sits: exact, then after normalisation, then fuzzy (>= min_score).

        With `doc_id`, only that document is searched.
        """
        quote = quote.strip()
        if not quote:
            return None
        key = doc_id if (doc_id is not None and self.documents) else None
        if doc_id is not None and self.documents and doc_id not in self.documents:
            return None
        hit = self._corpus.find(quote, key)
        if hit is not None:
            return self._to_location(*hit, "exact", 100.0)
        hit = self._corpus.find_normalized(quote, key)
        if hit is not None:
            found = self._to_location(*hit, "normalized", 100.0)
            found.match_score = round(fuzz.ratio(quote, found.text), 1)  # how far the raw texts differ
            return found
        return self._fuzzy(quote, doc_id)

    # -- internals -------------------------------------------------------------------------------

    def _to_location(self, key: str, start: int, end: int, method: str, score: float) -> Location:
        if self.documents:
            found = self.by_span(key, start, end)
            if found is not None:
                found.located_by, found.match_score = method, score
                return found
            text = self.documents[key].text[start:end]
            return Location(key, start, end, text, [], method, score)
        chunk = self.chunks[key]
        text = chunk.text[start:end]
        # Every chunk holding the same text counts (overlapping windows, copies).
        holders = [c.chunk_id for c in self._by_doc[chunk.doc_id] if text in c.text] or [key]
        if chunk.start is not None:
            return Location(chunk.doc_id, chunk.start + start, chunk.start + end, text, holders, method, score)
        return Location(chunk.doc_id, None, None, text, holders, method, score)

    def _fuzzy(self, quote: str, doc_id: str | None) -> Location | None:
        if self.documents:
            pool = {d: self.documents[d].text for d in ([doc_id] if doc_id else self.documents)}
        else:
            pool = {c.chunk_id: c.text for c in self.chunks.values() if doc_id in (None, c.doc_id)}
        # partial_ratio aligns the shorter string inside the longer; texts shorter than the
        # quote would align backwards, so they are left out.
        choices = {k: t for k, t in pool.items() if len(t) >= len(quote)}
        best = process.extractOne(quote, choices, scorer=fuzz.partial_ratio, score_cutoff=self.min_score)
        if best is None:
            return None
        _, _, key = best
        alignment = fuzz.partial_ratio_alignment(quote, choices[key], score_cutoff=self.min_score)
        if alignment is None:
            return None
        return self._to_location(key, alignment.dest_start, alignment.dest_end, "fuzzy", round(alignment.score, 1))


def changed_fact(quote: str, found: Location) -> str | None:
    """Return what the text found for `quote` differs in among the salient tokens (numbers, dates,
    amounts, codes, versions, negations: "89.99 ≠ 19.99"), when it was found only after
    normalisation or fuzzily; None when it says the same (or was found exactly, or by its span).

    Such a find is another fact, not the quote: it is reported, never bound.

    >>> found = Location("faq", 0, 23, "The plan costs $19.99.", ["faq#0"], "fuzzy", 95.0)
    >>> changed_fact("The plan costs $89.99.", found)
    '89.99 ≠ 19.99'
    """
    if found.located_by not in ("normalized", "fuzzy"):
        return None
    return salient_difference(quote, found.text)


def relocate(evidence: Evidence, locator: Locator) -> tuple[Location | None, str | None, tuple[Location, str] | None]:
    """Return where `evidence` sits in the locator's snapshot (by span in its document, then by its
    text in the same document, then anywhere), or None and why it cannot be placed; and, when the
    only text found says another fact, that find and what differs (it is not a place either).

    A place no chunk holds is not a place: evidence that maps to no chunk would silently stop counting.
    """
    unheld = changed = None
    attempts = []
    if evidence.doc_id is not None and evidence.start is not None and evidence.end is not None:
        attempts.append(lambda: locator.by_span(evidence.doc_id, evidence.start, evidence.end, evidence.text))
    if evidence.doc_id is not None:
        attempts.append(lambda: locator.by_text(evidence.text, evidence.doc_id))
    attempts.append(lambda: locator.by_text(evidence.text))
    for attempt in attempts:
        found = attempt()
        if found is None:
            continue
        if not found.chunk_ids:
            unheld = unheld or f"found in '{found.doc_id}' at [{found.start}:{found.end}], but no chunk holds it"
            continue
        differs = changed_fact(evidence.text, found)
        if differs is not None:  # another fact; the same text may still stand elsewhere
            changed = changed or (found, differs)
            continue
        return found, None, None
    if changed is not None:
        return None, f"found only as a text with other numbers, dates or codes ({changed[1]})", changed
    return None, unheld or NOT_FOUND, None
