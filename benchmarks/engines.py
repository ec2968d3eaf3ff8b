"""The KB-wide stages over shards, on the local engine and on Ray (issue 29): the lexical index of every shard
and check-leakage's search, at 100,000 and 1,000,000 chunks.

Run: `.venv/bin/python benchmarks/engines.py [--chunks 100000 1000000] [--data DIR]`; needs ../shared/data
(CMRC2018); writes benchmarks/results/engines.json. Part of it: `--engines local:2` (some of local:1 local:2
ray:1 ray:2), `--phases warm` (the index is built only when missing, not timed), `--runs 3` (each run
repeated), `--keep DIR` (the KB built once under DIR/<chunks>/ and reused by later runs: its build takes
minutes at 1,000,000 chunks); a partial run prints its table and writes its results only with `--out FILE`.

Data: the leakage benchmark's KB and items (benchmarks/leakage_data.py: CMRC2018 dev + trial paragraphs, filler
documents recombined from their sentences, 5,000 items, 500 planted leaks of six kinds) grown to N chunks, written
once as a snapshot in shards of 50,000. For each engine (local with 1 and 2 workers; a Ray started by the command
with 1 and 2 CPUs) two processes of their own: cold (every shard's index built, then the check) and warm (the
check alone, the index built). Each reports its wall seconds, the peak memory of the command with every process
it started (sampled every 0.1 s from /proc: the workers, and Ray's own), the findings' hash (the same on every
engine) and the planted leaks found. At 100,000 chunks the reference runs beside: the same check over one index
of the whole snapshot in one process (what check-leakage did before shards).

Per-shard figures give the cost elsewhere: chunks per second per worker for the index and for the check, and the
projection for 10,000,000 chunks on M machines of C cores (work divided evenly; Ray's start and the combining of
the shards' results, which do not divide, are counted whole).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from common import machine, print_table, save_json  # noqa: E402

RESULTS = REPO / "benchmarks" / "results" / "engines.json"
SEED = 20240611
ENGINES = (("local", 1), ("local", 2), ("ray", 1), ("ray", 2))
TARGETS = {"warm_1m_s_max": 10.0, "cold_1m_s_max": 60.0, "peak_1m_gib_max": 4.0}
CHILD = r"""
import hashlib, json, os, sys, threading, time
from pathlib import Path

