"""Knowledge-base ingest speed: curate's chunkers against LangChain's splitter, same documents, same run.

Run: `make bench` (runs `.venv/bin/python benchmarks/ingest.py`), optionally `--data DIR`; the default
is ../shared/data beside the repo. Reads <data>/scifact/corpus.jsonl and
<data>/cmrc2018/cmrc2018_dev.json when present (neither: says so, exits 0); writes benchmarks/results/ingest.json.

Timed, best of 3 with time.perf_counter in one process: "build" (parsed records -> curate Documents, with
sha256 of each text), "chunk+hash" (`chunk_documents` + `content_sha256`); ingest = build + chunk+hash is
judged against the target (2,000 documents/s on 2 cores). The reference times LangChain's
RecursiveCharacterTextSplitter.create_documents (start offsets on) + sha256 of each chunk. Not timed:
reading and JSON-parsing the files, and the check that doc.text[start:end] == chunk.text.
"""

import argparse
import gc
import hashlib
import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from common import machine, print_table, save_json
from langchain_text_splitters import RecursiveCharacterTextSplitter

from curate.kb import chunk_documents, content_sha256, sha256_text
from curate.records import ChunkerSettings, Document

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results" / "ingest.json"
DEFAULT_DATA = (REPO.parent / "shared" / "data",)
TARGET_DOCS_PER_S = 2000
TARGET_CORES = 2
REPEATS = 3
SEPARATORS = ["\n\n", "\n", "。", "！", "？", "；", ". ", "! ", "? ", "; ", " ", ""]
CHUNKERS = {"structure": ChunkerSettings(kind="structure", size=500),
            "fixed": ChunkerSettings(kind="fixed", size=500, overlap=50)}


def find_data(given: str | None) -> Path | None:
    """Return the data folder: --data if given, else the first default that exists."""
    if given:
        return Path(given) if Path(given).is_dir() else None
    return next((path for path in DEFAULT_DATA if path.is_dir()), None)


def load_scifact(path: Path) -> list[dict]:
    """Return SciFact corpus records as {doc_id, title, text} (parsing is not timed)."""
    with path.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return [{"doc_id": r["_id"], "title": r.get("title") or None, "text": r["text"]} for r in rows]


