"""Ingest and import of a large KB over an engine (issue 29): `curate kb ingest` (or `kb import` with
--import) at 100,000 and 1,000,000 chunks in one process (the code before batches, from a checkout given with
--before) and on the local engine and a Ray started by the command, 2 workers each (`--engines` names others:
local:1 ray:1).

Run: `.venv/bin/python benchmarks/ingest_engines.py --before /tmp/before [--chunks 100000 1000000] [--import]
[--engines one local:2 ray:2]`; writes benchmarks/results/ingest_engines.json (import_engines.json), keeping the
saved runs of engines not run.

Data: tests/support/many_documents.py (CMRC2018 sample sentences recombined into paragraphs, one .jsonl of
documents, a few scoped; about 18 documents per 100 chunks at a chunk size of 200), or with --import
tests/support/production_export.py (the same sentences as production chunks of documents of 1 to 9 chunks,
listed shuffled: each document's chunks scattered over the file), written once under --data.
Each run is a process of its own, the runs of one size interleaved; each reports its wall seconds, the peak
memory of the command with every process it started (sampled every 0.1 s from /proc: the workers, and Ray's
own) and the snapshot id (the same for every run of a size: the same snapshot).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from common import machine, print_table, save_json  # noqa: E402
from engines import CHILD as SAMPLER, engine_choice  # noqa: E402   the peak-memory sampler of every child

RESULTS = REPO / "benchmarks" / "results"
DOCUMENTS_PER_CHUNK = 0.178
CHILD = SAMPLER.split("from curate.checks.leakage.find")[0] + r"""
from curate.kb.store import import_chunks, ingest
from curate.workspace import init_workspace

root, docs, engine, workers = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
workspace = init_workspace(root)
if engine != "one":
    (root / "curate.toml").write_text((root / "curate.toml").read_text() + f"\n[engine]\nworkers = {workers}\n")
import curate
started = time.perf_counter()
options = {} if engine == "one" else {"engine": engine}
if docs.suffix == ".jsonl":
    manifest, _ = import_chunks(workspace, docs, name="kb", **options)
else:
    manifest = ingest(workspace, [docs], name="kb", chunk_size=200, **options)
out = {"seconds": time.perf_counter() - started, "peak_bytes": max(peak[0], tree_rss()),
       "snapshot_id": manifest.snapshot_id, "code": str(Path(curate.__file__).parent.parent), "chunks": manifest.chunks, "shards": len(manifest.shards)}
print(json.dumps(out))
"""


def run(code: Path, docs: Path, engine: str, workers: int) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="ingest-bench-"))
    try:
        env = {**os.environ, "PYTHONPATH": str(code), "OPENBLAS_NUM_THREADS": "1"}
        # run from the temporary folder: `python -c` puts the current folder first on sys.path
        done = subprocess.run([sys.executable, "-c", CHILD, str(folder / "ws"), str(docs), engine, str(workers)],
                              env=env,
                              capture_output=True, text=True, check=True, cwd=folder)
        return json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="a checkout of the code before batches (for `one`)")
    parser.add_argument("--engines", type=engine_choice, nargs="+", default=[("one", 1), ("local", 2), ("ray", 2)],
                        help="one (the code before batches), local:N, ray:N (default: one local:2 ray:2)")
    parser.add_argument("--chunks", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "ingest-engines-data")
    parser.add_argument("--import", dest="imported", action="store_true", help="time kb import of production chunks")
    args = parser.parse_args()
    if ("one", 1) in args.engines and args.before is None:
        parser.error("`one` runs the code before batches: pass --before DIR")
    from tests.support.many_documents import many_documents
    from tests.support.production_export import production_file

    path = RESULTS / ("import_engines.json" if args.imported else "ingest_engines.json")
    saved = json.loads(path.read_text(encoding="utf-8"))["runs"] if path.exists() else {}
    rows, results = [], {"machine": machine(), "runs": saved}
    for chunks in args.chunks:
        docs = args.data / str(chunks)
        if args.imported:
            docs = docs / "chunks.jsonl"
            if not docs.exists():
                docs.parent.mkdir(parents=True, exist_ok=True)
                production_file(docs, documents=chunks // 5)   # 5 chunks a document on average
        elif not (docs / "docs.jsonl").exists():
            many_documents(docs, int(chunks * DOCUMENTS_PER_CHUNK))
        runs = {}
        for engine, workers in args.engines:
            plural = "s" if workers > 1 else ""
            label = {"one": "one process (before)", "local": f"local, {workers} worker{plural}",
                     "ray": f"ray, {workers} CPU{plural}"}[engine]
            runs[label] = run(args.before if engine == "one" else REPO, docs, engine, workers)
            out = runs[label]
            rows.append([f"{out['chunks']:,}", label, f"{out['seconds']:.1f}", f"{out['peak_bytes'] / 2**30:.2f}",
                         out["snapshot_id"]])
            print(rows[-1], out["code"], flush=True)
        runs = {**results["runs"].get(str(chunks), {}), **runs}
        assert len({r["snapshot_id"] for r in runs.values()}) == 1, runs
        results["runs"][str(chunks)] = runs
    print_table(["chunks", "run", "wall s", "peak GiB", "snapshot"], rows)
    save_json(path, results)


if __name__ == "__main__":
    main()
