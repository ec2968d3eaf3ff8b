"""Paraphrased leaks: an item's question asked in other words by a question the KB holds (an FAQ entry,
a heading ending with a question mark), found with the workspace's embedding model.

The KB's questions are its sentences and lines that carry an FAQ label (Q:, 问：, 1. 问题：) or end with a
question mark, the label stripped; each distinct one (folded) is embedded once, with every chunk holding
it, and cached by text and model like every embedding. An item's question matches a KB question when
their cosine reaches the model's threshold for paraphrases (`embeddings.paraphrase_min`), when both
name the same numbers, negations and model names (`context.names`), and when the KB question is no
copy of it: copies are the lexical rules' to judge (a longer, more specific question is no paraphrase).
Questions the model cannot read are left out and counted.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from curate.checks.leakage.accept import where_fingerprint
from curate.checks.leakage.context import QUESTION_LABEL, ends_asking, names
from curate.errors import CurateError
from curate.index.embeddings import EmbeddingCache, load_model, paraphrase_min
from curate.engine import Engine, LocalEngine
from curate.index.kb_index import KBIndex
from curate.index.shard_index import ShardIndex, map_views, shard_views
from curate.records import EvalItem, LeakFinding
from curate.text.containment import containment
from curate.text.normalize import fold
from curate.text.sentences import sentence_spans
from curate.workspace import Workspace

MIN_CHARS = 4      # folded characters of the shortest KB question compared
MAX_CHARS = 200    # and of the longest: a longer "question" is a paragraph that happens to end with "?"
ROWS = 512         # items compared at a time (the cosine matrix stays small)
_ANY_LABEL = re.compile(r"(?im)^[ \t]*(?:[-*•·]\s*)?(?:\d{1,3}\s*[.、)）]\s*)?(?:q|question|faq|问|问题|提问)\s*\d{0,3}"
                        r"\s*[:：.．、)）]")
_MARKUP = re.compile(r"^[\s#>*_\-|•·]+|[\s*_|]+$")


@dataclass
class KBQuestions:
    """The distinct questions of a snapshot: their text and the chunks holding each (snapshot position,
    chunk_id, doc_id), in snapshot order."""

    texts: list[str] = field(default_factory=list)
    places: list[list[tuple[int, str, str]]] = field(default_factory=list)


def kb_questions(index: KBIndex, skip_docs: set[str] = frozenset(), engine: Engine | None = None) -> KBQuestions:
    """Return the questions the KB asks (see the module docstring), one per folded text: each shard's own
    chunks read on `engine` when the snapshot is in many (`map_views`), joined in snapshot order.

    Every chunk is read once; only chunks holding a question mark or an FAQ label are split into sentences.
    """
    found = KBQuestions()
    seen: dict[str, int] = {}
    if engine is None and shard_views(index) > 1:
        engine = LocalEngine()
    for part in map_views(index, engine, _view_questions, set(skip_docs), label="finding the KB's questions"):
        for key, body, places in part:
            if key not in seen:
                seen[key] = len(found.texts)
                found.texts.append(body)
                found.places.append([])
            found.places[seen[key]].extend(places)   # a shard's positions follow the shards' before it
    return found


def _view_questions(view: KBIndex, skip_docs: set[str]) -> list[tuple[str, str, list[tuple[int, str, str]]]]:
    """Return the questions of a view's own chunks: (folded text, text, the chunks holding it), in order."""
    found: dict[str, tuple[str, list[tuple[int, str, str]]]] = {}
    texts = view.own_texts()
    for position, text in enumerate(texts):
        if not ("?" in text or "？" in text or _ANY_LABEL.search(text)) or view.doc_of(position) in skip_docs:
            continue
        for start, end in sentence_spans(text):
            sentence = text[start:end]
            line_start = text.rfind("\n", 0, start) + 1
            label = QUESTION_LABEL.match(text, line_start)
            labelled = label is not None and label.end() <= end and not text[label.end():start].strip()
            if not (labelled or ends_asking(sentence)):
                continue
            body = text[max(start, label.end()) if labelled else start:end]
            body = _MARKUP.sub("", QUESTION_LABEL.sub("", _MARKUP.sub("", body), count=1))
            key = fold(body)
            if not MIN_CHARS <= len(key) <= MAX_CHARS:
                continue
            places = found.setdefault(key, (body, []))[1]
            place = (view.global_position(position), view.chunks[position].chunk_id, view.doc_of(position))
            if place not in places:
                places.append(place)
    return [(key, body, places) for key, (body, places) in found.items()]


@dataclass
class ParaphrasePass:
    """What the paraphrase pass compared, or why it compared nothing."""

    model: str | None
    paraphrase_min: float | None = None
    kb_questions: int = 0
    items: int = 0
    unreadable: int = 0            # item and KB questions the model cannot read, left out
    skipped: str | None = None
    chosen: bool = False           # skipped because the user asked (--no-semantic)

    @property
    def degraded(self) -> bool:
        """Return whether the pass was skipped, or left questions out, without being asked to."""
        return (self.skipped is not None and not self.chosen) or self.unreadable > 0

    @property
    def note(self) -> str | None:
        """Return the one line that says the pass was skipped or left questions out, or None."""
        if self.skipped and not self.chosen:
            return f"note: paraphrases of KB questions not looked for: {self.skipped}"
        if self.unreadable:
            return (f"note: the paraphrase pass left out {self.unreadable} questions {self.model} cannot read "
                    f"(items' and the KB's): only copies of them are found")
        return None

    def settings(self) -> dict:
        """Return what the check's record keeps of the pass."""
        return {"paraphrase": "skipped" if self.skipped else "partial" if self.unreadable else "used",
                "paraphrase_reason": self.skipped, "paraphrase_min": self.paraphrase_min,
                "kb_questions": self.kb_questions, "paraphrase_unreadable": self.unreadable}


