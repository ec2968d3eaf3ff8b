"""The filters of `curate generate`: candidates in, the verdict of every filter on every candidate out.

A pure core: nothing is read or written, no model is called. `apply_filters` and
`closed_book_verdicts` return copies of the candidates with their `filters` (and
`generation.features["bm25_rank"]`) filled in; the candidates given are left as they were. Each
filter gives every candidate one `FilterVerdict`: True passed, False dropped, None could not
decide (the reason says why; `decide` keeps such a candidate).

- `grounded`: each key point and the reference answer are found in the grade-2 evidence the key
  point cites (all of it for the reference answer, or for a key point citing none): every salient
  token (`curate.text.salient`: numbers, dates, codes, negations) is there, and enough of its content
  (`Statement.coverage` >= CONTENT_MIN). An unanswerable candidate passes when it cites no grade-2
  evidence.
- `standalone`: the question reads without the passage (`unseen_text`), is long enough
  (MIN_CJK_CHARS Chinese characters, MIN_WORDS English words) and not empty.
- `language`: the question is in the candidate's language (`question_language`).
- `duplicate`: not the question of a dataset item (rejected ones aside) nor of an earlier candidate
  of the run, under check-dups' own matchers (`curate.checks.duplicates.question_clusters`).
- `retrievable`: a feature, never a reason to drop: the BM25 rank of the first evidence chunk.
- `closed_book`: a model answered without context and got it right (`closed_book_verdicts`).

Thresholds, and why:

- CONTENT_MIN = 0.5 of a key point's content units (Chinese characters, English word stems; numbers
  are the salient check's) must be in its evidence. Order-free, so a reworded or reordered fact
  passes: on the tests' facts, paraphrases of their evidence cover 0.6-1.0, facts the evidence does
  not state 0.0-0.25. `curate.text.containment` was tried first and left: it aligns characters in
  order, so a reordered Chinese paraphrase scored 0.53, and on English characters an unrelated
  sentence still scores about 0.3.
- CLOSED_BOOK_MIN = 0.8: without salient tokens to compare, a closed-book answer is right when it
  covers 80% of the reference answer's content units, and agrees with it on negation. Stricter than
  grounding: a wrong "right" drops a good question.
- FUZZY_MIN: check-dups' default (`DupSettings().fuzzy_min`, 90).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from curate.checks.clusters import Edge
from curate.checks.duplicates import DupSettings, numbers_of, question_clusters
from curate.errors import CurateError
from curate.index.bm25 import BM25
from curate.index.embeddings import Embed, SemanticPass, no_embedding
from curate.records import EvalItem
from curate.records.generated import Candidate, CandidateEvidence, FilterVerdict
from curate.text.normalize import fold, language_of, normalize
from curate.text.salient import salient

FILTERS = ("grounded", "standalone", "language", "duplicate", "retrievable", "closed_book")
"""Every filter, in the order `dropped_by` names them."""
APPLIED = FILTERS[:-1]   # what apply_filters decides; closed_book needs a model's answers
BEFORE_DUPLICATES = FILTERS[:3]   # a candidate these dropped is nobody's original
CONTENT_MIN = 0.5
CLOSED_BOOK_MIN = 0.8
FUZZY_MIN = DupSettings().fuzzy_min
BM25_DEPTH = 100
MIN_CJK_CHARS = 4
MIN_WORDS = 3
LANGUAGES = {"zh": "Chinese", "en": "English"}

# -- what a text states: salient tokens and content units -----------------------------------------

_CJK_CHARS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_UNIT = re.compile(rf"[{_CJK_CHARS}]|[^\W\d_{_CJK_CHARS}]+")
_DIGITS = re.compile(r"\d+")
_NEGATIONS = frozenset({"not", "no", "never", "none", "cannot", "without", "nor", "n't", *"不没無无非未别勿莫否"})
# Words too common to say whether a fact is stated: English function words, Chinese particles.
_STOP_WORDS = frozenset("""a an the of to in on at by for with from and or but if then than so is are was were be
    been being it its this that these those as can may must will shall should would could do does did has have
    had you your their they them he she his her we our i my me there here what which who whom how when where why
    s t any all each per about into out up""".split())
_STOP_CHARS = frozenset("的了是在和与及或也都而且则之其为被把将对着已就还很又吗呢吧啊")


def _stem(word: str) -> str:
    """Return a crude English stem, so that "requested", "refunds", "issues" meet "request", "refund",
    "issue" (a lexical check needs no more).

    >>> [_stem(w) for w in ("requested", "refunds", "issues", "issue", "booked", "days")]
    ['request', 'refund', 'issu', 'issu', 'book', 'day']
    """
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[:-len(suffix)]
            break
    return word.rstrip("e") if len(word) > 3 else word


@dataclass(frozen=True)
class Statement:
    """What a text states, for comparing it with another: its salient tokens (negations apart), the
    digit runs of its numbers in order, and its content units."""

    facts: dict[str, str]        # folded salient token (no negation) -> as written
    negations: tuple[str, ...]   # negations as written
    digits: tuple[int, ...]      # every run of digits, in order
    units: tuple[str, ...]       # Chinese characters and English word stems, function words aside

    @classmethod
    def of(cls, text: str) -> Statement:
        """Return what `text` states, read on its normalised form (segmentation spaces, width, case).

        >>> s = Statement.of("报销 须 在 ３０ 日内 提交 ， 逾期 不 予 受理")
        >>> s.facts, s.negations, s.units[:4]
        ({'30': '30'}, ('不',), ('报', '销', '须', '日'))
        """
        text = normalize(text)
        tokens = salient(text)
        facts = {fold(t) or t: t for t in tokens if t not in _NEGATIONS}
        units = tuple(_stem(u) if u.isascii() else u for u in _UNIT.findall(text)
                      if u not in _STOP_WORDS and u not in _STOP_CHARS)
        return cls(facts, tuple(t for t in tokens if t in _NEGATIONS),
                   tuple(int(d) for d in _DIGITS.findall(text)), units)

    @cached_property
    def unit_set(self) -> frozenset[str]:
        return frozenset(self.units)

    def holds(self, key: str, token: str) -> bool:
        """Return whether this text states the salient token `token` (folded `key`): the same token,
        or the same digit runs in the same order (2026-03-01 is 2026年3月1日; 30 is not 300)."""
        if key in self.facts:
            return True
        runs = tuple(int(d) for d in _DIGITS.findall(token))
        n = len(runs)
        return n > 0 and any(self.digits[i:i + n] == runs for i in range(len(self.digits) - n + 1))

    def missing(self, other: Statement) -> list[str]:
        """Return the salient tokens of `other` this text does not state (a negation of `other` is
        stated by any negation here: "cannot" states "not", 无 states 不).

        >>> Statement.of("Refunds take 14 days, not 30.").missing(Statement.of("No refund after 30 days"))
        []
        >>> Statement.of("退款需 14 天").missing(Statement.of("退款不需要 30 天"))
        ['30', '不']
        """
        lost = [token for key, token in other.facts.items() if not self.holds(key, token)]
        return lost + ([other.negations[0]] if other.negations and not self.negations else [])

    def coverage(self, other: Statement) -> float | None:
        """Return the share of `other`'s content units this text holds (None: it has none).

        >>> round(Statement.of("Customers may request a refund within 30 days").coverage(
        ...     Statement.of("Refunds must be requested within 30 days")), 2)
        1.0
        >>> Statement.of("报销须在差旅结束后30日内提交").coverage(Statement.of("需要部门经理审批"))
        0.0
        """
        if not other.units:
            return None
        return sum(u in self.unit_set for u in other.units) / len(other.units)


def _short(text: str, width: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def _chunks(chunk_ids: Sequence[str]) -> str:
    """Return "chunk a" or "chunks a, b" (each once)."""
    ids = list(dict.fromkeys(chunk_ids))
    return f"chunk{'s' if len(ids) > 1 else ''} {', '.join(ids)}"


# -- grounded --------------------------------------------------------------------------------------

def grounded(candidate: Candidate) -> FilterVerdict:
    """Return whether the answer's key facts are stated by the evidence the candidate cites."""
    evidence = {e.evidence_id: e for e in candidate.evidence if e.grade == 2}
    if not candidate.answerable:
        if evidence:
            return FilterVerdict(passed=False, reason=f"unanswerable, yet cites grade-2 evidence {', '.join(evidence)}")
        return FilterVerdict(passed=True, reason="unanswerable: no grade-2 evidence, as it should be")
    reference = (candidate.reference_answer or "").strip()
    if not candidate.key_points and not reference:
        return FilterVerdict(passed=False, reason="nothing to ground: no key points and no reference answer")
    if not evidence:
        return FilterVerdict(passed=False, reason="no grade-2 evidence to ground the answer in")
    claims = [(f"key point {n}", point.text, point.evidence_ids) for n, point in enumerate(candidate.key_points, 1)]
    if reference:
        claims.append(("the reference answer", reference, []))
    for label, text, cited in claims:
        passages = [evidence[i] for i in cited if i in evidence] if cited else list(evidence.values())
        if not passages:
            return FilterVerdict(passed=False, reason=f"{label} cites {', '.join(cited)}: no grade-2 evidence")
        if problem := ungrounded(text, passages):
            return FilterVerdict(passed=False, reason=f"{label}: {problem}")
    return FilterVerdict(passed=True, reason=f"{len(claims)} claim{'s' if len(claims) > 1 else ''} found in "
                         f"{_chunks([e.passage.chunk_id for e in evidence.values()])}")


