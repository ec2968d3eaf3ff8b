"""Questions a model writes from seed chunks (single, multi_evidence, conditional): the seeds, the
requests, the model's answers made candidates with located evidence, and the closed-book check's
requests and answers. A pure core: no model is called here (the caller asks `curate.judge.client.Judge`).

Rules, and why:

- A thin chunk is not a seed: under MIN_CJK (24) Chinese characters for a Chinese chunk (a Latin word
  or number in it counting as one: "Lumen Gateway 3.4"), or MIN_WORDS (12) words for any other, once
  its Markdown heading lines are set aside. A heading and a line of text ("# Trial\\n\\nSee billing.")
  give a question about nothing; 12 English words, or 24 Chinese characters (a Chinese word is one
  to two), is about one sentence stating one fact.
- Seeds spread over the KB as `core.sample` spreads the kept questions: round the documents (in an
  order fixed by `seed`), and within a document round its sections (`chunk.metadata["section"]`), so
  no document gives a second seed before every document has given one, nor a section before the
  other sections of its document. A chunk seeds at most one single or conditional question, and a
  copy of a chosen chunk (`copies`, as `KBIndex.copies` gives, or the same text) none: the same
  passage twice makes the same question twice. Conditional seeds are chosen first (they are the fewest).
- A conditional seed holds a condition marker (`has_condition`: if, unless, only when, provided that,
  otherwise, a sentence opening "When ..., "; 如果, 若, 除非, 仅当, 只有……才, 只要……就, 一旦, 否则,
  当……时, ...), the words that make one case differ from another. Words that look like one and are
  not are left out: "check if", "even if", "as if", "if any"; 若干, 当时, 相当, 应当.
- A multi_evidence seed pairs a chunk with a related one: of the same document and language, in
  another section or right next to it (the chunk before or after), neither a copy of the other
  (`copies`, or the same text) nor thin; of those, the one sharing the most of its wording (Jaccard
  of folded character bigrams; the order fixed by `seed` on a tie), so the question has something
  that links the two. A chunk is in one pair at most. Across documents, relatedness would need more
  than wording to tell: not tried.
- Seeds are asked for OVERSAMPLE (1.5) times the quota, rounded up: the filters drop some (a quote
  the model made up, a question that needs the passage, one answered closed-book), and `core.sample`
  keeps the quota of those left.
- A quote is located in its seed chunk exactly, else after normalisation (width, case, white space
  beside Chinese, the marks `curate.text.normalize` makes one), else folded (white space and
  punctuation aside); an ellipsis in a quote joins parts found in that order. A quote of fewer than
  MIN_QUOTE folded characters is no evidence. The evidence is the located span, with its document
  offsets when the chunk's are known.
"""

from __future__ import annotations

import hashlib
import math
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from curate.errors import CurateError
from curate.generate.core import seeded_rank
from curate.generate.passages import ChunkPassage, passage
from curate.generate.prompts import GENERATION, MAX_PASSAGE, TASKS
from curate.judge.client import Verdict
from curate.judge.prompts import Prompt, cut
from curate.records import Chunk
from curate.records.generated import Candidate, CandidateEvidence, CandidateKeyPoint, Generation, Passage
from curate.text.normalize import fold, fold_with_map, language_of, normalize_with_map

OVERSAMPLE = 1.5
MIN_CJK = 24
MIN_WORDS = 12
MIN_QUOTE = 4

THIN = f"thin chunk (under {MIN_CJK} Chinese characters or {MIN_WORDS} English words, headings aside)"
NO_CONDITION = "conditional: no condition marker"
NO_PARTNER = "multi_evidence: no related chunk left to pair with"
SHORT = "{qtype}: fewer seed chunks than wanted"
TAKEN = "{qtype}: a copy of a chunk already chosen, or seeding a question already"
NO_SOURCE = {"en": "(unknown)", "zh": "（未知）"}

