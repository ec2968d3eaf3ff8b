"""Chunkers that return character spans into the source, so text == source[start:end].

Two chunkers: fixed windows with overlap, and a structure-aware one that keeps
headings with their section, packs whole paragraphs, and splits long paragraphs
at sentence ends (curate.text.sentences: Chinese 。！？； and English ends, not after
abbreviations, initials or inside numbers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from curate.text.sentences import sentence_spans, trim_span

_BLANK_LINES = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_HEADING = re.compile(r"#{1,6}[ \t]+\S")


@dataclass(frozen=True, slots=True)
class Span:
    """A chunk's place in its document, with the heading path above it."""

    start: int
    end: int
    section: str = ""


def fixed_spans(text: str, size: int = 500, overlap: int = 50) -> list[Span]:
    """Return windows of at most `size` characters, each sharing `overlap` with the next.

    >>> [(s.start, s.end) for s in fixed_spans("abcdefghij", size=4, overlap=1)]
    [(0, 4), (3, 7), (6, 10)]
    """
    if size <= 0 or not 0 <= overlap < size:
        raise ValueError(f"need size > 0 and 0 <= overlap < size, got size={size}, overlap={overlap}")
    spans: list[Span] = []
    step = size - overlap
    position = 0
    while position < len(text):
        start, end = trim_span(text, position, min(position + size, len(text)))
        if start < end:
            spans.append(Span(start, end))
        if position + size >= len(text):
            break
        position += step
    return spans


def _blocks(text: str) -> list[tuple[int, int]]:
    """Return the spans of paragraphs (runs of text between blank lines)."""
    blocks = []
    position = 0
    for match in _BLANK_LINES.finditer(text):
        a, b = trim_span(text, position, match.start())
        if a < b:
            blocks.append((a, b))
        position = match.end()
    a, b = trim_span(text, position, len(text))
    if a < b:
        blocks.append((a, b))
    return blocks


def structure_spans(text: str, size: int = 500) -> list[Span]:
    """Return chunks that follow the document's structure and stay within `size` characters.

    A heading starts a new chunk and stays with the text under it; a heading with no text of
    its own (another heading follows it) stays with the next one, and a heading that ends the
    document joins the chunk before it, so no chunk is only headings while the size allows;
    paragraphs are packed whole while they fit; a paragraph longer than `size` is packed
    sentence by sentence; a sentence longer than `size` is cut into windows.

    >>> doc = "# A\\n\\nOne. Two.\\n\\n# B\\n\\nThree."
    >>> [(doc[s.start:s.end], s.section) for s in structure_spans(doc, size=20)]
    [('# A\\n\\nOne. Two.', 'A'), ('# B\\n\\nThree.', 'B')]
    >>> doc = "# A\\n\\n## B\\n\\nOne."
    >>> [(doc[s.start:s.end], s.section) for s in structure_spans(doc, size=20)]
    [('# A\\n\\n## B\\n\\nOne.', 'A > B')]
    """
    if size <= 0:
        raise ValueError(f"need size > 0, got {size}")
    spans: list[Span] = []
    headings: list[tuple[int, str]] = []  # (level, title) from the top
    section = ""
    chunk_start: int | None = None
    chunk_end = 0
    headings_only = False  # the open chunk holds headings and nothing else yet

    def flush() -> None:
        nonlocal chunk_start
        if chunk_start is not None:
            spans.append(Span(chunk_start, chunk_end, section))
            chunk_start = None

    def add(a: int, b: int) -> None:
        nonlocal chunk_start, chunk_end
        if chunk_start is not None and b - chunk_start <= size:
            chunk_end = b
            return
        # headings waiting for the text under them take its first sentences while they fit (the
        # paragraph is split at a sentence end, as a long one is), never standing alone
        alone = headings_only and chunk_start is not None
        if not alone:
            flush()
            if b - a <= size:
                chunk_start, chunk_end = a, b
                return
        for sa, sb in sentence_spans(text, a, b):
            if chunk_start is not None and sb - chunk_start <= size:
                chunk_end = sb
                alone = False
                continue
            if alone:
                # the sentence does not fit beside the headings: its head joins them, cut as below
                cut = text.rfind(" ", sa + 1, chunk_start + size + 1)
                cut = chunk_start + size if cut == -1 and " " not in text[sa:sb] else cut
                if cut > sa:
                    _, end = trim_span(text, chunk_start, cut)
                    spans.append(Span(chunk_start, end, section))
                    chunk_start = None
                    sa, _ = trim_span(text, cut, sb)
                alone = False
            flush()
            while sb - sa > size:
                # An over-long sentence: cut at the last white space in the window (never mid-word
                # in English), or at the window's end for text without spaces such as Chinese.
                cut = text.rfind(" ", sa + size // 2, sa + size + 1)
                cut = sa + size if cut <= sa else cut
                a, b = trim_span(text, sa, cut)
                if a < b:
                    spans.append(Span(a, b, section))
                sa, _ = trim_span(text, cut, sb)
            if sa < sb:  # the tail stays open, so the sentences after it can join it
                chunk_start, chunk_end = sa, sb

    for a, b in _blocks(text):
        # A block may open with a heading line; the heading starts a new chunk, unless the open chunk
        # is only headings (they stay with the text under this one).
        heading_block = bool(_HEADING.match(text, a))
        if heading_block:
            for heading in text[a:b].splitlines():   # the heading lines that open the block
                if not _HEADING.match(heading.strip()):
                    break
                heading = heading.strip()
                level = len(heading) - len(heading.lstrip("#"))
                headings = [h for h in headings if h[0] < level] + [(level, heading.lstrip("#").strip())]
            if not headings_only or (chunk_start is not None and b - chunk_start > size):
                flush()
            section = " > ".join(title for _, title in headings)
        add(a, b)
        headings_only = heading_block and all(_HEADING.match(line) for line in text[a:b].splitlines() if line.strip())
    if headings_only and chunk_start is not None and spans and chunk_end - spans[-1].start <= size:
        # headings that end the document, with nothing under them: they join the chunk before
        spans[-1] = Span(spans[-1].start, chunk_end, spans[-1].section)
        chunk_start = None
    flush()
    return spans
