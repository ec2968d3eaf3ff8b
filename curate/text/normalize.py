"""Text normalisation shared by evidence location and (later) duplicate and leakage checks."""

from __future__ import annotations

import re
import unicodedata
from array import array

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")


def language_of(text: str) -> str:
    """Return 'zh' when CJK characters outnumber Latin words in `text`, else 'en'.

    >>> language_of("错误码 LG-4031 是什么意思？"), language_of("What does LG-4031 mean?")
    ('zh', 'en')
    """
    return "zh" if len(_CJK.findall(text)) >= max(1, len(_LATIN_WORD.findall(text))) else "en"


def normalize_with_map(text: str) -> tuple[str, array]:
    """Return (normalised text, index map): NFKC, case-folded, white space runs made one space.

    map[i] is the offset in `text` of the character that produced normalised character i,
    and map[len] is len(text), so a normalised span [a, b) maps back to [map[a], map[b-1]+1).

    >>> norm, index = normalize_with_map("Ａ  b，C")
    >>> norm, list(index)
    ('a b,c', [0, 1, 3, 4, 5, 6])
    """
    out: list[str] = []
    index = array("l")
    in_space = False
    for position, char in enumerate(text):
        if char.isspace():
            if not in_space:
                out.append(" ")
                index.append(position)
            in_space = True
            continue
        in_space = False
        folded = unicodedata.normalize("NFKC", char).casefold() if not char.isascii() else char.lower()
        for piece in folded:
            if piece.isspace():
                continue
            out.append(piece)
            index.append(position)
    index.append(len(text))
    return "".join(out), index


def normalize(text: str) -> str:
    """Return `text` normalised as normalize_with_map does, without the map.

    >>> normalize("  Hello，  WORLD ")
    ' hello, world '
    """
    return normalize_with_map(text)[0]


_NOT_WORD = re.compile(r"[\W_]+")


def fold(text: str) -> str:
    """Return `text` reduced for matching: NFKC, case-folded, white space and punctuation removed.

    >>> fold("ＬＧ-4031：令牌 过期！") == fold("lg4031令牌过期")
    True
    """
    return _NOT_WORD.sub("", unicodedata.normalize("NFKC", text).casefold())


def fold_with_map(text: str) -> tuple[str, list[int]]:
    """Return fold(text) and, for each of its characters, the offset it came from in `text`.

    >>> folded, index = fold_with_map("Ａ, b！")
    >>> folded, index
    ('ab', [0, 3])
    """
    out: list[str] = []
    index: list[int] = []
    for position, char in enumerate(text):
        for piece in fold(char):
            out.append(piece)
            index.append(position)
    return "".join(out), index


def unfold_span(text: str, start: int, end: int) -> str:
    """Return the part of `text` whose folded form is fold(text)[start:end]."""
    _, index = fold_with_map(text)
    if not index or start >= len(index):
        return ""
    return text[index[start]:index[min(end, len(index)) - 1] + 1]