_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t].*$", re.MULTILINE)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’.\-][A-Za-z0-9]+)*")
_CLAUSE = r"[^。；;，,！？!?\n]"
_CONDITION = re.compile("|".join([
    r"\b(?:unless|otherwise|whenever|as long as|so long as|provided that|providing that|on condition that"
    r"|only (?:if|when|after|where|while)|in case of|in the event (?:of|that)|except (?:when|if|where))\b",
    # "if" as a condition; not "as if", "even if" or "check if" (whether), nor "if any", "if needed"
    r"(?<!\bas )(?<!\beven )(?<!\bcheck )(?<!\bsee )(?<!\bask )(?<!\bknow )(?<!\btest )(?<!\bverify )"
    r"(?<!\bwonder )(?<!\bdetermine )\bif\b"
    r"(?! (?:any|so|possible|necessary|needed|applicable|required|desired|you like)\b)",
    r"(?:^|(?<=[.!?:;]\s)|(?<=[-*]\s))(?:when|once)\b[^.!?\n]{3,120},",   # "When the trial ends, ..."
    r"如果|假如|假若|倘若|倘使|如若|若是|除非|仅当|一旦|否则|前提是",
    r"(?:^|(?<=[，,。；;：:！？!?\s]))若(?!干)",                          # 若 opening a clause; not 若干
    rf"仅在{_CLAUSE}{{1,30}}?(?:时|后|期间)|只有{_CLAUSE}{{1,30}}?才|只要{_CLAUSE}{{1,30}}?就"
    rf"|在{_CLAUSE}{{1,20}}?情况下",
    rf"(?<![相应适正担充恰妥稳麦])当(?![时地然前年天日初中今局作成选即场])[^。；;！？!?\n]{{1,25}}?时[，,]",
]), re.IGNORECASE | re.MULTILINE)
_ELLIPSIS = re.compile(r"\s*(?:\.{3,}|…+|⋯+)\s*")
_QUOTE_MARKS = "\"'“”‘’「」『』《》 \t\n"


@dataclass(frozen=True)
class Seed:
    """The chunks one question is written from (two for multi_evidence), and their language."""

    qtype: str
    chunks: tuple[Chunk, ...]
    language: str

    @property
    def chunk_ids(self) -> list[str]:
        return [c.chunk_id for c in self.chunks]

    @property
    def candidate_id(self) -> str:
        """Return the id of the candidate written from this seed: the type and a hash of the type and chunk ids."""
        key = "\n".join([self.qtype, *self.chunk_ids])
        return f"{self.qtype}-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:10]


# -- which chunks to ask about -----------------------------------------------------------------------

def body(text: str) -> str:
    """Return a chunk's text without its Markdown heading lines.

    >>> body("# Trial\\n\\nEvery workspace starts with a trial.")
    '\\n\\nEvery workspace starts with a trial.'
    """
    return _HEADING.sub("", text)


def thin(text: str) -> bool:
    """Return whether a chunk says too little to ask about: under MIN_CJK Chinese characters and Latin
    words (a Chinese chunk) or MIN_WORDS words (any other), its headings aside.

    >>> thin("# Trial\\n\\nSee the billing page."), thin("## 试用\\n\\n每个新工作区都会先获得 30 天的企业版试用。")
    (True, True)
    >>> thin("## 试用\\n\\n每个新工作区都会先获得 30 天的企业版试用。试用结束时如果没有订阅，工作区会转为社区版。")
    False
    """
    rest = body(text)
    if language_of(rest) == "zh":
        return len(_CJK.findall(rest)) + len(_WORD.findall(rest)) < MIN_CJK
    return len(_WORD.findall(rest)) < MIN_WORDS


def has_condition(text: str) -> str | None:
    """Return the first words of `text` that make a rule conditional, or None.

    >>> [has_condition(t) for t in ("Create a new token if a token is lost.", "Check if the key is valid.",
    ...                             "如果账单逾期 14 天，工作区将被停用。", "该镇有若干座寺庙，当时香火很盛。")]
    ['if', None, '如果', None]
    >>> has_condition("When the trial ends without a subscription, the workspace moves to Community.")
    'When the trial ends without a subscription,'
    """
    found = _CONDITION.search(body(text))
    return found.group(0) if found else None


def wanted(quota: int) -> int:
    """Return how many seeds to ask for a quota: OVERSAMPLE times it, rounded up (the filters drop some).

    >>> wanted(10), wanted(1), wanted(0)
    (15, 2, 0)
    """
    return math.ceil(quota * OVERSAMPLE)


def _queues(chunks: Sequence[Chunk], positions: Sequence[int], seed: int) -> list[list[list[int]]]:
    """Return chunk `positions` as queues: one per document, each a queue per section of it; documents,
    sections and chunks in an order fixed by `seed`."""
    documents: dict[str, dict[str, list[int]]] = {}
    for position in positions:
        chunk = chunks[position]
        sections = documents.setdefault(chunk.doc_id, {})
        sections.setdefault(str(chunk.metadata.get("section") or ""), []).append(position)
    return [[sorted(documents[doc][s], key=lambda p: seeded_rank(seed, chunks[p].chunk_id))
             for s in sorted(documents[doc], key=lambda s: seeded_rank(seed, f"{doc}\n{s}"))]
            for doc in sorted(documents, key=lambda d: seeded_rank(seed, d))]


