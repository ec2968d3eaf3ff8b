"""`curate check-leakage`: evaluation text that leaked into the knowledge base, and alike items
on both sides of the tuning/test split.

Kinds of leak, each found with the chunk, the matched text, the method and the score:
- question_in_kb: the question, or a near-verbatim copy of it, inside a chunk (or across two
  neighbouring chunks of one document, when a chunker cut the copy in two);
- qa_pair_in_kb: such a question copy, with the reference answer in the same chunk or document;
- answer_in_kb: a long-form reference answer near-verbatim in a chunk that is not the item's own
  evidence. An answer found in its own evidence is extractive, never a leak, wherever else that
  evidence text also stands;
- split_leak: alike questions (exact, fuzzy, semantic) with one item in dev and one in test.

"Near-verbatim" is `curate.text.containment.containment` >= the threshold on folded texts: every
character of the question in order, allowing inserted words, width and punctuation changes. A
question that only reuses phrases of its evidence keeps its own question words and stays below.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from curate.checks.clusters import Edge
from curate.checks.duplicates import DupSettings, question_edges
from curate.index.kb_index import KBIndex
from curate.progress import progress
from curate.records import EvalItem, LeakageCheck, LeakageReport, LeakFinding
from curate.text.containment import containment
from curate.text.normalize import fold, unfold_span

KINDS = ("question_in_kb", "qa_pair_in_kb", "answer_in_kb", "split_leak")


@dataclass
class LeakSettings:
    """Thresholds of the leakage check (see the module docstring)."""

    question_min: float = 1.0        # containment of the folded question: every character, in order
    question_min_chars: int = 6      # shorter folded questions are not checked against the KB
    answer_min: float = 0.95         # containment of a long-form answer
    answer_min_chars: dict[str, int] = field(default_factory=lambda: {"zh": 25, "en": 60})
    candidates: int = 30             # chunks verified per question or answer
    split_fuzzy_min: float = 90.0
    split_semantic_min: float | None = 0.92


def long_form(answer: str | None, language: str, settings: LeakSettings) -> bool:
    """Return whether an answer is long enough to count as long-form (folded characters >= the
    language's minimum: 25 for Chinese, 60 for English by default)."""
    return bool(answer) and len(fold(answer)) >= settings.answer_min_chars.get(language, 60)


class _Matcher:
    """Finds near-verbatim copies of a folded text in the snapshot, skipping some documents."""

    def __init__(self, index: KBIndex, skip_docs: set[str], settings: LeakSettings):
        self.index = index
        self.skip_docs = skip_docs
        self.settings = settings

    def find(self, needle: str, threshold: float, exclude: set[int] = frozenset()) -> list[tuple[list[int], float, str]]:
        """Return ([chunk positions], score, folded matched text) of every copy above threshold: in one
        chunk, or across a chunk and the next one of its document when neither holds it alone."""
        folded, chunks, neighbours = self.index.folded, self.index.chunks, self.index.neighbours
        found = []
        seen: set[tuple[int, ...]] = set()

        def keep(places: list[int], score: float, text: str) -> None:
            if tuple(places) not in seen:
                seen.add(tuple(places))
                found.append((places, score, text))

        def alone(position: int) -> tuple[float, str] | None:
            if position in exclude or chunks[position].doc_id in self.skip_docs:
                return None
            score, start, end = containment(needle, folded[position])
            return (score, folded[position][start:end]) if score >= threshold else None

        for position, _ in self.index.ngrams.candidates(needle, min_share=0.3, limit=self.settings.candidates):
            hit = alone(position)
            if hit is not None:
                keep([position], *hit)
                continue
            if position in exclude or chunks[position].doc_id in self.skip_docs:
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
                if score >= threshold:
                    keep(pair, score, joined[start:end])
        return found

    def document_holds(self, doc_id: str, needle: str, threshold: float) -> bool:
        """Return whether a document (its chunks joined) holds a near-verbatim copy of `needle`."""
        joined = "".join(self.index.folded[p] for p in self.index.doc_positions.get(doc_id, []))
        return containment(needle, joined)[0] >= threshold


def _excerpt(index: KBIndex, places: list[int], folded_match: str) -> str:
    """Return the original text of the chunk(s) where the folded match sits."""
    text = "".join(index.chunks[p].text for p in places)
    folded = fold(text)
    at = folded.find(folded_match)
    return unfold_span(text, at, at + len(folded_match)) if at >= 0 else folded_match


def _extractive(item: EvalItem, answer: str, settings: LeakSettings) -> bool:
    """Return whether the answer is copied from the item's own evidence: then a copy of it elsewhere
    is a copy of that evidence, not a leak of the evaluation set."""
    own = "".join(fold(e.text) for e in item.evidence)
    return bool(own) and containment(answer, own)[0] >= settings.answer_min


def _own_positions(item: EvalItem, index: KBIndex) -> set[int]:
    """Chunks that hold the item's own evidence (copies included) or overlap its spans."""
    own = {index.position[c] for e in item.evidence for c in e.chunk_ids if c in index.position}
    for e in item.evidence:
        if e.doc_id is None or e.start is None:
            continue
        for position in index.doc_positions.get(e.doc_id, []):
            chunk = index.chunks[position]
            if chunk.start is not None and chunk.start < e.end and chunk.end > e.start:
                own.add(position)
    return own


def kb_leaks(items: Sequence[EvalItem], index: KBIndex, settings: LeakSettings,
             skip_docs: set[str]) -> list[LeakFinding]:
    """Return the question, QA-pair and answer leaks of `items` in the snapshot."""
    matcher = _Matcher(index, skip_docs, settings)
    ids = [c.chunk_id for c in index.chunks]
    findings: list[LeakFinding] = []
    for item in progress(items, "checking leakage", unit="item"):
        question = fold(item.question)
        answer = fold(item.reference_answer or "")
        if len(question) >= settings.question_min_chars:
            for places, score, matched in matcher.find(question, settings.question_min):
                doc_id = index.chunks[places[0]].doc_id
                method = "exact" if score >= 1.0 and question in matched else "near_verbatim"
                kind = "question_in_kb"
                if answer and (containment(answer, "".join(index.folded[p] for p in places))[0] >= settings.answer_min
                               or matcher.document_holds(doc_id, answer, settings.answer_min)):
                    kind = "qa_pair_in_kb"
                findings.append(LeakFinding(item_id=item.id, kind=kind, method=method, score=round(score * 100, 1),
                                        chunk_ids=[ids[p] for p in places], doc_id=doc_id,
                                        matched=_excerpt(index, places, matched)))
        if long_form(item.reference_answer, item.language, settings) and not _extractive(item, answer, settings):
            own = _own_positions(item, index)
            flagged = {tuple(f.chunk_ids) for f in findings if f.item_id == item.id}
            for places, score, matched in matcher.find(answer, settings.answer_min, exclude=own):
                if tuple(ids[p] for p in places) in flagged:
                    continue  # already a QA pair there
                findings.append(LeakFinding(item_id=item.id, kind="answer_in_kb",
                                        method="exact" if score >= 1.0 else "near_verbatim",
                                        score=round(score * 100, 1), chunk_ids=[ids[p] for p in places],
                                        doc_id=index.chunks[places[0]].doc_id,
                                        matched=_excerpt(index, places, matched)))
    return findings


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
    """Return counts by kind and the flagged item ids."""
    return {"counts": dict(Counter(f.kind for f in findings)), "items": sorted({f.item_id for f in findings})}


@dataclass
class LeakReport:
    """The outcome of one leakage check."""

    ref: str
    kb_snapshot: str
    checked: int
    findings: list[LeakFinding]
    allowed_docs: list[str]
    excluded_docs: list[str]
    quarantined: list[str] = field(default_factory=list)
    newly_excluded: list[str] = field(default_factory=list)
    record: LeakageCheck | None = None

    @property
    def clean(self) -> bool:
        return not self.findings

    def write(self, path) -> None:
        """Write the record with every finding (check-leakage --report)."""
        LeakageReport(**self.record.model_dump(), findings=self.findings).write(path)
