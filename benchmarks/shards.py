"""A snapshot's chunks in Parquet shards against one chunks.jsonl (issue 29, point 1).

Run: `.venv/bin/python benchmarks/shards.py [--chunks N]`; writes benchmarks/results/shards.json.

N chunks (default 200,000) are made from CMRC2018 dev paragraphs (../shared/data, else the bundled sample),
each a paragraph with its number, in documents of 10 chunks. Each layout is written by `SnapshotStore.write`
and read back in a process of its own: every chunk (`chunks`), and one shard's (`shard_chunks`, what a
worker reads), each with its seconds and the process's peak memory. The JSONL layout is the reference
(what snapshots were before shards, and what a KB under 10,000 chunks still is).
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

from common import machine, print_table, save_json  # noqa: E402

RESULTS = REPO / "benchmarks" / "results" / "shards.json"
SHARED = REPO.parent / "shared" / "data" / "cmrc2018" / "cmrc2018_dev.json"
SAMPLE = REPO / "examples" / "cmrc2018" / "cmrc2018_sample.json"
READ = """
import json, sys, time
from curate import open_workspace
from curate.kb.store import SnapshotStore
store = SnapshotStore(open_workspace(sys.argv[1]))
snapshot = store.resolve("kb")
started = time.perf_counter()
chunks = list(store.shard_chunks(snapshot, 0)) if sys.argv[2] == "shard" else store.chunks(snapshot)
# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so a child would report its parent's peak
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"seconds": time.perf_counter() - started, "chunks": len(chunks), "peak_mib": peak / 1024}))
"""


def make_chunks(n: int) -> list:
    from curate.kb import sha256_text
    from curate.records import Chunk
    source = SHARED if SHARED.exists() else SAMPLE
    paragraphs = [p["context"] for a in json.loads(source.read_text(encoding="utf-8"))["data"] for p in a["paragraphs"]]
    chunks = []
    for k in range(n):
        text = f"{k}. {paragraphs[k % len(paragraphs)]}"
        chunks.append(Chunk(chunk_id=f"d{k // 10}#{k % 10}", doc_id=f"d{k // 10}", text=text,
                            text_sha256=sha256_text(text), metadata={"title": f"文档 {k // 10}"}))
    return chunks


def measure(folder: Path, chunks: list, parquet: bool) -> dict:
    from curate.kb.store import SnapshotStore
    from curate.records import ChunkerSettings
    from curate.workspace import init_workspace
    workspace = init_workspace(folder)
    started = time.perf_counter()
    manifest = SnapshotStore(workspace).write("kb", [], chunks, ChunkerSettings(kind="structure", size=600),
                                              parquet_from=0 if parquet else len(chunks) + 1)
    written = time.perf_counter() - started
    size = sum(p.stat().st_size for p in (folder / "kb" / "snapshots" / manifest.snapshot_id).rglob("*") if p.is_file())
    found = {"write_seconds": round(written, 2), "bytes": size, "shards": len(manifest.shards) or 1}
    for what in ("all", "shard"):
        out = subprocess.run([sys.executable, "-c", READ, str(folder), what], capture_output=True, text=True,
                             check=True, cwd=REPO).stdout
        read = json.loads(out)
        found[what] = {k: round(v, 2) if isinstance(v, float) else v for k, v in read.items()}
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=200_000)
    args = parser.parse_args()
    chunks = make_chunks(args.chunks)
    with tempfile.TemporaryDirectory() as tmp:
        jsonl = measure(Path(tmp) / "jsonl", chunks, parquet=False)
        parquet = measure(Path(tmp) / "parquet", chunks, parquet=True)
    rows = []
    for name, found in (("chunks.jsonl (reference)", jsonl), ("Parquet shards", parquet)):
        rows.append([name, found["shards"], f"{found['bytes'] / 2**20:,.0f} MiB", found["write_seconds"],
                     f"{found['all']['seconds']} s, {found['all']['peak_mib']:,.0f} MiB",
                     f"{found['shard']['seconds']} s, {found['shard']['peak_mib']:,.0f} MiB ({found['shard']['chunks']:,})"])
    print_table(["layout", "shards", "on disk", "write s", "read all: s, peak", "read one shard: s, peak (chunks)"], rows)
    save_json(RESULTS, {"machine": machine(), "chunks": args.chunks, "jsonl": jsonl, "parquet": parquet})


if __name__ == "__main__":
    main()