def ungrounded(claim: str, passages: Sequence[CandidateEvidence]) -> str | None:
    """Return why `claim` is not stated by `passages` (a salient token missing, too little of its
    content there), or None when it is.

    >>> from curate.records.generated import Passage
    >>> e = CandidateEvidence(evidence_id="e1", grade=2, passage=Passage(chunk_id="errors.en#3",
    ...     doc_id="errors", text="Refunds can be requested within 30 days of purchase."))
    >>> ungrounded("Refunds within 60 days", [e])
    "key fact '60' not found in chunk errors.en#3"
    >>> ungrounded("A refund can be requested within 30 days", [e]) is None
    True
    """
    said, stated = Statement.of(claim), Statement.of(" \n".join(e.passage.text for e in passages))
    where = _chunks([e.passage.chunk_id for e in passages])
    if lost := stated.missing(said):
        return f"key fact '{lost[0]}' not found in {where}"
    share = stated.coverage(said)
    if share is not None and share < CONTENT_MIN:
        return (f"'{_short(claim)}' barely in {where} ({share:.0%} of its content there, "
                f"needs {CONTENT_MIN:.0%})")
    return None


# -- standalone ------------------------------------------------------------------------------------

_TEXT = r"(?:passages?|texts?|documents?|context|articles?|excerpts?|paragraphs?|snippets?|materials?|sections?" \
        r"|information|content|statements?|readings?)"
