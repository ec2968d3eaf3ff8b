"""Personal data masked out of production text before anything is stored: typed placeholders
([PHONE], [EMAIL], [ID_NUMBER], [BANK_CARD], [IP], and one per pattern the team adds).

Detectors run in an order that settles collisions, each over what the earlier ones left:

1. the team's own patterns (`[failures.pii] patterns = {NAME = "regex"}` in curate.toml): the team
   knows its order numbers and ticket ids best;
2. e-mail addresses (an address may hold a phone number: 13812345678@163.com is one address);
3. IP addresses, v4 and v6, each candidate validated by the standard library's `ipaddress`;
4. Chinese resident ID numbers: 18 characters, the last the ISO 7064 MOD 11-2 check digit (X for 10),
   with a birth date that exists; and the 15-digit numbers issued before 1999 (no check digit: a
   province code and a birth date YYMMDD that exists); an ID number is never read as a phone or a
   card number;
5. bank card numbers: 13 to 19 digits that pass the Luhn check (but for 13 to 15 digits that are a
   valid phone number with its country code: 86 138 1234 5678 passes Luhn);
6. account numbers named as such: a QQ number (5 to 11 digits after "QQ", "QQ号") and a WeChat id
   (after "微信", "微信号", "WeChat", "wx", "vx"), which Chinese support logs are full of and no checksum
   can tell from other numbers: only the number after the word is masked;
7. phone numbers: `phonenumbers` (Google's libphonenumber metadata, kept up to date for every country)
   with region CN and leniency VALID, so Chinese mobiles and landlines with or without their area
   code, +86, and international numbers in their own formats are found, while an order number or a
   date of 8 digits is not (leniency POSSIBLE takes those too).

Rules 2-6 are written here: no well-kept library finds e-mail addresses, Chinese ID numbers or card
numbers in free text (stdlib `email.utils` parses headers; card and ID checks are a few lines of
arithmetic). Full-width digits and signs (１３８１２３４５６７８, ＠) are read as their ASCII forms,
and digits grouped by spaces or dashes (6222 0212 3456 7890, 138-1234-5678) as one number.

Phone detection is the costly one (libphonenumber's matcher, about 180 µs a line holding digits):
it runs only on a text holding a run of seven or more digits (a cheap regex), which is what lets a
million-line log stream through in budget (benchmarks/add_failures.py measures both).
"""

from __future__ import annotations

import ipaddress
import re
from datetime import date
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

import phonenumbers

KINDS = ("EMAIL", "IP", "ID_NUMBER", "BANK_CARD", "QQ", "WECHAT", "PHONE")
# one to one, so a span found in the read copy is the same span in the text
_READ_AS = str.maketrans({**{chr(0xFF10 + d): str(d) for d in range(10)}, "＋": "+", "－": "-", "＠": "@",
                          "．": ".", "：": ":", "（": "(", "）": ")", "\u3000": " ", "Ｘ": "X", "ｘ": "x"})
_EMAIL = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}")
_IPV4 = re.compile(r"(?<![0-9.])(?:[0-9]{1,3}\.){3}[0-9]{1,3}(?![0-9]|\.[0-9])")
_IPV6 = re.compile(r"(?<![0-9A-Za-z:])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:\.[0-9.]+)?(?![0-9A-Za-z:])")
# 13 to 19 digits (a card), or 17 and a check character (an ID), in groups split by one space or dash
_LONG_DIGITS = re.compile(r"(?<![0-9A-Za-z+])[0-9](?:[ \-]?[0-9]){12,18}(?:[ \-]?[Xx])?(?![0-9A-Za-z])")
_SEVEN_DIGITS = re.compile(r"[0-9](?:[ \-().]{0,2}[0-9]){6}")   # the prefilter of the phone matcher
# a word naming the account, then the account itself (group 1): only the account is masked
_ACCOUNTS = (("QQ", re.compile(r"(?i)(?<![a-z])qq\s*(?:号码|号)?\s*[:：是为]?\s*([1-9][0-9]{4,10})(?![0-9])")),
             ("WECHAT", re.compile(r"(?i)(?:微信|wechat|weixin|(?<![a-z])[wv]x)\s*(?:号|id)?\s*[:：是为]?\s*"
                                   r"([a-z][-_a-z0-9]{5,19})(?![-_a-z0-9])")))
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"
_COVERED = "~"


