"""Retrieval-metric speed: evalrun.metrics against ranx, same synthetic run, same process, values checked.

Run: `.venv/bin/python benchmarks/retrieval_metrics.py` (options: --items, --candidates, --seed, --data);
writes benchmarks/results/retrieval_metrics.json.

Synthetic run (deterministic, --seed): --items queries (100,000) with --candidates distinct retrieved ids
each (100), every query answerable: 1-4 relevant groups graded 1 or 2, each placed among the candidates
at a random rank with probability 0.7 (else never retrieved), and a grade-0 judgement in 30% of queries.
All five metrics (hit_rate, recall, precision, mrr, ndcg) at K in 1, 3, 5, 10, 100: 25 values a query.

Timed, best of 3 with time.perf_counter in one process, inputs already in memory as Python dicts:
- ranx (warm: one `evaluate` on 1,000 queries first compiles its numba code): `evaluate` on the dicts
  (it converts them itself), and `Qrels(dict)` + `Run(dict)` then `evaluate` on those objects;
  ranx runs on every CPU (threads=cpu_count), scores kept out of the Run (save_results_in_run=False).
- ours: `prepare` (dicts -> arrays) then `metric_arrays` (numpy, one thread); and `retrieval_metrics`,
  which also builds the {query: {metric: value}} dicts; and `prepare` with a groups mapping per query.
Not timed: generating the data, and the run as ranx's {doc id: score} dicts (scores = rank order).
The speed-up is ranx's faster path from dicts over ours from dicts; every value is compared (max |diff|).

With ../shared/data/scifact (or --data DIR holding scifact/): BM25 (bm25s, curate's tokenizer) over the
5,183 abstracts, top 100 for each of the 300 test queries; our values against ranx and pytrec_eval.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import numpy as np
import ranx
from common import machine, print_table, save_json

from evalrun.metrics import metric_arrays, prepare, retrieval_metrics

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results" / "retrieval_metrics.json"
DEFAULT_DATA = (REPO.parent / "shared" / "data",)
KS = (1, 3, 5, 10, 100)
NAMES = ("hit_rate", "recall", "precision", "mrr", "ndcg")
METRICS = [f"{name}@{k}" for name in NAMES for k in KS]
REPEATS = 3
TARGET_SPEEDUP = 3.0
ID_SPACE = 50_000  # each rank column draws from its own block of ids, so a list never repeats an id


def synthetic(items: int, candidates: int, seed: int) -> tuple[dict, dict, dict]:
    """Return (qrels, run, groups) as fresh Python strings, as if parsed from a release and traces."""
    rng = np.random.default_rng(seed)
    numbers = rng.integers(0, ID_SPACE, size=(items, candidates)) + np.arange(candidates) * ID_SPACE
    picks = random.Random(seed)
    qrels, run, groups = {}, {}, {}
    for row, ids in enumerate(numbers.tolist()):
        query_id = f"q{row}"
        run[query_id] = list(map("doc{}".format, ids))
        judged = {}
        for _ in range(picks.randint(1, 4)):
            found = picks.random() < 0.7
            doc = ids[picks.randrange(candidates)] if found else candidates * ID_SPACE + picks.randrange(10**6)
            judged[f"doc{doc}"] = picks.choice((1, 2))
        if picks.random() < 0.3:
            judged[f"doc{candidates * ID_SPACE + picks.randrange(10**6)}"] = 0
        qrels[query_id] = judged
        # What evalrun passes: each relevant group's chunks, here the group itself and a copy that the
        # run never holds, so values stay those of the plain run while the mapping is paid for.
        groups[query_id] = {chunk: group for group in judged for chunk in (group, f"{group}#copy")}
    return qrels, run, groups


def best_of(function, *args, **kwargs):
    """Return (fastest seconds over REPEATS runs, result of the last run)."""
    best, result = float("inf"), None
    for _ in range(REPEATS):
        result = None
        gc.collect()
        started = time.perf_counter()
        result = function(*args, **kwargs)
        best = min(best, time.perf_counter() - started)
    return best, result


def ranx_on_dicts(qrels: dict, scored_run: dict, threads: int) -> dict[str, np.ndarray]:
    """Return ranx's per-query values, ranx converting the dicts itself (rows in the dicts' order)."""
    return ranx.evaluate(qrels, scored_run, METRICS, return_mean=False, threads=threads)


def ranx_objects(qrels: dict, scored_run: dict) -> tuple[ranx.Qrels, ranx.Run]:
    """Return ranx's Qrels and Run built from the dicts."""
    return ranx.Qrels(qrels), ranx.Run(scored_run)


