"""The facts a counterfactual probe changes, found with their places in a text, and changed by rule.

A fact is one token of these kinds, found in this order of precedence (a token taken by an earlier kind
is no part of a later one):

- date: 2026年3月1日 (号 too), 2026年3月, 3月1日, 2026-03-01 (or / and .), March 1, 2026, 1 March 2026;
- code: one to eight capitals, an optional - or _, two to eight digits (LG-4031), the rule curate's miner
  uses for codes;
- amount: a number after a currency sign ($89.99, ¥1,200);
- number: digits with thousands commas and decimals (1,200, 3.5), a percentage (15%), or a year
  (a whole number 1800-2099); a version (2.0.1), a range (10-14), a list marker ("1." opening a line or sentence), a
  month or day without the rest of its date (3月, 5日) and a number inside a code or word are not facts;
- zh_number: Chinese numerals before a unit (三十天, 两个, 二〇一八年; a lone 一 is "a", not a number,
  and numerals before 月 日 号 are dates'), up to 9999; four digits written one by one (二〇一八年) are a
  year.

A fact is changed (`changed`) into another value of the same kind, format and width, chosen in an order
drawn from the caller's random generator: a date moved by 1 to 27 days either way (a year and month
by 1 to 11 months; its year by 1 to 3 either way when the year is what the answer states), a year by 1
to 3 either way (二〇一八 too), a code's last digit, and any other number's first significant digit (30 -> 70, $89.99 -> $59.99, 1,200 -> 4,200, 15% -> 85%, 三十天 -> 七十天). A value is
skipped when its new keys are among `taken` (the values the context already states), so the changed
value is nowhere else in it.

Keys (`keys_of`, `keys_in`) say when two texts state one value: "30", "三十" and "30.0" are num:30;
"2026年3月1日" and "2026-03-01" are date:2026-3-1 (and md:3-1, and num:2026 for its year); "LG-4031"
and "lg4031" are code:lg4031.
"""

from __future__ import annotations

import calendar
import random
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta

from curate import CODE_PATTERN

_MONTH_NAMES = [m.lower() for m in calendar.month_name[1:]]
_MONTH_ABBREVIATIONS = [m.lower() for m in calendar.month_abbr[1:]]
_MONTH = r"(?:" + "|".join(_MONTH_NAMES + _MONTH_ABBREVIATIONS + ["sept"]) + r")\.?"
_ZH_DIGITS = "零〇一二两三四五六七八九"
_ZH_VALUE = {c: v for v, chars in enumerate(("零〇", "一", "二两", "三", "四", "五", "六", "七", "八", "九"))
             for c in chars}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000}
_NUMBER_BOUNDARY = r"(?<![A-Za-z0-9_.,])(?<![A-Za-z0-9]-)"   # not inside a code, a version or a range

