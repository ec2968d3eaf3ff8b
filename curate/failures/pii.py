"""Personal data masked out of production text before anything is stored: typed placeholders
([PHONE], [EMAIL], [ID_NUMBER], [BANK_CARD], [IP], [QQ], [WECHAT], [PASSPORT], [PLATE], and one per
pattern the team adds). Names and street addresses are not masked (no library that reads Chinese and
English and ships its model installs here; see `NOT_MASKED`): add-failures says so on every run.

Detectors run in an order that settles collisions, each over what the earlier ones left:

1. the team's own patterns (`[failures.pii] patterns = {NAME = "regex"}` in curate.toml): the team
   knows its order numbers and ticket ids best;
2. e-mail addresses (an address may hold a phone number: 13812345678@163.com is one address), with
   Chinese domains (张三@例子.中国) and spelled out (zhang at example dot com, zhang(at)qq.com,
   zhang艾特163点com, zhang#163.com);
3. IP addresses, v4 and v6, each candidate validated by the standard library's `ipaddress`;
4. values named by the word before them (`shapes.NAMED`): an ID number after 身份证 (whatever its check
   character), a card after 卡号 or 银行卡 (whatever its Luhn check: some UnionPay cards fail it), a
   passport number after 护照, a QQ number after QQ, 扣扣, Q号, a WeChat id after 微信, 加微, V信, 薇信,
   vx, wx, a local phone number after 电话; and numbers named as order, ticket or tracking numbers
   (订单号, 单号, order no.), which are kept as they are and read by no later detector;
5. Chinese resident ID numbers: 18 characters, the last the ISO 7064 MOD 11-2 check digit (X for 10),
   a province code and a birth date that exists; and the 15-digit numbers issued before 1999; an ID
   number is never read as a phone or a card number;
6. bank card numbers: 13 to 19 digits that pass the Luhn check and open as a card network numbers its
   cards (but for 13 to 15 digits that are a valid phone number with its country code: 86 138 1234 5678
   passes Luhn);
7. passports (E12345678, EA1234567, G12345678) and Chinese licence plates (京A·12345, 粤B12345, the new
   energy ones of six characters after the letter, 粤B·D12345);
8. phone numbers: Chinese mobiles by their shape (11 digits opening 13-19, +86 or not, any grouping),
   then `phonenumbers` (Google's libphonenumber metadata, kept up to date for every country) with
   region CN and leniency VALID, so Chinese landlines with their area code and international numbers
   in their own formats are found, while an order number or a date of 8 digits is not.

Rules 2 and 4-8 are written here (`curate.failures.shapes`): no well-kept library finds e-mail
addresses, Chinese ID numbers, cards or plates in free text. Full-width forms (１３８, ＠), Chinese
numerals (一三八一二三四五六七八) and odd separators between digits (138—1234—5678, 138_1234_5678,
138/1234/5678) are read as the plain number (`shapes.read_copy`).

Every step is linear in the text: spans are taken once per detector, not once per span, and
libphonenumber's matcher, the costly one (about 180 µs a line holding digits), only sees the runs of
digits and phone punctuation that hold seven digits, a short window at a time. Run over a whole
6 MB text it would also stop after 65,535 candidates that are no number, leaving every later phone
number in place.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import phonenumbers

from curate.failures.shapes import (EMAIL, KEPT, KEPT_HINTS, LONG_DIGITS, MOBILE, NAMED, PASSPORT, PHONE_RUN, PLATE,
                                    SEVEN_DIGITS, SPELLED_EMAIL, card_issuer, kept, luhn, old_resident_id, read_copy,
                                    resident_id, spelled_email)

__all__ = ["KINDS", "NOT_MASKED", "Scrubbed", "Scrubber", "compile_patterns", "luhn", "resident_id"]

KINDS = ("EMAIL", "IP", "ID_NUMBER", "BANK_CARD", "PASSPORT", "QQ", "WECHAT", "PLATE", "PHONE")
# what add-failures tells the user on every run
NOT_MASKED = ("names of people and street addresses are not masked (no detector for them ships here): "
              "look before anyone outside the team sees these questions")
_IPV4 = re.compile(r"(?<![0-9.])(?:[0-9]{1,3}\.){3}[0-9]{1,3}(?![0-9]|\.[0-9])")
_IPV6 = re.compile(r"(?<![0-9A-Za-z:])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:\.[0-9]{1,3}){0,3}(?![0-9A-Za-z:])")
_EMAIL_HINT = re.compile(r"(?i)[@#]|艾特|(?<![a-z])at(?![a-z])")
_LETTERS_AS_GAPS = str.maketrans({c: "~" for c in "ABCDEFGHIJKLMNOPQRSTUVWYZabcdefghijklmnopqrstuvwyz_"})
_COVERED = "\x00"
_KEPT = "KEPT"
WINDOW = 48      # characters of a long run of digits the phone matcher reads at once (a number is shorter)
CONTEXT = 8      # characters after it, which the matcher looks at (":30" after a time stamp)


@dataclass
class Scrubbed:
    """What masking a set of texts found: counts per kind of personal data."""

    counts: Counter = field(default_factory=Counter)


class Scrubber:
    """Masks personal data in texts (see the module docstring), counting what it masked by kind."""

    def __init__(self, patterns: Mapping[str, re.Pattern] | None = None):
        self.patterns = dict(patterns or {})
        self.counts: Counter = Counter()

    def scrub(self, text: str) -> str:
        """Return `text` with every piece of personal data replaced by its typed placeholder."""
        if not text:
            return text
        return self._scrub(text, read_copy(text), team=True)

    def scrub_id(self, text: str) -> str:
        """Return a row id masked as `scrub` masks a text, and the numbers inside it too: letters and
        "_" hold the parts of an id together (u13812345678, 11010519491231002X_2), not words."""
        if not text:
            return text
        masked = self.scrub(text)
        return self._scrub(masked, read_copy(masked).translate(_LETTERS_AS_GAPS), team=False)

    def _scrub(self, text: str, read: str, team: bool) -> str:
        spans: list[tuple[int, int, str]] = []
        if team:
            for name, pattern in self.patterns.items():
                read = self._take(read, spans, name, (m.span() for m in pattern.finditer(read) if m.end() > m.start()))
        if _EMAIL_HINT.search(read):
            read = self._take(read, spans, "EMAIL", (m.span() for m in EMAIL.finditer(read)))
            read = self._take(read, spans, "EMAIL", (m.span() for m in SPELLED_EMAIL.finditer(read)
                                                     if spelled_email(m)))
        if "." in read or ":" in read:
            read = self._take(read, spans, "IP", (m.span() for m in _IPV4.finditer(read) if _ip(m.group())))
            read = self._take(read, spans, "IP", (m.span() for m in _IPV6.finditer(read)
                                                  if m.group().count(":") >= 2 and _ip(m.group())))
        lowered = read.lower()
        if any(word in lowered for word in KEPT_HINTS):
            read = self._take(read, spans, _KEPT, (m.span(1) for m in KEPT.finditer(read) if kept(m.group(1))))
        for kind, words, pattern in NAMED:
            if any(word in lowered for word in words):
                read = self._take(read, spans, kind, (m.span(m.lastindex) for m in pattern.finditer(read)))
        if not any(c.isdigit() for c in read):
            return _replaced(text, spans)
        runs = [(m.span(), re.sub(r"[ \-]", "", m.group())) for m in LONG_DIGITS.finditer(read)]
        read = self._take(read, spans, "ID_NUMBER", (span for span, d in runs if resident_id(d) or old_resident_id(d)))
        # a run that is no ID number, its X aside, may still be a card (6217001234567893x in a row id)
        runs = [((a, b - 1), d[:-1]) if d[-1] in "Xx" else ((a, b), d) for (a, b), d in runs]
        read = self._take(read, spans, "BANK_CARD", (span for span, d in runs if len(d) >= 13 and luhn(d)
                                                     and card_issuer(d) and not _short_phone(d)))
        read = self._take(read, spans, "PASSPORT", (m.span() for m in PASSPORT.finditer(read)))
        read = self._take(read, spans, "PLATE", (m.span() for m in PLATE.finditer(read)))
        if SEVEN_DIGITS.search(read):
            read = self._take(read, spans, "PHONE", (m.span() for m in MOBILE.finditer(read)))
            read = self._take(read, spans, "PHONE", _phone_numbers(read))
        return _replaced(text, spans)

    def _take(self, read: str, spans: list, kind: str, found: Iterable[tuple[int, int]]) -> str:
        """Add the spans `found` that are still free (in order, not overlapping) as `kind`; return the
        read copy with them covered, rebuilt once (once a span, a long text with many numbers in it
        would be copied once for each)."""
        taken = []
        last = 0
        for start, end in sorted(found):
            if start < last or end <= start or _COVERED in read[start:end]:
                continue
            taken.append((start, end))
            last = end
        if not taken:
            return read
        if kind != _KEPT:
            spans.extend((start, end, kind) for start, end in taken)
            self.counts[kind] += len(taken)
        out, last = [], 0
        for start, end in taken:
            out += [read[last:start], _COVERED * (end - start)]
            last = end
        out.append(read[last:])
        return "".join(out)


def _replaced(text: str, spans: list[tuple[int, int, str]]) -> str:
    """Return `text` with each span replaced by its kind's placeholder."""
    if not spans:
        return text
    out, last = [], 0
    for start, end, kind in sorted(spans):
        out += [text[last:start], f"[{kind}]"]
        last = end
    return "".join(out + [text[last:]])


