"""The shapes of personal data that `curate.failures.pii` masks: one pattern or check per kind, each
linear in the text (no pattern can backtrack over more than a bounded stretch, or it starts only where
a run of its characters starts), so a 6 MB question costs seconds, not minutes.

Every pattern reads the *read copy* of a text (`read_copy`): as long as the text, character for
character, with full-width forms read as ASCII, spaces of any width and invisible characters as spaces, Chinese numerals inside a run of seven or more read as
digits (一三八一二三四五六七八, 幺 for one, 〇 and 零 for zero) and the odd separators people put between
the digits of a number (em and en dashes, slashes, underscores, middle dots) read as "-". A span found
there is the same span in the text.

Named values: a word that names what follows (身份证, 卡号, 护照, 微信, QQ号 ...) makes its value personal
data whatever its checksum: an ID number with a wrong check character after 身份证, a UnionPay card
that fails the Luhn check after 卡号. A number after a word naming an order, a ticket or a tracking
number (订单号, 单号, order no.) is not personal data and is kept as it is.
"""

from __future__ import annotations

import re
from datetime import date

CJK_NUMERALS = "〇零一二三四五六七八九幺"
_NUMERAL_DIGITS = "001234567891"
_SEPARATORS = "—–―‐‑‒−_／/·•・~～"
# spaces of every width and the invisible characters a number can be split with (138\u200b1234\u200b5678)
_SPACES = "\u00a0\u00ad\u1680\u180e\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u200b\u200c\u200d" \
          "\u200e\u200f\u202f\u205f\u2060\u3000\ufeff\t"
READ_AS = str.maketrans({**{chr(0xFF10 + d): str(d) for d in range(10)}, "＋": "+", "－": "-", "＠": "@",
                         "．": ".", "：": ":", "（": "(", "）": ")", **{c: " " for c in _SPACES}, "Ｘ": "X", "ｘ": "x", "＃": "#",
                         **{chr(0xFF21 + n): chr(0x41 + n) for n in range(26)},
                         **{chr(0xFF41 + n): chr(0x61 + n) for n in range(26)}})
_NUMERALS_AS_DIGITS = str.maketrans(CJK_NUMERALS, _NUMERAL_DIGITS)
_SEPARATORS_AS_DASH = str.maketrans({c: "-" for c in _SEPARATORS + " "})
# seven or more numerals or digits, at most two spaces, dashes or separators between two of them
_NUMERAL_RUN = re.compile(rf"[{CJK_NUMERALS}0-9](?:[ \-{_SEPARATORS}]{{0,2}}[{CJK_NUMERALS}0-9]){{6,}}")
# a separator between two digits (spaces around it included): read as dashes
_ODD_SEPARATOR = re.compile(rf"(?<=[0-9]) *[{_SEPARATORS}]+ *(?=[0-9])")


def read_copy(text: str) -> str:
    """Return the text as the patterns read it (see the module docstring), as long as the text.

    >>> read_copy("手机：一三八—一二三四_五六七八，共一个")
    '手机:138-1234-5678，共一个'
    """
    read = text.translate(READ_AS)
    if any(c in read for c in CJK_NUMERALS):
        read = _NUMERAL_RUN.sub(lambda m: m.group().translate(_NUMERALS_AS_DIGITS)
                                if not m.group().isascii() else m.group(), read)
    if any(c in read for c in _SEPARATORS):
        read = _ODD_SEPARATOR.sub(lambda m: m.group().translate(_SEPARATORS_AS_DASH), read)
    return read


# --- e-mail addresses ----------------------------------------------------------------------------
_LOCAL = r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9][A-Za-z0-9._%+\-]*"
_TLDS_CJK = "中国|中國|公司|网络|網絡|集团|在线|香港|台湾|台灣"
# top-level domains an address spelled out must end with: a word that happens to follow "dot" is no address
_TLDS = ("com|cn|net|org|edu|gov|io|me|cc|co|info|biz|xyz|top|vip|hk|tw|mo|sg|jp|kr|uk|us|de|fr|ru|in|au|ca|"
         "ai|app|dev|cloud|site|online|tech|club|shop|email|mail")