# (kind, pattern), in order of precedence
_PATTERNS: list[tuple[str, re.Pattern]] = [
    ("date", re.compile(r"(?<!\d)(?P<y>\d{4})年(?P<m>\d{1,2})月(?:(?P<d>\d{1,2})[日号])?")),
    ("date", re.compile(r"(?<![\d年])(?P<m>\d{1,2})月(?P<d>\d{1,2})[日号]")),
    ("date", re.compile(r"(?<![\d.,/-])(?P<y>\d{4})(?P<sep>[-/.])(?P<m>\d{1,2})(?P=sep)(?P<d>\d{1,2})"
                        r"(?![\d]|[-/.]\d)")),
    ("date", re.compile(r"\b(?P<mw>" + _MONTH + r")\s+(?P<d>\d{1,2})(?P<sx>st|nd|rd|th)?,?\s+(?P<y>\d{4})\b", re.I)),
    ("date", re.compile(r"\b(?P<d>\d{1,2})(?P<sx>st|nd|rd|th)?\s+(?P<mw>" + _MONTH + r"),?\s+(?P<y>\d{4})\b", re.I)),
    ("code", CODE_PATTERN),   # curate's: what a code looks like (LG-4031)
    ("amount", re.compile(r"[$€£¥￥]\s?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\d]|[.,]\d)")),
    ("number", re.compile(_NUMBER_BOUNDARY + r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)*[%％]?(?![\d]|[.,]\d|-\d)")),
    ("zh_number", re.compile(r"(?<![" + _ZH_DIGITS + r"十百千])[" + _ZH_DIGITS + r"十百千]+"
                             r"(?=[年个次天元岁位名台项条倍周])")),
]
# "1." opening a line or sentence, or before a Chinese character (注释1.由于...): a list or note marker
_LIST_MARKER = re.compile(r"(?:^|(?<=[\n。！？!?；;]))\s*\d{1,2}[.、)）](?!\d)|\d{1,2}[.、)）](?=[\u4e00-\u9fff])")


@dataclass(frozen=True)
class Fact:
    """One fact of a text: its kind, where it is, and its text."""

    kind: str
    start: int
    end: int
    text: str


def find_facts(text: str) -> list[Fact]:
    """Return the facts a text states, in the order they appear (kinds and precedence: module docstring).

    >>> [(f.kind, f.text) for f in find_facts("2026年3月1日起，LG-4031 的有效期为三十天，费用 $89.99（含 15%）。")]
    [('date', '2026年3月1日'), ('code', 'LG-4031'), ('zh_number', '三十'), ('amount', '$89.99'), ('percent', '15%')]
    >>> [f.text for f in find_facts("1. Since v2.0.1, 1,200 requests; in 2025 on March 1, 2026.")]
    ['1,200', '2025', 'March 1, 2026']
    """
    taken: list[tuple[int, int]] = [m.span() for m in _LIST_MARKER.finditer(text)]
    found: list[Fact] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(start < b and a < end for a, b in taken) or not _is_fact(kind, match):
                continue
            taken.append((start, end))
            found.append(Fact(_kind(kind, match.group(0)), start, end, match.group(0)))
    return sorted(found, key=lambda f: f.start)


def _is_fact(kind: str, match: re.Match) -> bool:
    """Return whether a match is a fact: a real date, a number that is no version, a numeral that is no "a"."""
    if kind == "date":
        return _date_of(match) is not None
    if kind == "number":
        return match.group(0).count(".") <= 1 and not re.match(r"\d+[月日号]", match.string[match.start():match.end() + 1])
    if kind == "zh_number":   # digits one by one are a year (二〇一八) or no number (唯一一个)
        text = match.group(0)
        by_digit = not any(c in _ZH_UNITS for c in text)
        return text != "一" and (not by_digit or len(text) == 1 or len(text) == 4) and _zh_value(text) is not None
    return True


def _kind(kind: str, text: str) -> str:
    """Return the kind a number is told apart as: a percentage, a year, or a number."""
    if kind != "number":
        return kind
    if text[-1] in "%％":
        return "percent"
    return "year" if text.isdigit() and len(text) == 4 and 1800 <= int(text) <= 2099 else "number"


# -- keys: when two texts state one value ---------------------------------------------------------------

def keys_of(fact: Fact) -> set[str]:
    """Return the keys of a fact's value, any one of which in an answer states it.

    >>> sorted(keys_of(find_facts("2026年3月1日")[0])), keys_of(find_facts("三十天")[0])
    (['date:2026-3-1', 'md:3-1'], {'num:30'})
    """
    if fact.kind == "date":
        y, m, d = _parts(fact.text)
        if y is None:
            return {f"md:{m}-{d}"}
        return {f"ym:{y}-{m}"} if d is None else {f"date:{y}-{m}-{d}", f"md:{m}-{d}"}
    if fact.kind == "code":
        return {"code:" + re.sub(r"[-_]", "", fact.text).lower()}
    if fact.kind == "zh_number":
        return {f"num:{_zh_value(fact.text)}"}
    return {"num:" + _number_key(re.sub(r"[^\d.]", "", fact.text))}


def value_keys(fact: Fact) -> set[str]:
    """Return every key of a fact's value: its own (`keys_of`) and, for a date, its year's.

    >>> sorted(value_keys(find_facts("1953年8月15日")[0]))
    ['date:1953-8-15', 'md:8-15', 'num:1953']
    """
    found = keys_of(fact)
    if fact.kind == "date" and (year := _parts(fact.text)[0]) is not None:
        found.add(f"num:{year}")
    return found


def keys_in(text: str) -> set[str]:
    """Return the keys of every fact a text states, a date's year among them; read on the text
    NFKC-normalised and upper-cased (an answer may write a code in lower case, a number full-width).

    >>> sorted(keys_in("有效期 45 天，自 2027年3月1日起；错误码 lg-4037。"))
    ['code:lg4037', 'date:2027-3-1', 'md:3-1', 'num:2027', 'num:45']
    """
    found: set[str] = set()
    for fact in find_facts(unicodedata.normalize("NFKC", text).upper()):   # ４５ is 45, lg-4037 is LG-4037
        found |= value_keys(fact)
    return found


def fact_of(text: str, kind: str) -> Fact:
    """Return the fact `text` is, as a fact of `kind` (a changed value, read back for its keys)."""
    return Fact(kind, 0, len(text), text)


def _number_key(digits: str) -> str:
    """Return a number's digits without thousands commas, leading zeros or trailing decimal zeros."""
    whole, _, decimals = digits.partition(".")
    decimals = decimals.rstrip("0")
    return (whole.lstrip("0") or "0") + (f".{decimals}" if decimals else "")


# -- dates ----------------------------------------------------------------------------------------------

def _month_of(word: str) -> int:
    """Return the month (1-12) an English month name or abbreviation names."""
    word = word.lower().rstrip(".")
    return (_MONTH_NAMES.index(word) if word in _MONTH_NAMES else _MONTH_ABBREVIATIONS.index(word[:3])) + 1


def _date_of(match: re.Match) -> tuple[int | None, int, int | None] | None:
    """Return (year, month, day) of a date match, None when it is no real date (day None: a year and month)."""
    groups = match.groupdict()
    year = int(groups["y"]) if groups.get("y") else None
    month = _month_of(groups["mw"]) if groups.get("mw") else int(groups["m"])
    day = int(groups["d"]) if groups.get("d") else None
    try:
        date(year or 2024, month, day or 1)     # 2024: a leap year, so 2月29日 without a year is a date
    except ValueError:
        return None
    return year, month, day


def _date_match(text: str) -> re.Match:
    """Return the match of a date's whole text by the date patterns."""
    return next(m for kind, p in _PATTERNS[:5] if (m := p.fullmatch(text)))


def _parts(text: str) -> tuple[int | None, int, int | None]:
    """Return (year or None, month, day or None) of a date's text."""
    parts = _date_of(_date_match(text))
    if parts is None:
        raise ValueError(f"not a date: {text}")
    return parts


def _date_text(text: str, year: int | None, month: int, day: int | None) -> str:
    """Return the date `text` is written as, with another year, month and day, each in its own format."""
    match = _date_match(text)
    out, kept = [], 0
    for name in ("y", "m", "mw", "d", "sx"):
        if match.groupdict().get(name) is None:
            continue
        start, end = match.span(name)
        old = match.group(name)
        value = {"y": year, "m": month, "d": day}.get(name)
        if name == "mw":
            new = _month_word(old, month)
        elif name == "sx":
            new = _ordinal_suffix(day)
        else:
            new = f"{value:0{len(old) if old.startswith('0') else 1}d}"
        out.append((start, end, new))
    pieces = []
    for start, end, new in sorted(out):
        pieces += [text[kept:start], new]
        kept = end
    return "".join(pieces) + text[kept:]


def _ordinal_suffix(day: int) -> str:
    """Return the English ordinal suffix of a day: st, nd, rd or th (11th, 12th, 13th)."""
    return "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def _month_word(old: str, month: int) -> str:
    """Return the name of `month` written as `old` is: full or abbreviated, its case, its full stop."""
    bare = old.rstrip(".")
    name = calendar.month_name[month] if bare.lower() in _MONTH_NAMES else calendar.month_abbr[month]
    name = name.upper() if bare.isupper() and len(bare) > 1 else name if bare[0].isupper() else name.lower()
    return name + ("." if old.endswith(".") else "")


def _changed_dates(text: str, rng: random.Random) -> Iterator[str]:
    """Return the date moved by each shift in a drawn order: days, or months for a year and month."""
    year, month, day = _parts(text)
    if day is None:       # a year and month: another month of that year
        for shift in rng.sample(range(1, 12), 11):
            yield _date_text(text, year, (month - 1 + shift) % 12 + 1, None)
        return
    start = date(year or 2024, month, day)
    for shift in rng.sample([s for s in range(-27, 28) if s], 54):
        moved = start + timedelta(days=shift)
        if year is None and moved.year != start.year:
            continue
        yield _date_text(text, moved.year if year is not None else None, moved.month, moved.day)


# -- Chinese numerals -------------------------------------------------------------------------------------

def _zh_value(text: str) -> int | None:
    """Return the value of Chinese numerals (三十 30, 二〇一八 2018, 两 2, 一百零五 105), None above 9999.

    >>> _zh_value("三十"), _zh_value("十五"), _zh_value("二〇一八"), _zh_value("一千零五"), _zh_value("十十")
    (30, 15, 2018, 1005, None)
    """
    if not any(c in _ZH_UNITS for c in text):      # digits one by one: 二〇一八
        return int("".join(str(_ZH_VALUE[c]) for c in text))
    total, digit, last_unit = 0, None, 10_000
    for char in text:
        if char in _ZH_VALUE:
            digit = _ZH_VALUE[char]
            continue
        unit = _ZH_UNITS[char]
        if unit >= last_unit:
            return None
        total += (1 if digit is None else digit) * unit
        digit, last_unit = None, unit
    return total + (digit or 0)


def _zh_numeral(value: int, like: str) -> str:
    """Return `value` in Chinese numerals, written as `like` is (digit by digit, 十五 or 一十五, 两).

    >>> _zh_numeral(70, "三十"), _zh_numeral(35, "十五"), _zh_numeral(2020, "二〇一八"), _zh_numeral(2, "两")
    ('七十', '三十五', '二〇二〇', '两')
    """
    digits = "〇一二三四五六七八九" if "〇" in like else "零一二三四五六七八九"
    if not any(c in _ZH_UNITS for c in like):
        written = "".join(digits[int(d)] for d in str(value))
        return "两" if like == "两" and value == 2 else written
    parts, zero = [], False
    for unit_char, unit in (("千", 1000), ("百", 100), ("十", 10), ("", 1)):
        digit = value // unit % 10
        if digit == 0:
            zero = bool(parts)
            continue
        if zero:
            parts.append("零")
            zero = False
        parts.append(("" if unit == 10 and not parts and digit == 1 and like.startswith("十") else digits[digit])
                     + unit_char)
    return "".join(parts) or "零"


# -- changing a fact -------------------------------------------------------------------------------------

def changed(fact: Fact, rng: random.Random, taken: set[str], *, year: bool = False) -> str | None:
    """Return another value for a fact, of its kind, format and width, whose new keys (those the old
    value has not) are none of `taken`; None when every value the rule allows is taken (rules: module
    docstring). With `year`, a date's year is moved instead of its day (the answer states the year).

    >>> rng = random.Random("doc")
    >>> [changed(f, rng, set()) for f in find_facts("LG-4031, 2025, 30 天, $89.99, 三十天, 2026年3月1日")]
    ['LG-4038', '2028', '90', '$19.99', '四十', '2026年2月26日']
    """
    own = value_keys(fact)
    for text in _candidates(fact, rng, year):
        fresh = value_keys(fact_of(text, fact.kind)) - own
        if fresh and not fresh & taken:
            return text
    return None


def _candidates(fact: Fact, rng: random.Random, year: bool) -> Iterator[str]:
    """Return the values a fact may be changed to, in a drawn order (rules: module docstring)."""
    text = fact.text
    if fact.kind == "date" and year:
        old, month, day = _parts(text)
        for shift in rng.sample([1, 2, 3, -1, -2, -3], 6):
            if day is None or day <= calendar.monthrange(old + shift, month)[1]:
                yield _date_text(text, old + shift, month, day)
    elif fact.kind == "date":
        yield from _changed_dates(text, rng)
    elif fact.kind == "year":
        for shift in rng.sample([1, 2, 3, -1, -2, -3], 6):
            yield str(int(text) + shift)
    elif fact.kind == "code":
        last = len(text) - 1
        for digit in rng.sample([d for d in "0123456789" if d != text[last]], 9):
            yield text[:last] + digit
    elif fact.kind == "zh_number":
        value = _zh_value(text)
        if len(text) == 4 and 1800 <= value <= 2099 and not any(c in _ZH_UNITS for c in text):   # 二〇一八年
            others = [str(value + shift) for shift in rng.sample([1, 2, 3, -1, -2, -3], 6)]
        else:
            others = list(_first_digit_changed(str(value), rng))
        for other in others:
            yield _zh_numeral(int(other), text)
    else:
        yield from _first_digit_changed(text, rng)


def _first_digit_changed(text: str, rng: random.Random) -> Iterator[str]:
    """Return `text` with its first significant digit (its first digit, when all are 0) replaced by each
    other digit 1-9, in a drawn order: the format, the width and every other character kept."""
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    at = next((i for i in digits if text[i] != "0"), digits[0])
    others = [d for d in "123456789" if d != text[at]]
    for digit in rng.sample(others, len(others)):
        yield text[:at] + digit + text[at + 1:]


# -- names: an answer that states no number, date or code ---------------------------------------------------

_CJK = re.compile(r"[\u4e00-\u9fff]")
_CAPITALISED = re.compile(r"\b[A-Z][a-z]{2,}\b")
_ZH_NAME = re.compile(r"[\u4e00-\u9fff](?:·?[\u4e00-\u9fff]){1,5}")
# characters common in Chinese names and titles, and English words shaped like names: what a changed name
# is made of (never a real entity of the KB: the new name is checked against the gold chunks)
_ZH_POOL = "安宁华明东林远泰嘉恒谦瑞启鸿"
_EN_POOL = ("Halden", "Marlow", "Severn", "Corran", "Tamsin", "Brecon", "Alder", "Wrexley")


def changed_name(name: str, rng: random.Random, context: str) -> str | None:
    """Return `name` (an answer that states no number, date or code: a person, a place, a title) changed by
    rule, or None when no rule applies: a Chinese name (2 to 6 Chinese characters, a · between them allowed)
    gets its last character replaced, an English one (up to five words, one capitalised) its longest
    capitalised word; the new name is nowhere in `context`. A longer answer is a phrase, not a name.

    >>> changed_name("江口寿史", random.Random(0), "江口寿史的漫画")
    '江口寿鸿'
    >>> changed_name("the Paris office", random.Random(0), "the Paris office") in {"the " + w + " office" for w in _EN_POOL}
    True
    >>> changed_name("42", random.Random(0), "42"), changed_name("未授予路由权限范围", random.Random(0), "")
    (None, None)
    """
    if find_facts(name):
        return None
    cjk = [m.start() for m in _CJK.finditer(name)]
    if cjk:
        if not _ZH_NAME.fullmatch(name):
            return None
        at = cjk[-1]
        made = [name[:at] + c + name[at + 1:] for c in rng.sample(_ZH_POOL, len(_ZH_POOL)) if c != name[at]]
    else:
        words = sorted(_CAPITALISED.finditer(name), key=lambda m: -len(m.group()))
        if not words or len(name.split()) > 5:
            return None
        word = words[0]
        made = [name[:word.start()] + w + name[word.end():] for w in rng.sample(_EN_POOL, len(_EN_POOL))
                if w != word.group()]
    return next((m for m in made if m not in context), None)
