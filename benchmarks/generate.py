"""What `curate generate` costs and keeps on a Chinese knowledge base (issue 27).

Run: `.venv/bin/python benchmarks/generate.py [--paragraphs N] [--n N] [--base-url URL --model M --api-key-env VAR]`;
writes benchmarks/results/generate.json. Without an endpoint given it starts the small local model server the
tests use (SmolLM2-135M under llama.cpp, the output schema sent with each request): what it writes is a
plumbing figure (calls, tokens, time, what the filters say of poor questions), not what a capable model writes.

The KB is a slice of CMRC2018 (../shared/data/cmrc2018/cmrc2018_dev.json, else the bundled sample): the first
articles, N paragraphs in all, a document an article titled by it, in structure chunks of up to 600 characters. Measured, in one run:

- mining alone (`--types confusable,unanswerable`): pairs, probes, candidates, seconds;
- `--dry-run` of the whole run: the calls, tokens and cost it says before any call;
- the whole run (`--types single,multi_evidence,conditional,confusable,unanswerable`), cold: requests, prompt
  and answer tokens as the server counted them, seconds, seeds, kept and dropped per type and reason;
- the same command again, warm: every answer from the cache (requests and seconds);
- beside the kept questions, what a filter that keeps only questions plain BM25 already answers at rank 1 (as
  ARES keeps those its retriever ranks first) would have kept: the reference way, which selects easy questions.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from common import machine, print_table, save_json  # noqa: E402

from curate.generate.asking import why_kind  # noqa: E402

RESULTS = REPO / "benchmarks" / "results" / "generate.json"
SHARED = REPO.parent / "shared" / "data" / "cmrc2018" / "cmrc2018_dev.json"
SAMPLE = REPO / "examples" / "cmrc2018" / "cmrc2018_sample.json"
CURATE = [sys.executable, "-m", "curate"]
ALL = "single,multi_evidence,conditional,confusable,unanswerable"


def documents(paragraphs: int) -> tuple[Path, list[dict]]:
    """Return the CMRC2018 file used and its first articles, `paragraphs` paragraphs in all, one document an
    article (its paragraphs as paragraphs), titled by it."""
    source = SHARED if SHARED.exists() else SAMPLE
    found, taken = [], 0
    for article in json.loads(source.read_text(encoding="utf-8"))["data"]:
        if taken >= paragraphs:
            break
        texts = [p["context"] for p in article["paragraphs"]][:paragraphs - taken]
        taken += len(texts)
        found.append({"doc_id": article["id"], "title": article["title"], "text": "\n\n".join(texts)})
    return source, found


def build(root: Path, base_url: str, model: str, key_env: str | None, paragraphs: int, schema: bool) -> Path:
    """Make the workspace: the KB of the slice and the [generator] endpoint."""
    workspace = root / "ws"
    subprocess.run([*CURATE, "init", str(workspace)], check=True, capture_output=True)
    config = (f'\n[generator]\nbase_url = "{base_url}"\nmodel = "{model}"\nmax_tokens = 400\nconcurrency = 2\n'
              + (f'api_key_env = "{key_env}"\n' if key_env else "") + ('response_format = "json_schema"\n' if schema else ""))
    with open(workspace / "curate.toml", "a", encoding="utf-8") as handle:
        handle.write(config)
    _, docs = documents(paragraphs)
    jsonl = root / "cmrc.jsonl"
    jsonl.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    subprocess.run([*CURATE, "--workspace", str(workspace), "kb", "ingest", str(jsonl), "--name", "cmrc",
                    "--chunker", "structure", "--chunk-size", "600"], check=True, capture_output=True)
    return workspace


def generate(workspace: Path, dataset: str, types: str, n: int, *extra: str) -> tuple[float, str]:
    """Run `curate generate` and return (seconds, its output)."""
    started = time.perf_counter()
    done = subprocess.run([*CURATE, "--workspace", str(workspace), "generate", "--dataset", dataset, "--kb", "cmrc",
                           "--types", types, "--n", str(n), *extra], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"curate generate failed ({done.returncode}): {done.stderr[-1500:]}")
    return time.perf_counter() - started, done.stdout + done.stderr


def run_record(workspace: Path, dataset: str) -> tuple[dict, list[dict]]:
    """Return the newest run record of a dataset and its candidates."""
    folders = sorted((workspace / "datasets" / dataset / "generated").iterdir(), key=lambda p: p.stat().st_mtime)
    folder = folders[-1]
    candidates = [json.loads(line) for line in (folder / "candidates.jsonl").read_text(encoding="utf-8").splitlines()]
    return json.loads((folder / "run.json").read_text(encoding="utf-8")), candidates


def bm25_split(candidates: list[dict]) -> dict[str, int]:
    """Return the kept answerable questions by BM25 rank of their evidence: 1 (what an ARES-style filter keeps),
    2-10, beyond 10 or not in the top 100."""
    ranks = [c["generation"]["features"].get("bm25_rank") for c in candidates if c["kept"] and c["answerable"]]
    return {"rank 1 (ARES-style keeps)": sum(r == 1 for r in ranks), "rank 2-10": sum(r is not None and 2 <= r <= 10
            for r in ranks), "beyond 10 or none": sum(r is None or r == 0 or r > 10 for r in ranks)}


def measure(workspace: Path, n: int) -> dict:
    """Mining alone, the dry run, the whole run cold and warm."""
    mine_s, _ = generate(workspace, "mined", "confusable,unanswerable", n)
    mined, mined_candidates = run_record(workspace, "mined")
    _, plan = generate(workspace, "whole", ALL, n, "--dry-run")
    cold_s, cold_out = generate(workspace, "whole", ALL, n)
    cold, candidates = run_record(workspace, "whole")
    warm_s, _ = generate(workspace, "whole", ALL, n)
    warm, _ = run_record(workspace, "whole")
    return {"mining": {"seconds": round(mine_s, 2), "mined": mined["mined"], "candidates": len(mined_candidates),
                       "kept": mined["kept"]},
            "dry_run": plan, "cold": {"seconds": round(cold_s, 1), "requests": cold["calls"].get("requests", 0),
                                      "cached": cold["calls"].get("from the cache", 0), "tokens": cold["tokens"],
                                      "seeds": cold["seeds"], "not_written": len(cold["not_written"]),
                                      "not_written_why": _kinds(cold["not_written"]),
                                      "by_type": cold["by_type"], "kept": cold["kept"], "spread": cold["spread"]},
            "warm": {"seconds": round(warm_s, 1), "requests": warm["calls"].get("requests", 0),
                     "cached": warm["calls"].get("from the cache", 0)},
            "kept_by_bm25_rank": bm25_split(candidates), "output": cold_out[-3000:]}


def _kinds(not_written: dict[str, str]) -> dict[str, int]:
    """Return why seeds gave no question, counted by kind (curate's `why_kind`)."""
    return dict(Counter(why_kind(why) for why in not_written.values()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paragraphs", type=int, default=60, help="CMRC2018 paragraphs in the KB (default 60).")
    parser.add_argument("--n", type=int, default=10, help="Questions asked for (default 10: the small local model "
                        "writes about 30 tokens a second per slot on 2 cores).")
    parser.add_argument("--base-url")
    parser.add_argument("--model", default="generator")
    parser.add_argument("--api-key-env")
    args = parser.parse_args(argv)
    server = None
    if not args.base_url:
        from tests.support.servers import LlamaServer
        server = LlamaServer(parallel=2, context=8192)
    base_url, model = (args.base_url, args.model) if server is None else (server.base_url, "smollm2")
    source, _ = documents(args.paragraphs)
    try:
        with tempfile.TemporaryDirectory(prefix="curate-bench-generate-") as folder:
            workspace = build(Path(folder), base_url, model, args.api_key_env, args.paragraphs, schema=server is not None)
            figures = measure(workspace, args.n)
    finally:
        if server is not None:
            server.close()
    cold, warm = figures["cold"], figures["warm"]
    print(f"KB: {args.paragraphs} CMRC2018 paragraphs ({source.name}); model {model}")
    print(f"mining alone: {figures['mining']['mined']}, {figures['mining']['candidates']} candidates, "
          f"{figures['mining']['seconds']} s")
    print(figures["dry_run"].strip())
    print_table(("run", "seconds", "requests", "from the cache", "prompt tok", "answer tok", "seeds", "no question",
                 "kept"),
                [("cold", cold["seconds"], cold["requests"], cold["cached"], f"{cold['tokens'].get('prompt', 0):,}",
                  f"{cold['tokens'].get('completion', 0):,}", cold["seeds"], cold["not_written"], cold["kept"]),
                 ("warm (same command)", warm["seconds"], warm["requests"], warm["cached"], "-", "-", "-", "-", "-")])
    rows = [(kind, *(f"{k}: {v}" for k, v in row.items())) for kind, row in cold["by_type"].items()]
    width = max(len(r) for r in rows) if rows else 1
    print_table(("type", *[""] * (width - 1)), [r + ("",) * (width - len(r)) for r in rows])
    print(f"seeds that gave no question, by why: {cold['not_written_why']}")
    print(f"kept answerable questions by BM25 rank of their evidence: {figures['kept_by_bm25_rank']}")
    if server is not None:
        print("model: SmolLM2-135M (the tests' local model): a plumbing figure, not what a capable model writes")
    save_json(RESULTS, {"benchmark": "generate", "date": datetime.now(timezone.utc).isoformat(), "machine": machine(),
                        "model": model, "small_local_model": server is not None, "paragraphs": args.paragraphs,
                        "source": source.name, "n": args.n, "figures": figures})
    return 0


if __name__ == "__main__":
    sys.exit(main())