def _phone_numbers(read: str) -> Iterable[tuple[int, int]]:
    """Yield the spans of the phone numbers libphonenumber finds in `read`, shown one run of digits and
    phone punctuation (seven digits or more) at a time, a long run a window at a time: a number that
    starts in a window's core and ends inside the window counts (every number of up to WINDOW
    characters is seen whole by one window)."""
    found: dict[str, list[tuple[int, int]]] = {}   # a window's text -> its matches (a log repeats itself)
    for run in PHONE_RUN.finditer(read):
        start, end = run.span()
        if sum(c.isdigit() for c in run.group()) < 7:
            continue
        cores = [(start, end)] if end - start <= 2 * WINDOW else [(c, min(c + WINDOW, end))
                                                                for c in range(start, end, WINDOW)]
        for core_start, core_end in cores:
            low, stop = max(0, core_start - 1), min(end, core_end + WINDOW)
            high = min(len(read), stop + CONTEXT)
            window = read[low:high]
            if window not in found:
                if len(found) > 10_000:
                    found.clear()
                found[window] = [(m.start, m.end) for m in phonenumbers.PhoneNumberMatcher(
                    window, "CN", leniency=phonenumbers.Leniency.VALID)]
            for first, last in found[window]:
                first, last = low + first, low + last
                if (core_start <= first < core_end and not (stop < end and last >= stop)
                        and not (first > 0 and read[first - 1].isdigit())):
                    yield first, last


def _short_phone(digits: str) -> bool:
    """Return whether 13 to 15 digits that pass Luhn are a phone number with its country code (86 138
    1234 5678 passes Luhn): cards that short are rare, phones with their country code are not."""
    if len(digits) > 15:
        return False
    try:
        return phonenumbers.is_valid_number(phonenumbers.parse("+" + digits))
    except phonenumbers.NumberParseException:
        return False


def _ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def compile_patterns(raw: Mapping[str, object], error) -> dict[str, re.Pattern]:
    """Return the team's patterns compiled, each under its placeholder name (upper case); `error(message,
    name)` builds the exception of a bad one (curate.toml, its line and key)."""
    compiled = {}
    for name, pattern in raw.items():
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
            raise error("a pattern's name becomes its placeholder: letters, digits and '_'", name)
        if not isinstance(pattern, str) or not pattern:
            raise error("must be a regular expression, as a non-empty string", name)
        try:
            compiled[name.upper()] = re.compile(pattern)
        except re.error as exc:
            raise error(f"not a valid regular expression: {exc}", name) from None
    return compiled
