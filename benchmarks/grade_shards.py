"""`curate grade` on a KB in one chunks.jsonl (one process, one BM25 index) and in Parquet shards (BM25, the items'
chunks and texts over the shards on the local engine, 2 workers), issue 29: time and peak memory, cold (the BM25
index or the shards' terms built first) and warm (stored), and the same grade both ways.

Run: `.venv/bin/python benchmarks/grade_shards.py [--chunks 100000] [--keep DIR] [--data DIR]`; needs ../shared/data
(CMRC2018); writes benchmarks/results/grade_shards.json. The KB and items are benchmarks/engines.py's (its leakage
items: each a CMRC question with its paragraph as evidence), in shards of 50,000; dense ranks are skipped
(`dense=False`: embedding is engine_stages.py's). Peak = the command and every process it started, every 0.1 s.
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
from engines import CHILD as SAMPLER, build  # noqa: E402

RESULTS = REPO / "benchmarks" / "results" / "grade_shards.json"
CHILD = SAMPLER.split("from curate.checks.leakage.find")[0] + r"""
from curate.checks.difficulty.measure import grade
from curate.workspace import Workspace

root, engine = sys.argv[1], sys.argv[2]
started = time.perf_counter()
report = grade(Workspace(Path(root)), dataset="bench", dense=False, engine=None if engine == "one" else engine)
out = {"seconds": time.perf_counter() - started, "peak_bytes": max(peak[0], tree_rss()),
       "sha256": hashlib.sha256(json.dumps([[g.id, g.difficulty, g.features] for g in report.items],
                                           sort_keys=True).encode()).hexdigest(),
       "ranked": sum("bm25_rank" in g.features for g in report.items)}
print(json.dumps(out))
"""


def run(root: str, engine: str) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, root, engine], capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    if done.returncode != 0:
        raise SystemExit(f"{engine} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(n: int, data: Path, keep: Path | None) -> dict:
    from curate.dataset import DatasetStore
    from curate.records import DatasetMeta, EvalItem
    from curate.workspace import Workspace

    folder = (keep / f"grade-{n}") if keep else Path(tempfile.mkdtemp(prefix=f"grade-shards-{n}-"))
    folder.mkdir(parents=True, exist_ok=True)
    made = build(n, data, folder)
    items = [EvalItem.model_validate_json(line) for line in made["items"].read_text(encoding="utf-8").splitlines()]
    for root in (made["whole"], made["sharded"]):
        DatasetStore(Workspace(root)).save(DatasetMeta(name="bench", kb_snapshot=made["snapshot"]), items)
    rows = {}
    for phase in ("cold", "warm"):
        for name, root in (("one", made["whole"]), ("local", made["sharded"])):
            if phase == "cold":
                for part in Path(root, "kb", "index").glob("**/bm25-v*"):
                    shutil.rmtree(part)
            rows[f"{name}-{phase}"] = result = run(str(root), name)
            print(f"  {n:,} {name} {phase}: {result['seconds']:.1f} s, peak {result['peak_bytes'] / 2**30:.2f} GiB",
                  flush=True)
    return {"chunks": n, "shards": made["shards"], "items": len(items), "runs": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, nargs="+", default=[100_000])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--keep", type=Path, help="Keep the built KBs here.")
    args = parser.parse_args()
    if not (args.data / "cmrc2018").exists():
        raise SystemExit(f"no CMRC2018 under {args.data}: pass --data DIR")
    results = [measure(n, args.data, args.keep) for n in args.chunks]
    rows = []
    for result in results:
        same = len({r["sha256"] for r in result["runs"].values()}) == 1
        for key, r in result["runs"].items():
            rows.append((f"{result['chunks']:,}", key, f"{r['seconds']:.1f}", f"{r['peak_bytes'] / 2**30:.2f}",
                         "same" if same else r["sha256"][:8]))
        result["measured_at"] = time.strftime("%Y-%m-%d %H:%M")
    print_table(("chunks", "run", "seconds", "peak GiB", "grade"), rows, left=2)
    save_json(RESULTS, {"machine": machine(), "results": results})


if __name__ == "__main__":
    main()