_SHOWN = r"(?:above|following|given|provided|preceding|previous|aforementioned)"
_TOLD = r"(?:mentioned|stated|described|discussed|listed|noted|shown|referred to|cited|outlined|explained|said)"
# A Chinese word that points to a text (本文, 材料 ...) only where it follows the start, a
# punctuation mark or a word that cites (根据材料, 在文中): 日本文化, 中文中, 建筑材料 name no text.
_AFTER = r"(?:^|(?<=[\s，,。.？?！!：:；;、（(“\"])|(?<=根据)|(?<=依据)|(?<=按照)|(?<=结合)|(?<=参照)|(?<=基于)" \
         r"|(?<=据)|(?<=在)|(?<=从)|(?<=由)|(?<=于))"
_CITES = r"(?<=根据|依据|按照|结合|参照|基于)|(?<=[据在从由])"
_UNSEEN = re.compile("|".join([
    rf"\baccording to (?:the|this|that|these|those) (?:{_SHOWN} )?{_TEXT}\b",
    rf"\baccording to (?:the )?{_SHOWN}",
    rf"\b(?:based on|from|in|within|of) (?:the|this|that) (?:{_SHOWN} )?"
    r"(?:passage|excerpt|paragraph|snippet|article|context(?! of\b))s?\b",
    rf"\b(?:this|the {_SHOWN}) {_TEXT}\b",
    rf"\b{_TOLD} (?:above|earlier|previously|before)\b",
    rf"\b{_TOLD} in (?:the|this) {_TEXT}\b",
    r"\bthe (?:author|writer|narrator)s?\b(?!\s+of\b)",
    r"\b(?:as|see) above\b", r"\bthe above\b", r"\b(?:which|what|who) of the following\b",
    r"这段(?:文字|话|内容|材料|文本|描述|引文|介绍|说明|资料|叙述|段落)", r"这篇", r"该段(?:落|文字|话|内容|材料|文本)",
    r"本段", r"此段", r"以上(?:内容|材料|信息|文字|段落|描述|说明|资料|所述|文章|文本|短文)", r"(?:根据|由|从)以上",
    r"[如综]上所述", r"如前所述", r"上述", r"前述", r"下列", r"以下(?:哪|说法|选项)",
    r"(?:文章|材料|原文|文本|文段|短文|文中)(?:中|里)?(?:提到|提及|指出|所述|所说|说的|讲的|认为|描述|介绍)",
    r"作者(?:认为|觉得|提到|指出|表示|主张|的观点|的看法|的态度|在文中)",
    r"(?:所给|给定的?|给出的|提供的|所提供的)(?:文本|文字|材料|资料|信息|内容|段落|文章|上下文|语境)",
    r"(?:上面|前面)(?:提到|所说|说的|讲的|的内容|这段|的材料|的文字|所述|描述)",
    rf"{_AFTER}(?:本文|文中|上文|下文|前文|该文|此文|选文)",
    rf"(?:{_CITES})(?:材料|文章|原文|文段|短文|上下文)(?=[中里内所提可来看显说回,，.。:：?？]|$)",
]), re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’.\-][A-Za-z0-9]+)*")


