"""Sentences of Chinese and English text, as character spans: the one splitter of the chunker, the
SQuAD reader, the leakage check's context and evalrun's claims.

Where a sentence ends (`sentence_spans`):

* At Chinese 。！？； and ｡ (and ． unless a digit follows, as in ３．５), with the closing quotes and
  brackets after them (他说：“走吧。”); at ASCII ! or ? right before a Chinese character; at a line break.
* Between those, English sentence ends come from sentencex (Wikimedia's rule-based segmenter), so
  abbreviations, initials and numbers do not end a sentence: "U.S.", "e.g.", "i.e.", "et al.",
  "Dr.", "Fig. 2", "No. 5", "9 a.m.", "J. R. R. Tolkien", "3.5", "v2.0.1", "10.0.0.1", URLs, e-mail
  addresses and file names. A few abbreviations sentencex does not know do not end one either
  (`ABBREVIATIONS`: "Eq. 3", "Suppl. Table 1", "Vol. 12"; "approx. 20" before a number, a lower-case
  word or a bracket).
* A semicolon (；, or ; followed by white space) ends a sentence, except inside brackets ("(0.4 vs.
  0.3; P < 0.001)", "（一说1985年；另说1986年）"), and a bare list number ("1.", "2)") stays with the
  sentence it numbers.
"""

from __future__ import annotations

import re

from sentencex import get_sentence_boundaries

_CLOSERS = r"[”’」』）)\"'\]]*"
# Ends no English rule may undo: Chinese ends, ! or ? before a Chinese character, line breaks.
_HARD_END = re.compile(r"(?:[。！？；｡]|．(?![0-9０-９]))" + _CLOSERS
                       + r"|[!?]+" + _CLOSERS + r"(?=[\u3400-\u4dbf\u4e00-\u9fff])|\n")
_SEMICOLON_END = re.compile(r";+" + _CLOSERS + r"(?=\s)")
_LIST_NUMBER = re.compile(r"\(?\d{1,3}[.)]")
_ENGLISH_END = re.compile(r"[.!?]")
# Abbreviations sentencex ends a sentence after (it knows "Fig.", "Ref.", "No.", "pp.", "cf.", "vs.",
# "ca.", "et al.", "e.g.", "i.e." ...). Those naming a part of a text (Eq. 3, Suppl. Table 1) end none;
# the others end none when a number, a lower-case word or a bracket follows ("approx. 20 mice").
REFERENCE_ABBREVIATIONS = frozenset("ch chap eq eqs figs refs sect suppl tab tabs vol vols".split())
ABBREVIATIONS = REFERENCE_ABBREVIATIONS | frozenset("approx est incl resp sp spp var".split())
_ABBREVIATION_BEFORE = re.compile(r"(?<![^\W\d_])([^\W\d_]+)\.\s*$")
_CONTINUES = re.compile(r"[\d(\[a-z]")


def _inside_brackets(text: str, start: int, end: int) -> bool:
    """Return whether a bracket opened in text[start:end] is still open at its end."""
    piece = text[start:end]
    return sum(map(piece.count, "([（【")) > sum(map(piece.count, ")]）】"))


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Return (start, end) narrowed to exclude white space at either edge."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _english_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Return the sentences of text[start:end] by sentencex's English rules, then at "; "."""
    if not _ENGLISH_END.search(text, start, end) and ";" not in text[start:end]:
        return [(start, end)]       # nothing here can end an English sentence
    spans = []
    for bound in get_sentence_boundaries("en", text[start:end]):
        a, b = start + bound["start_index"], start + bound["end_index"]
        for match in _SEMICOLON_END.finditer(text, a, b):
            if not _inside_brackets(text, a, match.start()):
                spans.append((a, match.end()))
                a = match.end()
        spans.append((a, b))
    return spans


def _joins_next(text: str, span: tuple[int, int], following: int) -> bool:
    """Return whether the sentence at `span` must take the one starting at `following` with it: it is a
    bare list number, or it ends in an abbreviation of ABBREVIATIONS (see there)."""
    if _LIST_NUMBER.fullmatch(text, *span):
        return True
    abbreviation = _ABBREVIATION_BEFORE.search(text, span[0], span[1])
    word = abbreviation.group(1).casefold() if abbreviation else ""
    return word in REFERENCE_ABBREVIATIONS or (word in ABBREVIATIONS and bool(_CONTINUES.match(text, following)))


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Return (start, end) of each sentence of text[start:end], white space trimmed (rules: the module
    docstring).

    >>> s = "第一句。他说：“第二句！”The U.S. team, e.g. Dr. Li, fixed v2.0.1 at 9 a.m. today. Fourth"
    >>> [s[a:b] for a, b in sentence_spans(s)]
    ['第一句。', '他说：“第二句！”', 'The U.S. team, e.g. Dr. Li, fixed v2.0.1 at 9 a.m. today.', 'Fourth']
    """
    end = len(text) if end is None else end
    pieces, position = [], start
    for match in _HARD_END.finditer(text, start, end):
        if text[match.start()] == "；" and _inside_brackets(text, position, match.start()):
            continue
        pieces.append((position, match.end()))
        position = match.end()
    pieces.append((position, end))
    spans: list[tuple[int, int]] = []
    for piece_start, piece_end in pieces:
        joining = False     # the last span takes the next one with it
        for a, b in _english_spans(text, piece_start, piece_end):
            a, b = trim_span(text, a, b)
            if a == b:
                continue
            if joining:
                spans[-1] = (spans[-1][0], b)
            else:
                spans.append((a, b))
            joining = b < piece_end and _joins_next(text, spans[-1], trim_span(text, b, piece_end)[0])
    return spans
