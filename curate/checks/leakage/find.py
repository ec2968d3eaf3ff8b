"""`curate check-leakage`: evaluation text that leaked into the knowledge base, and alike items
on both sides of the tuning/test split.

Texts are compared folded (`curate.text.normalize.fold`: NFKC, case, white space and punctuation
removed; + # % ° and currency signs kept where they touch a number or word, so "A+" is not "A").
A *copy* of a text is a chunk, or two neighbouring chunks of one document (a copy a chunker cut in
two), that holds every character of it in order within the best-aligned window
(`curate.text.containment.containment` >= the threshold: 1.0 for questions, 0.95 for answers).

Kinds of leak, each found with the chunk, the matched text, the method and the score:

- question_in_kb: a copy of the question (at least 4 folded characters) that stands as a leak:
  1. A short question (under 12 folded characters for a Chinese question, 24 for an English one)
     counts only as a whole: the sentence or line holding the copy is the copy (an FAQ label such as
     "Q:" or "问：" and politeness such as 请问 / 呢 aside; room for a few inserted words, and at most 3
     more folded characters at its edges). A short phrase inside a longer sentence is words in common.
  2. A copy inside a question of the KB (a labelled line, a sentence ending with a question mark)
     counts only as the whole of that question, whatever its length: "首发价格是多少？" inside
     "某品牌新款手机的首发价格是多少？" is a longer, more specific question that asks something else. A
     clause counts as a question of its own only after a colon or an opening quote ("他们常问：…？"),
     not after a comma ("星河X10，首发价格是多少？" leans on what comes before it).
  3. A copy names what the question names: the same numbers and negations inside it, and the same
     model names, a name that runs on past the copy included ("Aurora R7" copied out of "Aurora R7
     Max" names the Max; "X10" is not "X10 Pro"; 需要 is not 不需要).
  4. A question not phrased as one (a keyword query, a topic: no question mark, no interrogative
     form) counts only where its copy stands *as a question* (the test of 5): a topic phrase inside a
     running sentence, or a document's title, is no question.
  5. A copy in the item's own evidence (the chunks its evidence maps to, their duplicate copies and
     the chunks of the same text, the chunks overlapping its spans) is a leak only *as a question*:
     as a whole sentence or line that carries an FAQ label (Q:, Question:, 问：, 问题：), ends with a
     question mark (？ or ?), has an interrogative form (吗 呢 什么 如何 为什么 怎么 哪 谁 几 多少 是否 为何; an
     English wh-word or auxiliary opening it), or is followed by its answer (a sentence labelled A:,
     答：, 答案：, or opening with the reference answer). Otherwise the question is its evidence's own
     words: an easy question.
  6. A question that has such a plain copy in its own evidence is taken from it; a copy of it in
     another chunk is a copy of that evidence text (another edition, a quotation), a leak only as a
     question, by the test of 5.
  7. Any other copy — a question pasted into running text outside its evidence — is a leak.
- qa_pair_in_kb: a question leak with the reference answer (containment >= 0.95) in the same chunk(s)
  or document (an FAQ built from the evaluation set, an evaluation file that was ingested);
- answer_in_kb: a long-form reference answer (25 folded characters for Chinese, 60 for English) copied
  (containment >= 0.95) into a chunk that is not the item's own evidence. An answer found in its own
  evidence (its quotes or the chunks they map to) is extractive, never a leak, wherever else that
  evidence text also stands;
- split_leak: alike questions (exact, fuzzy, semantic) with one item in dev and one in test.

Beside copies, `curate.checks.leakage.paraphrase` finds questions the KB asks in other words (an FAQ
entry paraphrasing an item's question): question_in_kb or qa_pair_in_kb with method `semantic`.

One leak the KB holds in several places (an FAQ kept in chunk copies, a "popular questions" block that
ends every help page) is one finding: the same kind and the same copy (the question's sentence, or the
answer) in other chunks are listed in its `copies`.

A question that only reuses phrases of its evidence keeps its own question words and has no copy.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from curate.checks.clusters import Edge
from curate.checks.duplicates import DupSettings, question_edges
from curate.checks.leakage.context import Standing, has_question_form, names_differ, standing
from curate.checks.leakage.paraphrase import ParaphrasePass
from curate.index.embeddings import SemanticPass
from curate.index.kb_index import KBIndex
from curate.progress import progress
from curate.records import EvalItem, LeakAcceptance, LeakageCheck, LeakageReport, LeakFinding
from curate.text.containment import containment, copy_span, symbols_agree
from curate.text.normalize import KEPT_SYMBOLS, fold, fold_with_map
from curate.text.sentences import sentence_spans

KINDS = ("question_in_kb", "qa_pair_in_kb", "answer_in_kb", "split_leak")
MIN_SHARE = 0.3   # share of a question's (an answer's) 4-grams a chunk must hold to be verified


@dataclass
class LeakSettings:
    """Thresholds of the leakage check (see the module docstring)."""

    question_min: float = 1.0        # containment of the folded question: every character, in order
    question_min_chars: int = 4      # shorter folded questions are not checked against the KB
    question_whole_below: dict[str, int] = field(default_factory=lambda: {"zh": 12, "en": 24})  # short: whole only
    answer_min: float = 0.95         # containment of a long-form answer
    answer_min_chars: dict[str, int] = field(default_factory=lambda: {"zh": 25, "en": 60})
    candidates: int = 30             # chunks verified per question or answer
    split_fuzzy_min: float = 90.0
    split_semantic_min: float | None = None  # None: the embedding model's own (`embeddings.semantic_min`)
    paraphrase_min: float | None = None      # None: the model's own for KB questions (`embeddings.paraphrase_min`)


def long_form(answer: str | None, language: str, settings: LeakSettings) -> bool:
    """Return whether an answer is long enough to count as long-form (folded characters >= the
    language's minimum: 25 for Chinese, 60 for English by default)."""
    return bool(answer) and len(fold(answer)) >= settings.answer_min_chars.get(language, 60)


def short_question(question: str, language: str, settings: LeakSettings) -> bool:
    """Return whether a folded question is short: it then counts only as a whole sentence or line."""
    return len(question) < settings.question_whole_below.get(language, 24)


def _says_the_same(needle: str, haystack: str, score: float, start: int, end: int) -> bool:
    """Return whether a full copy keeps the needle's symbols ("A" in "A+" is no copy); partial ones pass."""
    if score < 1.0 or not any(c in KEPT_SYMBOLS for c in needle + haystack[max(0, start - 1):end + 1]):
        return True
    return symbols_agree(needle, haystack, *copy_span(needle, haystack, start, end))


class _Matcher:
    """Finds near-verbatim copies of a folded text in the snapshot, skipping some documents."""

    def __init__(self, index: KBIndex, skip_docs: set[str], settings: LeakSettings):
        self.index = index
        self.skip_docs = skip_docs
        self.settings = settings

    def find(self, needle: str, threshold: float, exclude: set[int] = frozenset(),
             candidates: Sequence[int] | None = None) -> list[tuple[list[int], float, str]]:
        """Return ([chunk positions], score, folded matched text) of every copy above threshold: in one
        chunk, or across a chunk and the next one of its document when neither holds it alone. The chunks
        verified: `candidates` (positions, best first), else the index's own best for the needle."""
        folded, neighbours = self.index.folded, self.index.neighbours
        found = []
        seen: set[tuple[int, ...]] = set()

        def keep(places: list[int], score: float, text: str) -> None:
            if tuple(places) not in seen:
                seen.add(tuple(places))
                found.append((places, score, text))

        def alone(position: int) -> tuple[float, str] | None:
            if position in exclude or self.index.doc_of(position) in self.skip_docs:
                return None
            score, start, end = containment(needle, folded[position])
            ok = score >= threshold and _says_the_same(needle, folded[position], score, start, end)
            return (score, folded[position][start:end]) if ok else None

        if candidates is None:
            candidates = [p for p, _ in self.index.ngrams.candidates(needle, min_share=MIN_SHARE,
                                                                     limit=self.settings.candidates)]
        for position in candidates:
            hit = alone(position)
            if hit is not None:
                keep([position], *hit)
                continue
            if position in exclude or self.index.doc_of(position) in self.skip_docs:
                continue
            before, after = neighbours.get(position, (None, None))
            for pair in ([before, position], [position, after]):
                if None in pair or any(p in exclude for p in pair):
                    continue
                other = pair[0] if pair[1] == position else pair[1]
                hit = alone(other)
                if hit is not None:  # the neighbour holds it by itself: found there, not across
                    keep([other], *hit)
                    continue
                joined = folded[pair[0]] + folded[pair[1]]
                score, start, end = containment(needle, joined)
                if score >= threshold and _says_the_same(needle, joined, score, start, end):
                    keep(pair, score, joined[start:end])
        return found

    def document_holds(self, doc_id: str, needle: str, threshold: float) -> bool:
        """Return whether a document (its chunks joined) holds a near-verbatim copy of `needle`."""
        joined = "".join(self.index.folded[p] for p in self.index.doc_positions.get(doc_id, []))
        return containment(needle, joined)[0] >= threshold


@dataclass
class _Copy:
    """A copy in an original text: the text, the copy's span in it, and the aligned window around it."""

    text: str
    start: int
    end: int
    window: str


def _copies_in(text: str, needle: str, most: int = 8) -> Iterator[_Copy]:
    """Yield where the folded `needle` sits in `text`, each place it does (up to `most`), first first; each
    found only when asked for (most questions stand at their first place)."""
    folded, offsets = fold_with_map(text)
    at = 0
    for _ in range(most):
        if at >= len(folded):
            return
        _, window_start, window_end = containment(needle, folded[at:])
        window_start, window_end = window_start + at, window_end + at
        if window_end <= window_start:
            return
        a, b = copy_span(needle, folded, window_start, window_end)
        if b <= a:
            return
        yield _Copy(text, offsets[a], offsets[b - 1] + 1, text[offsets[window_start]:offsets[window_end - 1] + 1])
        at = a + 1


def _copy_in(text: str, needle: str) -> _Copy | None:
    """Return where the folded `needle` first sits in `text`, or None if the folded text holds no copy."""
    return next(_copies_in(text, needle, most=1), None)


def _text_of(index: KBIndex, places: list[int]) -> str:
    return "".join(index.chunks[p].text for p in places)


@dataclass
class Own:
    """An item's own evidence in the snapshot: the chunks its evidence maps to, their duplicate copies and the
    chunks of the same folded text, and the chunks overlapping its spans (`curate.checks.leakage.over_shards`
    finds them over every shard): their snapshot positions, and (text, folded text) in snapshot order."""

    positions: set[int] = field(default_factory=set)
    texts: list[tuple[str, str]] = field(default_factory=list)


def extractive(item: EvalItem, answer: str, own: Own, settings: LeakSettings) -> bool:
    """Return whether the answer is copied from the item's own evidence (its quotes, or a chunk they map
    to): then a copy of it elsewhere is a copy of that evidence, not a leak of the evaluation set."""
    quoted = "".join(fold(e.text) for e in item.evidence)
    if quoted and containment(answer, quoted)[0] >= settings.answer_min:
        return True
    return any(containment(answer, folded)[0] >= settings.answer_min for _, folded in own.texts)


def taken_from_evidence(item: EvalItem, own: Own, settings: LeakSettings) -> bool:
    """Return whether the question has a plain copy (one that does not stand as a question) in its own
    evidence: its chunks or its quoted texts."""
    question, answer = fold(item.question), fold(item.reference_answer or "")
    if len(question) < settings.question_min_chars:
        return False
    texts = [text for text, folded in own.texts if containment(question, folded)[0] >= settings.question_min]
    texts += [e.text for e in item.evidence if containment(question, fold(e.text))[0] >= settings.question_min]
    for text in texts:
        for copy in _copies_in(text, question):
            if not standing(text, copy.start, copy.end, len(question), answer).question:
                return True
    return False


def _sentence_of(copy: _Copy) -> str:
    """Return the folded sentence or line holding a copy: what tells one FAQ entry held in several
    places from different places that quote the question."""
    spans = [(a, b) for a, b in sentence_spans(copy.text) if a < copy.end and b > copy.start]
    return fold(copy.text[spans[0][0]:spans[-1][1]]) if spans else fold(copy.text[copy.start:copy.end])


def _stands(item: EvalItem, copy: _Copy, question: str, answer: str, short: bool, as_question: bool) -> Standing | None:
    """Return how a copy stands if it stands as a leak of the item's question (rules 1-5), else None."""
    stands = standing(copy.text, copy.start, copy.end, len(question), answer)
    if (short or stands.asks) and not stands.whole:
        return None   # words in common, or a longer, more specific question
    if as_question and not stands.question:
        return None
    if names_differ(item.question, copy.text, copy.start, copy.end):
        return None   # another model, number or negation
    return stands


def _question_leaks(item: EvalItem, own: set[int], taken: bool, index: KBIndex, matcher: _Matcher,
                    settings: LeakSettings, candidates: Sequence[int] | None = None) -> list[tuple[LeakFinding, str]]:
    """Return the question and QA-pair leaks of one item in an index (a shard's view), by the rules of the
    module docstring, each with the folded sentence holding it; `own` are the positions of its own
    evidence in the index, `taken` whether the question is a plain copy of its evidence."""
    question = fold(item.question)
    if len(question) < settings.question_min_chars:
        return []
    answer = fold(item.reference_answer or "")
    short = short_question(question, item.language, settings)
    phrased = has_question_form(item.question)
    findings = []
    for places, score, matched in matcher.find(question, settings.question_min, candidates=candidates):
        inside = any(p in own for p in places)
        as_question = inside or taken or not phrased
        chosen = next(((copy, stands) for copy in _copies_in(_text_of(index, places), question)
                       if (stands := _stands(item, copy, question, answer, short, as_question)) is not None), None)
        if chosen is None:
            continue
        copy, stands = chosen
        note = ""
        if as_question:
            where = ("in its own evidence" if inside else "taken from its evidence" if taken
                     else "not phrased as a question; in the KB")
            note = f"{where}, as a question: {stands.question}"
        elif short:
            note = "a short question, as a whole sentence"
        doc_id = index.chunks[places[0]].doc_id
        kind = "question_in_kb"
        if answer and (containment(answer, "".join(index.folded[p] for p in places))[0] >= settings.answer_min
                       or matcher.document_holds(doc_id, answer, settings.answer_min)):
            kind = "qa_pair_in_kb"
        findings.append((LeakFinding(
            item_id=item.id, kind=kind, method="exact" if score >= 1.0 and question in matched else "near_verbatim",
            score=round(score * 100, 1), chunk_ids=[index.chunks[p].chunk_id for p in places], doc_id=doc_id,
            matched=copy.window, standing=note), _sentence_of(copy)))
    return findings


def view_leaks(item: EvalItem, own: set[int], taken: bool, answer_extractive: bool, index: KBIndex,
               matcher: _Matcher, settings: LeakSettings,
               candidates: tuple[Sequence[int] | None, Sequence[int] | None] = (None, None),
               ) -> list[tuple[LeakFinding, str]]:
    """Return the question, QA-pair and answer leaks of one item in an index (a shard's view), each with
    the folded text it copies (the sentence holding a question, the answer): `own`, `taken` as for
    `_question_leaks`, `answer_extractive` whether the answer is copied from its own evidence;
    `candidates` the chunks to verify for the question and for the answer (None: the index's best)."""
    found = _question_leaks(item, own, taken, index, matcher, settings, candidates[0])
    answer = fold(item.reference_answer or "")
    if not long_form(item.reference_answer, item.language, settings) or answer_extractive:
        return found
    flagged = {tuple(f.chunk_ids) for f, _ in found}
    for places, score, matched in matcher.find(answer, settings.answer_min, exclude=own, candidates=candidates[1]):
        chunk_ids = [index.chunks[p].chunk_id for p in places]
        if tuple(chunk_ids) in flagged:
            continue  # already a QA pair there
        copy = _copy_in(_text_of(index, places), answer)
        found.append((LeakFinding(item_id=item.id, kind="answer_in_kb", method="exact" if score >= 1.0 else "near_verbatim",
                                  score=round(score * 100, 1), chunk_ids=chunk_ids, doc_id=index.chunks[places[0]].doc_id,
                                  matched=copy.window if copy else matched),
                      fold(copy.text[copy.start:copy.end]) if copy else matched))
    return found


def matcher(index: KBIndex, skip_docs: set[str], settings: LeakSettings) -> _Matcher:
    """Return the copy finder of an index (a shard's view), skipping the documents `skip_docs`."""
    return _Matcher(index, skip_docs, settings)


def split_leaks(edges: Sequence[Edge], by_id: dict[str, EvalItem]) -> list[LeakFinding]:
    """Return a finding for each item of an alike pair that straddles dev and test."""
    findings = []
    for edge in edges:
        sides = {by_id[edge.a].split, by_id[edge.b].split}
        if sides == {"dev", "test"}:
            findings.append(LeakFinding(item_id=edge.a, kind="split_leak", method=edge.method, score=edge.score,
                                    other_item=edge.b))
            findings.append(LeakFinding(item_id=edge.b, kind="split_leak", method=edge.method, score=edge.score,
                                    other_item=edge.a))
    return findings


def split_edges(items: Sequence[EvalItem], settings: LeakSettings, vectors=None, readable=None) -> list[Edge]:
    """Return alike pairs among `items` by the split-leak thresholds."""
    return question_edges(items, DupSettings(settings.split_fuzzy_min, settings.split_semantic_min), vectors,
                          readable)


def summarize(findings: Sequence[LeakFinding]) -> dict:
    """Return the open findings' counts by kind and the ids of their items."""
    still = [f for f in findings if f.status == "open"]
    return {"counts": dict(Counter(f.kind for f in still)), "items": sorted({f.item_id for f in still})}


@dataclass
class LeakReport:
    """The outcome of one leakage check: every finding with its status, and what this run changed."""

    ref: str
    kb_snapshot: str
    checked: int
    findings: list[LeakFinding]
    allowed_docs: list[str]
    excluded_docs: list[str]
    quarantined: list[str] = field(default_factory=list)        # items quarantined by this run
    newly_excluded: list[str] = field(default_factory=list)
    accepted: list[LeakAcceptance] = field(default_factory=list)  # acceptances made by this run
    lapsed: list[LeakFinding] = field(default_factory=list)     # findings whose acceptance no longer holds
    semantic: SemanticPass | None = None                        # the split-leak semantic pass, or why skipped
    paraphrase: ParaphrasePass | None = None                    # the KB-question paraphrase pass, or why skipped
    shards: int = 1                                             # shards of the snapshot searched
    engine: str | None = None                                   # the engine they were searched on (many shards)
    record: LeakageCheck | None = None

    def with_status(self, status: str) -> list[LeakFinding]:
        """Return the findings of one status (open, quarantined, accepted)."""
        return [f for f in self.findings if f.status == status]

    @property
    def clean(self) -> bool:
        """Return whether no finding is left open."""
        return not self.with_status("open")

    def write(self, path) -> None:
        """Write the record with every finding (check-leakage --report)."""
        LeakageReport(**self.record.model_dump()).write(path)
