"""How a copy of a question stands in the text that holds it: as a whole sentence or line, and as
a question (a question mark, an FAQ label, an interrogative form, the answer beside it); and whether
the copy names what the question names (the same numbers, negations and model names)."""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from curate.text.salient import salient
from curate.text.containment import SLACK
from curate.text.normalize import canonical, fold
from curate.text.sentences import sentence_spans

# An FAQ-like label that opens a line or sentence: "Q:", "Q1.", "Question:", "问：", "问题：", "1. 问："
_BULLET = r"\s*(?:[-*•·]\s*)?(?:\d{1,3}\s*[.、)）]\s*)?"
QUESTION_LABEL = re.compile(_BULLET + r"(?:q|question|faq|问|问题|提问)\s*\d{0,3}\s*[:：.．、)）]", re.IGNORECASE)
_LABEL_BEFORE = re.compile(r"(?<![^\W\d_])(?:q|question|faq|问|问题|提问)\s*\d{0,3}\s*[:：]\s*$", re.IGNORECASE)
ANSWER_LABEL = re.compile(_BULLET + r"(?:a|answer|答|答案|回答|解答)\s*\d{0,3}\s*[:：.．、)）]", re.IGNORECASE)

ZH_INTERROGATIVES = ("吗", "呢", "什么", "如何", "为什么", "怎么", "哪", "谁", "几", "多少", "是否", "为何")
EN_WH = {"what", "who", "whom", "whose", "which", "when", "where", "why", "how"}
EN_AUXILIARIES = {"is", "are", "was", "were", "am", "do", "does", "did", "can", "could", "will", "would", "shall",
                  "should", "may", "might", "must", "has", "have", "had"}
_QUESTION_MARKS = "?？"
_CLOSERS = "\"'”’」』）)]》>*_ \t\r\n"
_FIRST_WORD = re.compile(r"[^\W\d_]+")
_PUNCTUATION = re.compile(r"[^\w\s]")
# Words that name a model's variant right after its code: "Aurora R7 Max" is not "Aurora R7".
VARIANT_WORDS = ("pro", "max", "plus", "ultra", "mini", "lite", "se", "air", "neo", "turbo", "prime", "edition",
                 "premium", "enterprise", "standard", "basic", "business", "team", "personal", "home", "studio", "xl")
# A model's code (letters and digits: R7, X10, MP3, LG-4031, Mate60) with its variant words and edition
# (X10 Pro, R7 Max, X10青春版); a bare number is no model (numbers are `salient`'s).
_MODEL = re.compile(r"(?<![a-z0-9.\-])(?:[a-z]+-?)?\d+(?:[a-z]+\d*|[.\-]\d+)*"
                    r"(?:[\s\-_]*(?:" + "|".join(VARIANT_WORDS) + r")(?![a-z]))*"
                    r"(?:\s*(?:[\u4e00-\u9fff]{0,3}[版款](?!本|权|面|块|图)|第[一二三四五六七八九十\d]+代))?", re.IGNORECASE)
_LETTER = re.compile(r"[a-z]")
# An edition or a plan: 标准版 专业版 企业版 青春版 (not 出版 再版 排版 ... nor 版本 版权), "the Enterprise plan"
_EDITION = re.compile(r"[\u4e00-\u9fff]{2}(?<![出再排改初盗制翻绝原])版(?!本|权|面|块|图)"
                      r"|\b(?:free|basic|standard|starter|pro|plus|premium|business|enterprise|team|personal|family)"
                      r"\s+(?:plan|edition|tier|version|subscription)\b")
_SPACED_DIGITS = re.compile(r"(?<=\d)\s+(?=\d)")   # "1 200", "１８ ７０": one number


def slack(chars: int) -> int:
    """Return how many folded characters a whole copy may hold beyond the question's own: the
    containment window's slack (30%, at least 3), room for inserted words."""
    return max(3, math.ceil(SLACK * chars))