def _take(queues: list[list[list[int]]], want: int, choose: Callable[[int], Seed | None]) -> list[Seed]:
    """Return up to `want` seeds, going round the documents and, within a document, round its sections:
    at each turn the first chunk `choose` makes a seed of (those it refuses are passed over). A document
    with no chunk left leaves the round. `queues` (`_queues`) is used up.

    >>> _take([[[1, 2], [3]], [[4]]], 3, lambda p: None if p == 1 else p)
    [2, 4, 3]
    """
    chosen: list[Seed] = []
    while len(chosen) < want and queues:
        sections = queues.pop(0)
        made = None
        while made is None and sections:
            section = sections.pop(0)
            while made is None and section:
                made = choose(section.pop(0))
            if section:
                sections.append(section)
        if sections:
            queues.append(sections)
        if made is not None:
            chosen.append(made)
    return chosen


def seeds(chunks: Sequence[Chunk], types: Sequence[str], quota: Mapping[str, int], seed: int,
          copies: Mapping[str, Sequence[str]] | None = None) -> tuple[list[Seed], Counter]:
    """Return the seeds of the written `types` (`wanted(quota[type])` of each, in the order of `types`),
    and what was skipped, by why (see the module docstring for the rules). `copies`: chunk id -> the
    ids of its duplicate group, as `KBIndex.copies` gives."""
    copies = copies or {}
    skipped: Counter = Counter()
    usable = [p for p, chunk in enumerate(chunks) if not thin(chunk.text)]
    skipped[THIN] += len(chunks) - len(usable)
    taken: set[str] = set()        # chunk ids that seed a single or conditional question, and their copies
    found: dict[str, list[Seed]] = {}
    for qtype in ("conditional", "single", "multi_evidence"):
        if qtype not in types:
            continue
        want = wanted(quota.get(qtype, 0))
        if qtype == "multi_evidence":
            found[qtype] = _take(_queues(chunks, usable, seed), want, _pairing(chunks, usable, copies, seed, skipped))
        else:
            marked = [p for p in usable if qtype == "single" or has_condition(chunks[p].text)]
            skipped[NO_CONDITION] += len(usable) - len(marked)
            found[qtype] = _take(_queues(chunks, marked, seed), want, _alone(chunks, qtype, taken, copies, skipped))
        if len(found[qtype]) < want:
            skipped[SHORT.format(qtype=qtype)] += want - len(found[qtype])
    return [s for qtype in types if qtype in found for s in found[qtype]], +skipped


def _alone(chunks: Sequence[Chunk], qtype: str, taken: set[str], copies: Mapping[str, Sequence[str]],
           skipped: Counter) -> Callable[[int], Seed | None]:
    """Return the chooser of one-chunk seeds: a chunk not in `taken`, nor its text (it adds the chunk,
    its text and its copies to `taken`)."""
    def choose(position: int) -> Seed | None:
        chunk = chunks[position]
        same_text = "\x00" + fold(body(chunk.text))        # no chunk id holds a NUL
        if chunk.chunk_id in taken or same_text in taken:
            skipped[TAKEN.format(qtype=qtype)] += 1
            return None
        taken.update([chunk.chunk_id, same_text, *copies.get(chunk.chunk_id, ())])
        return Seed(qtype, (chunk,), language_of(chunk.text))
    return choose


def _grams(text: str) -> frozenset[str]:
    folded = fold(body(text))
    return frozenset(folded[i:i + 2] for i in range(len(folded) - 1))


def _pairing(chunks: Sequence[Chunk], usable: Sequence[int], copies: Mapping[str, Sequence[str]], seed: int,
             skipped: Counter) -> Callable[[int], Seed | None]:
    """Return the chooser of two-chunk seeds: a chunk paired with its best related chunk (module
    docstring), no chunk in two pairs."""
    usable_set = set(usable)
    in_document: dict[str, list[int]] = {}
    for position, chunk in enumerate(chunks):
        in_document.setdefault(chunk.doc_id, []).append(position)
    place = {p: k for positions in in_document.values() for k, p in enumerate(positions)}   # within its document
    grams: dict[int, frozenset[str]] = {}
    paired: set[int] = set()

    def overlap(a: int, b: int) -> float:
        for p in (a, b):
            if p not in grams:
                grams[p] = _grams(chunks[p].text)
        union = grams[a] | grams[b]
        return len(grams[a] & grams[b]) / len(union) if union else 0.0

    def choose(anchor: int) -> Seed | None:
        if anchor in paired:
            return None
        options = [p for p in in_document[chunks[anchor].doc_id] if p in usable_set and p not in paired
                   and p != anchor and _related(chunks[anchor], chunks[p], abs(place[anchor] - place[p]) == 1, copies)]
        if not options:
            skipped[NO_PARTNER] += 1
            return None
        partner = max(options, key=lambda p: (overlap(anchor, p), seeded_rank(seed, chunks[p].chunk_id)))
        paired.update((anchor, partner))
        first, second = sorted((anchor, partner))     # in document order: passage 1 comes first
        return Seed("multi_evidence", (chunks[first], chunks[second]), language_of(chunks[first].text))
    return choose