def unseen_text(question: str) -> str | None:
    """Return the words by which `question` points to a text its reader has not seen, or None.

    >>> unseen_text("According to the passage, when does the token expire?")
    'According to the passage'
    >>> unseen_text("这段文字提到的报销期限是多久？"), unseen_text("根据材料，年假有几天？")
    ('这段文字', '材料')
    >>> [unseen_text(q) for q in ("According to the 2026 travel policy, what is the hotel limit?",
    ...                           "《员工手册》中年假有几天？", "日本文化中鞠躬代表什么？")]
    [None, None, None]
    """
    found = _UNSEEN.search(question)
    return found.group(0) if found else None


def standalone(candidate: Candidate) -> FilterVerdict:
    """Return whether the question can be read and answered without the passage it was made from."""
    question = candidate.question.strip()
    if not question:
        return FilterVerdict(passed=False, reason="empty question")
    if words := unseen_text(question):
        return FilterVerdict(passed=False, reason=f"refers to a text the asker has not seen: '{words}'")
    size = len(re.findall(f"[{_CJK_CHARS}]", question)) + len(_WORD.findall(question))
    asks = question_language(question)
    if asks == "zh" and size < MIN_CJK_CHARS:
        return FilterVerdict(passed=False, reason=f"too short to stand alone ({size} Chinese characters and "
                             f"words, needs {MIN_CJK_CHARS})")
    if asks == "en" and size < MIN_WORDS:
        return FilterVerdict(passed=False, reason=f"too short to stand alone ({size} words, needs {MIN_WORDS})")
    return FilterVerdict(passed=True, reason="reads without the passage")


# -- language --------------------------------------------------------------------------------------

# Titles and quotations are written in the language of what they name, not of the question.
_QUOTED = re.compile(r"《[^》]*》|「[^」]*」|『[^』]*』|“[^”]*”|\"[^\"]*\"|【[^】]*】")
_LETTERS = re.compile(rf"[A-Za-z{_CJK_CHARS}]")
_ENGLISH_FRAME = frozenset("what which who whom whose when where why how is are was were do does did can could "
                           "should would will may must the a an of for to in on with about".split())


