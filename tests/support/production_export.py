"""A production export for `curate kb import`: chunks of many documents listed in a shuffled order, from the
bundled CMRC2018 sample's sentences (tests of the import over an engine, and its benchmark)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from tests.support.many_documents import _sentences


def production_file(path: Path, documents: int = 600, seed: int = 29) -> Path:
    """Write a production export: documents of 1 to 9 chunks (Chinese, some English) listed in a shuffled
    order, so a document's chunks sit in many batches; offsets on most chunks, none on some documents' (their
    listing orders them); a few chunks scoped (a group, a version, one superseding a document and one an id the
    KB lacks); the same text under two documents that differ in a year."""
    rng = random.Random(seed)
    sentences = _sentences()
    rows = []
    for n in range(documents):
        at, offsets = 0, n % 5 != 0
        for k in range(rng.randint(1, 9)):
            text = "".join(rng.choice(sentences) for _ in range(rng.randint(1, 3)))
            if n % 11 == 0:
                text = f"Rule {k}: the {2025 + n % 2} allowance is {rng.randint(1, 99)} EUR. " + text
            row: dict = {"chunk_id": f"c{n}-{k}", "doc_id": f"doc{n}", "text": text}
            if offsets:
                row |= {"start": at, "end": at + len(text)}
            if n % 13 == 0:
                row["metadata"] = {"groups": ["hr"], "version": "2026", "title": f"标题 {n}"}
            if n == 26 and k == 0:
                row["metadata"] = {"supersedes": ["doc13", "gone"]}
            rows.append(row)
            at += len(text) + 1
    rng.shuffle(rows)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path