# an address as written: ASCII or Chinese labels, an ASCII or Chinese top-level domain; a Chinese local part
# (张三@例子.中国) can only be told from the words before it by its length: at most four characters
EMAIL = re.compile(rf"(?:{_LOCAL}|[\u4e00-\u9fff]{{1,4}})@(?:[A-Za-z0-9\u4e00-\u9fff](?:[A-Za-z0-9\u4e00-\u9fff\-]*[A-Za-z0-9\u4e00-\u9fff])?\.)+"
                   rf"(?:[A-Za-z]{{2,24}}(?![A-Za-z0-9\-])|(?:{_TLDS_CJK}))")
_AT = r"(?:\s*[\[(（【<{]\s*(?:at|@|艾特)\s*[\])）】>}]\s*|\s*(?:艾特|#|@)\s*|\s+(?:at|AT|At)\s+)"
_DOT = r"(?:\s*[\[(（【<{]\s*(?:dot|点|\.)\s*[\])）】>}]\s*|\s*点\s*|\s+(?:dot|DOT|Dot)\s+|[.。])"
_SPELLED_DOT = r"(?:\s*[\[(（【<{]\s*(?:dot|点|\.)\s*[\])）】>}]\s*|\s*点\s*|\s+(?:dot|DOT|Dot)\s+)"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?"
# spelled out: zhang at example dot com, zhang(at)example.com, zhang艾特163点com, zhang#163.com, zhang@qq。com
SPELLED_EMAIL = re.compile(rf"({_LOCAL}){_AT}(?:{_LABEL}{_DOT}){{1,4}}(?:{_TLDS})(?![A-Za-z0-9])", re.IGNORECASE)
# "at" and "dot" in plain words are common English: such a spelling counts only with both spelled out
_PLAIN_AT = re.compile(r"\s+at\s+", re.IGNORECASE)
_WORDS_BEFORE_AT = frozenset("look looks looked looking in is was are be been me us him her them it that this arrive arrived "
                             "stay stayed live lives work works worked working meet here there home one all least "
                             "first last once aimed aim point points hit".split())


def spelled_email(match: re.Match) -> bool:
    """Return whether a SPELLED_EMAIL match is an address: with a plain " at ", the dot is spelled too
    and the word before "at" is no English word that "at" follows."""
    at = _PLAIN_AT.match(match.string, match.end(1))
    if at is None:
        return True
    rest = match.string[at.end():match.end()]
    return bool(re.search(_SPELLED_DOT, rest)) and match.group(1).lower() not in _WORDS_BEFORE_AT


# --- numbers -------------------------------------------------------------------------------------
# 13 to 19 digits (a card), or 17 and a check character (an ID), in groups split by one space or dash
LONG_DIGITS = re.compile(r"(?<![0-9A-Za-z+])[0-9](?:[ \-]?[0-9]){12,18}(?:[ \-]?[Xx])?(?![0-9A-Za-z])")
SEVEN_DIGITS = re.compile(r"[0-9](?:[ \-().]{0,3}[0-9]){6}")   # is there a number a phone could be
# a Chinese mobile number: 11 digits opening 13-19, with or without +86, spaces or dashes anywhere
MOBILE = re.compile(r"(?<![0-9])(?<![0-9][ \-])(?:(?:\(?(?:\+|00)86\)?|86)[ \-]{0,3})?"
                    r"1[3-9](?:[ \-]{0,3}[0-9]){9}(?![0-9])")
# where a phone number could be: digits with the punctuation of phone numbers between them
PHONE_RUN = re.compile(r"[+(\[]{0,3}[0-9][0-9 ()\[\]\-./]*")
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"
_PROVINCES = frozenset({11, 12, 13, 14, 15, 21, 22, 23, 31, 32, 33, 34, 35, 36, 37, 41, 42, 43, 44, 45, 46, 50,
                        51, 52, 53, 54, 61, 62, 63, 64, 65, 71, 81, 82, 83, 91})