def question_language(question: str) -> str:
    """Return 'zh' or 'en': `language_of` the question outside its titles and quotations (《员工手册》,
    “...”), and 'en' too when it has two English question or function words around Chinese ones
    ("What is 差旅报销管理办法?"); a code in a Chinese question leaves it Chinese.

    >>> question_language("LG-4031 是什么意思？"), question_language("What does 《差旅报销管理办法》 say about taxis?")
    ('zh', 'en')
    >>> question_language("What is 差旅报销管理办法?"), question_language("iPhone 15 怎么设置 Face ID？")
    ('en', 'zh')
    """
    rest = _QUOTED.sub(" ", question)
    if not _LETTERS.search(rest):
        rest = question
    if language_of(rest) == "en":
        return "en"
    english = [w for w in re.findall(r"[A-Za-z]+", rest) if w.lower() in _ENGLISH_FRAME]
    return "en" if len(english) >= 2 else "zh"


def language(candidate: Candidate) -> FilterVerdict:
    """Return whether the question is written in the language of the candidate's evidence."""
    if not _LETTERS.search(candidate.question):
        return FilterVerdict(passed=None, reason="no words to tell its language by")
    asks = question_language(candidate.question)
    if asks != candidate.language:
        return FilterVerdict(passed=False, reason=f"asks in {LANGUAGES[asks]}; its evidence is "
                             f"{LANGUAGES[candidate.language]}")
    return FilterVerdict(passed=True, reason=f"asks in {LANGUAGES[asks]}, the language of its evidence")


# -- duplicate -------------------------------------------------------------------------------------

_METHOD_RANK = {"exact": 0, "form": 1, "fuzzy": 2, "semantic": 3}


def duplicates(candidates: Sequence[Candidate], existing: Sequence[EvalItem], *,
               eligible: Sequence[bool] | None = None, embed: Embed | None = None) -> list[FilterVerdict]:
    """Return, per candidate, whether it repeats the question of a dataset item or of an earlier
    eligible candidate (one the other filters kept so far: a copy of a dropped candidate stands; by
    default, one grounded, standalone and language did not drop).

    The matchers are check-dups' (`question_clusters`: exact after folding, form, fuzzy ratio >=
    FUZZY_MIN, semantic with `embed`), with its rules: rejected items count for nothing (quarantined
    ones do, as in check-dups); a question asked for another asker or moment (`asker_groups`,
    `as_of`) is another sample; a fuzzy or semantic match whose numbers or codes differ
    (`numbers_of`: 2025 and 2026, LG-4031 and LG-4032) is no duplicate, and the reason says so.
    """
    if eligible is None:
        eligible = [all(c.filters[f].passed is not False for f in BEFORE_DUPLICATES) for c in candidates]
    live = [i for i in existing if i.status != "rejected"]
    keys = [f"\x00{n}" for n in range(len(candidates))]   # no item id holds a NUL
    asked = [EvalItem(id=key, question=c.question, language=c.language, source="synthetic")
             for key, c in zip(keys, candidates)]
    apart: list[Edge] = []
    found, used = question_clusters([*live, *asked], fuzzy_min=FUZZY_MIN, embed=embed or no_embedding,
                                    apart_numbers=apart)
    row = {key: n for n, key in enumerate(keys)}
    question = {i.id: i.question for i in [*live, *asked]}

    def name(key: str) -> str:
        return f"candidate {candidates[row[key]].candidate_id}" if key in row else f"item {key}"
    alike, near = _neighbours(e for c in found for e in c.edges), _neighbours(apart)
    unmatched = _no_duplicate(len(live), len(candidates) - 1, used, embed)
    verdicts = []
    for n, key in enumerate(keys):
        matches = [(o, e) for o, e in alike.get(key, []) if o not in row or (row[o] < n and eligible[row[o]])]
        if matches:
            other, edge = min(matches, key=lambda m: (m[0] in row, _METHOD_RANK[m[1].method], -m[1].score))
            run = " of this run" if other in row else ""
            verdicts.append(FilterVerdict(passed=False, reason=f"duplicate of {name(other)}{run} "
                                          f"({edge.method} {edge.score:g})"))
        elif key in near:
            other = near[key][0][0]
            verdicts.append(FilterVerdict(passed=True, reason=f"{unmatched}; reads like {name(other)} but asks "
                                          f"about another number ({_numbers_differ(question[key], question[other])})"))
        else:
            verdicts.append(FilterVerdict(passed=True, reason=unmatched))
    return verdicts


