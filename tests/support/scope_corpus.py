"""Scoped knowledge bases built from the bundled real corpora: two tenants sharing one SciFact index,
and CMRC2018 paragraphs as yearly policies whose 2026 copy differs from the 2025 one only in its numbers.

Each builder writes the documents (JSONL with scope in `metadata`) and the questions (JSONL with the asker
and the moment) into a folder, and returns what the tests need to compute the truth on their own: which
tenant holds each document, which version each question is about.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from curate.text.sentences import sentence_spans

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TENANTS = ("tenant-a", "tenant-b")
_NUMBER = re.compile(r"\d+")


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def _first_sentence(text: str) -> str:
    spans = sentence_spans(text)
    start, end = spans[0] if spans else (0, len(text))
    return text[start:end].strip()


@dataclass
class TenantCorpus:
    """Two tenants' abstracts in one index, and each tenant's own questions."""

    documents: Path
    questions: Path
    tenant_of: dict[str, str] = field(default_factory=dict)
    """doc_id -> the tenant whose group may see it."""
    asker_of: dict[str, str] = field(default_factory=dict)
    """item id -> the tenant asking it."""


def two_tenants(folder: Path, questions: int = 40) -> TenantCorpus:
    """Return SciFact's abstracts split between two tenants (every other cited abstract to each, the
    uncited ones alternately too), and up to `questions` claims, each asked by the tenant holding its
    cited abstract, its evidence that abstract's first sentence."""
    folder.mkdir(parents=True, exist_ok=True)
    corpus = [json.loads(line) for line in (EXAMPLES / "scifact" / "corpus.jsonl").read_text("utf-8").splitlines()]
    claims = {row["_id"]: row["text"] for row in
              map(json.loads, (EXAMPLES / "scifact" / "queries.jsonl").read_text("utf-8").splitlines())}
    qrels: dict[str, list[str]] = {}
    for line in (EXAMPLES / "scifact" / "qrels" / "test.tsv").read_text("utf-8").splitlines()[1:]:
        query, doc, _ = line.split("\t")
        qrels.setdefault(query, []).append(doc)
    texts = {str(row["_id"]): row for row in corpus}
    tenant_of = {doc: TENANTS[n % 2] for n, doc in enumerate(sorted(texts))}
    documents = [{"doc_id": doc, "title": texts[doc].get("title") or None, "text": texts[doc]["text"],
                  "metadata": {"groups": [tenant_of[doc]]}} for doc in sorted(texts)]
    rows, asker_of = [], {}
    for query in sorted(qrels, key=int):
        docs = [d for d in qrels[query] if d in texts]
        if len(docs) != 1 or query not in claims:
            continue   # one cited abstract: one tenant holds the whole answer
        item_id = f"claim-{query}"
        asker_of[item_id] = tenant_of[docs[0]]
        rows.append({"id": item_id, "question": claims[query], "evidence": [_first_sentence(texts[docs[0]]["text"])],
                     "asker_groups": [asker_of[item_id]]})
        if len(rows) == questions:
            break
    return TenantCorpus(_jsonl(folder / "abstracts.jsonl", documents), _jsonl(folder / "claims.jsonl", rows),
                        tenant_of, asker_of)


def next_year(text: str) -> str:
    """Return `text` with every number one larger: the 2026 copy of a 2025 policy (years and amounts).

    >>> next_year("2025 年起每晚 150 元")
    '2026 年起每晚 151 元'
    """
    return _NUMBER.sub(lambda m: str(int(m.group()) + 1), text)


@dataclass
class PolicyCorpus:
    """Paragraphs in a 2025 and a 2026 version (the later superseding the earlier), and questions asked
    at a moment in one year or the other, each quoting the sentence of that year's version."""

    documents: Path
    questions: Path
    version_of: dict[str, str] = field(default_factory=dict)
    """item id -> the version ("2025" or "2026") whose text it quotes."""
    pairs: list[tuple[str, str]] = field(default_factory=list)
    """(doc_id of 2025, doc_id of 2026) for every paragraph."""


def yearly_policies(folder: Path, paragraphs: int = 12) -> PolicyCorpus:
    """Return CMRC2018 paragraphs whose answer sentence holds a number, each as a 2025 document and a 2026
    document equal but for its numbers (`next_year`), and each paragraph's question twice: asked on a day
    of 2025 quoting the 2025 sentence, and asked at version 2026 quoting the 2026 one."""
    folder.mkdir(parents=True, exist_ok=True)
    data = json.loads((EXAMPLES / "cmrc2018" / "cmrc2018_sample.json").read_text("utf-8"))["data"]
    documents, rows, version_of, pairs = [], [], {}, []
    for article in data:
        for paragraph in article["paragraphs"]:
            if len(pairs) == paragraphs:
                break
            text = paragraph["context"]
            found = _numbered_question(text, paragraph["qas"])
            if found is None:
                continue
            question, sentence = found
            old, new = f"{paragraph['id']}-2025", f"{paragraph['id']}-2026"
            pairs.append((old, new))
            documents += [
                {"doc_id": old, "text": text, "metadata": {"version": "2025", "valid_from": "2025-01-01",
                                                           "valid_to": "2025-12-31"}},
                {"doc_id": new, "text": next_year(text), "metadata": {"version": "2026", "valid_from": "2026-01-01",
                                                                      "supersedes": [old]}}]
            for version, moment, quote in (("2025", "2025-07-01", sentence), ("2026", "2026", next_year(sentence))):
                item_id = f"{paragraph['id']}-{version}"
                version_of[item_id] = version
                rows.append({"id": item_id, "question": question, "evidence": [quote], "as_of": moment})
    return PolicyCorpus(_jsonl(folder / "policies.jsonl", documents), _jsonl(folder / "questions.jsonl", rows),
                        version_of, pairs)


def _numbered_question(text: str, questions: list[dict]) -> tuple[str, str] | None:
    """Return the first question whose answer holds a number, and the sentence of `text` holding it."""
    spans = sentence_spans(text)
    for qa in questions:
        answer = qa["answers"][0]
        if not _NUMBER.search(answer["text"]):
            continue
        start = answer["answer_start"]
        for begin, end in spans:
            if begin <= start < end and text[begin:end].strip():
                return qa["question"], text[begin:end].strip()
    return None