def ranx_on_objects(qrels: ranx.Qrels, run: ranx.Run, threads: int) -> dict[str, np.ndarray]:
    """Return ranx's per-query values on prepared objects (rows in the objects' sorted query order)."""
    return ranx.evaluate(qrels, run, METRICS, return_mean=False, threads=threads, save_results_in_run=False)


def ours(qrels: dict, run: dict) -> dict[str, np.ndarray]:
    """Return our per-query values from the dicts: prepare, then every metric on the arrays."""
    return metric_arrays(prepare(qrels, run, max(KS)), KS)


def max_diff(ours_values: dict[str, np.ndarray], reference: dict[str, np.ndarray]) -> dict[str, float]:
    """Return {metric: largest |ours - reference| over the queries}."""
    return {m: float(np.max(np.abs(ours_values[m] - np.asarray(reference[m], dtype=np.float64)), initial=0.0))
            for m in METRICS}


def synthetic_section(items: int, candidates: int, seed: int, threads: int) -> dict:
    """Time ranx and ours on the synthetic run; check every value; return the section of the results."""
    started = time.perf_counter()
    qrels, run, groups = synthetic(items, candidates, seed)
    scored_run = {q: {doc: float(candidates - rank) for rank, doc in enumerate(ids)} for q, ids in run.items()}
    print(f"synthetic: {items:,} queries x {candidates} candidates, seed {seed} "
          f"(generated in {time.perf_counter() - started:.1f} s, not timed)")

    warm = list(qrels)[:1000]
    ranx.evaluate({q: qrels[q] for q in warm}, {q: scored_run[q] for q in warm}, METRICS, threads=threads)
    ranx_dicts_s, ranx_dict_values = best_of(ranx_on_dicts, qrels, scored_run, threads)
    ranx_build_s, (ranx_qrels, ranx_run) = best_of(ranx_objects, qrels, scored_run)
    ranx_eval_s, ranx_object_values = best_of(ranx_on_objects, ranx_qrels, ranx_run, threads)
    object_order = {q: i for i, q in enumerate(ranx_run.keys())}
    del ranx_qrels, ranx_run, scored_run
    gc.collect()

    prepare_s, arrays = best_of(prepare, qrels, run, max(KS))
    arrays_s, our_values = best_of(metric_arrays, arrays, KS)
    total_s, _ = best_of(ours, qrels, run)
    dicts_s, _ = best_of(retrieval_metrics, qrels, run, KS)
    groups_s, grouped = best_of(prepare, qrels, run, max(KS), groups)

    assert arrays.query_ids == list(qrels), "ours scores every synthetic query, in order"
    reorder = np.asarray([object_order[q] for q in arrays.query_ids])
    diffs = {"ranx evaluate on dicts": max_diff(our_values, ranx_dict_values),
             "ranx evaluate on Qrels/Run": max_diff(our_values, {m: np.asarray(v)[reorder]
                                                                 for m, v in ranx_object_values.items()}),
             "ours with groups": max_diff(metric_arrays(grouped, KS), our_values)}
    ranx_best = min(ranx_dicts_s, ranx_build_s + ranx_eval_s)
    speedup = ranx_best / total_s
    rows = [
        {"tool": "ranx", "path": "evaluate(dicts): conversion inside", "seconds": ranx_dicts_s},
        {"tool": "ranx", "path": "Qrels(dict) + Run(dict)", "seconds": ranx_build_s},
        {"tool": "ranx", "path": "evaluate(Qrels, Run), warm", "seconds": ranx_eval_s},
        {"tool": "ranx", "path": "Qrels/Run + evaluate", "seconds": ranx_build_s + ranx_eval_s},
        {"tool": "ours", "path": "prepare(dicts)", "seconds": prepare_s},
        {"tool": "ours", "path": "metric_arrays(prepared)", "seconds": arrays_s},
        {"tool": "ours", "path": "prepare + metric_arrays", "seconds": total_s},
        {"tool": "ours", "path": "retrieval_metrics -> per-query dicts", "seconds": dicts_s},
        {"tool": "ours", "path": "prepare(dicts, groups)", "seconds": groups_s},
    ]
    for r in rows:
        r["queries_per_s"] = items / r["seconds"]
    print_rows(rows)
    worst = max(max(d.values()) for d in diffs.values())
    print(f"values: max |ours - reference| over {len(METRICS)} metrics x {items:,} queries: "
          + ", ".join(f"{label} {max(d.values()):.1e}" for label, d in diffs.items()))
    print(f"speed-up, from dicts: ranx's faster path {ranx_best:.3f} s / ours {total_s:.3f} s = {speedup:.1f}x "
          f"(target >= {TARGET_SPEEDUP:.0f}x: {'MET' if speedup >= TARGET_SPEEDUP else 'NOT MET'}); "
          f"on prepared data: {ranx_eval_s:.3f} s / {arrays_s:.3f} s = {ranx_eval_s / arrays_s:.1f}x")
    return {"items": items, "candidates": candidates, "seed": seed, "ranx_threads": threads, "rows": rows,
            "max_abs_diff": diffs, "max_abs_diff_overall": worst, "values_identical_1e-9": worst <= 1e-9,
            "speedup_from_dicts": speedup, "speedup_prepared": ranx_eval_s / arrays_s,
            "target": {"speedup_from_dicts": TARGET_SPEEDUP, "met": speedup >= TARGET_SPEEDUP}}