def _neighbours(edges: Iterable[Edge]) -> dict[str, list[tuple[str, Edge]]]:
    """Return member -> (the other member, the edge) of every edge it is on."""
    found: dict[str, list[tuple[str, Edge]]] = {}
    for edge in edges:
        found.setdefault(edge.a, []).append((edge.b, edge))
        found.setdefault(edge.b, []).append((edge.a, edge))
    return found


def _no_duplicate(items: int, candidates: int, used: SemanticPass, embed: Embed | None) -> str:
    matched = f"exact, form, fuzzy >= {FUZZY_MIN:g}"
    if embed is not None and used.skipped is None and used.semantic_min is not None:
        matched += f", semantic >= {used.semantic_min:g}"
    reason = (f"no duplicate among {items:,} dataset question{'s' * (items != 1)} and {candidates:,} other "
              f"candidate{'s' * (candidates != 1)} ({matched})")
    if embed is not None and used.skipped:
        reason += f"; semantic pass skipped: {used.skipped}"
    return reason


def _numbers_differ(a: str, b: str) -> str:
    """Return the numbers and codes of `a` that `b` lacks and those of `b` that `a` lacks.

    >>> _numbers_differ("LG-4032 是什么意思？", "LG-4031是什么意思")
    'lg4032 ≠ lg4031'
    """
    mine, theirs = numbers_of(a), numbers_of(b)
    return f"{', '.join(sorted((mine - theirs).elements())) or '(none)'} ≠ " \
           f"{', '.join(sorted((theirs - mine).elements())) or '(none)'}"


# -- retrievable (a feature) -----------------------------------------------------------------------

def bm25_ranks(candidates: Sequence[Candidate], bm25: BM25 | None,
               chunk_ids: Sequence[str] | None) -> list[tuple[FilterVerdict, int | None]]:
    """Return, per candidate, its `retrievable` verdict and its bm25_rank feature: the 1-based rank of
    its first grade-2 evidence chunk among the KB's chunks for the question under plain BM25, 0 when
    not in the top BM25_DEPTH (a chunk scoring 0 is not retrieved); None: no rank, the verdict says
    why (passed None, or True for an unanswerable candidate). Never a reason to drop."""
    if bm25 is not None and (chunk_ids is None or len(chunk_ids) != bm25.size):
        raise CurateError(f"the BM25 index holds {bm25.size:,} chunks but "
                          f"{'no' if chunk_ids is None else f'{len(chunk_ids):,}'} chunk ids were given")
    position = {c: n for n, c in enumerate(chunk_ids or ())}
    wanted = [{position[e.passage.chunk_id] for e in c.evidence if e.grade == 2 and e.passage.chunk_id in position}
              for c in candidates]
    result: list[tuple[FilterVerdict, int | None]] = [(_unranked(c, bm25, wanted[n]), None)
                                                      for n, c in enumerate(candidates)]
    rows = [n for n, (verdict, _) in enumerate(result) if verdict is None]
    if rows:
        found, scores = bm25.search([candidates[n].question for n in rows], k=BM25_DEPTH)
        for n, positions, row_scores in zip(rows, found, scores):
            rank = next((k for k, (p, s) in enumerate(zip(positions, row_scores), 1)
                         if s > 0 and int(p) in wanted[n]), 0)
            reason = (f"BM25 rank {rank} of {bm25.size:,} chunks" if rank else
                      f"not in BM25's top {BM25_DEPTH}: kept, a hard question")
            result[n] = (FilterVerdict(passed=True, reason=reason), rank)
    return result


