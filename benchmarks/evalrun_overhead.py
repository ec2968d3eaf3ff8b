"""evalrun's own overhead: 10,000 items through an instant in-process target, no judge.

Run: `.venv/bin/python benchmarks/evalrun_overhead.py` (`make bench` runs it). Builds a synthetic
KB (2,000 documents) and a release of N items in a temporary workspace, the items spread over
difficulty x qtype x source x split x tags, then times `evalrun run` (traces appended and fsynced
per item, scoring, aggregates with intervals) against the target of 30 s for 10,000 items on 2
cores, and the scoring step alone (`score_run` on the finished folder: retrieval on both layers,
lexical metrics, about 45 metrics over every subset with intervals) against 10 s. The leakage gate
is passed with --allow-unchecked (the check has its own benchmark); the judge is pointed at a
closed port, so generation is unscored. One in ten items is unanswerable, one in fifty fails.
"""

import argparse
import os
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import machine, print_table, save_json  # noqa: E402

from curate.dataset import DatasetStore  # noqa: E402
from curate.kb import SnapshotStore, chunk_documents, sha256_text  # noqa: E402
from curate.release import release  # noqa: E402
from curate.records import ChunkerSettings, DatasetMeta, Document, EvalItem, Evidence, KeyPoint  # noqa: E402
from curate.workspace import init_workspace  # noqa: E402
from evalrun.records import RunSettings, read_run  # noqa: E402
from evalrun.runner import run  # noqa: E402
from evalrun.scoring import score_run  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "evalrun_overhead.json"
TARGET_S = 30.0
SCORING_TARGET_S = 10.0
TRACES: dict[str, dict] = {}
DIFFICULTY = ("easy", "medium", "medium", "hard")
QTYPE = ("single", "multi_evidence", "confusable", "conditional")
SOURCE = ("human", "production", "synthetic")
SPLIT = ("dev", "test")
TAGS = ("billing", "auth", "network", "legacy")


def instant(question: str) -> dict:
    """The system under test: answers from a table, instantly (and fails on one item in fifty)."""
    trace = TRACES[question]
    if trace is None:
        raise RuntimeError("the system under test failed")
    return trace


def build(root: Path, n: int) -> None:
    """Write a KB of 2,000 documents and a release of `n` items into a workspace at `root`."""
    workspace = init_workspace(root)
    documents = [Document(doc_id=f"d{k}", text=f"Document {k} says fact {k}. " * 20, text_sha256=sha256_text(
        f"Document {k} says fact {k}. " * 20)) for k in range(2000)]
    settings = ChunkerSettings(kind="fixed", size=200, overlap=0)
    chunks = chunk_documents(documents, settings)
    snapshot = SnapshotStore(workspace).write("kb", documents, chunks, settings).snapshot_id
    items = []
    for k in range(n):
        chunk = chunks[(k * 7) % len(chunks)]
        question = f"What does document {chunk.doc_id} say, question {k}?"
        answerable = k % 10 != 0
        items.append(EvalItem(
            id=f"i{k}", question=question, reference_answer=f"fact {k}" if answerable else None, language="en",
            source=SOURCE[k % 3], kb_snapshot=snapshot, answerable=answerable,
            difficulty=DIFFICULTY[k % 4], qtype=QTYPE[k % 4] if answerable else "unanswerable", split=SPLIT[k % 2],
            tags=[TAGS[k % 4]] + ([TAGS[(k + 1) % 4]] if k % 3 == 0 else []),
            key_points=[KeyPoint(text=f"document {chunk.doc_id} says fact {k}", evidence_ids=["e1"])] if answerable else [],
            evidence=[] if not answerable else [Evidence(evidence_id="e1", doc_id=chunk.doc_id, start=chunk.start,
                                                         end=chunk.end, text=chunk.text, chunk_ids=[chunk.chunk_id],
                                                         kb_snapshot=snapshot)]))
        ranked = [chunks[(k * 7 + j) % len(chunks)].chunk_id for j in (3, 0, 1, 2, 4, 5, 6, 8, 9, 10)]
        TRACES[question] = None if k % 50 == 7 else {
            "candidates": ranked, "context": ranked[:3], "latency_ms": {"retrieval": 1.0, "total": 2.0},
            "answer": f"Document {chunk.doc_id} says fact {k}." if k % 5 else "I don't know."}
    DatasetStore(workspace).save(DatasetMeta(name="bench", kb_snapshot=snapshot), items)
    release(workspace, dataset="bench", message="overhead benchmark")
    return workspace


def main(argv: list[str] | None = None) -> int:
    """Build, run, print and save the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="curate-bench-evalrun-"))
    os.environ["CURATE_JUDGE_BASE_URL"] = "http://127.0.0.1:9/v1"
    try:
        started = time.perf_counter()
        workspace = build(root / "ws", args.items)
        built = time.perf_counter() - started
        sys.modules.setdefault("evalrun_overhead", sys.modules[__name__])
        started = time.perf_counter()
        folder = run(workspace, ref="bench@v1", target="evalrun_overhead:instant", out=root / "run",
                     settings=RunSettings(allow_unchecked=True, concurrency=4))
        seconds = time.perf_counter() - started
        lines = len(read_run(folder).traces)
        started = time.perf_counter()
        summary = score_run(workspace, folder)
        scoring = time.perf_counter() - started
        metrics = len(summary.metrics["all"])
        subsets = len(summary.metrics) - 1
        failed = sum(summary.failed_items.values())
    finally:
        shutil.rmtree(root, ignore_errors=True)
    scale = args.items / 10_000
    rows = [("build release (not timed against a target)", f"{built:.2f}", "", ""),
            (f"evalrun run: {args.items:,} items, traces {lines:,}, {failed} failed", f"{seconds:.2f}",
             f"{TARGET_S * scale:g}", "PASS" if seconds <= TARGET_S * scale else "FAIL"),
            (f"scoring alone (score_run): {metrics} metrics x ({subsets} subsets + all)", f"{scoring:.2f}",
             f"{SCORING_TARGET_S * scale:g}", "PASS" if scoring <= SCORING_TARGET_S * scale else "FAIL")]
    print_table(("step", "seconds", "target", ""), rows)
    save_json(RESULTS, {"benchmark": "evalrun_overhead", "date": datetime.now(timezone.utc).isoformat(),
                        "machine": machine(),
                        "items": args.items, "build_s": round(built, 3), "run_s": round(seconds, 3),
                        "target_s_per_10000": TARGET_S, "met": seconds <= TARGET_S * scale,
                        "scoring_s": round(scoring, 3), "scoring_target_s_per_10000": SCORING_TARGET_S,
                        "scoring_met": scoring <= SCORING_TARGET_S * scale, "metrics": metrics, "subsets": subsets,
                        "failed_items": failed, "load_average": os.getloadavg()})
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
