"""What a text may not change and still say the same: its salient tokens (numbers, dates, amounts,
codes, versions, negations). One rule for every place that decides whether two texts are the same
fact: check-dups joining copies, the evidence-group rule, and remap or import finding a quote again
only fuzzily ($89.99 is not $19.99, LG-4031 is not LG-4032, "in 2023" is not "in 2025").
"""

from __future__ import annotations

import re
from collections import Counter

from curate.text.normalize import canonical

# Numbers (dates, versions, amounts, quotas, codes' digits), Chinese numerals before a unit, symbols
# that carry meaning after a letter (A+, C++), English negations and month names in one word branch
# (one alternation is twice as fast as two), and Chinese negations.
_SALIENT = re.compile(
    r"\d+(?:[.,:/\-]\d+)*%?"
    r"|[零〇一二两三四五六七八九十百千万亿]+(?=[年月日号个次天元岁位名台项条倍])"
    r"|(?<=[A-Za-z])\+\+?"
    r"|\b(?:not|no|never|none|cannot|without|nor|jan(?:uary)?|feb(?:ruary)?|march|apr(?:il)?|june?|july?"
    r"|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|may)\b|n't"
    r"|[不没無无非未别勿莫否]",
    re.IGNORECASE)
_DIGIT_NEAR = re.compile(r"\d\s*$|^\s*\d")


def salient(text: str) -> Counter:
    """Return what a copy must keep: numbers, Chinese numerals before a unit, A+/C++ signs, month
    names ("may" only beside a number: as a verb it is no date), negations; read on the canonical
    text, so full-width digits and ideographic full stops are the digits and full stops they stand for.

    >>> sorted(salient("2018年招生计划：本科招收 1,200 人，不含专升本。"))
    ['1,200', '2018', '不']
    >>> sorted(salient("Price: $89.99 from March; LG-4031 in v2.0.1")), sorted(salient("３。２"))
    (['2.0.1', '4031', '89.99', 'march'], ['3.2'])
    >>> sorted(salient("You may renew on 5 May or May 6.").elements()), sorted(salient("You may renew."))
    (['5', '6', 'may', 'may'], [])
    """
    text = canonical(text)
    found: Counter = Counter()
    for match in _SALIENT.finditer(text):
        token = match.group(0).lower()
        if token == "may" and not (_DIGIT_NEAR.search(text[max(0, match.start() - 3):match.start()])
                                   or _DIGIT_NEAR.search(text[match.end():match.end() + 3])):
            continue
        found[token] += 1
    return found


def salient_difference(a: str, b: str) -> str | None:
    """Return what two texts differ in among their salient tokens ("2017 ≠ 2018"), or None.

    >>> salient_difference("2017年计划招生100人", "2018年计划招生100人")
    '2017 ≠ 2018'
    >>> salient_difference("可以退款", "不可以退款")
    '(none) ≠ 不'
    >>> salient_difference("本文列出错误码", "本页列出错误码") is None
    True
    >>> salient_difference("The plan costs $89.99 a month.", "The plan costs $19.99 a month.")
    '89.99 ≠ 19.99'
    """
    left, right = salient(a), salient(b)
    if left == right:
        return None
    only_a, only_b = left - right, right - left
    return f"{', '.join(sorted(only_a.elements())) or '(none)'} ≠ {', '.join(sorted(only_b.elements())) or '(none)'}"