def _unranked(candidate: Candidate, bm25: BM25 | None, wanted: set[int]) -> FilterVerdict | None:
    """Return the `retrievable` verdict of a candidate whose evidence cannot be ranked, None for one
    that can (`wanted`: the positions of its evidence chunks in the index)."""
    chunks = [e.passage.chunk_id for e in candidate.evidence if e.grade == 2]
    if not candidate.answerable:
        return FilterVerdict(passed=True, reason="unanswerable: no evidence to rank")
    if not chunks:
        return FilterVerdict(passed=None, reason="no grade-2 evidence to rank")
    if bm25 is None:
        return FilterVerdict(passed=None, reason="no BM25 index to rank its evidence in")
    if not wanted:
        return FilterVerdict(passed=None, reason=f"evidence {_chunks(chunks)} not in the BM25 index")
    return None


# -- the filters together --------------------------------------------------------------------------

def apply_filters(candidates: Sequence[Candidate], *, existing: Sequence[EvalItem], bm25: BM25 | None,
                  chunk_ids: Sequence[str] | None, embed: Embed | None = None) -> list[Candidate]:
    """Return copies of `candidates` with the verdicts of grounded, standalone, language, duplicate
    and retrievable in `filters` and `generation.features["bm25_rank"]` measured (`candidates` are
    not changed). `existing` is the dataset's items; `bm25` an index of the KB's chunks whose
    positions `chunk_ids` names (`KBIndex.bm25`, and each chunk's id in `KBIndex.chunks`); `embed`
    compares questions by meaning as check-dups does (none by default)."""
    result = [c.model_copy(deep=True) for c in candidates]
    for candidate in result:
        candidate.filters.update(grounded=grounded(candidate), standalone=standalone(candidate),
                                 language=language(candidate))
    for candidate, verdict in zip(result, duplicates(result, existing, embed=embed)):
        candidate.filters["duplicate"] = verdict
    for candidate, (verdict, rank) in zip(result, bm25_ranks(result, bm25, chunk_ids)):
        candidate.filters["retrievable"] = verdict
        if rank is not None:
            candidate.generation.features["bm25_rank"] = float(rank)
    return result


# -- closed book -----------------------------------------------------------------------------------

def closed_book_verdicts(candidates: Sequence[Candidate], answers: Mapping[str, str | None], *, keep: bool,
                         why: Mapping[str, str] | None = None) -> list[Candidate]:
    """Return copies of `candidates` with the `closed_book` verdict in `filters`: False when the
    model's answer given without context (`answers[candidate_id]`) gets it right (`closed_book_right`).

    An answer that is None or missing gives passed=None, "closed-book answer unavailable: " and
    `why[candidate_id]` (the failed call's error; "not asked" when the candidate has no answer and no
    why). `keep` (--keep-closed-book) changes only the reason, which then says the candidate is kept:
    the verdict stays False, and `decide` is told to keep it.
    """
    why = why or {}
    result = [c.model_copy(deep=True) for c in candidates]
    for candidate in result:
        candidate.filters["closed_book"] = closed_book(candidate, answers.get(candidate.candidate_id), keep=keep,
                                                       why=why.get(candidate.candidate_id, "not asked"))
    return result


def closed_book(candidate: Candidate, answer: str | None, *, keep: bool, why: str = "not asked") -> FilterVerdict:
    """Return the closed_book verdict of one candidate given the model's answer without context."""
    if not candidate.answerable:
        return FilterVerdict(passed=True, reason="unanswerable: not checked")
    if answer is None:
        return FilterVerdict(passed=None, reason=f"closed-book answer unavailable: {why}")
    right, how = closed_book_right(candidate, answer)
    if not right:
        return FilterVerdict(passed=True, reason=f"not answered without retrieval: {how}")
    return FilterVerdict(passed=False, reason=f"answered without retrieval: {how}"
                         + ("; kept by --keep-closed-book" if keep else ""))


