"""Locate evidence in a KB snapshot: by chunk id, by source span, or by quoted text
(exact, then equal after normalisation, then fuzzy with rapidfuzz).

Normalisation (curate.text.normalize) makes width, case, full stops, quotes and dashes one and
ignores white space next to CJK characters and punctuation; a quote that holds CJK is compared with
no white space at all, one space between two digits aside (a Chinese quote copied without the spaces
its corpus was segmented with, or the other way round). The fuzzy pass compares the same forms,
after a character n-gram prefilter that leaves out only the texts on which the fuzzy score cannot
reach `min_score` (see `_Form.candidates`): a quote found nowhere costs milliseconds, not a
partial_ratio over every document.
"""

from __future__ import annotations

import bisect
import math
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
from rapidfuzz import fuzz

from curate.index.ngrams import GramPositions
from curate.records import Chunk, Document, Evidence
from curate.scope import Moment, ScopeIndex
from curate.text.normalize import holds_cjk, normalize_with_map, squeeze_spaces
from curate.text.salient import salient_difference

_SEPARATOR = "\x00"
NOT_FOUND = "its text is not in the snapshot (exact, normalised or fuzzy)"
# Places of one quote weighed for scope at most: a sentence of boilerplate may stand on every page.
MAX_PLACES = 200
# Gram length of the fuzzy prefilter: 3 characters are far rarer than 2 in English (fewer texts to
# align) and still leave a bound that rules most texts out (4 would leave too weak a bound).
PREFILTER_N = 3


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
    elsewhere: int = 0
    """Other places holding the same text when a usable one was looked for (see `Locator.by_text`)."""


@dataclass
class _Form:
    """The joined texts in one normalised form, with the map back to joined offsets."""

    text: str
    index: array                 # normalised position -> joined position; index[len] = len(joined)
    starts: list[int]            # where each text begins in `text`
    squeezed: bool
    _grams: GramPositions | None = None

    @classmethod
    def build(cls, joined: str, offsets: Sequence[int], squeezed: bool) -> _Form:
        text, index = normalize_with_map(joined)
        if squeezed:
            text, index = squeeze_spaces(text, index)
        return cls(text, index, [bisect.bisect_left(index, offset) for offset in offsets], squeezed)

    def prepare(self, quote: str) -> str:
        """Return `quote` in this form."""
        text, index = normalize_with_map(quote)
        return (squeeze_spaces(text, index)[0] if self.squeezed else text).strip()

    def bounds(self, slot: int) -> tuple[int, int]:
        """Return [start, end) of text `slot` in the form, without the separator after it."""
        end = self.starts[slot + 1] - 1 if slot + 1 < len(self.starts) else len(self.text)
        return self.starts[slot], end

    def candidates(self, target: str, min_score: float) -> Sequence[int]:
        """Return, in order, the slots of the texts on which partial_ratio(target, text) may reach
        `min_score`.

        partial_ratio scores the best window w of the text, |w| <= |target| = m, as
        100 * (1 - d / (m + |w|)), d the characters inserted and deleted to turn one into the other;
        a score >= min_score needs d <= 2m(1 - min_score/100). Each insertion or deletion breaks at
        most PREFILTER_N of the target's m - PREFILTER_N + 1 grams, so w still holds at least
        (m - PREFILTER_N + 1) - PREFILTER_N * d of them, all starting within m - PREFILTER_N + 1
        characters: a text with no such stretch cannot score min_score, and only those are left out.
        """
        edits = math.floor(2 * len(target) * (100 - min_score) / 100)
        width = len(target) - PREFILTER_N + 1
        at_least = width - PREFILTER_N * edits
        if at_least < 1 or len(self.text) >= 1 << 32:
            return range(len(self.starts))       # no bound to use: every text is aligned
        if self._grams is None:
            self._grams = GramPositions.build(self.text, n=PREFILTER_N)
        dense = self._grams.dense(target, width, at_least)
        return np.unique(np.searchsorted(self.starts, dense, side="right") - 1).tolist()


