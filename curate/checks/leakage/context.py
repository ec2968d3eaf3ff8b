"""How a copy of a question stands in the text that holds it: as a whole sentence or line, and as
a question (a question mark, an FAQ label, an interrogative form, the answer beside it)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

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
    """How a copy stands: `whole` when it is its own sentence or line (an FAQ label aside, a few
    inserted characters allowed), or its own clause ending the sentence with a question mark;
    `question` says how it stands as a question, or is empty."""

    whole: bool
    question: str = ""


def _asks(body: str) -> bool:
    return body.rstrip(_CLOSERS).endswith(tuple(_QUESTION_MARKS)) or body.lstrip().startswith("¿")


def standing(text: str, start: int, end: int, question_chars: int, answer: str = "") -> Standing:
    """Return how the copy at text[start:end] stands in `text`, for a question of `question_chars`
    folded characters whose folded reference answer is `answer`.

    >>> faq = "常见问题\\n问：如何申请企业版？\\n答：请联系销售团队。"
    >>> at = faq.index("如何")
    >>> standing(faq, at, at + 6, 6)
    Standing(whole=True, question='FAQ label')
    >>> standing("美联储加息。市场随之下跌。", 0, 5, 5)
    Standing(whole=True, question='')
    >>> standing("昨日美联储加息25个基点。", 2, 7, 5).whole
    False
    >>> standing("他们常问：网关的限流阈值是多少？答：每分钟六十次。", 5, 15, 10)
    Standing(whole=True, question='question mark')
    """
    units = [(a, b) for a, b in sentence_spans(text) if a < end and b > start] or [(start, end)]
    unit_start, unit_end = units[0][0], units[-1][1]
    limit = question_chars + slack(question_chars)
    line_start = text.rfind("\n", 0, unit_start) + 1
    label = QUESTION_LABEL.match(text, line_start)
    if label is None or label.end() > start or text[label.end():unit_start].strip():
        label = _LABEL_BEFORE.search(text, unit_start, start)   # "...;问：" just before the copy
    body = text[max(unit_start, label.end()) if label else unit_start:unit_end]
    if len(fold(body)) > limit:
        # its own clause: after the last punctuation mark before it, asking to the sentence's end
        clause_start = max((i + 1 for i in range(unit_start, start) if _PUNCTUATION.match(text[i])), default=None)
        clause = text[clause_start:unit_end] if clause_start is not None else ""
        if not (clause and _asks(clause) and len(fold(clause)) <= limit):
            return Standing(False)
        return Standing(True, "question mark")
    if label:
        return Standing(True, "FAQ label")
    if _asks(body):
        return Standing(True, "question mark")
    if interrogative(body):
        return Standing(True, "interrogative")
    following = next(iter(sentence_spans(text, unit_end)), None)
    if following is not None:
        beside = text[following[0]:following[1]]
        if ANSWER_LABEL.match(beside) or (len(answer) >= 2 and fold(beside).startswith(answer)):
            return Standing(True, "answer beside it")
    return Standing(True)