def resident_id(digits: str) -> bool:
    """Return whether 18 characters are a Chinese resident ID number: a province code, a birth date
    that exists and the ISO 7064 MOD 11-2 check character.

    >>> resident_id("11010519491231002X"), resident_id("110105194912310021")
    (True, False)
    """
    if len(digits) != 18 or not digits[:17].isdigit() or int(digits[:2]) not in _PROVINCES:
        return False
    try:
        date(int(digits[6:10]), int(digits[10:12]), int(digits[12:14]))
    except ValueError:
        return False
    total = sum(int(d) * w for d, w in zip(digits[:17], _ID_WEIGHTS))
    return _ID_CHECK[total % 11] == digits[17].upper()


def old_resident_id(digits: str) -> bool:
    """Return whether 15 digits are a first-generation Chinese resident ID number (issued before 1999,
    no check digit): a province code and a birth date YYMMDD that exists.

    >>> old_resident_id("110105491231002"), old_resident_id("110105491331002"), old_resident_id("990105491231002")
    (True, False, False)
    """
    if len(digits) != 15 or not digits.isdigit() or int(digits[:2]) not in _PROVINCES:
        return False
    try:
        date(1900 + int(digits[6:8]), int(digits[8:10]), int(digits[10:12]))
    except ValueError:
        return False
    return True