def _is_copy(question: str, asked: str) -> bool:
    """Return whether either folded text holds the other: a copy, which the lexical rules judge."""
    return containment(question, asked)[0] >= 1.0 or containment(asked, question)[0] >= 1.0


def match(items: Sequence[EvalItem], questions: KBQuestions, item_vectors: np.ndarray, kb_vectors: np.ndarray,
          threshold: float) -> list[tuple[int, int, float]]:
    """Return (item row, KB question row, cosine) of every paraphrase at or above `threshold` (rows of
    zeros, for texts the model cannot read, match nothing)."""
    found = []
    folded = [fold(q) for q in questions.texts]
    asked_names = [names(q) for q in questions.texts]
    for start in range(0, len(items), ROWS):
        cosine = item_vectors[start:start + ROWS] @ kb_vectors.T
        for row, column in zip(*np.nonzero(cosine >= threshold)):
            item = items[start + int(row)]
            question = fold(item.question)
            if _is_copy(question, folded[column]) or names(item.question) != asked_names[column]:
                continue
            found.append((start + int(row), int(column), float(cosine[row, column])))
    return found


def paraphrase_leaks(workspace: Workspace, items: Sequence[EvalItem], index: KBIndex, *, skip_docs: set[str],
                     found: Sequence[LeakFinding], semantic: bool = True, threshold: float | None = None,
                     min_chars: int = MIN_CHARS, engine: Engine | None = None) -> tuple[list[LeakFinding], ParaphrasePass]:
    """Return the items' questions that a KB question asks in other words (one finding per item and KB
    question, its chunks listed, none where `found` already has the item at that chunk), and the pass. The
    KB's questions of a snapshot in many shards are found on `engine` (its shards' own chunks each)."""
    if not semantic:
        return [], ParaphrasePass(None, skipped="--no-semantic", chosen=True)
    model = workspace.setting("embedding", "model")
    if not model:
        return [], ParaphrasePass(None, skipped="no embedding model is set ([embedding] model in curate.toml)")
    questions = kb_questions(index, skip_docs, engine)
    views: dict[int, KBIndex] = {}
    asking = [i for i in items if len(fold(i.question)) >= min_chars]
    try:
        cutoff = paraphrase_min(model) if threshold is None else threshold
        if not questions.texts or not asking:
            return [], ParaphrasePass(model, cutoff, len(questions.texts), len(asking))
        load_model(model)
    except CurateError as exc:
        return [], ParaphrasePass(model, skipped=str(exc))
    cache = EmbeddingCache(workspace.root / "cache" / "embeddings", model)
    item_vectors, item_readable = _vectors(cache, [i.question for i in asking], "embedding questions")
    kb_vectors, kb_readable = _vectors(cache, questions.texts, "embedding the KB's questions")
    used = ParaphrasePass(model, cutoff, len(questions.texts), len(asking),
                          int((~item_readable).sum() + (~kb_readable).sum()))
    taken = {(f.item_id, c) for f in found for c in f.chunk_ids + f.copies}
    findings = []
    for row, column, cosine in match(asking, questions, item_vectors, kb_vectors, cutoff):
        item = asking[row]
        places = [p for p in questions.places[column] if (item.id, p[1]) not in taken]
        if not places:
            continue
        view, at = _view_of(index, places[0][0], views)
        answer = fold(item.reference_answer or "")
        joined = "".join(view.folded[p] for p in view.doc_positions.get(places[0][2], []))
        paired = bool(answer) and containment(answer, joined)[0] >= 0.95
        findings.append(LeakFinding(
            item_id=item.id, kind="qa_pair_in_kb" if paired else "question_in_kb", method="semantic",
            score=round(100 * cosine, 1), chunk_ids=[places[0][1]], doc_id=places[0][2],
            copies=[p[1] for p in places[1:]], matched=questions.texts[column],
            where_sha256=where_fingerprint([view.chunks[at]]),
            standing=f"asked in other words (cosine {cosine:.3f} >= {cutoff:g}, {model})"))
    return findings, used


def _view_of(index: KBIndex, position: int, views: dict[int, KBIndex]) -> tuple[KBIndex, int]:
    """Return the view holding a snapshot position (its document whole in it) and the position there: the
    index itself, or the view of the shard holding it (each opened once, one held at a time)."""
    if shard_views(index) == 1:
        return index, position
    shards = index.store.shards(index.snapshot_id)
    number = bisect.bisect_right([s.first for s in shards], position) - 1
    if number not in views:
        views.clear()
        views[number] = ShardIndex(index.workspace, index.snapshot_id, number)
    return views[number], position - shards[number].first


def _vectors(cache: EmbeddingCache, texts: list[str], description: str) -> tuple[np.ndarray, np.ndarray]:
    """Return the texts' vectors (zeros for those the model cannot read) and which it can read."""
    readable = np.asarray(cache.readable(texts), dtype=bool)
    rows = [n for n, ok in enumerate(readable) if ok]
    if not rows:
        return np.zeros((len(texts), 1), dtype=np.float32), readable
    embedded = cache.embed([texts[n] for n in rows], description)
    vectors = np.zeros((len(texts), embedded.shape[1]), dtype=np.float32)
    vectors[rows] = embedded
    return vectors, readable