def _related(x: Chunk, y: Chunk, next_to: bool, copies: Mapping[str, Sequence[str]]) -> bool:
    """Return whether two chunks of one document make a pair: in another section or `next_to` each
    other, of one language, and not copies of each other."""
    if y.chunk_id in copies.get(x.chunk_id, ()) or x.chunk_id in copies.get(y.chunk_id, ()):
        return False
    if fold(body(x.text)) == fold(body(y.text)) or language_of(x.text) != language_of(y.text):
        return False
    return next_to or x.metadata.get("section") != y.metadata.get("section")


# -- what the model is asked -------------------------------------------------------------------------

def source(chunk: Chunk, language: str) -> str:
    """Return where a chunk is from, as a prompt says it: its title and section path, or unknown.

    >>> source(Chunk(chunk_id="b#1", doc_id="b", text="t", text_sha256="0",
    ...              metadata={"title": "Plans and billing", "section": "Plans and billing > Plans"}), "en")
    'Plans and billing > Plans'
    """
    title, section = (str(chunk.metadata.get(k) or "").strip() for k in ("title", "section"))
    if title and section and not section.startswith(title):
        return f"{title} > {section}"
    return section or title or NO_SOURCE[language]


def prompt_of(seed: Seed) -> Prompt:
    """Return the prompt that writes a seed's question, in the seed's language."""
    return GENERATION.get(TASKS[seed.qtype], seed.language)


def payload_of(seed: Seed) -> dict:
    """Return what a seed's prompt is filled with: each chunk's source and text (cut to MAX_PASSAGE)."""
    if seed.qtype == "multi_evidence":
        first, second = seed.chunks
        return {"source_1": source(first, seed.language), "passage_1": cut(first.text, MAX_PASSAGE),
                "source_2": source(second, seed.language), "passage_2": cut(second.text, MAX_PASSAGE)}
    return {"source": source(seed.chunks[0], seed.language), "passage": cut(seed.chunks[0].text, MAX_PASSAGE)}


def requests(seeds: Sequence[Seed]) -> list[tuple[Prompt, dict]]:
    """Return the request of each seed (prompt and payload), in order; `Judge.ask_many` takes each with
    a repeat of 0."""
    return [(prompt_of(s), payload_of(s)) for s in seeds]


# -- the model's answer as a candidate ---------------------------------------------------------------

def locate(quote: str, text: str) -> tuple[int, int] | None:
    """Return the span of `text` that `quote` copies (module docstring), or None.

    >>> text = "该马场共养马十 万 匹，为全国之最。"
    >>> a, b = locate("共养马十万匹", text)
    >>> text[a:b]
    '共养马十 万 匹'
    >>> locate("共养马二十万匹", text) is None
    True
    """
    parts = [part for part in _ELLIPSIS.split(quote.strip(_QUOTE_MARKS)) if part.strip(_QUOTE_MARKS)]
    spans: list[tuple[int, int]] = []
    for part in parts:
        span = _find(part.strip(_QUOTE_MARKS), text, spans[-1][1] if spans else 0)
        if span is None:
            return None
        spans.append(span)
    return (spans[0][0], spans[-1][1]) if spans else None


def _find(part: str, text: str, start: int) -> tuple[int, int] | None:
    """Return the first span of text[start:] that `part` copies: exactly, normalised, then folded."""
    at = text.find(part, start)
    if at >= 0:
        return at, at + len(part)
    for level in (normalize_with_map, fold_with_map):
        needle = level(part)[0].strip()
        hay, index = level(text)
        at = hay.find(needle, bisect_left(index, start)) if needle else -1
        if at >= 0:
            return index[at], index[at + len(needle) - 1] + 1
    return None