def closed_book_right(candidate: Candidate, answer: str) -> tuple[bool, str]:
    """Return whether a closed-book answer gets the candidate right, and how that was read.

    Right when it states every salient token of the reference answer and key points (numbers, codes,
    dates; a negation by any negation) if they have one besides negations; else when it covers
    CLOSED_BOOK_MIN of the reference answer's content units (its key points' when it has none) and
    has a negation exactly when the reference does.
    """
    reference = candidate.reference_answer or " ".join(p.text for p in candidate.key_points)
    wanted = Statement.of(" \n".join([reference, *(p.text for p in candidate.key_points)]))
    said = Statement.of(answer)
    if wanted.facts:
        lost = said.missing(wanted)
        if lost:
            return False, f"misses {', '.join(lost[:3])}"
        return True, f"states {', '.join(list(wanted.facts.values())[:3])}"
    share = said.coverage(Statement.of(reference))
    if share is None:
        return False, "nothing in the reference answer to compare"
    if bool(said.negations) != bool(wanted.negations):
        return False, "its negation differs from the reference answer's"
    verdict = "covers" if share >= CLOSED_BOOK_MIN else "covers only"
    return share >= CLOSED_BOOK_MIN, f"{verdict} {share:.0%} of the reference answer (right from {CLOSED_BOOK_MIN:.0%})"


# -- what was kept ---------------------------------------------------------------------------------

def decide(candidate: Candidate, keep_closed_book: bool) -> bool:
    """Return whether the candidate is kept: no verdict is False, a closed_book one aside when
    `keep_closed_book`. A filter that could not decide (None) drops nothing. Raises CurateError for a
    candidate `apply_filters` has not seen."""
    missing = [name for name in APPLIED if name not in candidate.filters]
    if missing:
        raise CurateError(f"candidate {candidate.candidate_id} has no verdict of {', '.join(missing)}: "
                          f"filter it first (apply_filters)")
    return not [name for name in dropped_by(candidate) if not (name == "closed_book" and keep_closed_book)]


def dropped_by(candidate: Candidate) -> list[str]:
    """Return the filters whose verdict on the candidate is False, in FILTERS order (then any other
    filter by name)."""
    order = {name: n for n, name in enumerate(FILTERS)}
    failed = [name for name, verdict in candidate.filters.items() if verdict.passed is False]
    return sorted(failed, key=lambda name: (order.get(name, len(order)), name))


@dataclass
class Tally:
    """What the filters did to a run's candidates: the command's closing table."""

    kept: int = 0
    dropped: int = 0
    by_filter: Counter = field(default_factory=Counter)    # filter -> dropped candidates it failed (one may fail several)
    tagged: int = 0                                        # failed closed_book, kept by --keep-closed-book
    undecided: Counter = field(default_factory=Counter)    # filter -> candidates it could not decide
    kept_by_qtype: Counter = field(default_factory=Counter)
    dropped_by_qtype: Counter = field(default_factory=Counter)


def tally(candidates: Sequence[Candidate], *, keep_closed_book: bool = False) -> Tally:
    """Return how many candidates were kept and dropped, per failing filter and per question type.

    >>> from curate.records.generated import Generation
    >>> c = Candidate(candidate_id="c1", qtype="single", language="en", question="Why?",
    ...               generation=Generation(method="mined", run="r", candidate_id="c1"),
    ...               filters={name: FilterVerdict(passed=name != "standalone", reason="") for name in APPLIED})
    >>> t = tally([c])
    >>> t.kept, t.dropped, dict(t.by_filter), dict(t.dropped_by_qtype)
    (0, 1, {'standalone': 1}, {'single': 1})
    """
    result = Tally()
    for candidate in candidates:
        failed = dropped_by(candidate)
        result.undecided.update(name for name, verdict in candidate.filters.items() if verdict.passed is None)
        if decide(candidate, keep_closed_book):
            result.kept += 1
            result.kept_by_qtype[candidate.qtype] += 1
            result.tagged += "closed_book" in failed
        else:
            result.dropped += 1
            result.dropped_by_qtype[candidate.qtype] += 1
            result.by_filter.update(failed)
    return result
