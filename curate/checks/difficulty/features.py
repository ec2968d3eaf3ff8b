"""Measured difficulty features of one item: cue words, lexical overlap, retrieval ranks and near
misses. `curate.checks.difficulty.measure` documents each feature and measures a whole dataset;
`curate.checks.difficulty.rule` turns the features into a difficulty level."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from curate.text.normalize import fold


# -- cue words ----------------------------------------------------------------------------------

# Chinese cues are patterns over the NFKC text; lookarounds keep out common words that merely
# contain the character (当前 "current", 若干 "several", 非常 "very", 区别 "difference", ...).
ZH_CONDITIONS = (
    "如果", "假如", "假设", "要是", "倘若", "若(?!干)", "万一", "除非", "无论", "除了",
    r"在[^，。？！；,.?!;]{1,15}?(?:时候|时(?!间))",   # 在…时: "在升级时"
    "(?<![适相应恰妥正])当(?![前然地天中])", "情况下", "前提",
    "之前", "之后", "以前", "以后", "版本", "仅", "只有", "只能", "同时", "并且", "而且",
)
ZH_NEGATIONS = (
    "不能", "无法", "没有", "没", "未(?!来)", "不(?![同少过断仅久错])", "无(?!论)", "非(?!常)",
    "(?<![区类分特级识差个性告])别(?![的人名处])",
)
# A-not-A questions (能不能, 是不是, 有没有) ask yes or no; they negate nothing.
_ZH_A_NOT_A = re.compile(r"([\u4e00-\u9fff])[不没]\1")

EN_CONDITIONS = (
    "if", "unless", "when", "whenever", "before", "after", "since", "until", "only", "except",
    "while", "during", "versions?", "both", "also", "provided", "assuming",
)
EN_NEGATIONS = ("not", "no", "never", "without", "cannot", "none", "nor", "nothing", r"\w+n['’]t")

_ZH_CONDITION = re.compile("|".join(ZH_CONDITIONS))
_ZH_NEGATION = re.compile("|".join(ZH_NEGATIONS))
_EN_CONDITION = re.compile(r"\b(?:" + "|".join(EN_CONDITIONS) + r")\b")
_EN_NEGATION = re.compile(r"\b(?:" + "|".join(EN_NEGATIONS) + r")\b")

STOP_WORDS = frozenset("""
a an the and or but of to in on at by for from with about as into than then so
is are was were be been being am do does did done have has had having
can could will would shall should may might must
i me my we our you your he she it its they them their this that these those there here
what which who whom whose how why where
get gets got any some all each every more most much many other such own same very just
""".split())

_WORD = re.compile(r"[^\W_]+(?:[.'’][^\W_]+)*")


def cue_counts(question: str, language: str) -> tuple[int, int]:
    """Return (conditions, negations): cue words of the question's language found in it.

    "when" opening an English question asks for a time and is not counted.

    >>> cue_counts("如果令牌没有过期，LG-4032 表示什么？", "zh")
    (1, 1)
    >>> cue_counts("能不能在升级时保留配置？", "zh")
    (1, 0)
    >>> cue_counts("When does the token expire if it isn't refreshed before 3.2?", "en")
    (2, 1)
    """
    text = unicodedata.normalize("NFKC", question).casefold()
    if language == "zh":
        return len(_ZH_CONDITION.findall(text)), len(_ZH_NEGATION.findall(_ZH_A_NOT_A.sub("", text)))
    conditions = len(_EN_CONDITION.findall(text))
    if re.match(r"\W*when\b", text):
        conditions -= 1
    return conditions, len(_EN_NEGATION.findall(text))


# -- lexical overlap ----------------------------------------------------------------------------

def terms(text: str, language: str) -> set[str]:
    """Return the terms overlap is measured in: bigrams of the folded text (zh), content words (en).

    >>> sorted(terms("令牌过期", "zh")), sorted(terms("What does version 3.2 change?", "en"))
    (['令牌', '牌过', '过期'], ['3.2', 'change', 'version'])
    """
    if language == "zh":
        folded = fold(text)
        return {folded[i:i + 2] for i in range(len(folded) - 1)}
    words = _WORD.findall(unicodedata.normalize("NFKC", text).casefold())
    return {w for w in words if w not in STOP_WORDS}


def lexical_overlap(question: str, evidence_texts: Sequence[str], language: str) -> float:
    """Return the share of the question's distinct terms found in its evidence texts (0 without).

    >>> lexical_overlap("LG-4031 是什么意思？", ["LG-4031 表示访问令牌已过期。"], "zh")  # lg g4 40 03 31 of 10
    0.5
    >>> lexical_overlap("Who can run the upgrade command?", ["Only administrators can run the upgrade command;"], "en")
    1.0
    """
    wanted = terms(question, language)
    if not wanted or not evidence_texts:
        return 0.0
    found = set().union(*(terms(t, language) for t in evidence_texts))
    return len(wanted & found) / len(wanted)


# -- ranks and near misses --------------------------------------------------------

def bm25_rank(positions: Sequence[int], scores: Sequence[float], gold: set[int]) -> int | None:
    """Return the 1-based rank of the first gold chunk among those retrieved (score > 0), or None.

    >>> bm25_rank([4, 2, 7], [3.1, 1.2, 0.0], {2, 7})
    2
    >>> bm25_rank([4, 2, 7], [3.1, 1.2, 0.0], {7}) is None
    True
    """
    for rank, (position, score) in enumerate(zip(positions, scores), start=1):
        if score <= 0:
            break  # scores come best first: the rest share no word with the question
        if int(position) in gold:
            return rank
    return None


def dense_rank(scores: np.ndarray, gold: Iterable[int], k: int) -> int | None:
    """Return the 1-based rank of the best gold chunk by score (ties: earlier chunk first), or
    None beyond k: 1 + chunks scoring higher + chunks scoring the same that come before it.

    >>> dense_rank(np.array([0.1, 0.9, 0.5, 0.9]), {3, 2}, k=10)
    2
    >>> dense_rank(np.array([0.1, 0.9, 0.5, 0.9]), {0}, k=3) is None
    True
    """
    gold = np.fromiter(sorted(gold), dtype=np.int64)
    best = scores[gold].max()
    first = int(gold[scores[gold] == best].min())
    rank = 1 + int((scores > best).sum()) + int((scores[:first] == best).sum())
    return rank if rank <= k else None


def grams(folded: str, n: int = 4) -> set[str]:
    """Return the distinct character n-grams of a folded text.

    >>> sorted(grams("abcde"))
    ['abcd', 'bcde']
    """
    return {folded[i:i + n] for i in range(len(folded) - n + 1)}


def near_miss(candidate: set[str], gold: Iterable[set[str]], share: float) -> bool:
    """Return whether at least `share` of a chunk's 4-grams occur in one of the gold chunks.

    >>> near_miss(grams("timeout15seconds"), [grams("timeout30seconds")], 0.5)  # 8 of 13 grams
    True
    """
    return bool(candidate) and any(len(candidate & g) >= share * len(candidate) for g in gold)


def confusable_above(positions: Sequence[int], scores: Sequence[float], gold: set[int],
                     gram_sets: Callable[[int], set[str]], share: float) -> int:
    """Return how many non-gold chunks retrieved above the first gold chunk are near misses;
    `gram_sets(position)` gives a chunk's 4-grams."""
    gold_grams = [gram_sets(p) for p in sorted(gold)]
    count = 0
    for position, score in zip(positions, scores):
        position = int(position)
        if score <= 0 or position in gold:
            break
        count += near_miss(gram_sets(position), gold_grams, share)
    return count