@dataclass
class _Corpus:
    """Texts joined by a separator, so one str.find searches them all."""

    keys: list[str]
    offsets: list[int]
    joined: str
    slots: dict[str, int] = field(default_factory=dict)
    forms: dict[bool, _Form] = field(default_factory=dict)

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

    def form(self, squeezed: bool) -> _Form:
        """Return the corpus normalised, its white space squeezed out or not (built once)."""
        if squeezed not in self.forms:
            self.forms[squeezed] = _Form.build(self.joined, self.offsets, squeezed)
        return self.forms[squeezed]

    def where(self, position: int) -> tuple[str, int]:
        """Return (key, offset within that text) of a position in the joined text."""
        slot = bisect.bisect_right(self.offsets, position) - 1
        return self.keys[slot], position - self.offsets[slot]

    def span_of(self, form: _Form, start: int, end: int) -> tuple[str, int, int]:
        """Return (key, start, end) in original offsets of the normalised span [start, end)."""
        while start < end and form.text[start] == " ":
            start += 1
        while end > start and form.text[end - 1] == " ":
            end -= 1
        first, last = form.index[start], form.index[end - 1] + 1
        key, offset = self.where(first)
        return key, offset, offset + (last - first)

    def find(self, needle: str, key: str | None = None) -> Iterator[tuple[str, int, int]]:
        """Yield (key, start, end) of each exact occurrence, in corpus order, optionally within one text."""
        lo, hi = 0, len(self.joined)
        if key is not None:
            slot = self.slots[key]
            lo = self.offsets[slot]
            hi = self.offsets[slot + 1] - 1 if slot + 1 < len(self.offsets) else len(self.joined)
        hit = self.joined.find(needle, lo, hi)
        while hit >= 0:
            found_key, offset = self.where(hit)
            yield found_key, offset, offset + len(needle)
            hit = self.joined.find(needle, hit + 1, hi)

    def find_normalized(self, needle: str, key: str | None = None) -> Iterator[tuple[str, int, int]]:
        """Yield (key, start, end) in original offsets of each match after normalisation (white space
        squeezed out when the needle holds CJK), in corpus order."""
        form = self.form(squeezed=holds_cjk(needle))
        target = form.prepare(needle)
        if not target:
            return
        lo, hi = (0, len(form.text)) if key is None else form.bounds(self.slots[key])
        hit = form.text.find(target, lo, hi)
        while hit >= 0:
            yield self.span_of(form, hit, hit + len(target))
            hit = form.text.find(target, hit + 1, hi)


