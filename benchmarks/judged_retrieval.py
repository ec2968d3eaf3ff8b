"""What grading retrieved chunks by the judge costs, and how its grades agree with the labels (issue 26).

Run: `.venv/bin/python benchmarks/judged_retrieval.py [--items N] [--k K] [--judge-base-url URL --judge-model M
--judge-api-key-env VAR]`; writes benchmarks/results/judged_retrieval.json. Without a judge given it starts the
small local model server the tests use (SmolLM2-135M under llama.cpp): its grades are a plumbing figure, not a
measure of what a capable judge does, and are printed as such; the grading schema is sent with each request
(`[judge] response_format = "json_schema"`), which llama.cpp holds the answer to.

On a slice of the bundled data (the handbook's English questions and the CMRC2018 sample's Chinese ones, the
first N items of each release), the baseline system (examples/baseline/rag.py, BM25, its answers dropped so that
only retrieval is judged) is run with `--judge-retrieval --judge-retrieval-k K`, twice per way of asking:

- batched (evalrun): one request per item for up to 8 passages, in chunk id order;
- one passage per request: how RAGAS' reference-free context precision and LangSmith's retrieval relevance
  evaluator ask (the same prompt and guideline, a batch of one), the reference way of asking.

Each run is timed cold (nothing cached) and warm (the same run again: every grade from the cache), less the same
run without --judge-retrieval (the system's own time). Reported per language and way: items, requests, prompt
and answer tokens as the server counted them, seconds, chunks graded, the judged-vs-labelled agreement (kappa
with its interval) and the possibly missing evidence found.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from common import machine, print_table, save_json  # noqa: E402

RESULTS = REPO / "benchmarks" / "results" / "judged_retrieval.json"
EXAMPLES = REPO / "examples"
CURATE = [sys.executable, "-m", "curate"]
SLICES = {"en": ("handbook", "handbook"), "zh": ("cmrc2018", "cmrc2018")}   # language -> (dataset, KB)
WAYS = {"batched": None, "one passage per request": 1}


def retrieval_only(question: str, *, asker_groups=None, as_of=None) -> dict:
    """The baseline system with its answer dropped: only retrieval is there to judge."""
    from examples.baseline.rag import answer
    found = answer(question, asker_groups=asker_groups, as_of=as_of)
    return {**found, "answer": None, "refused": True}


def build(root: Path, base_url: str, model: str, key_env: str | None, items: int, schema: bool) -> Path:
    """Make the workspace: the handbook and CMRC2018 sample KBs, the first `items` of each set, released."""
    workspace = root / "ws"
    init = [*CURATE, "init", str(workspace), "--kb", "handbook", "--judge-base-url", base_url, "--judge-model", model]
    subprocess.run(init + (["--judge-api-key-env", key_env] if key_env else []), check=True, capture_output=True)
    if schema:   # the grading schema sent with each request: a small local model answers in the shape asked
        config = workspace / "curate.toml"   # (and it answers slowly on 2 cores: 10 minutes a request at most)
        config.write_text(config.read_text(encoding="utf-8").replace(
            "[judge]\n", '[judge]\nresponse_format = "json_schema"\ntimeout = 600\n', 1), encoding="utf-8")

    def curate(*args: str) -> None:
        subprocess.run([*CURATE, *args, "--workspace", str(workspace)], check=True, capture_output=True)

    curate("kb", "ingest", str(EXAMPLES / "handbook" / "docs"), "--name", "handbook")
    head = root / "handbook.jsonl"
    lines = (EXAMPLES / "handbook" / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    head.write_text("\n".join([line for line in lines if line.strip()][:items]) + "\n", encoding="utf-8")
    curate("import", str(head), "--dataset", "handbook", "--source", "human")
    squad = json.loads((EXAMPLES / "cmrc2018" / "cmrc2018_sample.json").read_text(encoding="utf-8"))
    kept, left = [], items
    for article in squad["data"]:
        paragraphs = []
        for paragraph in article["paragraphs"]:
            if left > 0:
                paragraph = {**paragraph, "qas": paragraph["qas"][:left]}
                left -= len(paragraph["qas"])
            else:
                paragraph = {**paragraph, "qas": []}
            paragraphs.append(paragraph)
        kept.append({**article, "paragraphs": paragraphs})
    sliced = root / "cmrc.json"
    sliced.write_text(json.dumps({**squad, "data": kept}, ensure_ascii=False), encoding="utf-8")
    curate("import", str(sliced), "--format", "squad", "--dataset", "cmrc2018", "--source", "human")
    for dataset, _ in SLICES.values():
        curate("check-leakage", "--dataset", dataset)
        curate("release", "--dataset", dataset, "-m", "benchmark slice")
    return workspace


def one(workspace: Path, dataset: str, kb: str, batch: int | None, k: int, out: Path, judged: bool) -> dict:
    """Run the baseline over `dataset`@v1 (in this process: the baseline keeps one KB loaded) and return its
    figures; `batch` passages a request (None: evalrun's own)."""
    os.environ["BASELINE_KB"] = kb
    import evalrun
    from evalrun.scoring import judged_retrieval
    if batch is not None:
        judged_retrieval.BATCH = batch
    started = time.perf_counter()
    run = evalrun.run(f"{dataset}@v1", target=f"{Path(__file__).resolve()}:retrieval_only", workspace=workspace,
                      out=out, judge_retrieval=judged, judge_retrieval_k=k, ks=sorted({1, 3, k}))
    seconds = time.perf_counter() - started
    section = run.summary.judged_retrieval
    if section is None:
        return {"seconds": seconds}
    agreement = section.agreement
    return {"seconds": seconds, "items": section.items, "requests": section.requests, "cache_hits": section.cache_hits,
            "prompt_tokens": section.prompt_tokens, "completion_tokens": section.completion_tokens,
            "estimate": section.estimate.model_dump(), "chunks": section.chunks, "grades": section.grades,
            "not_graded": section.not_graded, "possibly_missing": sum(len(c) for c in section.possibly_missing.values()),
            "kappa": None if agreement is None else agreement.kappa,
            "kappa_ci95": None if agreement is None else agreement.kappa_ci95,
            "agreement": None if agreement is None else agreement.agreement,
            "compared_chunks": 0 if agreement is None else agreement.chunks}


def measure(workspace: Path, root: Path, k: int) -> dict:
    """Return the figures of every language and way: cold, warm, and the system alone."""
    figures: dict[str, dict] = {}
    for language, (dataset, kb) in SLICES.items():
        alone = _apart(workspace, dataset, kb, None, k, root / f"{dataset}-alone", judged=False)
        for way, batch in WAYS.items():
            cold = _apart(workspace, dataset, kb, batch, k, root / f"{dataset}-{batch}-cold", judged=True)
            warm = _apart(workspace, dataset, kb, batch, k, root / f"{dataset}-{batch}-warm", judged=True)
            print(f"{language}, {way}: {cold.get('requests')} requests cold in {cold['seconds']:.1f} s, "
                  f"{warm.get('requests')} warm in {warm['seconds']:.1f} s", flush=True)
            figures[f"{language}, {way}"] = {"cold": cold, "warm": warm, "system_s": alone["seconds"],
                                              "grading_cold_s": max(0.0, cold["seconds"] - alone["seconds"]),
                                              "grading_warm_s": max(0.0, warm["seconds"] - alone["seconds"])}
    return figures


def _apart(workspace: Path, dataset: str, kb: str, batch: int | None, k: int, out: Path, judged: bool) -> dict:
    """Run `one` in a process of its own (a fresh baseline index per KB) and return its figures."""
    done = subprocess.run([sys.executable, __file__, "--one", json.dumps([str(workspace), dataset, kb, batch, k,
                                                                          str(out), judged])],
                          check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=4, help="Items of each language (default 4: the small local "
                        "model grades about 30 prompt tokens a second per slot on 2 cores).")
    parser.add_argument("--k", type=int, default=3, help="Candidates graded per item (default 3).")
    parser.add_argument("--judge-base-url")
    parser.add_argument("--judge-model", default="judge")
    parser.add_argument("--judge-api-key-env")
    parser.add_argument("--json-schema", action="store_true", help="Send each prompt's schema ([judge] "
                        "response_format = \"json_schema\"); always with the local model.")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(*_args(json.loads(args.one)))))
        return 0
    server = None
    if not args.judge_base_url:
        from tests.support.servers import LlamaServer
        server = LlamaServer(parallel=2, context=8192)   # a Chinese batch of 3 CMRC paragraphs is ~6,000 tokens
    base_url, model = (args.judge_base_url, args.judge_model) if server is None else (server.base_url, "smollm2")
    try:
        with tempfile.TemporaryDirectory(prefix="curate-bench-judged-") as folder:
            root = Path(folder)
            workspace = build(root, base_url, model, args.judge_api_key_env, args.items,
                              schema=server is not None or args.json_schema)
            figures = measure(workspace, root, args.k)
    finally:
        if server is not None:
            server.close()
    rows = []
    for name, f in figures.items():
        cold = f["cold"]
        kappa = "-" if cold["kappa"] is None else f"{cold['kappa']:.2f}" + (
            f" [{cold['kappa_ci95'][0]:.2f}, {cold['kappa_ci95'][1]:.2f}]" if cold["kappa_ci95"] else "")
        rows.append((name, cold["items"], cold["requests"], f"{cold['prompt_tokens']:,}", f"{cold['completion_tokens']:,}",
                     f"{f['grading_cold_s']:.1f}", f"{f['grading_warm_s']:.1f}", f["warm"]["requests"], cold["chunks"],
                     sum(cold["not_graded"].values()), kappa, cold["possibly_missing"]))
    print_table(("language, way of asking", "items", "requests", "prompt tok", "answer tok", "grading s (cold)",
                 "grading s (warm)", "warm requests", "chunks graded", "not graded", "kappa vs labels",
                 "possibly missing"), rows)
    if server is not None:
        print("judge: SmolLM2-135M (the tests' local model): the kappa and grades are a plumbing figure, not what a "
              "capable judge does")
    save_json(RESULTS, {"benchmark": "judged_retrieval", "date": datetime.now(timezone.utc).isoformat(),
                        "machine": machine(), "judge": model, "small_local_model": server is not None,
                        "items_per_language": args.items, "k": args.k, "figures": figures})
    return 0


def _args(values: list) -> tuple:
    workspace, dataset, kb, batch, k, out, judged = values
    return Path(workspace), dataset, kb, batch, k, Path(out), judged


if __name__ == "__main__":
    sys.exit(main())
