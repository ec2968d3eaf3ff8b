"""Confusable pairs mined from a KB without a model (`MinedPair`).

- near_copy: two passages that read alike (MinHash LSH over their folded character n-grams, then a
  rapidfuzz ratio of at least `NEAR_MIN`) and differ only in a few tokens, each of which is a code, a
  date, a number, a name or a negation: the 2025 and 2026 allowance rules, a contract's two editions,
  two people born in different years. A pair that also differs in wording is left out (a rewording is
  no near miss), and so is a pair whose shape repeats in more than `TEMPLATE_MAX` passages (a page
  footer, "updated on 2024-..."): boilerplate, not facts.
- near_code: two codes of one family (same letters, separator and number of digits) that differ in
  one digit, LG-4031 and LG-4032, each stated in a passage that does not name the other and is about
  it (the code in its first `SUBJECT_WITHIN` characters, as a list item or a sentence opens with it,
  and no list of `LIST_MIN` codes of the family or more).

A name is a differing word that is capitalised (English), or that each side's own document's title
holds (两个车站, 两种鱼: 大沙东站 and 大沙地站); any other differing word is wording. Every pair says what differs ("2025 ≠ 2026").
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from rapidfuzz import fuzz

from curate.checks.copy_pairs import edit_runs
from curate.generate.passages import ChunkPassage, chunk_passages, passage
from curate.index.minhash import candidate_pairs, signatures
from curate.index.ngrams import NgramIndex
from curate.records import Chunk
from curate.records.generated import Difference, MinedPair
from curate.text.normalize import fold_with_map, language_of

NEAR_MIN = 85.0       # passages this alike (rapidfuzz ratio of folded text) are near copies
MAX_RUNS = 3          # at most this many places where two near copies differ
MAX_RUN_CHARS = 16    # and none of them longer than this (folded characters)
TEMPLATE_MAX = 6      # a passage shape (numbers masked) in more documents than this,
BOILERPLATE_SHARE = 0.25  # and in a quarter of the documents at least, is boilerplate (a footer, a date line)
LIST_MIN = 3          # a passage naming this many codes of one family lists them: it is about none
SUBJECT_WITHIN = 40   # a code further into its passage is mentioned in passing ("models such as A300 ...")
GRAM, BANDS = 3, 32   # MinHash LSH over passages: character 3-grams, 32 bands of 2 of the 64 hashes
# boundaries are ASCII: 码 before LG-4031 or 年 after 2012 is no part of the token
CODE = re.compile(r"(?<![A-Za-z0-9_-])([A-Z]{1,8})([-_]?)(\d{2,8})(?![A-Za-z0-9_]|[-.]\d)")
_YEAR = re.compile(r"(?:1[89]|20)\d\d")
_DATE = re.compile(r"\d{4}[-/.年]\d{1,2}(?:[-/.月]\d{1,2}日?)?|\d{1,2}月\d{1,2}[日号]")
_MONTH = re.compile(r"jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec", re.IGNORECASE)
_NEGATION = re.compile(r"^(?:not|no|never|none|cannot|without|nor|n't|[不没無无非未别勿莫否])$", re.IGNORECASE)
_DIGIT = re.compile(r"\d")
_NUMBER_RUN = re.compile(r"\d+")
# a number, a range or a date, with at most a unit: 16, 13至14, 46~53, 2-4, 1,200, 16枚, 2003年4月, 3.5%
_NUMBER = re.compile(r"\d+(?:[.,:/~\-]\d+)*(?:\s*(?:[至到~\-]|年|月)\s*\d+(?:[.,]\d+)*)*[%‰]?"
                     r"[年月日号个次天元岁位名台项条倍枚米人座架辆]?")
_WORD_CHAR = re.compile(r"[A-Za-z0-9]")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_NAMED = re.compile(r"(?<![A-Za-z0-9_-])([A-Z]{1,8}[-_]?)(\d{2,})")   # named_codes: a code's head and its digits
_WORD_ASCII = re.compile(r"[A-Za-z0-9_]")
# what differs, most telling first: the question names the first (a code or a date identifies a side)
K = TypeVar("K")
PRIORITY: tuple[Difference, ...] = ("code", "date", "name", "number", "negation")


@dataclass
class Mined:
    """What mining found, and what it left out with why (counted)."""

    pairs: list[MinedPair] = field(default_factory=list)
    left_out: Counter = field(default_factory=Counter)


def pair_id(a: str, b: str) -> str:
    """Return the stable id of a pair of passages (either order): 'p-' and 10 hex digits."""
    return "p-" + hashlib.sha256("\n".join(sorted((a, b))).encode("utf-8")).hexdigest()[:10]


def classify(a: str, b: str) -> Difference | None:
    """Return what two differing tokens are, or None for a change of wording (a CJK name is told by
    its document's title: `name_in_title`).

    >>> classify("LG-4031", "LG-4032"), classify("2025", "2026"), classify("30", "60"), classify("", "不")
    ('code', 'date', 'number', 'negation')
    >>> classify("Berlin", "Munich"), classify("无", "具有"), classify("2至4", "2"), classify("文", "页")
    ('name', 'negation', 'number', None)
    >>> classify("", "高于候车室6米"), classify("1或Mk 2", "3")
    (None, None)
    """
    tokens = [t for t in (a.strip(), b.strip()) if t]
    if not tokens:
        return None
    if any(_NEGATION.match(t) for t in tokens) and all(_NEGATION.match(t) or len(t) <= 2 for t in tokens) \
            and not any(_DIGIT.search(t) for t in tokens):
        return "negation"
    if all(CODE.fullmatch(t) for t in tokens):
        return "code"
    if all(_NUMBER.fullmatch(t) for t in tokens):
        return "date" if all(_YEAR.fullmatch(t) or _DATE.fullmatch(t) for t in tokens) else "number"
    if len(tokens) == 2 and all(_MONTH.fullmatch(t) for t in tokens):
        return "date"
    if len(tokens) == 2 and all(re.fullmatch(r"[A-Z][\w.-]*(?: [A-Z][\w.-]*){0,3}", t) for t in tokens):
        return "name"
    return None


def name_in_title(passage: str, start: int, end: int, title: str | None) -> tuple[int, int] | None:
    """Return passage[start:end] widened to the longest stretch around it that the document's title
    holds (大沙东站 for 东 in "随后大沙东站于2007年"), or None when the title does not hold it, or it is
    shorter than two characters.

    >>> text = "随后大沙东站于2007年正式开工；"
    >>> span = name_in_title(text, 4, 5, "大沙东站")
    >>> text[span[0]:span[1]]
    '大沙东站'
    """
    if not title or start >= end or passage[start:end] not in title:
        return None
    best = (start, end)
    for a in range(start, max(-1, start - len(title)), -1):
        for b in range(max(end, best[1]), min(len(passage), a + len(title)) + 1):
            if passage[a:b] in title and b - a > best[1] - best[0]:
                best = (a, b)
    return best if best[1] - best[0] >= 2 else None


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """Return text[start:end] widened to whole tokens: Latin letters and digits (with the - . / : , that
    join them) to both sides, and a run of digits beside a CJK character."""
    joiners = "-./:,年月"   # 年 and 月 join digits into one date: 2003年4月7日
    while start > 0 and (_WORD_CHAR.match(text[start - 1])
                         or (text[start - 1] in joiners and start > 1 and _WORD_CHAR.match(text[start - 2]))):
        start -= 1
    while end < len(text) and (_WORD_CHAR.match(text[end])
                               or (text[end] in joiners and end + 1 < len(text) and _WORD_CHAR.match(text[end + 1]))):
        end += 1
    if end < len(text) and text[end] in "日号" and text[end - 1].isdigit() and "月" in text[start:end]:
        end += 1
    return start, end


def differences(a: str, b: str) -> list[tuple[str, str]] | None:
    """Return the (token of a, token of b) where two texts differ, compared folded (case, width, white
    space and punctuation do not count) and widened to whole tokens; None when they differ in more than
    MAX_RUNS places or in a run longer than MAX_RUN_CHARS.

    >>> differences("LG-4031 tokens expire after 30 days.", "LG-4032 tokens expire after 60 days.")
    [('LG-4031', 'LG-4032'), ('30', '60')]
    >>> differences("2025年起，每日补贴为 300 元。", "2026 年起，每日补贴为 350 元。")
    [('2025', '2026'), ('300', '350')]
    """
    folded_a, index_a = fold_with_map(a)
    folded_b, index_b = fold_with_map(b)
    changes = edit_runs(folded_a, folded_b)   # [a start, a end, b start, b end] of each run, folded
    spans: list[list[int]] = []     # the same, widened to whole tokens of the texts themselves
    for i1, i2, j1, j2 in changes:
        if max(i2 - i1, j2 - j1) > MAX_RUN_CHARS:
            return None
        span = [*_token_span(a, index_a, i1, i2), *_token_span(b, index_b, j1, j2)]
        if spans and (span[0] < spans[-1][1] or span[2] < spans[-1][3]):   # one token edited twice
            spans[-1] = [spans[-1][0], max(span[1], spans[-1][1]), spans[-1][2], max(span[3], spans[-1][3])]
        else:
            spans.append(span)
    if len(spans) > MAX_RUNS:
        return None
    return [(a[x1:x2].strip(), b[y1:y2].strip()) for x1, x2, y1, y2 in spans]


def _token_span(text: str, index: list[int], start: int, end: int) -> tuple[int, int]:
    """Return the span of `text` under folded[start:end], widened to whole Latin or digit tokens (an
    insertion point inside such a token: that token; elsewhere: an empty span)."""
    if start == end:   # an insertion point: the Latin or digit token beside it ("2" of "2犬齿" for "2至4犬齿")
        at = index[start] if start < len(index) else len(text)
        before = index[start - 1] if start > 0 else None
        if before is not None and _WORD_CHAR.match(text[before]):
            return _widen(text, before, before + 1)
        if at < len(text) and _WORD_CHAR.match(text[at]):
            return _widen(text, at, at + 1)
        return at, at
    x, y = index[start], index[end - 1] + 1
    if _WORD_CHAR.match(text[x]) or _WORD_CHAR.match(text[y - 1]):
        x, y = _widen(text, x, y)
    return x, y


def mine(chunks: Sequence[Chunk]) -> Mined:
    """Return the confusable pairs of a KB's chunks: near copies among their sentences and near codes
    among their lines, each pair within one language (a Chinese question's near miss is Chinese), the
    titles of the documents telling names."""
    languages = [language_of(c.text) for c in chunks]
    mined = Mined()
    for language in sorted(set(languages)):
        own = [position for position, lang in enumerate(languages) if lang == language]
        part = [chunks[position] for position in own]
        for found in (near_copies(part, chunk_passages(part)),
                      near_codes(part, chunk_passages(part, lines=True, holding=CODE))):
            mined.pairs += found.pairs
            mined.left_out.update(found.left_out)
    return mined


def near_copies(chunks: Sequence[Chunk], passages: Sequence[ChunkPassage], *, near_min: float = NEAR_MIN) -> Mined:
    """Return the near-copy pairs among `passages` (of `chunks`), and what was left out and why."""
    mined = Mined()
    first: dict[str, int] = {}
    for k, found in enumerate(passages):
        first.setdefault(found.folded, k)      # the same passage in two chunks (overlap) is one passage
    unique = sorted(first.values())
    shapes: dict[str, set[str]] = defaultdict(set)     # shape -> the documents it is in
    for k in unique:
        shapes[shape(passages[k].folded)].add(chunks[passages[k].chunk].doc_id)
    boilerplate = boilerplate_shapes(shapes, len({c.doc_id for c in chunks}))
    # passages are short: 3-grams, and bands of two rows, find two 25-character sentences that differ
    # in two numbers (Jaccard about 0.5) nearly always; the ratio below keeps only the near copies
    index = NgramIndex.build([passages[k].folded for k in unique], n=GRAM)
    for x, y in sorted(candidate_pairs(signatures(index, len(unique)), bands=BANDS)):
        a, b = passages[unique[x]], passages[unique[y]]
        score = fuzz.ratio(a.folded, b.folded)
        if score < near_min:
            continue
        found = copy_pair(chunks, a, b, score, boilerplate)
        if isinstance(found, str):
            mined.left_out[found] += 1
        else:
            mined.pairs.append(found)
    return mined


def boilerplate_shapes(shapes: dict[K, set[str]], documents: int) -> set[K]:
    """Return the shapes that are boilerplate: in more than TEMPLATE_MAX of the `documents` (a language's), and in
    a quarter of them at least (`shapes`: each shape, or a digest of it, and the documents it is in).

    >>> sorted(boilerplate_shapes({"footer0": {f"d{k}" for k in range(8)}, "fact": {"d1", "d2"}}, 30))
    ['footer0']
    """
    return {masked for masked, docs in shapes.items()
            if len(docs) > TEMPLATE_MAX and len(docs) >= BOILERPLATE_SHARE * documents}


def shape(folded: str) -> str:
    """Return a passage's shape: its folded text with every number masked."""
    return _NUMBER_RUN.sub("0", folded)


def copy_pair(chunks, a: ChunkPassage, b: ChunkPassage, score: float, boilerplate: set[str]) -> MinedPair | str:
    """Return the near-copy pair of passages `a` and `b` (`chunks[a.chunk]` holds `a`: a list, or a mapping
    of snapshot positions), or why it is left out."""
    reason = _pair_reason(chunks, a, b, boilerplate)
    if isinstance(reason, str):
        return reason
    difference, token_a, token_b = reason
    pa, pb = passage(chunks, a), passage(chunks, b)
    return MinedPair(pair_id=pair_id(f"{pa.chunk_id}:{a.start}", f"{pb.chunk_id}:{b.start}"), kind="near_copy",
                     difference=difference, differs=f"{token_a or '(none)'} ≠ {token_b or '(none)'}",
                     token_a=token_a, token_b=token_b, score=round(score, 1), a=pa, b=pb)


def _pair_reason(chunks, a: ChunkPassage, b: ChunkPassage, boilerplate: set[str]) -> tuple[Difference, str, str] | str:
    """Return (what differs, token of a, token of b) for a near-copy pair, or why it is left out."""
    if shape(a.folded) in boilerplate:
        return "boilerplate (its shape repeats in many passages)"
    text_a, text_b = chunks[a.chunk].text[a.start:a.end], chunks[b.chunk].text[b.start:b.end]
    runs = differences(text_a, text_b)
    if runs is None:
        return "differs in too many places"
    if not runs:
        return "no difference but punctuation or white space"
    kinds = [classify(x, y) for x, y in runs]
    for k, (x, y) in enumerate(runs):
        if kinds[k] is None:   # a word that is each side's own document's name (a station, a species)
            names = _titled(text_a, x, chunks[a.chunk]), _titled(text_b, y, chunks[b.chunk])
            if names[0] and names[1] and names[0] != names[1]:
                kinds[k], runs[k] = "name", names
    if any(kind is None for kind in kinds):
        return "differs in wording, not only in a code, number, date, name or negation"
    best = min(range(len(runs)), key=lambda k: PRIORITY.index(kinds[k]))
    return kinds[best], runs[best][0], runs[best][1]


def _titled(text: str, token: str, chunk: Chunk) -> str | None:
    """Return the name `token` is part of, when its document's title holds it, else None."""
    at = text.find(token) if token else -1
    title = chunk.metadata.get("title")
    span = name_in_title(text, at, at + len(token), str(title)) if at >= 0 and title else None
    return text[span[0]:span[1]] if span else None


def near_codes(chunks: Sequence[Chunk], passages: Sequence[ChunkPassage]) -> Mined:
    """Return the pairs of codes of one family that differ in one digit, each stated in a passage that
    is about it (`_stated_apart`), and the pairs left out and why."""
    mined = Mined()
    where: dict[str, list[tuple[int, int]]] = defaultdict(list)   # code -> (its offset in the passage, passage)
    lists: set[int] = set()
    for k, found in enumerate(passages):
        stated, listed = codes_in(chunks[found.chunk].text[found.start:found.end])
        for code, offset in stated:
            where[code].append((offset, k))
        if listed:
            lists.add(k)
    for x, y in code_pairs(where):
        a = _stated_apart(chunks, passages, where, x, y, lists)
        b = _stated_apart(chunks, passages, where, y, x, lists)
        if a is None or b is None:
            mined.left_out[NEVER_APART] += 1
            continue
        mined.pairs.append(code_pair(chunks, passages[a], passages[b], x, y))
    return mined


NEVER_APART = "codes never stated apart, or only in passing"


def codes_in(text: str) -> tuple[list[tuple[str, int]], bool]:
    """Return the codes a passage states, each with its offset, and whether it lists LIST_MIN codes of one
    family or more.

    >>> codes_in("- LG-4031：路由权限未授予。")
    ([('LG-4031', 2)], False)
    >>> codes_in("A320、A310 和 A380")[1]
    True
    """
    stated = [(match.group(0), match.start()) for match in CODE.finditer(text)]
    named: dict[tuple[str, str, int], set[str]] = defaultdict(set)
    for code, _ in stated:
        named[family(code)].add(code)
    return stated, any(len(codes) > LIST_MIN - 1 for codes in named.values())


def about(offset: int, listed: bool) -> bool:
    """Return whether a passage is about a code it states at `offset`: within its first SUBJECT_WITHIN
    characters, in no list of codes (a code further in is mentioned in passing)."""
    return offset < SUBJECT_WITHIN and not listed


def code_pairs(codes: Iterable[str]) -> Iterator[tuple[str, str]]:
    """Yield the pairs of codes of one family that differ in one digit: families in the order of their
    first code, codes sorted.

    >>> list(code_pairs(["LG-4032", "LG-4031", "LG-5131", "AB-4031", "LG4033"]))
    [('LG-4031', 'LG-4032')]
    """
    families: dict[tuple[str, str, int], list[str]] = defaultdict(list)
    for code in sorted(codes):
        families[family(code)].append(code)
    for same in families.values():
        for i, x in enumerate(same):
            for y in same[i + 1:]:
                if sum(p != q for p, q in zip(x, y)) == 1:
                    yield x, y


def code_pair(chunks, a: ChunkPassage, b: ChunkPassage, x: str, y: str) -> MinedPair:
    """Return the near-code pair of `x` stated in passage `a` and `y` in `b` (`chunks[a.chunk]` holds `a`)."""
    pa, pb = passage(chunks, a), passage(chunks, b)
    return MinedPair(pair_id=pair_id(f"{pa.chunk_id}:{x}", f"{pb.chunk_id}:{y}"), kind="near_code",
                     difference="code", differs=f"{x} ≠ {y}", token_a=x, token_b=y,
                     score=round(fuzz.ratio(a.folded, b.folded), 1), a=pa, b=pb)


def family(code: str) -> tuple[str, str, int]:
    """Return a code's family: its letters, its separator and its number of digits (LG-4031: LG, -, 4)."""
    match = CODE.fullmatch(code)
    return match.group(1), match.group(2), len(match.group(3))


def named_codes(text: str) -> set[str]:
    """Return every code `text` names as a word of its own: each `other` for which
    `(?<![A-Za-z0-9_-])other(?![A-Za-z0-9_])` is found in it (a code before ".5" or "-2" included, which
    CODE does not state), so a passage's names can be kept without its text.

    >>> sorted(named_codes("LG-4031 或 LG-4032.5，非 xLG-4033"))
    ['LG-4031', 'LG-4032']
    """
    found = set()
    for match in _NAMED.finditer(text):
        head, digits = match.group(1), match.group(2)
        for width in range(2, min(8, len(digits)) + 1):   # an ASCII digit after the code joins it; \d is wider
            after = digits[width] if width < len(digits) else text[match.end():match.end() + 1]
            if not after or not _WORD_ASCII.match(after):
                found.add(head + digits[:width])
    return found


def _stated_apart(chunks: Sequence[Chunk], passages: Sequence[ChunkPassage],
                  where: dict[str, list[tuple[int, int]]], code: str, other: str, lists: set[int]) -> int | None:
    """Return the passage that states `code` and is about it (`about`), the `other` code not named
    ("A320、A310 和 A380"); of those, the one where the code comes first (a list item that opens with it),
    the earlier passage on a tie."""
    apart = [(offset, k) for offset, k in where[code] if about(offset, k in lists)
             and other not in named_codes(chunks[passages[k].chunk].text[passages[k].start:passages[k].end])]
    return min(apart)[1] if apart else None