def _short(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def _evidence(seed: Seed, quote: str, cited: int) -> Passage | str:
    """Return the passage a quote copies: in the chunk the key point cites (passage `cited`), else in
    the seed's other chunk; or why it cannot be evidence."""
    if len(fold(quote)) < MIN_QUOTE:
        return f"quote too short to be evidence: '{_short(quote)}'"
    chunks = list(seed.chunks)
    if 1 <= cited <= len(chunks):
        chunks.insert(0, chunks.pop(cited - 1))
    for chunk in chunks:
        span = locate(quote, chunk.text)
        if span is not None:
            return passage([chunk], ChunkPassage(0, span[0], span[1], ""))
    return f"quote not in the seed chunk: '{_short(quote)}'"


def candidate_from(seed: Seed, output: BaseModel, *, run: str, model: str, prompt: Prompt) -> Candidate | str:
    """Return the candidate a model wrote from a seed (`output`: the prompt's parsed answer), its key
    points citing the passages their quotes copy (e1, e2, ... in order of first citation), or why it
    cannot be one: a quote not in the seed's chunks, a two-passage question whose quotes all come from
    one chunk. The caller counts a reason as dropped."""
    located: list[Passage] = []
    key_points = []
    for point in output.key_points:
        found = _evidence(seed, point.quote, getattr(point, "passage", 1))
        if isinstance(found, str):
            return found
        if found not in located:
            located.append(found)
        key_points.append(CandidateKeyPoint(text=point.point, evidence_ids=[f"e{located.index(found) + 1}"]))
    if seed.qtype == "multi_evidence" and len({p.chunk_id for p in located}) < 2:
        return "multi-evidence question built from one chunk"
    return Candidate(
        candidate_id=seed.candidate_id, qtype=seed.qtype, language=seed.language, question=output.question.strip(),
        reference_answer=output.answer.strip(), key_points=key_points,
        evidence=[CandidateEvidence(evidence_id=f"e{k}", passage=p, grade=2) for k, p in enumerate(located, 1)],
        generation=Generation(method="llm", run=run, candidate_id=seed.candidate_id, model=model,
                              prompt_version=prompt.version, seed_chunks=seed.chunk_ids))


def candidates_from(seeds: Sequence[Seed], verdicts: Sequence[Verdict], *, run: str,
                    model: str) -> tuple[list[Candidate], dict[str, str]]:
    """Return the candidates of the model's answers to `requests(seeds)` (`verdicts`, in that order), and
    {candidate id: why none was made} for the others (the call failed: its unscored reason; or
    `candidate_from`'s reason)."""
    if len(seeds) != len(verdicts):
        raise CurateError(f"{len(verdicts)} answers for {len(seeds)} seeds")
    made, failed = [], {}
    for seed, verdict in zip(seeds, verdicts):
        if verdict.output is None:
            failed[seed.candidate_id] = f"no answer from the model: {verdict.unscored}"
            continue
        result = candidate_from(seed, verdict.output, run=run, model=model, prompt=prompt_of(seed))
        if isinstance(result, str):
            failed[seed.candidate_id] = result
        else:
            made.append(result)
    return made, failed


# -- closed book -------------------------------------------------------------------------------------

def _asked(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Return the candidates a closed-book answer is asked of: the answerable ones (the filter passes
    an unanswerable one unasked)."""
    return [c for c in candidates if c.answerable]


def closed_book_requests(candidates: Sequence[Candidate]) -> list[tuple[Prompt, dict]]:
    """Return the closed-book request of each answerable candidate, in order, in its language."""
    return [(GENERATION.get("closed_book", c.language), {"question": c.question}) for c in _asked(candidates)]


def closed_book_answers(candidates: Sequence[Candidate], verdicts: Sequence[Verdict]
                        ) -> tuple[dict[str, str | None], dict[str, str]]:
    """Return the model's closed-book answers by candidate id (None where the call failed) and why for
    those that failed (the verdict's unscored reason): `closed_book_verdicts`' `answers` and `why`.
    `verdicts` answer `closed_book_requests(candidates)`, in that order."""
    asked = _asked(candidates)
    if len(asked) != len(verdicts):
        raise CurateError(f"{len(verdicts)} closed-book answers for {len(asked)} answerable candidates")
    answers: dict[str, str | None] = {}
    why: dict[str, str] = {}
    for candidate, verdict in zip(asked, verdicts):
        answers[candidate.candidate_id] = None if verdict.output is None else verdict.output.answer
        if verdict.output is None:
            why[candidate.candidate_id] = verdict.unscored or "no answer"
    return answers, why
