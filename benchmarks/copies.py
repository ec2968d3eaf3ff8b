"""Duplicate chunks (`check-dups --kb`) on real pages: overlapping production windows must stay neighbours, true
copies must be joined. Precision and recall of the joined pairs, for the code on the path and, with --before DIR,
for the curate package in DIR (e.g. a checkout of main), on the same chunks.

Run: `.venv/bin/python benchmarks/copies.py [--before DIR] [--data DIR]` (default ../shared/data beside the repo;
without CMRC 2018 and SciFact there it says so and exits 0); writes benchmarks/results/copies.json.

Pages: the first PAGES paragraphs of CMRC 2018 dev (Chinese, CC BY-SA 4.0) and abstracts of SciFact (English) with
at least 8 sentences, taken in file order. Half of each language are cut into production windows of WINDOW
sentences shifted by one sentence (each pair of neighbours holds a sentence the other lacks: never copies). Each of
the other half is a chunk of its own plus one derived chunk in another document, by turns:
- copies (must be joined): `reformatted` (segmentation spaces between Chinese characters or doubled spaces, bold,
  line breaks), `edited` (one word changed, no number), `footer` (a footer appended that every footer copy shares,
  so at least 3 documents hold it: boilerplate);
- not copies (must not be joined): `own_text` (a sentence of another page appended: the longer adds text of its
  own), `number` (one number changed: the existing rule withholds it).
A joined pair is every pair of chunks in one group. Precision = joined pairs labelled copies / joined pairs;
recall = copy pairs joined / copy pairs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from itertools import combinations
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "copies.json"
DEFAULT_DATA = HERE.parent.parent / "shared" / "data"
PAGES = 80          # pages per language
WINDOW = 6          # sentences per production window
KINDS = ("reformatted", "edited", "footer", "own_text", "number")
COPY_KINDS = {"reformatted", "edited", "footer"}
FOOTER = {"zh": "——本文内容由编辑部整理，转载请注明出处。更多资讯请关注我们的官方网站。",
          "en": "This article is provided for information only. Copyright the publisher; all rights reserved."}
_SENTENCE = re.compile(r"[^。！？!?]+[。！？!?]|[^.!?]+[.!?](?=\s|$)")


def sentences(text: str) -> list[str]:
    return [s for s in (m.group().strip() for m in _SENTENCE.finditer(text)) if s]


def pages(data: Path) -> dict[str, list[tuple[str, str]]]:
    """Return (id, text) pages per language, each of at least 8 sentences."""
    cmrc = json.loads((data / "cmrc2018" / "cmrc2018_dev.json").read_text(encoding="utf-8"))
    zh = [(p["id"], p["context"]) for a in cmrc["data"] for p in a["paragraphs"] if len(sentences(p["context"])) >= 8]
    en = []
    for line in (data / "scifact" / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        if len(sentences(doc["text"])) >= 8:
            en.append((doc["_id"], doc["text"]))
        if len(en) >= PAGES:
            break
    return {"zh": zh[:PAGES], "en": en[:PAGES]}


def derive(kind: str, lang: str, text: str, other: str) -> str:
    """Return the derived chunk of one kind (see the module docstring)."""
    if kind == "reformatted":
        spaced = "".join(c + " " if "\u4e00" <= c <= "\u9fff" else c for c in text) if lang == "zh" \
            else text.replace(" ", "  ")
        return "**" + spaced.replace("。", "。\n").replace(". ", ".\n") + "**"
    if kind == "edited":
        # a word without a number, a numeral or a negation: changing one of those is the `number` kind
        words = [w for w in re.findall(r"[\u4e00-\u9fff]{2}" if lang == "zh" else r"\b[a-z]{5,}\b", text)
                 if not re.search(r"[零〇一二两三四五六七八九十百千万亿不没無无非未别勿莫否]|never|nothing|without", w)]
        word = words[len(words) // 2]
        return text.replace(word, "某某" if lang == "zh" else "thing", 1)
    if kind == "footer":
        return text + ("\n\n" if lang == "en" else "") + FOOTER[lang]
    if kind == "own_text":
        return text + (" " if lang == "en" else "") + sentences(other)[1]
    number = re.search(r"\d+", text)
    if number is None:
        return text + (" (2019)" if lang == "en" else "（2019年）")
    return text[:number.start()] + str(int(number.group()) + 1) + text[number.end():]


def chunks_and_labels(data: Path) -> tuple[list[dict], dict[frozenset, str]]:
    """Return the production chunks and the labelled pairs: {pair of chunk ids: kind}."""
    rows, labels = [], {}
    for lang, found in pages(data).items():
        half = len(found) // 2
        for doc_id, text in found[:half]:
            parts = sentences(text)
            ids = []
            for k in range(len(parts) - WINDOW + 1):
                joined = ("" if lang == "zh" else " ").join(parts[k:k + WINDOW])
                ids.append(f"win-{doc_id}#{k}")
                rows.append({"chunk_id": ids[-1], "doc_id": f"win-{doc_id}", "text": joined})
            for a, b in zip(ids, ids[1:]):
                labels[frozenset((a, b))] = "window_neighbours"
        for n, (doc_id, text) in enumerate(found[half:]):
            kind = KINDS[n % len(KINDS)]
            other = found[half + (n + 1) % (len(found) - half)][1]
            rows.append({"chunk_id": f"page-{doc_id}#0", "doc_id": f"page-{doc_id}", "text": text})
            rows.append({"chunk_id": f"{kind}-{doc_id}#0", "doc_id": f"{kind}-{doc_id}",
                         "text": derive(kind, lang, text, other)})
            labels[frozenset((f"page-{doc_id}#0", f"{kind}-{doc_id}#0"))] = kind
    return rows, labels


def measure(data: Path) -> dict:
    """Return the joined pairs' precision and recall for the curate on the path."""
    import curate
    from curate.checks.copies import chunk_groups
    from curate.index.kb_index import KBIndex
    from curate.kb.store import import_chunks
    from curate.workspace import init_workspace
    rows, labels = chunks_and_labels(data)
    with tempfile.TemporaryDirectory() as tmp:
        workspace = init_workspace(Path(tmp) / "ws")
        path = Path(tmp) / "chunks.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        manifest, _ = import_chunks(workspace, path, name="pages")
        groups, withheld = chunk_groups(KBIndex(workspace, manifest.snapshot_id))
    joined = {frozenset(p) for g in groups for p in combinations(g.chunks, 2)}
    copies = {p for p, kind in labels.items() if kind in COPY_KINDS}
    true = joined & copies
    by_kind = Counter(labels.get(p, "unlabelled") for p in joined)
    totals = Counter(labels.values())
    return {"code": str(Path(curate.__file__).parent.parent), "chunks": len(rows), "groups": len(groups),
            "joined_pairs": len(joined), "precision": round(len(true) / len(joined), 3) if joined else None,
            "recall": round(len(true) / len(copies), 3), "copy_pairs": len(copies),
            "joined_by_kind": {k: f"{by_kind.get(k, 0)}/{totals[k]}" for k in sorted(totals)},
            "joined_unlabelled": by_kind.get("unlabelled", 0),
            "withheld_by_why": dict(Counter(getattr(w, "why", "differs") for w in withheld))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="DIR", help="also measure the curate package in DIR (e.g. main)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder holding cmrc2018/ and scifact/")
    parser.add_argument("--emit-json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not ((args.data / "cmrc2018" / "cmrc2018_dev.json").is_file() and (args.data / "scifact" / "corpus.jsonl").is_file()):
        print(f"No CMRC 2018 and SciFact data in {args.data}; nothing to measure (pass --data DIR).")
        return 0
    if args.emit_json:
        print(json.dumps(measure(args.data)))
        return 0
    from common import machine, print_table, save_json
    results = {}
    if args.before:
        env = {**os.environ, "PYTHONPATH": str(Path(args.before).resolve())}
        done = subprocess.run([sys.executable, __file__, "--emit-json", "--data", str(args.data)], env=env,
                              capture_output=True, text=True)
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
            return 1
        results["before"] = json.loads(done.stdout.strip().splitlines()[-1])
    results["after"] = measure(args.data)
    kinds = sorted(results["after"]["joined_by_kind"])
    print_table(("code", "chunks", "joined pairs", "precision", "recall", *(f"joined {k}" for k in kinds),
                 "withheld"),
                [(f"{name} ({r['code']})", r["chunks"], r["joined_pairs"], r["precision"],
                  f"{r['recall']} of {r['copy_pairs']}", *(r["joined_by_kind"].get(k, "") for k in kinds),
                  ", ".join(f"{k} {v}" for k, v in r["withheld_by_why"].items())) for name, r in results.items()])
    save_json(RESULTS, {"benchmark": "copies", "machine": machine(), "pages_per_language": PAGES, "window": WINDOW,
                        "data": str(args.data), **results})
    print(f"wrote {RESULTS.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