def interrogative(text: str) -> bool:
    """Return whether a sentence has an interrogative form: a Chinese question word or particle
    (吗 呢 什么 如何 为什么 怎么 哪 谁 几 多少 是否 为何), or an English one opening with a wh-word or an
    auxiliary before its subject ("Is", "Can", "Does" ...).

    >>> interrogative("LG-4031 是什么意思"), interrogative("Can admins upgrade it"), interrogative("Fed rate hike 2024")
    (True, True, False)
    """
    norm = canonical(text)
    if any(word in norm for word in ZH_INTERROGATIVES):
        return True
    first = _FIRST_WORD.match(norm.lstrip(" \"'([-*"))
    return bool(first) and first.group() in EN_WH | EN_AUXILIARIES


@dataclass(frozen=True)
class Standing:
    """How a copy stands: `whole` when it is its own sentence or line (an FAQ label aside, a few inserted
    characters allowed), or its own clause ending the sentence with a question mark; `question` says how
    it stands as a question, or is empty; `asks` when the sentence or line holding it is itself a question
    (labelled, or ending with a question mark), whether or not the copy is all of it."""

    whole: bool
    question: str = ""
    asks: bool = False


def ends_asking(body: str) -> bool:
    """Return whether a sentence ends with a question mark (closing quotes and markup aside).

    >>> ends_asking("**Q: How do I reset it?**"), ends_asking("问：如何申请企业版"), ends_asking("Fed rate hike 2024")
    (True, False, False)
    """
    return body.rstrip(_CLOSERS).endswith(tuple(_QUESTION_MARKS)) or body.lstrip().startswith("¿")


_asks = ends_asking


def has_question_form(question: str) -> bool:
    """Return whether a question is phrased as one: a question mark or an interrogative form (a keyword
    query such as "Fed rate hike 2024" or "星河X10 电池容量" is not).

    >>> has_question_form("星河X10的电池容量"), has_question_form("电池容量？"), has_question_form("how do I reset it")
    (False, True, True)
    """
    return _asks(question) or interrogative(question)


def standing(text: str, start: int, end: int, question_chars: int, answer: str = "") -> Standing:
    """Return how the copy at text[start:end] stands in `text`, for a question of `question_chars`
    folded characters whose folded reference answer is `answer`.

    >>> faq = "常见问题\\n问：如何申请企业版？\\n答：请联系销售团队。"
    >>> at = faq.index("如何")
    >>> standing(faq, at, at + 6, 6)
    Standing(whole=True, question='FAQ label', asks=True)
    >>> standing("美联储加息。市场随之下跌。", 0, 5, 5)
    Standing(whole=True, question='', asks=False)
    >>> standing("昨日美联储加息25个基点。", 2, 7, 5).whole
    False
    >>> standing("他们常问：网关的限流阈值是多少？答：每分钟六十次。", 5, 15, 10)
    Standing(whole=True, question='question mark', asks=True)
    >>> standing("问：某品牌新款手机的首发价格是多少？", 10, 17, 7)   # a longer, more specific question
    Standing(whole=False, question='', asks=True)
    """
    units = [(a, b) for a, b in sentence_spans(text) if a < end and b > start] or [(start, end)]
    unit_start, unit_end = units[0][0], units[-1][1]
    limit = question_chars + slack(question_chars)
    line_start = text.rfind("\n", 0, unit_start) + 1
    label = QUESTION_LABEL.match(text, line_start)
    if label is None or label.end() > start or text[label.end():unit_start].strip():
        label = _LABEL_BEFORE.search(text, unit_start, start)   # "...;问：" just before the copy
    body_start = max(unit_start, label.end()) if label else unit_start
    body = text[body_start:unit_end]
    asks = bool(label) or _asks(body)
    if len(fold(body)) > limit:
        # its own clause: after the last punctuation mark before it, asking to the sentence's end
        clause_start = max((i + 1 for i in range(body_start, start) if _PUNCTUATION.match(text[i])), default=None)
        clause = text[clause_start:unit_end] if clause_start is not None else ""
        if not (clause and _asks(clause) and len(fold(clause)) <= limit):
            return Standing(False, asks=asks)
        return Standing(True, "question mark", True)
    if label:
        return Standing(True, "FAQ label", True)
    if _asks(body):
        return Standing(True, "question mark", True)
    if interrogative(body):
        return Standing(True, "interrogative")
    following = next(iter(sentence_spans(text, unit_end)), None)
    if following is not None:
        beside = text[following[0]:following[1]]
        if ANSWER_LABEL.match(beside) or (len(answer) >= 2 and fold(beside).startswith(answer)):
            return Standing(True, "answer beside it")
    return Standing(True)


