"""The leakage benchmark's data: CMRC2018 read, then the KB chunks, filler, items and injected leaks built.

Imported by benchmarks/leakage.py, which runs and times the benchmark (see its docstring); nothing here is
timed. Built deterministically from the seeded rng it is given:
- KB (~100,000 chunks, one snapshot, `ChunkerSettings(kind="imported")`, no documents stored):
  * every real paragraph (dev + trial, 1,104) as one chunk in its own document;
  * filler chunks of ~150-250 characters, recombined from sentences of those paragraphs, 10 chunks per
    filler document with consecutive offsets (so the check's neighbour joining is exercised on them). Filler
    never holds a sentence that overlaps any answer span (every annotator's answer, located in its paragraph),
    nor a sentence holding a folded question: the only real copy of an item's evidence is its own paragraph,
    and no clean item's question or answer has a real copy anywhere in the KB. A clean item that is flagged is
    therefore a false positive of the check, not of the data;
  * leak documents (appended, their own documents, shuffled among the filler documents): a filler chunk,
    the chunk holding the leak (filler-like text around it), a filler chunk; `partial_copy` documents have the
    question cut in two across two consecutive chunks (offsets consecutive in one document).
- Items (5,000 EvalItems built directly): the 4,221 real questions (reference answer = first answer, evidence
  = the sentence(s) holding it, chunk_ids = [its paragraph's chunk]), plus 779 variants of real questions
  made by adding a polite prefix (请问 / 我想知道 / ...) with the same evidence and answer.
- Leaks: 10% of the items (500), one kind each, round-robin over six kinds, chosen among real questions of at
  least 6 folded characters (shorter ones are not checked by design) that have no alike question among the
  items (containment >= 0.85 either way; otherwise a leak of one would legitimately flag its twin):
  exact, width_punct (full-width letters/digits, other punctuation, spaces), words_inserted (1-3 words of
  1-4 characters, at most 25% of the folded length), partial_copy (cut at 25-75% of the question),
  qa_pair ("问：…答：…"), long_answer (reference answer replaced by the evidence sentence with its clauses
  reversed, >= 25 folded characters, containment in its own evidence < 0.95, i.e. not extractive; that answer
  is written into a new chunk).
"""

import json
import random
import re
from collections import Counter, defaultdict
from pathlib import Path

from curate.text.sentences import trim_span
from curate.index.ngrams import NgramIndex
from curate.kb import sha256_text
from curate.records import Chunk, EvalItem, Evidence
from curate.text.containment import containment
from curate.text.normalize import fold

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = (REPO.parent / "shared" / "data",)
FILES = ("cmrc2018_dev.json", "cmrc2018_trial.json")
TARGET_CHUNKS = 100_000
TARGET_ITEMS = 5_000
LEAK_SHARE = 0.10
FILLER_PER_DOC = 10
KINDS = ("exact", "width_punct", "words_inserted", "partial_copy", "qa_pair", "long_answer")
PREFIXES = ("请问", "我想知道", "想问一下", "你知道", "能否告诉我")
INSERTS = ("的", "了", "呢", "那个", "其实", "究竟", "到底", "具体", "大概", "就是", "一下", "当时", "一般来说", "请问")
TWIN_MIN = 0.85
_SENTENCE_END = re.compile(r"[。！？!?；;]+[”’」』）)]*|\n+")


# -- data ------------------------------------------------------------------------------------------------

def find_data(given: str | None) -> Path | None:
    """Return the data folder: --data if given, else the first default that exists."""
    if given:
        return Path(given) if Path(given).is_dir() else None
    return next((path for path in DEFAULT_DATA if path.is_dir()), None)


def load_paragraphs(folder: Path) -> list[dict]:
    """Return CMRC2018 paragraphs {id, context, qas} from the dev and trial files found in `folder`."""
    paragraphs = []
    for name in FILES:
        path = folder / name
        if path.is_file():
            data = json.loads(path.read_text(encoding="utf-8"))["data"]
            paragraphs += [p for article in data for p in article["paragraphs"]]
        else:
            print(f"note: {path} not found; skipping it")
    return paragraphs