def load_cmrc(path: Path) -> list[dict]:
    """Return CMRC2018 paragraphs as {doc_id, title, text}; the title is the article's."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    return [{"doc_id": p["id"], "title": article.get("title") or None, "text": p["context"]}
            for article in data for p in article["paragraphs"]]


def load_corpora(data: Path) -> dict[str, list[dict]]:
    """Return the records of each corpus found under `data`, plus both combined."""
    sources = {"scifact": (data / "scifact" / "corpus.jsonl", load_scifact),
               "cmrc2018": (data / "cmrc2018" / "cmrc2018_dev.json", load_cmrc)}
    corpora = {name: load(path) for name, (path, load) in sources.items() if path.is_file()}
    for name in sources.keys() - corpora.keys():
        print(f"note: {sources[name][0]} not found; skipping {name}")
    if len(corpora) == 2:
        corpora["combined"] = corpora["scifact"] + corpora["cmrc2018"]
    return corpora


def best_of(function, *args):
    """Return (fastest seconds over REPEATS runs, result of the last run)."""
    best, result = float("inf"), None
    for _ in range(REPEATS):
        gc.collect()
        started = time.perf_counter()
        result = function(*args)
        best = min(best, time.perf_counter() - started)
    return best, result


def build_documents(records: list[dict]) -> list[Document]:
    """Return curate Documents for `records`, hashing each text."""
    return [Document(doc_id=r["doc_id"], text=r["text"], title=r["title"], text_sha256=sha256_text(r["text"]))
            for r in records]


def ours(documents: list[Document], settings: ChunkerSettings) -> tuple[list, str]:
    """Chunk `documents` and hash the snapshot, as `curate kb ingest` does before writing."""
    chunks = chunk_documents(documents, settings)
    return chunks, content_sha256(documents, chunks)


def reference(splitter: RecursiveCharacterTextSplitter, records: list[dict]) -> list:
    """Split with LangChain (start offsets on) and sha256 each chunk, like our chunk hashes."""
    pieces = splitter.create_documents([r["text"] for r in records], [{"doc_id": r["doc_id"]} for r in records])
    for piece in pieces:
        piece.metadata["text_sha256"] = hashlib.sha256(piece.page_content.encode("utf-8")).hexdigest()
    return pieces


def offset_mismatches(texts: dict[str, str], spans) -> tuple[int, int]:
    """Return (spans checked, spans where text[start:end] differs from the chunk text)."""
    flags = [start is None or texts[doc_id][start:end] != text for doc_id, start, end, text in spans]
    return len(flags), sum(flags)


def rate(count: int, seconds: float | None) -> float | None:
    """Return count per second (None when there is no time to divide by)."""
    return count / seconds if seconds else None


def row(corpus: str, tool: str, documents: int, chunks: int, seconds: float, offsets: tuple[int, int],
        build_s: float | None = None, digest: str | None = None) -> dict:
    """Return one table row; the target is judged only on rows that time building Documents."""
    ingest_s = None if build_s is None else build_s + seconds
    return {"corpus": corpus, "tool": tool, "documents": documents, "chunks": chunks, "build_s": build_s,
            "chunk_hash_s": seconds, "ingest_s": ingest_s, "chunk_hash_docs_per_s": rate(documents, seconds),
            "chunks_per_s": rate(chunks, seconds), "ingest_docs_per_s": rate(documents, ingest_s),
            "offsets_checked": offsets[0], "offset_mismatches": offsets[1], "content_sha256": digest,
            "meets_target": None if ingest_s is None else rate(documents, ingest_s) >= TARGET_DOCS_PER_S}


def measure(corpus: str, records: list[dict], splitter: RecursiveCharacterTextSplitter) -> list[dict]:
    """Return one row per chunker for `corpus`: our two chunkers, then the reference."""
    texts = {r["doc_id"]: r["text"] for r in records}
    build_s, documents = best_of(build_documents, records)
    rows = []
    for name, settings in CHUNKERS.items():
        seconds, (chunks, digest) = best_of(ours, documents, settings)
        offsets = offset_mismatches(texts, ((c.doc_id, c.start, c.end, c.text) for c in chunks))
        rows.append(row(corpus, f"curate {name}", len(documents), len(chunks), seconds, offsets, build_s, digest))
    seconds, pieces = best_of(reference, splitter, records)
    offsets = offset_mismatches(texts, ((p.metadata["doc_id"], p.metadata.get("start_index"),
                                         p.metadata.get("start_index", 0) + len(p.page_content),
                                         p.page_content) for p in pieces))
    rows.append(row(corpus, "langchain recursive", len(records), len(pieces), seconds, offsets))
    return rows


def cell(value, spec: str) -> str:
    """Return `value` formatted with `spec`, or '-' when there is none."""
    return "-" if value is None else format(value, spec)


def print_rows(rows: list[dict]) -> None:
    """Print the rows as a plain-text table."""
    header = ("corpus", "tool", "docs", "chunks", "build s", "chunk+hash s", "docs/s c+h", "chunks/s",
              "ingest docs/s", "offsets ok", f">= {TARGET_DOCS_PER_S}/s")
    lines = [header] + [(
        r["corpus"], r["tool"], cell(r["documents"], ","), cell(r["chunks"], ","), cell(r["build_s"], ".3f"),
        cell(r["chunk_hash_s"], ".3f"), cell(r["chunk_hash_docs_per_s"], ",.0f"), cell(r["chunks_per_s"], ",.0f"),
        cell(r["ingest_docs_per_s"], ",.0f"), f"{r['offsets_checked'] - r['offset_mismatches']:,}/"
        f"{r['offsets_checked']:,}", {None: "-", True: "PASS", False: "FAIL"}[r["meets_target"]]) for r in rows]
    print_table(lines[0], lines[1:], left=2)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the table and write benchmarks/results/ingest.json."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="folder holding scifact/ and cmrc2018/ (default: ../shared/data beside the repo)")
    args = parser.parse_args(argv)
    data = find_data(args.data)
    corpora = load_corpora(data) if data else {}
    if not corpora:
        where = args.data or " or ".join(str(p) for p in DEFAULT_DATA)
        print(f"No benchmark data found in {where}; nothing to measure (pass --data DIR to point at it).")
        return 0
    splitter = RecursiveCharacterTextSplitter(chunk_size=500, chunk_overlap=50, add_start_index=True,
                                              separators=SEPARATORS)
    print(f"data: {data}  cpus: {os.cpu_count()}  python {sys.version.split()[0]}  best of {REPEATS}, one process")
    rows = [r for corpus, records in corpora.items() for r in measure(corpus, records, splitter)]
    print_rows(rows)
    met = all(r["meets_target"] for r in rows if r["meets_target"] is not None)
    print(f"target: ingest (build + chunk + hash) >= {TARGET_DOCS_PER_S:,} documents/s on every curate row, "
          f"{TARGET_CORES} cores: {'MET' if met else 'NOT MET'}"
          + ("" if os.cpu_count() == TARGET_CORES else f" (note: this machine has {os.cpu_count()} CPUs)"))
    save_json(RESULTS, {
        "benchmark": "ingest", "date": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
        "machine": machine(),
        "data": str(data), "repeats": REPEATS, "timer": "time.perf_counter, best of repeats, one process",
        "untimed": "reading and JSON parsing of the input files; offset checks",
        "target": {"ingest_docs_per_s": TARGET_DOCS_PER_S, "cores": TARGET_CORES, "met": met},
        "settings": {name: s.model_dump() for name, s in CHUNKERS.items()} | {
            "langchain": {"chunk_size": 500, "chunk_overlap": 50, "separators": SEPARATORS}},
        "rows": rows})
    print(f"wrote {RESULTS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