# "能不能", "是不是", "有没有": a question's A-not-A form, not a negation
_A_NOT_A = re.compile(r"([\u4e00-\u9fff])[不没]\1")


def _salient(text: str) -> Counter:
    text = _SPACED_DIGITS.sub("", _A_NOT_A.sub(r"\1", text))
    return Counter(token.replace(",", "") for token in salient(text).elements())


def _plain(text: str) -> str:
    # NFKC and lower case only: canonical() makes 。 a ".", which would glue "…001。ＭＰ３" into one code
    return unicodedata.normalize("NFKC", text).lower()


def _models(matches) -> Counter:
    return Counter(fold(m.group()) for m in matches if _LETTER.search(m.group()))


def _named(plain: str, start: int = 0, end: int | None = None) -> Counter:
    """Return the model and edition names of a plain (NFKC, lower-case) text that touch plain[start:end]."""
    end = len(plain) if end is None else end
    found = _models(m for m in _MODEL.finditer(plain) if m.start() < end and m.end() > start)
    found.update(fold(m.group()) for m in _EDITION.finditer(plain) if m.start() < end and m.end() > start)
    return found


def names(text: str) -> Counter:
    """Return what a text names that a copy or a paraphrase must keep: numbers, negations, A+/C++ signs,
    model names (a code with its variant words: "R7 Max", "X10 Pro", "X10青春版"), editions and plans
    ("专业版", "the Enterprise plan").

    >>> sorted(names("星河X10 Pro能不能用120瓦快充？")), sorted(names("云盘专业版的空间有多大？"))
    (['10', '120', 'x10pro'], ['专业版'])
    """
    return _salient(text) + _named(_plain(text))


def names_differ(question: str, text: str, start: int, end: int) -> str | None:
    """Return what the copy at text[start:end] names that the question does not, or the other way round
    ("x10 ≠ x10pro"), or None. A model name that runs on past the copy counts whole: "Aurora R7" copied
    from "Aurora R7 Max" names the Max. Numbers and negations are those inside the copy.

    >>> names_differ("How many devices can the Aurora R7 connect?", "Can the Aurora R7 Max connect?", 4, 26)
    'r7 ≠ r7max'
    >>> names_differ("星河X10的首发价格是多少", "星河X10 Pro的首发价格是多少？", 0, 17)
    'x10 ≠ x10pro'
    >>> names_differ("退款需要手续费吗", "退款不需要手续费吗？", 0, 9)
    '(none) ≠ 不'
    >>> names_differ("LG-4031 是什么意思", "ＬＧ－４０３１ 是什么意思？", 0, 13) is None
    True
    """
    inside = _salient(text[start:end])
    plain = _plain(text)
    # width and case kept every character's place: a name may run on past the copy
    inside.update(_named(plain, start, end) if len(plain) == len(text) else _named(_plain(text[start:end])))
    asked = names(question)
    if inside == asked:
        return None
    only_asked, only_inside = asked - inside, inside - asked
    return (f"{', '.join(sorted(only_asked.elements())) or '(none)'} ≠ "
            f"{', '.join(sorted(only_inside.elements())) or '(none)'}")