def sentences(text: str) -> list[tuple[int, int]]:
    """Return the (start, end) of each sentence of `text` (ending punctuation and closing quotes kept)."""
    spans, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        if match.end() > start:
            spans.append((start, match.end()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def locate(context: str, answer: str, start: int) -> tuple[int, int] | None:
    """Return the span of `answer` in `context`: at answer_start if it is there, else the nearest copy."""
    if context[start:start + len(answer)] == answer:
        return start, start + len(answer)
    places = [m.start() for m in re.finditer(re.escape(answer), context)] if answer else []
    if not places:
        return None
    best = min(places, key=lambda p: abs(p - start))
    return best, best + len(answer)


# -- leaks -----------------------------------------------------------------------------------------------

def full_width(char: str) -> str:
    """Return the full-width form of an ASCII letter or digit (other characters unchanged)."""
    return chr(ord(char) + 0xFEE0) if char.isascii() and char.isalnum() else char


PUNCT_SWAP = {"？": "?", "?": "？", "，": ",", ",": "，", "、": ",", "《": "<", "》": ">", "“": '"', "”": '"',
              "（": "(", "）": ")", "(": "（", ")": "）", "：": ":", "。": "."}


def width_punct(question: str, rng: random.Random) -> str:
    """Full-width letters and digits, swapped punctuation, 1-3 spaces and one extra comma."""
    chars = [PUNCT_SWAP.get(c, full_width(c)) for c in question]
    for _ in range(rng.randint(1, 3)):
        chars.insert(rng.randint(1, len(chars) - 1), " ")
    chars.insert(rng.randint(1, len(chars) - 1), rng.choice(("，", ", ", "、")))
    return "".join(chars)


def words_inserted(question: str, rng: random.Random) -> tuple[str, list[str]]:
    """Insert 1-3 short words (1-4 characters, <= 25% of the folded length in all) at random places."""
    budget = len(fold(question)) // 4
    words = []
    for _ in range(rng.randint(1, 3)):
        fitting = [w for w in INSERTS if len(w) <= budget - sum(map(len, words))]
        if fitting:
            words.append(rng.choice(fitting))
    if not words:
        words = ["的"]  # never reached for questions of >= 6 folded characters (budget >= 1)
    text = question
    for word in words:
        at = rng.randint(1, len(text) - 1)
        text = text[:at] + word + text[at:]
    return text, words


def long_answer(evidence: str) -> str | None:
    """Return the evidence sentence with its clauses reversed (a paraphrase, not a copy), or None."""
    body = evidence.strip().rstrip("。！？!?；;")
    clauses = [c for c in re.split(r"[，,；;]", body) if c.strip()]
    if len(clauses) < 2:
        return None
    answer = "，".join(reversed(clauses)) + "。"
    if len(fold(answer)) < 25 or containment(fold(answer), fold(evidence))[0] >= 0.95:
        return None
    return answer


# -- building the benchmark ------------------------------------------------------------------------------

def make_chunk(chunk_id: str, doc_id: str, text: str, start: int | None, end: int | None) -> Chunk:
    """Return a Chunk of `doc_id` spanning [start, end), its text hashed."""
    return Chunk(chunk_id=chunk_id, doc_id=doc_id, text=text, start=start, end=end, text_sha256=sha256_text(text))


class Filler:
    """Draws filler texts of ~150-250 characters from a pool of sentences."""

    def __init__(self, pool: list[str], rng: random.Random):
        self.pool = pool
        self.rng = rng

    def text(self, low: int = 150, high: int = 250) -> str:
        """Return random pool sentences joined until a length drawn from [low, high] is reached (none past high + 10)."""
        target = self.rng.randint(low, high)
        parts, size = [], 0
        while size < target:
            sentence = self.rng.choice(self.pool)
            if parts and size + len(sentence) > high + 10:
                continue
            parts.append(sentence)
            size += len(sentence)
        return "".join(parts)

    def around(self, leak: str) -> str:
        """Return a filler-like text with `leak` between sentences, ~150-250 characters besides it."""
        before = self.text(60, 120)
        after = self.text(60, 120)
        return before + leak + after


def build(paragraphs: list[dict], rng: random.Random) -> dict:
    """Return the items (without snapshot id), chunks, leaks and counts of the benchmark."""
    counts = Counter()
    real = []          # dicts: id, question, answer, pid, ev_start, ev_end, evidence
    blocked = defaultdict(set)  # paragraph index -> sentence indexes not allowed in filler
    para_sentences = []
    for k, p in enumerate(paragraphs):
        context = p["context"]
        spans = sentences(context)
        para_sentences.append(spans)
        for qa in p["qas"]:
            located = [locate(context, a["text"], a["answer_start"]) for a in qa["answers"]]
            for span in located:
                if span:
                    blocked[k] |= {i for i, (s, e) in enumerate(spans) if s < span[1] and e > span[0]}
            first = located[0] if located else None
            if first is None:
                counts["answers_not_located"] += 1
                ev_start, ev_end = 0, len(context)
            else:
                inside = [(s, e) for s, e in spans if s < first[1] and e > first[0]]
                ev_start, ev_end = inside[0][0], inside[-1][1]
            ev_start, ev_end = trim_span(context, ev_start, ev_end)
            real.append({"id": qa["id"], "question": qa["question"], "answer": qa["answers"][0]["text"],
                         "pid": p["id"], "ev_start": ev_start, "ev_end": ev_end,
                         "evidence": context[ev_start:ev_end]})
    counts["paragraphs"] = len(paragraphs)
    counts["real_questions"] = len(real)

    # filler pool: sentences that hold no answer and no folded question
    candidates = []
    for k, p in enumerate(paragraphs):
        for i, (s, e) in enumerate(para_sentences[k]):
            text = p["context"][s:e].strip()
            if i in blocked[k] or len(fold(text)) < 5 or len(text) > 200:
                continue
            candidates.append(text)
    folded_pool = [fold(t) for t in candidates]
    questions_folded = {fold(r["question"]) for r in real}
    blob = "\x00".join(folded_pool)
    holding = {q for q in questions_folded if len(q) >= 6 and q in blob}
    pool = [t for t, f in zip(candidates, folded_pool) if not any(q in f for q in holding)]
    counts["sentences_total"] = sum(len(s) for s in para_sentences)
    counts["sentences_blocked_answer"] = sum(len(b) for b in blocked.values())
    counts["sentences_dropped_question"] = len(candidates) - len(pool)
    counts["filler_pool_sentences"] = len(pool)
    filler = Filler(pool, rng)

    # items: all real questions plus variants to reach TARGET_ITEMS
    items = [dict(r, variant=False) for r in real]
    extra = TARGET_ITEMS - len(items)
    if extra > 0:
        for r in rng.sample(real, min(extra, len(real))):
            items.append(dict(r, id=r["id"] + "_V", question=rng.choice(PREFIXES) + r["question"], variant=True,
                              source_id=r["id"]))
    counts["variant_items"] = sum(1 for it in items if it["variant"])
    counts["items"] = len(items)

    # twins: questions alike enough that a leak of one could flag the other
    folded_q = [fold(it["question"]) for it in items]
    qindex = NgramIndex.build(folded_q)
    has_twin = set()
    for i, q in enumerate(folded_q):
        for j, _ in qindex.candidates(q, min_share=0.3, limit=20) if len(q) >= 4 else []:
            if j != i and (containment(q, folded_q[j])[0] >= TWIN_MIN or containment(folded_q[j], q)[0] >= TWIN_MIN):
                has_twin |= {i, j}
    varied = {it.get("source_id") for it in items if it["variant"]}
    eligible_q = [i for i, it in enumerate(items) if not it["variant"] and i not in has_twin
                  and it["id"] not in varied and len(folded_q[i]) >= 6]
    counts["items_with_alike_question"] = len(has_twin)
    counts["items_short_question"] = sum(1 for q in folded_q if len(q) < 6)

    # choose leaked items: round-robin kinds, long_answer among items whose evidence can be paraphrased
    n_leaks = round(LEAK_SHARE * len(items))
    per_kind = {kind: n_leaks // len(KINDS) + (1 if k < n_leaks % len(KINDS) else 0) for k, kind in enumerate(KINDS)}
    order = eligible_q[:]
    rng.shuffle(order)
    long_ok = [i for i in order if long_answer(items[i]["evidence"])]
    leaks = {}
    for i in long_ok[:per_kind["long_answer"]]:
        leaks[i] = "long_answer"
    rest = [i for i in order if i not in leaks]
    kinds = [kind for kind in KINDS if kind != "long_answer" for _ in range(per_kind[kind])]
    for i, kind in zip(rest, kinds):
        leaks[i] = kind
    counts["leaked_items"] = len(leaks)

    # leak documents
    leak_docs = []  # (doc_id, [texts], leak chunk indexes within the doc)
    leak_info = {}
    for n, (i, kind) in enumerate(sorted(leaks.items())):
        it = items[i]
        doc_id = f"leak-{n:04d}"
        q = it["question"]
        info = {"item": it["id"], "kind": kind, "doc_id": doc_id}
        if kind == "exact":
            texts, at = [filler.text(), filler.around(q), filler.text()], [1]
        elif kind == "width_punct":
            variant = width_punct(q, rng)
            texts, at = [filler.text(), filler.around(variant), filler.text()], [1]
            info["leak_text"] = variant
        elif kind == "words_inserted":
            variant, words = words_inserted(q, rng)
            texts, at = [filler.text(), filler.around(variant), filler.text()], [1]
            info["leak_text"], info["words"] = variant, words
        elif kind == "partial_copy":
            cut = rng.randint(max(1, round(0.25 * len(q))), max(1, round(0.75 * len(q))))
            texts = [filler.text(), filler.text(60, 120) + q[:cut], q[cut:] + filler.text(60, 120), filler.text()]
            at = [1, 2]
            info["cut"], info["leak_text"] = cut, f"{q[:cut]} | {q[cut:]}"
        elif kind == "qa_pair":
            faq = f"问：{q}\n答：{it['answer']}\n"
            texts, at = [filler.text(), filler.around(faq), filler.text()], [1]
            info["leak_text"] = faq
        else:
            answer = long_answer(it["evidence"])
            it["answer"] = answer
            texts, at = [filler.text(), filler.around(answer), filler.text()], [1]
            info["leak_text"] = answer
        info["chunk_ids"] = [f"{doc_id}#{k}" for k in at]
        leak_info[it["id"]] = info
        leak_docs.append((doc_id, texts))

    # chunks: paragraphs, then filler documents with leak documents shuffled in
    chunks = [make_chunk(f"{p['id']}#0", p["id"], p["context"], 0, len(p["context"])) for p in paragraphs]
    leak_chunk_count = sum(len(t) for _, t in leak_docs)
    n_filler = TARGET_CHUNKS - len(chunks) - leak_chunk_count
    filler_docs = []
    for d in range((n_filler + FILLER_PER_DOC - 1) // FILLER_PER_DOC):
        size = min(FILLER_PER_DOC, n_filler - d * FILLER_PER_DOC)
        filler_docs.append((f"filler-{d:05d}", [filler.text() for _ in range(size)]))
    slots = sorted(rng.sample(range(len(filler_docs) + len(leak_docs)), len(leak_docs)))
    docs, leak_iter, filler_iter = [], iter(leak_docs), iter(filler_docs)
    slot_set = set(slots)
    for s in range(len(filler_docs) + len(leak_docs)):
        docs.append(next(leak_iter) if s in slot_set else next(filler_iter))
    for doc_id, texts in docs:
        offset = 0
        for k, text in enumerate(texts):
            chunks.append(make_chunk(f"{doc_id}#{k}", doc_id, text, offset, offset + len(text)))
            offset += len(text)
    counts["chunks"] = len(chunks)
    counts["paragraph_chunks"] = len(paragraphs)
    counts["filler_chunks"] = n_filler
    counts["filler_documents"] = len(filler_docs)
    counts["leak_chunks"] = leak_chunk_count
    counts["leak_documents"] = len(leak_docs)
    counts["mean_chunk_chars"] = round(sum(len(c.text) for c in chunks) / len(chunks), 1)
    return {"items": items, "chunks": chunks, "leaks": leak_info, "counts": dict(counts), "per_kind": per_kind}


def eval_items(raw: list[dict], snapshot_id: str) -> list[EvalItem]:
    """Return EvalItems for the benchmark's items, evidence mapped to the paragraph chunks of `snapshot_id`."""
    return [EvalItem(id=r["id"], question=r["question"], reference_answer=r["answer"], language="zh",
                     source="human", kb_snapshot=snapshot_id,
                     evidence=[Evidence(evidence_id="e1", doc_id=r["pid"], start=r["ev_start"], end=r["ev_end"],
                                        text=r["evidence"], chunk_ids=[f"{r['pid']}#0"], kb_snapshot=snapshot_id)])
            for r in raw]