def find_data(given: str | None) -> Path | None:
    """Return the data folder: --data if given, else the first default that exists."""
    if given:
        return Path(given) if Path(given).is_dir() else None
    return next((path for path in DEFAULT_DATA if path.is_dir()), None)


def scifact_section(folder: Path, threads: int) -> dict:
    """Score BM25 over the whole SciFact test set with ours, ranx and pytrec_eval; return the section."""
    import pytrec_eval

    from curate.index.bm25 import BM25
    with (folder / "corpus.jsonl").open(encoding="utf-8") as handle:
        corpus = {(r := json.loads(line))["_id"]: f"{r['title']} {r['text']}" for line in handle if line.strip()}
    with (folder / "queries.jsonl").open(encoding="utf-8") as handle:
        queries = {(r := json.loads(line))["_id"]: r["text"] for line in handle if line.strip()}
    qrels: dict[str, dict[str, int]] = {}
    for line in (folder / "qrels_test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        query_id, doc_id, grade = line.split("\t")
        qrels.setdefault(query_id, {})[doc_id] = int(grade)
    doc_ids = list(corpus)
    positions, _ = BM25.build(list(corpus.values())).search([queries[q] for q in qrels], k=100)
    run = {q: [doc_ids[p] for p in row] for q, row in zip(qrels, positions.tolist())}
    scored_run = {q: {d: float(len(ids) - rank) for rank, d in enumerate(ids)} for q, ids in run.items()}

    ours_s, scores = best_of(retrieval_metrics, qrels, run, KS)
    reference_run = ranx.Run(scored_run)
    ranx.evaluate(ranx.Qrels(qrels), reference_run, METRICS, threads=threads)
    by_ranx = {q: {m: float(reference_run.scores[m][q]) for m in METRICS} for q in run}
    cutoffs = ",".join(map(str, KS))
    measured = pytrec_eval.RelevanceEvaluator(
        qrels, {f"success.{cutoffs}", f"recall.{cutoffs}", f"P.{cutoffs}", f"ndcg_cut.{cutoffs}"}).evaluate(scored_run)
    by_trec = {q: {} for q in run}
    for k in KS:
        # trec_eval's recip_rank has no cutoff: it is MRR@K on the run cut to K.
        cut = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(
            {q: {d: float(k - rank) for rank, d in enumerate(ids[:k])} for q, ids in run.items()})
        for q in run:
            by_trec[q] |= {f"hit_rate@{k}": measured[q][f"success_{k}"], f"recall@{k}": measured[q][f"recall_{k}"],
                           f"precision@{k}": measured[q][f"P_{k}"], f"ndcg@{k}": measured[q][f"ndcg_cut_{k}"],
                           f"mrr@{k}": cut[q]["recip_rank"]}
    diffs = {label: {m: max(abs(scores[q][m] - reference[q][m]) for q in run) for m in METRICS}
             for label, reference in (("ranx", by_ranx), ("pytrec_eval", by_trec))}
    means = {m: float(np.mean([scores[q][m] for q in scores])) for m in METRICS}
    worst = max(max(d.values()) for d in diffs.values())
    print(f"SciFact test: {len(scores)} queries, BM25 top 100 over {len(corpus):,} abstracts; ours in {ours_s:.3f} s; "
          f"max |diff| ranx {max(diffs['ranx'].values()):.1e}, pytrec_eval {max(diffs['pytrec_eval'].values()):.1e}; "
          f"nDCG@10 {means['ndcg@10']:.4f}, recall@100 {means['recall@100']:.4f}")
    return {"data": str(folder), "queries": len(scores), "documents": len(corpus), "retriever":
            "bm25s BM25 (defaults), curate.index.bm25.tokenize, title + text, top 100", "ours_s": ours_s,
            "max_abs_diff": diffs, "max_abs_diff_overall": worst, "values_identical_1e-9": worst <= 1e-9,
            "means": means}


def print_rows(rows: list[dict]) -> None:
    """Print the timing rows as a table."""
    print_table(("tool", "path", "seconds", "queries/s"),
                [(r["tool"], r["path"], f"{r['seconds']:.3f}", f"{r['queries_per_s']:,.0f}") for r in rows], left=2)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the tables and write benchmarks/results/retrieval_metrics.json."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000, help="synthetic queries (default 100,000)")
    parser.add_argument("--candidates", type=int, default=100, help="retrieved ids per query (default 100)")
    parser.add_argument("--seed", type=int, default=6, help="seed of the synthetic run (default 6)")
    parser.add_argument("--data", help="folder holding scifact/ (default: ../shared/data beside the repo)")
    args = parser.parse_args(argv)
    if args.candidates < max(KS):
        parser.error(f"--candidates must be at least {max(KS)}")
    threads = os.cpu_count() or 1
    print(f"cpus: {threads}  python {sys.version.split()[0]}  numpy {np.__version__}  "
          f"ranx {metadata.version('ranx')}  best of {REPEATS}, one process")
    synthetic_results = synthetic_section(args.items, args.candidates, args.seed, threads)
    data = find_data(args.data)
    scifact = data / "scifact" if data else None
    if scifact and (scifact / "qrels_test.tsv").is_file():
        scifact_results = scifact_section(scifact, threads)
    else:
        scifact_results = None
        print(f"note: no scifact/qrels_test.tsv under {args.data or DEFAULT_DATA[0]}; SciFact part skipped")
    save_json(RESULTS, {
        "benchmark": "retrieval_metrics", "date": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
        "machine": machine(),
        "versions": {name: metadata.version(name) for name in ("numpy", "ranx", "numba", "pytrec-eval-terrier")},
        "metrics": METRICS, "repeats": REPEATS, "timer": "time.perf_counter, best of repeats, one process",
        "untimed": "generating the synthetic data; the run as ranx's {doc id: score} dicts; ranx's JIT warm-up",
        "synthetic": synthetic_results, "scifact": scifact_results})
    print(f"wrote {RESULTS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