def tree_rss():
    total, todo = 0, [os.getpid()]
    while todo:
        pid = todo.pop()
        try:
            total += next(int(l.split()[1]) for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS:"))
            for task in os.listdir(f"/proc/{pid}/task"):
                todo += [int(c) for c in open(f"/proc/{pid}/task/{task}/children").read().split()]
        except (OSError, StopIteration, ValueError):
            pass
    return total * 1024

peak = [0]
def sample():
    while True:
        peak[0] = max(peak[0], tree_rss())
        time.sleep(0.1)
threading.Thread(target=sample, daemon=True).start()

from curate.checks.leakage.find import LeakSettings
from curate.checks.leakage.over_shards import kb_leaks
from curate.engine import EngineSettings, open_engine
from curate.index.kb_index import KBIndex
from curate.index.shard_index import build_lexical
from curate.records import EvalItem
from curate.workspace import Workspace

root, snapshot, name, workers, phase = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
workspace = Workspace(Path(root))
items = [EvalItem.model_validate_json(line) for line in open(sys.argv[6], encoding="utf-8")]
started = time.perf_counter()
cpu_before = sum(os.times()[:4])
out = {}
if name == "one":    # the reference: one index of the whole snapshot, in this process
    index = KBIndex(workspace, snapshot)
    index.lexical
    out["index_s"] = time.perf_counter() - started
    findings = kb_leaks(items, index, LeakSettings(), set())
else:
    engine = open_engine(EngineSettings(name, None, workers))
    out["engine_start_s"] = time.perf_counter() - started
    index = KBIndex(workspace, snapshot)
    if phase == "cold":
        at = time.perf_counter()
        built, done = build_lexical(index, engine)
        out["index_s"], out["shards_built"] = time.perf_counter() - at, built
    at = time.perf_counter()
    findings = kb_leaks(items, index, LeakSettings(), set(), engine=engine)
    out["check_s"] = time.perf_counter() - at
    engine.close()
out["seconds"] = time.perf_counter() - started
times = os.times()   # this process and its waited-for workers (Ray's own processes are not its children)
out["cpu_s"] = times.user + times.system + times.children_user + times.children_system - cpu_before
out["peak_bytes"] = max(peak[0], tree_rss())
out["findings"] = len(findings)
out["items"] = sorted({f.item_id for f in findings})
out["sha256"] = hashlib.sha256(json.dumps([f.model_dump(mode="json") for f in findings], sort_keys=True).encode()).hexdigest()
print(json.dumps(out))
"""


def built_or_build(n: int, data: Path, folder: Path) -> dict:
    """Return the benchmark's KB of `n` chunks written under `folder` by an earlier run (`--keep`), else
    build it there."""
    saved = folder / "built.json"
    if saved.exists():
        built = json.loads(saved.read_text(encoding="utf-8"))
        print(f"{n:,} chunks in {built['shards']} shards, reused from {folder}", flush=True)
        return {**built, "items": Path(built["items"]), "leaked": set(built["leaked"])}
    built = build(n, data, folder)
    saved.write_text(json.dumps({**built, "sharded": str(built["sharded"]), "items": str(built["items"]),
                                 "whole": str(built["whole"]) if built["whole"] else None,
                                 "leaked": sorted(built["leaked"])}), encoding="utf-8")
    return built


def build(n: int, data: Path, folder: Path) -> dict:
    """Write the benchmark's KB of `n` chunks twice (in shards; in one chunks.jsonl when `n` is 100,000 or less)
    and its items; return where they are and the planted leaks."""
    import leakage_data
    from curate.kb.store import SnapshotStore
    from curate.records import ChunkerSettings
    from curate.workspace import init_workspace

    leakage_data.TARGET_CHUNKS = n
    started = time.perf_counter()
    bench = leakage_data.build(leakage_data.load_paragraphs(data / "cmrc2018"), random.Random(SEED))
    sharded = init_workspace(folder / "sharded")
    snapshot = SnapshotStore(sharded).write("kb", [], bench["chunks"], ChunkerSettings(kind="imported")).snapshot_id
    whole = None
    if n <= 100_000:
        whole = init_workspace(folder / "whole")
        SnapshotStore(whole).write("kb", [], bench["chunks"], ChunkerSettings(kind="imported"), parquet_from=n + 1)
    items = leakage_data.eval_items(bench["items"], snapshot)
    items_file = folder / "items.jsonl"
    items_file.write_text("".join(i.model_dump_json() + "\n" for i in items), encoding="utf-8")
    shards = SnapshotStore(sharded).shards(snapshot)
    print(f"{n:,} chunks in {len(shards)} shards, {len(items):,} items, {len(bench['leaks'])} planted leaks "
          f"(built and written in {time.perf_counter() - started:.0f} s, not timed)", flush=True)
    return {"sharded": sharded.root, "whole": whole.root if whole else None, "snapshot": snapshot,
            "items": items_file, "shards": len(shards), "leaked": set(bench["leaks"])}


def run_child(root: Path, snapshot: str, name: str, workers: int, phase: str, items: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, str(root), snapshot, name, str(workers), phase, str(items)],
                          capture_output=True, text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    if done.returncode != 0:
        raise SystemExit(f"{name} {workers} {phase} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(n: int, data: Path, engines: list[tuple[str, int]], phases: list[str], runs: int,
            keep: Path | None) -> dict:
    """Return every run of every engine and phase at `n` chunks (keys like local-2-warm, -2, -3 for repeats)."""
    folder = keep / str(n) if keep else Path(tempfile.mkdtemp(prefix=f"engines-{n}-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        built = built_or_build(n, data, folder)
        rows = {}
        if "cold" not in phases and not (Path(built["sharded"]) / "kb" / "index").exists():
            run_child(built["sharded"], built["snapshot"], "local", 2, "cold", built["items"])   # not timed
        for name, workers in [e for e in engines if e[0] != "one"]:   # "one": the reference, below
            for run in range(runs):
                if "cold" in phases:
                    shutil.rmtree(Path(built["sharded"]) / "kb" / "index", ignore_errors=True)
                for phase in phases:
                    result = run_child(built["sharded"], built["snapshot"], name, workers, phase, built["items"])
                    result["recall"] = len(built["leaked"] & set(result.pop("items"))) / len(built["leaked"])
                    rows[f"{name}-{workers}-{phase}" + (f"-{run + 1}" if run else "")] = result
                    print(f"  {name} x{workers} {phase}: {result['seconds']:.1f} s ({result['cpu_s']:.1f} s CPU), "
                          f"peak {result['peak_bytes'] / 2**30:.2f} GiB, {result['findings']} findings", flush=True)
        if built["whole"] and ("one", 1) in engines:
            for phase in ("cold", "warm"):
                result = run_child(built["whole"], built["snapshot"], "one", 1, phase, built["items"])
                result["recall"] = len(built["leaked"] & set(result.pop("items"))) / len(built["leaked"])
                rows[f"one-process-{phase}"] = result
        return {"chunks": n, "shards": built["shards"], "runs": rows}
    finally:
        if keep is None:
            shutil.rmtree(folder, ignore_errors=True)


def per_worker(result: dict, chunks: int, workers: int, key: str) -> float | None:
    """Return chunks per second per worker of one stage."""
    seconds = result.get(key)
    return chunks / (seconds * workers) if seconds else None


def engine_choice(value: str) -> tuple[str, int]:
    """Return (engine, workers) of an --engines value: local:2, ray:1, one (one index in one process)."""
    if value == "one":
        return "one", 1
    name, _, workers = value.partition(":")
    if name not in ("local", "ray") or not workers.isdigit():
        raise argparse.ArgumentTypeError(f"not an engine: {value!r} (local:N, ray:N or one)")
    return name, int(workers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--engines", type=engine_choice, nargs="+", default=[*ENGINES, ("one", 1)])
    parser.add_argument("--phases", nargs="+", choices=("cold", "warm"), default=["cold", "warm"])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="build the KB under this folder once, reuse it later")
    parser.add_argument("--out", type=Path, help="where to write the results (default: results/engines.json "
                        "for a full run, nowhere for a partial one)")
    args = parser.parse_args()
    if not (args.data / "cmrc2018").exists():
        raise SystemExit(f"no CMRC2018 under {args.data}: pass --data DIR")
    results = []
    for n in args.chunks:
        results.append(measure(n, args.data, args.engines, args.phases, args.runs, args.keep))
    full = args.engines == [*ENGINES, ("one", 1)] and args.phases == ["cold", "warm"] and args.runs == 1
    rows = []
    for result in results:
        n = result["chunks"]
        hashes = {run["sha256"] for key, run in result["runs"].items() if not key.startswith("one")}
        for key, run in result["runs"].items():
            workers = int(key.split("-")[1]) if not key.startswith("one") else 1
            rows.append((f"{n:,}", key, f"{run['seconds']:.1f}", f"{run.get('cpu_s', 0):.1f}",
                         f"{run.get('index_s', 0):.1f}", f"{run.get('check_s', 0):.1f}",
                         f"{run['peak_bytes'] / 2**30:.2f}",
                         f"{per_worker(run, n, workers, 'index_s') or 0:,.0f}",
                         f"{per_worker(run, n, workers, 'check_s') or 0:,.0f}", f"{run['recall']:.3f}",
                         "same" if run["sha256"] in hashes and len(hashes) == 1 else run["sha256"][:8]))
        result["same_findings_on_every_engine"] = len(hashes) == 1
    print_table(("chunks", "run", "wall s", "CPU s", "index s", "check s", "peak GiB", "index chunks/s/worker",
                 "check chunks/s/worker", "recall", "findings"), rows, left=2)
    if not full:
        if args.out:
            save_json(args.out, {"machine": machine(), "targets": TARGETS, "results": results})
        return
    projected = projection(results[-1])
    print("\nprojected (not measured) for 10,000,000 chunks, from the Ray runs with 2 CPUs at "
          f"{results[-1]['chunks']:,} chunks:")
    print_table(("machines x cores", "index (cold) s", "warm check s"),
                [(f"{m} x {c}", f"{cold:,.0f}", f"{warm:,.0f}") for m, c, cold, warm in projected])
    save_json(args.out or RESULTS, {"machine": machine(), "targets": TARGETS, "results": results,
                        "projected_10m": [{"machines": m, "cores": c, "index_s": cold, "warm_check_s": warm}
                                          for m, c, cold, warm in projected]})


def projection(result: dict, chunks: int = 10_000_000) -> list[tuple[int, int, float, float]]:
    """Return (machines, cores, index seconds, warm check seconds) for `chunks` from the per-worker rates of the
    Ray runs with 2 CPUs: the shards' work divided over every core, Ray's start counted whole."""
    cold, warm = result["runs"]["ray-2-cold"], result["runs"]["ray-2-warm"]
    index_rate = result["chunks"] / (cold["index_s"] * 2)
    check_rate = result["chunks"] / (warm["check_s"] * 2)
    start = warm.get("engine_start_s", 0.0)
    return [(m, c, start + chunks / (index_rate * m * c), start + chunks / (check_rate * m * c))
            for m, c in ((1, 2), (4, 8), (16, 16), (64, 16))]


if __name__ == "__main__":
    main()