def resident_id(digits: str) -> bool:
    """Return whether 18 characters are a Chinese resident ID number: a birth date that exists and
    the ISO 7064 MOD 11-2 check character.

    >>> resident_id("11010519491231002X"), resident_id("110105194912310021")
    (True, False)
    """
    if len(digits) != 18 or not digits[:17].isdigit():
        return False
    year, month, day = int(digits[6:10]), int(digits[10:12]), int(digits[12:14])
    if not (1900 <= year <= 2100 and 1 <= month <= 12 and 1 <= day <= 31):
        return False
    total = sum(int(d) * w for d, w in zip(digits[:17], _ID_WEIGHTS))
    return _ID_CHECK[total % 11] == digits[17].upper()


def old_resident_id(digits: str) -> bool:
    """Return whether 15 digits are a first-generation Chinese resident ID number (issued before 1999,
    no check digit): a province code 11-82 and a birth date YYMMDD that exists.

    >>> old_resident_id("110105491231002"), old_resident_id("110105491331002"), old_resident_id("990105491231002")
    (True, False, False)
    """
    if len(digits) != 15 or not digits.isdigit() or not 11 <= int(digits[:2]) <= 82:
        return False
    try:
        date(1900 + int(digits[6:8]), int(digits[8:10]), int(digits[10:12]))
    except ValueError:
        return False
    return True


def luhn(digits: str) -> bool:
    """Return whether a string of digits passes the Luhn check (every bank card number does).

    >>> luhn("4111111111111111"), luhn("4111111111111112")
    (True, False)
    """
    total = 0
    for position, char in enumerate(reversed(digits)):
        d = int(char)
        if position % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


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
        read = text.translate(_READ_AS)
        spans: list[tuple[int, int, str]] = []
        for name, pattern in self.patterns.items():
            read = self._take(read, spans, name, (m.span() for m in pattern.finditer(read) if m.end() > m.start()))
        if "@" in read:
            read = self._take(read, spans, "EMAIL", (m.span() for m in _EMAIL.finditer(read)))
        if "." in read or ":" in read:
            read = self._take(read, spans, "IP", (m.span() for m in _IPV4.finditer(read) if _ip(m.group())))
            read = self._take(read, spans, "IP", (m.span() for m in _IPV6.finditer(read)
                                                  if m.group().count(":") >= 2 and _ip(m.group())))
        if _SEVEN_DIGITS.search(read):
            runs = [(m.span(), re.sub(r"[ \-]", "", m.group())) for m in _LONG_DIGITS.finditer(read)]
            read = self._take(read, spans, "ID_NUMBER", (span for span, d in runs
                                                         if resident_id(d) or old_resident_id(d)))
            read = self._take(read, spans, "BANK_CARD", (span for span, d in runs
                                                         if d.isdigit() and luhn(d) and not _short_phone(d)))
        for kind, pattern in _ACCOUNTS:
            read = self._take(read, spans, kind, (m.span(1) for m in pattern.finditer(read)))
        if _SEVEN_DIGITS.search(read):
            found = phonenumbers.PhoneNumberMatcher(read, "CN", leniency=phonenumbers.Leniency.VALID)
            read = self._take(read, spans, "PHONE", [(m.start, m.end) for m in found])
        if not spans:
            return text
        out, last = [], 0
        for start, end, kind in sorted(spans):
            out += [text[last:start], f"[{kind}]"]
            last = end
        return "".join(out + [text[last:]])

    def _take(self, read: str, spans: list, kind: str, found) -> str:
        """Add the spans `found` (those still free) as `kind`; return the read copy with them covered."""
        for start, end in list(found):
            if _COVERED in read[start:end]:
                continue
            spans.append((start, end, kind))
            self.counts[kind] += 1
            read = read[:start] + _COVERED * (end - start) + read[end:]
        return read


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