def luhn(digits: str) -> bool:
    """Return whether a string of digits passes the Luhn check (every card number of the big networks does).

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


_CARD_PREFIXES = frozenset({"30", "34", "35", "36", "37", "38", "39", "60", "62", "63", "64", "65", "67", "81"})


def card_issuer(digits: str) -> bool:
    """Return whether digits open as a card network numbers its cards (Amex, Diners, JCB 3; Visa 4;
    Mastercard and Maestro 5, 2221-2720; UnionPay 62 and 81; Discover, Maestro, RuPay 60, 63-65, 67; a card of
    13 digits is a Visa): a product's barcode (690..., 13 digits), a date-stamped order number
    (2026110312345678) or a time in milliseconds that happens to pass Luhn is no card.

    >>> card_issuer("6217001234567893"), card_issuer("6901234567892"), card_issuer("2026110312345678")
    (True, False, False)
    """
    if len(digits) == 13:
        return digits[0] == "4"
    return digits[0] in "45" or digits[:2] in _CARD_PREFIXES or 2221 <= int(digits[:4]) <= 2720


# --- values named by the word before them --------------------------------------------------------
# Each: its kind, words one of which its text must hold (lower case; a cheap test before the pattern
# runs), and the pattern, whose last group that took part is the value.
# between the word and its value: 号, 码, 是, a colon, brackets, spaces (a few characters, never a sentence)
_GAP = r"[\s:=是为号码的（(【\[#]{0,6}"
_DIGITS_13_19 = r"[0-9](?:[ \-]?[0-9]){12,18}"
NAMED = (
    ("ID_NUMBER", ("身份", "证件号", "id"), re.compile(r"(?i)(?:身份证|身份号码|身份证件|公民身份号码|证件号|id\s*card|id\s*number|identity\s*card|"
                             r"national\s*id)(?:\s*(?:no\.?|number|#))?" + _GAP +
                             r"([0-9]{6}[ \-]?[0-9]{8}[ \-]?[0-9]{3}[0-9Xx]|[0-9]{15})(?![0-9A-Za-z])")),
    ("BANK_CARD", ("卡", "账号", "帐号", "card", "account"), re.compile(r"(?i)(?:卡号|银行卡|储蓄卡|信用卡|借记卡|银联卡|银行账号|银行帐号|card\s*(?:no\.?|number|#)|"
                             r"account\s*(?:no\.?|number))" + _GAP + rf"({_DIGITS_13_19})(?![0-9A-Za-z])")),
    ("PASSPORT", ("护照", "passport", "通行证", "回乡证", "台胞证"), re.compile(r"(?i)(?:护照|passport|通行证|回乡证|台胞证)(?:\s*(?:no\.?|number|#))?" + _GAP +
                            r"([A-Z]{1,2}[0-9]{6,9}|[0-9]{8,9})(?![0-9A-Za-z])")),
    ("QQ", ("qq", "扣扣", "企鹅", "q号"), re.compile(r"(?i)(?:(?<![a-z])qq(?:号码|号)?|扣扣(?:号码|号)?|企鹅号|(?<![a-z])q号码?)\s*[:：是为]?\s*"
                      r"([1-9](?:[ \-]?[0-9]){4,10})(?![0-9])")),
    # after a word asking to add an account, any id; after the name of the app alone, an id of letters
    # alone needs a colon or 是 ("wechat payment", "微信 openid" name no account)
    ("WECHAT", ("微", "v信", "+v", "加v", "薇信", "威信", "wx号", "vx号"), re.compile(r"(?i)(?:加我?微信|加我?v信|加我?微|加我?v|\+v|薇信|威信|v信|微信号|wx号|vx号)"
                          r"(?:\s*(?:号|id|账号|帐号))?\s*[:：是为]?\s*([a-z][-_a-z0-9]{5,19}|[1-9][0-9]{4,10})"
                          r"(?![-_a-z0-9])")),
    ("WECHAT", ("微信", "wechat", "weixin", "wx", "vx"), re.compile(r"(?i)(?:微信|wechat|weixin|(?<![a-z])[wv]x)(?:\s*(?:号|id|账号|帐号))?\s*"
                          r"(?:[:：是为]\s*([a-z][-_a-z0-9]{5,19})|((?=[-_a-z]*[0-9_\-])[a-z][-_a-z0-9]{5,19}|"
                          r"[1-9][0-9]{4,10}))(?![-_a-z0-9])")),
    ("PHONE", ("电话", "座机", "固话", "手机", "tel", "phone"), re.compile(r"(?i)(?:电话|座机|固话|手机|(?<![a-z])tel|(?<![a-z])phone)(?:号码|号)?[\s:：是为]{0,3}([2-9][0-9]{6,7})(?![0-9])")),
)
# a number named as an order, ticket or tracking number: no personal data, kept (unless it has the shape
# of a mobile number or a resident ID number: `kept`)
KEPT_HINTS = ("单", "号", "order", "ticket", "tracking", "invoice", "serial", "sn")
KEPT = re.compile(r"(?i)(?<![a-z])(?:订单号?|单号|流水号|交易号|工单号?|发票号码?|批次号|序列号|order\s*(?:no\.?|number|id|#)?|"
                  r"ticket\s*(?:no\.?|number|id|#)?|tracking\s*(?:no\.?|number)?|invoice\s*(?:no\.?|number)?|"
                  r"serial\s*(?:no\.?|number)?|sn)" + r"[\s:=是为号码的（(#]{0,4}([0-9A-Za-z][0-9A-Za-z\-]{5,39})(?![0-9A-Za-z])")

# --- documents and vehicles ----------------------------------------------------------------------
# an ordinary Chinese passport: E and eight digits, or E, a letter and seven digits (since 2012); G and eight
PASSPORT = re.compile(r"(?<![0-9A-Za-z\-])(?:E[0-9]{8}|E[A-HJ-NP-Z][0-9]{7}|G[0-9]{8})(?![0-9A-Za-z\-])")
_PROVINCE_SHORT = "京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼"
# a Chinese plate: province, a letter, a dot or space maybe, then five characters (new energy: six, D or F
# first or last); at least two of the characters after the letter are digits
PLATE = re.compile(rf"(?i)[{_PROVINCE_SHORT}][A-HJ-NP-Z][ ·•・.\-]?"
                   r"(?=(?:[A-HJ-NP-Z]*[0-9]){2})(?:[DF][A-HJ-NP-Z0-9][0-9]{4}|[0-9]{5}[DF]|"
                   r"[A-HJ-NP-Z0-9]{4}[A-HJ-NP-Z0-9挂学警港澳])(?![A-Za-z0-9])")


def kept(value: str) -> bool:
    """Return whether a value named as an order or ticket number is kept as it is: not when it is a
    Chinese mobile number or a resident ID number (some shops number orders by the buyer's phone).

    >>> kept("2026110312345678"), kept("13812345678"), kept("11010519491231002X")
    (True, False, False)
    """
    return not (MOBILE.fullmatch(value) or resident_id(value))
