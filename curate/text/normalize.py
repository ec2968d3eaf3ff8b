"""Text normalisation and folding, one set of rules for locating evidence and for the duplicate and
leakage checks.

Both levels start from one canonical form of each character (`canonical`): NFKC (full-width and
half-width alike), case-folded, and the marks NFKC leaves apart made one (`MARKS`: the full stops
。｡．. ; curly and straight quotes; middle dots ·・‧; hyphens and dashes ‐‒–—―−).

- `normalize_with_map` (locating a quote): the canonical text, white space next to a CJK character or
  CJK punctuation mark dropped (a corpus segmented with spaces, "大桥 于 2018年 开通 ， 全长 55 公里 。",
  reads as "大桥于2018年开通,全长55公里."; "： 2013" as ":2013"), other runs of white space made one
  space. Punctuation stays. Whether a mark is CJK is read before NFKC: ，：；！？ are CJK punctuation
  although NFKC makes them , : ; ! ?.
- `squeeze_spaces` (locating a Chinese quote copied without the corpus's spaces, "MS物业于1993年"
  against "MS 物业 于 1993 年"): the normalised text without any white space, except one space
  between two digits ("2013 2014" is two numbers, "20132014" is one).
- `fold` / `fold_with_map` (matching): the normalised text without white space or punctuation, except
  the symbols that carry meaning where they touch a number or a word (`KEPT_SYMBOLS`): `+` and `#`
  after a letter or digit (A+, C#, C++) and `+` or `#` before a digit (+86, #5); `%`, `‰` and `°` after a
  digit (50%, 30°C; ℃ is °c); the currency signs `$ € ¥ £` beside a digit ($5, 100¥). "A+" is not "A",
  "C#" is not "C", "50%" is not "50". Letters stay, so units (km, kg, GB) stay.

fold(normalize(text)) == fold(text): the levels differ only in white space and punctuation, so a
quote that locate finds is a text the leakage check would match, and the other way round.
"""

from __future__ import annotations

import re
import unicodedata
from array import array
from collections.abc import Sequence

import numpy as np

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")
# What normalize_with_map takes at once: white space, printable ASCII words with single spaces between
# them (which stay as they are), CJK ideographs, or one character.
_RUN = re.compile(r"\s+|[!-~]+(?: [!-~]+)*|[\u4e00-\u9fff]+|.", re.DOTALL)

# Characters next to which white space carries no meaning: CJK ideographs, kana, CJK punctuation and
# full-width forms (。、「」 and also ，：；！？（）, which NFKC makes ASCII: a segmented corpus writes
# "公里 ， 于" and "： 2013"). Curly quotes are not among them: English uses them too.
_CJK_CONTEXT = re.compile(r"[\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u312f\u31a0-\u31ff"
                          r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\ufe30-\ufe4f"
                          r"\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff9f]")

MARKS = {
    "。": ".",                                            # ｡ is 。 and ． is . after NFKC
    "“": '"', "”": '"', "„": '"', "‟": '"', "‘": "'", "’": "'", "‚": "'", "‛": "'",
    "・": "·", "‧": "·",
    "‐": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-",
}

KEPT_SYMBOLS = "+#%‰°$€¥£"
_SPACE = re.compile(r"\s+")
_NOT_WORD = re.compile(r"[\W_]+")
# What fold removes from the canonical text once white space is gone: punctuation and `_`, and a
# kept symbol that touches no number or word.
_DROP = re.compile(
    r"[^\w" + re.escape(KEPT_SYMBOLS) + r"]|_"
    r"|(?<![^\W_])(?<![+#])[+#]+(?![+#\d])"      # a run of + or # with no letter or digit before it, no digit after
    r"|(?<!\d)[%‰°]"                             # % ‰ ° after no digit
    r"|(?<!\d)[$€¥£](?!\d)"                      # a currency sign beside no digit
)


def language_of(text: str) -> str:
    """Return 'zh' when CJK characters outnumber Latin words in `text`, else 'en'.

    >>> language_of("错误码 LG-4031 是什么意思？"), language_of("What does LG-4031 mean?")
    ('zh', 'en')
    """
    return "zh" if len(_CJK.findall(text)) >= max(1, len(_LATIN_WORD.findall(text))) else "en"


