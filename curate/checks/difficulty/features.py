"""Measured difficulty features of one item: cue words, lexical overlap, retrieval ranks and near
misses. `curate.checks.difficulty.measure` documents each feature and measures a whole dataset;
`curate.checks.difficulty.rule` turns the features into a difficulty level."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from curate.text.normalize import fold, fold_with_map


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


# A cue inside a span the question copies verbatim from its evidence (a quoted passage) is the
# evidence's own wording, not a constraint of the question: a verbatim lookup stays easy. The span
# is at least COPIED_MIN units around the cue: folded characters for Chinese (4: about two words,
# rarely shared by chance), words for English (3: the cue and two neighbours, "do not restart").
COPIED_MIN = {"zh": 4, "en": 3}


def _matches(pattern: re.Pattern, text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


def _copied_zh(spans: list[tuple[int, int]], text: str, evidence: Sequence[str]) -> list[bool]:
    """Return, per cue span of `text`, whether COPIED_MIN folded characters around it occur in an evidence text."""
    folded, index = fold_with_map(text)
    targets = [fold(e) for e in evidence]
    n = COPIED_MIN["zh"]
    copied = []
    for start, end in spans:
        inside = [j for j, at in enumerate(index) if start <= at < end]
        if not inside:
            copied.append(False)
            continue
        first, last = inside[0], inside[-1] + 1
        size = max(n, last - first)
        windows = (folded[a:a + size] for a in range(max(0, last - size), min(first, len(folded) - size) + 1))
        copied.append(any(w in t for w in windows for t in targets))
    return copied


def _copied_en(spans: list[tuple[int, int]], text: str, evidence: Sequence[str]) -> list[bool]:
    """Return, per cue span of `text`, whether COPIED_MIN words around it occur in an evidence text."""
    words = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(text)]
    targets = [" " + " ".join(_WORD.findall(unicodedata.normalize("NFKC", e).casefold())) + " " for e in evidence]
    n = COPIED_MIN["en"]
    copied = []
    for start, end in spans:
        inside = [j for j, (a, b, _) in enumerate(words) if a < end and start < b]
        if not inside:
            copied.append(False)
            continue
        first, last = inside[0], inside[-1] + 1
        size = max(n, last - first)
        windows = (" " + " ".join(w for _, _, w in words[a:a + size]) + " "
                   for a in range(max(0, last - size), min(first, len(words) - size) + 1))
        copied.append(any(w in t for w in windows for t in targets))
    return copied


def cue_counts(question: str, language: str, evidence: Sequence[str] = ()) -> tuple[int, int]:
    """Return (conditions, negations): cue words of the question's language found in it, leaving out
    those inside a span the question copies from one of the `evidence` texts (see COPIED_MIN).

    "when" opening an English question asks for a time and is not counted.

    >>> cue_counts("如果令牌没有过期，LG-4032 表示什么？", "zh")
    (1, 1)
    >>> cue_counts("能不能在升级时保留配置？", "zh")
    (1, 0)
    >>> cue_counts("When does the token expire if it isn't refreshed before 3.2?", "en")
    (2, 1)
    >>> cue_counts("文中说‘该药物不适用于儿童’的依据是什么？", "zh", ["该药物不适用于儿童。"])  # 药物不适 is copied
    (0, 0)
    """
    text = unicodedata.normalize("NFKC", question).casefold()
    if language == "zh":
        conditions = _matches(_ZH_CONDITION, text)
        # A-not-A questions are masked, not cut out, so every position still points into `text`.
        masked = _ZH_A_NOT_A.sub(lambda m: "\x00" * len(m.group()), text)
        negations = _matches(_ZH_NEGATION, masked)
        copied = _copied_zh
    else:
        opening = re.match(r"\W*when\b", text)
        conditions = [s for s in _matches(_EN_CONDITION, text) if not (opening and s[1] == opening.end())]
        negations = _matches(_EN_NEGATION, text)
        copied = _copied_en
    if evidence:
        conditions = [s for s, c in zip(conditions, copied(conditions, text, evidence)) if not c]
        negations = [s for s, c in zip(negations, copied(negations, text, evidence)) if not c]
    return len(conditions), len(negations)


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
