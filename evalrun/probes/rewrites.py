"""The question said another way, by rule, in Chinese and English: the facts it asks about kept.

- typo: English, two neighbouring letters swapped or one dropped inside a word of 4+ letters (never its
  first letter; never a word in capitals, or one joined to a digit or a hyphen: no code, number or
  acronym); Chinese, one character replaced by a near homophone or look-alike from `ZH_TYPOS` (在/再,
  账/帐, 登录/登陆, ...), or, with none of them in the question, a particle dropped (的 了 呢 吧);
- colloquial: a spoken opening, and sometimes a closing ("hey, quick question: ...", "请问一下，...",
  "我想知道...");
- word_order: English, a trailing phrase moved to the front ("How long is the window for annual plans?"
  -> "For annual plans, how long is the window?": the last such phrase), or a leading if/when clause
  moved to the end; Chinese,
  "X是什么/谁/哪…？" turned into "什么是X？", or a leading clause (在…，根据…，…之后，) moved after the
  main one.

Every candidate is checked against `curate.salient`: a rewrite whose numbers, dates, codes or negations
differ from the question's is never returned (a typo that makes "note" into "not" is tried no further).
A rule that finds nothing to change says why.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator

from curate import salient

ZH_TYPOS = {"在": "再", "再": "在", "哪": "那", "那": "哪", "做": "作", "账": "帐", "已": "己", "须": "需",
            "需": "须", "象": "像", "像": "象", "录": "陆", "候": "后", "密": "秘", "置": "制", "期": "其",
            "是": "事", "吗": "嘛", "部": "布", "的": "地"}
_ZH_PARTICLES = "的了呢吧"
_EN_WORD = re.compile(r"(?<![\w-])[A-Za-z]{4,}(?![\w-])")
_EN_OPENINGS = ("hey, quick question: ", "so, ", "um, ", "quick one: ")
_EN_CLOSINGS = ("", "", " thanks!", " any idea?")
_ZH_OPENINGS = ("请问一下，", "我想知道", "问一下，", "想请教一下，")
_ZH_CLOSINGS = ("", "", "谢谢！")
_EN_TRAILING = re.compile(r"^(?P<head>(?:\S+\s+){3,}\S+?)\s+(?P<tail>(?:in|on|at|for|after|before|during|"
                          r"under|within|when|if|since|from|with|without|by|per)\s+[^,;]{1,60}?)\s*\?$")
_EN_LEADING = re.compile(r"^(?P<lead>(?:If|When|After|Before|Once)\s+[^,]+),\s*(?P<main>.+?)\s*\?$")
_ZH_WHAT = re.compile(r"^(?P<topic>.{2,}?)是(?P<ask>(?:什么|谁|哪|多少)[^，,？?是]{0,4})(?P<mark>[？?])$")
_ZH_LEADING = re.compile(r"^(?P<lead>(?:(?:在|根据|按照|对于|关于|如果|当|从)[^，,]+|[^，,]+(?:之后|以后|之前|以前|时)))"
                         r"[，,](?P<main>[^，,]+?)(?P<mark>[？?])$")


def rewrite(question: str, language: str, rule: str, rng: random.Random) -> tuple[str | None, str]:
    """Return (the question rewritten by `rule`, what changed), or (None, why it cannot be) when the rule
    finds nothing to change that keeps every salient token.

    >>> rewrite("LG-4031 的含义是什么？", "zh", "word_order", random.Random(0))
    ('什么是LG-4031 的含义？', '是什么 moved to the front')
    >>> rewrite("What does LG-4031 mean?", "en", "word_order", random.Random(0))
    (None, 'no trailing phrase or leading clause to move')
    """
    wanted = salient(question)
    reason = "no rewrite keeps its numbers, dates, codes and negations"
    for candidate, what in RULES[rule](question, language, rng):
        if candidate is None:
            reason = what
        elif candidate != question and salient(candidate) == wanted:
            return candidate, what
    return None, reason


Candidates = Iterator[tuple[str | None, str]]


def _typos(question: str, language: str, rng: random.Random) -> Candidates:
    """Yield the question with one typo each, in a drawn order; (None, why) when it has no place for one."""
    if language == "zh":
        places = [i for i, c in enumerate(question) if c in ZH_TYPOS]
        for i in rng.sample(places, len(places)):
            yield question[:i] + ZH_TYPOS[question[i]] + question[i + 1:], f"{question[i]} -> {ZH_TYPOS[question[i]]}"
        particles = [i for i, c in enumerate(question) if c in _ZH_PARTICLES]
        for i in rng.sample(particles, len(particles)):
            yield question[:i] + question[i + 1:], f"{question[i]} dropped"
        if not places and not particles:
            yield None, "no character of the typo table and no particle in the question"
        return
    words = [m for m in _EN_WORD.finditer(question) if not m.group(0).isupper()]
    if not words:
        yield None, "no word of 4 letters or more outside codes and numbers"
    for word in rng.sample(words, len(words)):
        yield from _word_typos(question, word, rng)


def _word_typos(question: str, word: re.Match, rng: random.Random) -> Candidates:
    """Return the question with each swap of two neighbouring letters or drop of one in `word`, drawn."""
    text, at = word.group(0), word.start()
    edits = [("swap", i) for i in range(1, len(text) - 1) if text[i] != text[i + 1]]
    edits += [("drop", i) for i in range(1, len(text))]
    for kind, i in rng.sample(edits, len(edits)):
        typo = text[:i] + text[i + 1] + text[i] + text[i + 2:] if kind == "swap" else text[:i] + text[i + 1:]
        yield question[:at] + typo + question[at + len(text):], f"{text} -> {typo}"


def _colloquial(question: str, language: str, rng: random.Random) -> Candidates:
    """Yield the question with a spoken opening (and maybe a closing), in a drawn order."""
    openings, closings = (_ZH_OPENINGS, _ZH_CLOSINGS) if language == "zh" else (_EN_OPENINGS, _EN_CLOSINGS)
    pairs = [(o, c) for o in openings for c in closings]
    for opening, closing in rng.sample(pairs, len(pairs)):
        body = question.strip()
        if language == "zh" and opening.startswith("我想知道"):
            body = body.rstrip("？?") + ("。" if closing else "")   # 我想知道… is a statement, not a question
        elif language != "zh":
            body = _lower_first(body)
        yield opening + body + closing, f"{opening.strip()} ... {closing.strip()}".strip(" .") or opening.strip()


def _word_order(question: str, language: str, rng: random.Random) -> Candidates:
    """Yield the question with a phrase moved (rules: module docstring); (None, why) when none applies."""
    text = question.strip()
    if language == "zh":
        if m := _ZH_WHAT.match(text):
            yield f"{m['ask']}是{m['topic']}{m['mark']}", f"是{m['ask']} moved to the front"
        if m := _ZH_LEADING.match(text):
            yield f"{m['main']}，{m['lead']}{m['mark']}", f"{m['lead']} moved after the question"
        yield None, "no 是什么/谁/哪 to move and no leading clause"
        return
    if m := _EN_TRAILING.match(text):
        tail = m["tail"]
        yield f"{tail[0].upper()}{tail[1:]}, {_lower_first(m['head'])}?", f"'{tail}' moved to the front"
    if m := _EN_LEADING.match(text):
        yield f"{m['main'][0].upper()}{m['main'][1:]} {_lower_first(m['lead'])}?", f"'{m['lead']}' moved to the end"
    yield None, "no trailing phrase or leading clause to move"


def _lower_first(text: str) -> str:
    """Return the text with its first letter lower-cased, unless its first word is "I", an acronym or a code."""
    first = text.split(maxsplit=1)[0] if text.split() else ""
    if first == "I" or first[1:] != first[1:].lower() or any(c.isdigit() for c in first):
        return text
    return text[:1].lower() + text[1:]


RULES: dict[str, Callable[[str, str, random.Random], Candidates]] = {
    "typo": _typos, "colloquial": _colloquial, "word_order": _word_order}
