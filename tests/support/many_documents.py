"""Documents for a large ingest, written to a folder: a .jsonl file of documents whose paragraphs recombine
the sentences of the bundled CMRC2018 sample (some scoped: an access group, a version, one superseding another
and an id the KB lacks), one document of `long` paragraphs (longer than a shard: the shards cut it), and a few
Markdown files with front matter and .txt files. Deterministic from the seed; about one chunk a paragraph at
a chunk size of 200."""

from __future__ import annotations

import json
import random
from pathlib import Path

from curate.text.sentences import sentence_spans

from tests.support import EXAMPLES

SAMPLE = EXAMPLES / "cmrc2018" / "cmrc2018_sample.json"


def _sentences() -> list[str]:
    data = json.loads(SAMPLE.read_text(encoding="utf-8"))["data"]
    paragraphs = [p["context"] for article in data for p in article["paragraphs"]]
    return [p[a:b] for p in paragraphs for a, b in sentence_spans(p)]


def _text(rng: random.Random, sentences: list[str], paragraphs: int) -> str:
    return "\n\n".join("".join(rng.choice(sentences) for _ in range(rng.randint(1, 3))) for _ in range(paragraphs))


def many_documents(folder: Path, documents: int, paragraphs: int = 10, long: int = 0, seed: int = 29) -> Path:
    """Write `documents` documents of about `paragraphs` paragraphs each (and one of `long` paragraphs when
    given) under `folder`; return the folder."""
    rng = random.Random(seed)
    sentences = _sentences()
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "docs.jsonl", "w", encoding="utf-8") as out:
        for n in range(documents):
            record: dict = {"doc_id": f"d{n}", "text": _text(rng, sentences, rng.randint(1, 2 * paragraphs - 1)),
                            "metadata": {"n": n}}
            if n % 7 == 0:
                record["metadata"]["groups"] = ["hr"] if n % 2 else ["hr", "finance"]
            if n % 11 == 0:
                record["version"] = str(2020 + n % 5)
            if n == 22:
                record["supersedes"] = ["d11", "gone"]
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            if long and n == documents // 2:
                record = {"doc_id": "long", "text": _text(rng, sentences, long)}
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
    for n in range(5):
        (folder / "pages").mkdir(exist_ok=True)
        (folder / "pages" / f"page{n}.md").write_text(
            f"---\ntitle: 第{n}页\ngroups: [staff]\n---\n# 第{n}页\n\n" + _text(rng, sentences, 30),
            encoding="utf-8")
        (folder / "pages" / f"note{n}.txt").write_text(_text(rng, sentences, 5), encoding="utf-8")
    return folder