def canonical(text: str) -> str:
    """Return `text` in the canonical form both levels start from: NFKC, case-folded, MARKS made one.

    >>> canonical("Ａ。“Ｂ”—Ｃ")
    'a."b"-c'
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    for mark, same in MARKS.items():   # str.replace on the few marks present: translate is 2x slower
        if mark in text:
            text = text.replace(mark, same)
    return text


def _canonical_char(char: str) -> str:
    return char.lower() if char.isascii() else canonical(char)


def holds_cjk(text: str) -> bool:
    """Return whether `text` holds a CJK character or CJK punctuation mark (next to which white space
    carries no meaning).

    >>> holds_cjk("MS 物业"), holds_cjk("：2013"), holds_cjk("“MS” 2013")
    (True, True, False)
    """
    return bool(_CJK_CONTEXT.search(text))


def normalize_with_map(text: str) -> tuple[str, array]:
    """Return (normalised text, index map): canonical characters, white space next to a CJK character
    or CJK punctuation mark dropped, other white space runs made one space.

    map[i] is the offset in `text` of the character that produced normalised character i,
    and map[len] is len(text), so a normalised span [a, b) maps back to [map[a], map[b-1]+1).

    >>> norm, index = normalize_with_map("Ａ  b，C")
    >>> norm, list(index)
    ('a b,c', [0, 1, 3, 4, 5, 6])
    >>> normalize_with_map("大桥 于 2018年 开通 。 \\n”， 于 ： 2013")[0]
    '大桥于2018年开通.",于:2013'
    """
    out: list[str] = []
    index = array("l")
    space_at = None          # offset of a pending run of white space
    last_cjk = False         # the last character before it was a CJK one
    # Runs of printable ASCII (lower-cased) and of CJK ideographs (their own canonical form) are
    # taken whole: 5x faster on a KB than a character at a time, with the same result.
    for run in _RUN.finditer(text):
        start, first = run.start(), text[run.start()]
        if first.isspace():
            if space_at is None:
                space_at = start
            continue
        if first <= "~" and first > " ":
            pieces, cjk, offsets = run.group().lower(), False, range(start, run.end())
        elif "\u4e00" <= first <= "\u9fff":
            pieces, cjk, offsets = run.group(), True, range(start, run.end())
        else:
            canonical_char = _canonical_char(first)
            pieces = "".join(piece for piece in canonical_char if not piece.isspace())
            cjk = not first.isascii() and bool(_CJK_CONTEXT.match(first))   # the mark as written, before NFKC
            offsets = [start] * len(pieces)
        if space_at is not None:
            if not (cjk or last_cjk):
                out.append(" ")
                index.append(space_at)
            space_at = None
        out.append(pieces)
        index.extend(offsets)
        last_cjk = cjk
    if space_at is not None and not last_cjk:
        out.append(" ")
        index.append(space_at)
    index.append(len(text))
    return "".join(out), index


def squeeze_spaces(norm: str, index: Sequence[int]) -> tuple[str, array]:
    """Return normalize_with_map's (text, map) without white space, except one space between two
    digits (0-9: NFKC has made full-width ones ASCII); the map points at the original text as
    `index` does.

    >>> squeeze_spaces(*normalize_with_map("MS 物业 于 1993 年，Red Hat 2013 2014"))[0]
    'ms物业于1993年,redhat2013 2014'
    """
    codes = np.frombuffer(norm.encode("utf-32-le"), dtype=np.uint32)
    digit = (codes >= ord("0")) & (codes <= ord("9"))
    between_digits = np.zeros(len(codes), dtype=bool)
    between_digits[1:-1] = digit[:-2] & digit[2:]
    keep = (codes != ord(" ")) | between_digits          # normalize_with_map leaves no other white space
    offsets = np.asarray(index, dtype=np.int64)[np.append(keep, True)]      # and the closing len(text)
    kept = array("l")
    kept.frombytes(offsets.astype(f"i{kept.itemsize}").tobytes())
    return codes[keep].tobytes().decode("utf-32-le"), kept


def normalize(text: str) -> str:
    """Return `text` normalised as normalize_with_map does, without the map.

    >>> normalize("  Hello,  WORLD ")
    ' hello, world '
    """
    return normalize_with_map(text)[0]


def fold(text: str) -> str:
    """Return `text` reduced for matching: canonical, without white space and punctuation, the
    meaningful symbols kept (see the module docstring).

    >>> fold("ＬＧ-4031：令牌 过期！") == fold("lg4031令牌过期")
    True
    >>> fold("A+ 与 C# 占 50％"), fold("A 与 C 占 50")
    ('a+与c#占50%', 'a与c占50')
    """
    text = canonical(text)
    if not any(symbol in text for symbol in KEPT_SYMBOLS):
        return _NOT_WORD.sub("", text)      # the common case, 4x faster than _DROP
    return _DROP.sub("", _SPACE.sub("", text))


def fold_with_map(text: str) -> tuple[str, list[int]]:
    """Return fold(text) and, for each of its characters, the offset it came from in `text`.

    >>> folded, index = fold_with_map("Ａ, b！")
    >>> folded, index
    ('ab', [0, 3])
    >>> fold_with_map("C ++")
    ('c++', [0, 2, 3])
    """
    chars: list[str] = []
    offsets: list[int] = []
    for position, char in enumerate(text):
        for piece in _canonical_char(char):
            if not piece.isspace():
                chars.append(piece)
                offsets.append(position)
    spaceless = "".join(chars)
    out: list[str] = []
    index: list[int] = []
    kept = 0
    for drop in _DROP.finditer(spaceless):
        out.append(spaceless[kept:drop.start()])
        index.extend(offsets[kept:drop.start()])
        kept = drop.end()
    out.append(spaceless[kept:])
    index.extend(offsets[kept:])
    return "".join(out), index


def unfold_span(text: str, start: int, end: int) -> str:
    """Return the part of `text` whose folded form is fold(text)[start:end]."""
    _, index = fold_with_map(text)
    if not index or start >= len(index) or end <= start:
        return ""
    return text[index[start]:index[min(end, len(index)) - 1] + 1]
