"""A KB of many chunks with planted leaks, built from the bundled CMRC2018 sample (300 Chinese paragraphs,
1,042 questions) without ../shared: each paragraph a chunk of its own document, then documents of ten
chunks recombined from the paragraphs' sentences (so a phrase stands in hundreds of chunks, as in a real
enterprise KB), with a question copied, a question and its answer, or a long answer written into some.
Deterministic from the seed."""

from __future__ import annotations

import json
import random

from curate.kb import sha256_text
from curate.records import Chunk, EvalItem, Evidence
from curate.text.sentences import sentence_spans

from tests.support import EXAMPLES

SAMPLE = EXAMPLES / "cmrc2018" / "cmrc2018_sample.json"


def _chunk(chunk_id: str, doc_id: str, text: str, start: int) -> Chunk:
    return Chunk(chunk_id=chunk_id, doc_id=doc_id, text=text, start=start, end=start + len(text),
                 text_sha256=sha256_text(text))


def many_chunks(count: int, seed: int = 29) -> tuple[list[Chunk], list[EvalItem], set[str]]:
    """Return `count` chunks, the sample's questions as items (their paragraph as evidence) and the ids of the
    items leaked: 1 in 20, each into a filler chunk, as the question alone or as "问：…答：…"."""
    rng = random.Random(seed)
    data = json.loads(SAMPLE.read_text(encoding="utf-8"))["data"]
    paragraphs = [p for article in data for p in article["paragraphs"]]
    chunks = [_chunk(f"p{n}#0", f"p{n}", p["context"], 0) for n, p in enumerate(paragraphs)]
    sentences = [p["context"][a:b] for p in paragraphs for a, b in sentence_spans(p["context"])]
    items, planted, leaked = [], {}, set()
    for n, paragraph in enumerate(paragraphs):
        for k, qa in enumerate(paragraph["qas"]):
            item_id = f"q{n}-{k}"
            answer = qa["answers"][0]["text"]
            items.append(EvalItem(id=item_id, question=qa["question"], reference_answer=answer, language="zh",
                                  source="human", split="test", evidence=[Evidence(evidence_id="e1", chunk_ids=[f"p{n}#0"], doc_id=f"p{n}", start=0,
                                                                                    end=len(paragraph["context"]),
                                                                                    text=paragraph["context"])]))
            if len(items) % 20 == 0:
                leaked.add(item_id)
                planted[len(chunks) + rng.randrange(count - len(chunks))] = (
                    qa["question"] if len(items) % 40 else f"问：{qa['question']}答：{answer}。")
    doc = 0
    while len(chunks) < count:
        at = 0
        for k in range(min(10, count - len(chunks))):
            text = "".join(rng.choice(sentences) for _ in range(rng.randint(1, 3)))
            if len(chunks) in planted:
                text = text + planted[len(chunks)]
            chunks.append(_chunk(f"f{doc}#{k}", f"f{doc}", text, at))
            at += len(text)
        doc += 1
    return chunks, items, leaked
