"""Sentences of Chinese and English text, as character spans (shared by the chunker, the SQuAD
reader and evalrun's claims)."""

from __future__ import annotations

import re

# A sentence ends at Chinese 。！？； (closing quotes/brackets stay with it), at .!?; when
# white space or the end follows (so "3.2" and "e.g.x" are not cut), or at a line break.
_SENTENCE_END = re.compile(
    r"[。！？；!?][”’」』）)\"'\]]*"
    r"|[.;]+[”’\"')\]]*(?=\s|$)"
    r"|\n"
)


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Return (start, end) narrowed to exclude white space at either edge."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Return (start, end) of each sentence of text[start:end], white space trimmed.

    >>> s = "第一句。第二句！Third one. Fourth"
    >>> [s[a:b] for a, b in sentence_spans(s)]
    ['第一句。', '第二句！', 'Third one.', 'Fourth']
    """
    end = len(text) if end is None else end
    spans = []
    position = start
    for match in _SENTENCE_END.finditer(text, start, end):
        a, b = trim_span(text, position, match.end())
        if a < b:
            spans.append((a, b))
        position = match.end()
    a, b = trim_span(text, position, end)
    if a < b:
        spans.append((a, b))
    return spans