class Locator:
    """Finds evidence in one snapshot's documents and chunks."""

    def __init__(self, chunks: Sequence[Chunk], documents: Sequence[Document] = (), min_score: float = 90.0,
                 scope: ScopeIndex | None = None):
        self.chunks = {c.chunk_id: c for c in chunks}
        self.scope = scope if scope is not None and scope.scoped else None
        """The chunks' scope, when any has one: a quote is then placed where its item's asker may use it."""
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

    def by_text(self, quote: str, doc_id: str | None = None,
                usable: Callable[[str], bool] | None = None) -> Location | None:
        """Return where `quote` sits: exact, then after normalisation, then fuzzy (>= min_score).

        With `doc_id`, only that document is searched. A text found in several places is placed at the
        first, or, with `usable` (is this chunk usable by the item's asker at its moment?), at the first
        place one of whose chunks is usable: when a sentence stands unchanged in the 2025 and the 2026
        policy, a question asked in 2026 quotes the 2026 one (`Location.elsewhere` counts the others).
        """
        quote = quote.strip()
        if not quote:
            return None
        key = doc_id if (doc_id is not None and self.documents) else None
        if doc_id is not None and self.documents and doc_id not in self.documents:
            return None
        found = self._first_usable(self._corpus.find(quote, key), "exact", usable)
        if found is not None:
            return found
        found = self._first_usable(self._corpus.find_normalized(quote, key), "normalized", usable)
        if found is not None:
            found.match_score = round(fuzz.ratio(quote, found.text), 1)  # how far the raw texts differ
            return found
        return self._fuzzy(quote, doc_id)

    def _first_usable(self, hits: Iterable[tuple[str, int, int]], method: str,
                      usable: Callable[[str], bool] | None) -> Location | None:
        """Return the first place of `hits` (the first whose chunks hold a usable one, with `usable`), with
        how many other places hold the same text; None when there is none."""
        first, chosen, places = None, None, 0
        for hit in hits:
            if usable is None:
                return self._to_location(*hit, method, 100.0)
            found = self._to_location(*hit, method, 100.0)
            places += 1
            first = first or found
            if chosen is None and any(usable(c) for c in found.chunk_ids):
                chosen = found
            if places >= MAX_PLACES:
                break
        found = chosen or first
        if found is not None:
            found.elsewhere = places - 1
        return found

    def usable_for(self, asker_groups: list[str] | None, moment: Moment | None) -> Callable[[str], bool] | None:
        """Return whether a chunk is usable by an asker at a moment, as a function for `by_text`; None when no
        chunk of the snapshot has a scope (every place is as good as another)."""
        if self.scope is None:
            return None
        scope = self.scope
        return lambda chunk_id: not scope.reasons(chunk_id, asker_groups, moment)

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
        """Return the best partial_ratio alignment (>= min_score) of the normalised quote within one
        normalised text (the texts at least as long as it: shorter ones would align backwards)."""
        corpus = self._corpus
        form = corpus.form(squeezed=holds_cjk(quote))
        target = form.prepare(quote)
        if not target:
            return None
        if doc_id is None:
            slots: Sequence[int] = form.candidates(target, self.min_score)
        elif self.documents:
            slots = [corpus.slots[doc_id]]
        else:
            slots = [corpus.slots[c.chunk_id] for c in self._by_doc.get(doc_id, ())]
        best, best_bounds = None, (0, 0)
        for slot in slots:
            a, b = form.bounds(slot)
            if b - a < len(target):
                continue
            alignment = fuzz.partial_ratio_alignment(target, form.text[a:b],
                                                     score_cutoff=max(self.min_score, best.score if best else 0))
            if alignment is not None and (best is None or alignment.score > best.score):
                best, best_bounds = alignment, (a, b)
        if best is None:
            return None
        a, b = best_bounds
        start, end, score = _widest_best(target, form.text[a:b], best.dest_start, best.dest_end, best.score)
        key, start, end = corpus.span_of(form, a + start, a + end)
        return self._to_location(key, start, end, "fuzzy", round(score, 1))


def _widest_best(target: str, text: str, start: int, end: int, score: float) -> tuple[int, int, float]:
    """Return (start, end, score) of the span of `text` around [start, end) whose fuzz.ratio with
    `target` is highest.

    partial_ratio's window is exactly as long as the target, but the copy in the text is longer
    where the target lost characters ("rejectd with eror UP-413." against "rejected with error
    UP-413."): its window then drops a character at one end, and "UP-41" would read as another code.
    Each end moves by at most the insertions and deletions the score allows, the end first, then the
    start, then the end again; a tie keeps the span found first.
    """
    slack = math.ceil(2 * len(target) * (100 - score) / 100) + 1
    best = (fuzz.ratio(target, text[start:end]), start, end)
    for moving in ("end", "start", "end"):
        _, a, b = best
        spans = ([(a, e) for e in range(max(a + 1, b - slack), min(len(text), b + slack) + 1)] if moving == "end"
                 else [(s, b) for s in range(max(0, a - slack), min(b - 1, a + slack) + 1)])
        for s, e in spans:
            ratio = fuzz.ratio(target, text[s:e], score_cutoff=best[0])
            if ratio > best[0]:
                best = (ratio, s, e)
    return best[1], best[2], best[0]


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
