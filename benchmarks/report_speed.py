"""Report speed: `evalrun report` of a realistic 10,000-item run against the naive reference (every row and
every item's details rendered as static HTML in one table by a Jinja loop), same run, same process.

Run: `.venv/bin/python benchmarks/report_speed.py` (options: --items, --seed, --no-browser); writes
benchmarks/results/report_speed.json.

The run: a real workspace (a KB snapshot of the CMRC2018 paragraphs in ../shared/data/cmrc2018 when
present, else synthetic Chinese text, in fixed chunks of 400 characters; a release of the items) and
a scored run folder; per item 10 candidates and a 5-chunk context (the gold chunk at a random rank,
missing for 20%), an answer of three sentences of the gold chunk with an inline citation, its claims,
key points and relevance judged with reasons; 50 metrics per item; subsets by difficulty, qtype,
source, split and 8 tags.

Measured:
- command: `evalrun report RUN --out FILE` in a new process, as a person runs it: imports, reading the
  run, its release and its snapshot, the page, the atomic write (the target: 10 s);
- write: the same through `write_report` in this process (no imports);
- size of the file;
- time to usable in Chromium: from navigation to the first page of rows drawn and a filter applied (the
  attribution filter, rows counted after it), best of 2.
The naive reference (the same run, every row and every item's details as static HTML in one table by
a Jinja loop) is timed from the run already read.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from common import machine, print_table, save_json

import jinja2

from curate import Workspace, atomic_write_bytes, jsonl_bytes
from curate.dataset import DatasetStore
from curate.kb import SnapshotStore, chunk_documents, sha256_text
from curate.records import ChunkerSettings, DatasetMeta, Document, EvalItem, Evidence, KeyPoint
from curate.release import release
from curate.workspace import init_workspace
from evalrun.records import ItemScores, LeakageGate, RunManifest, Trace, TraceRecord
from evalrun.report.gather import ReportInputs, read_inputs
from evalrun.report.render import write_report
from evalrun.scoring.summary import summarize

CMRC = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "cmrc2018"
RESULTS = Path(__file__).resolve().parent / "results" / "report_speed.json"
ATTRIBUTIONS = ["retrieval_miss", "context_cut", "generation_miss", "hallucination"]
REASON = "回答中的这一句话可以在上下文的第二段找到依据，数字和名称都一致。"

NAIVE = jinja2.Template("""<!DOCTYPE html><html lang="zh"><head><meta charset="utf-8"><title>naive</title></head><body>
<input id="q"><table id="t"><tbody>
{% for it in items %}<tr class="row"><td>{{ it.id }}</td><td>{{ it.question }}</td><td>{{ it.attribution }}</td><td>
<details><summary>details</summary><p>{{ it.reference }}</p><p>{{ it.answer }}</p>
<ol>{% for c in it.candidates %}<li>{{ c.id }} {% if c.gold %}<b>gold</b>{% endif %} {{ c.text }}</li>{% endfor %}</ol>
<ol>{% for c in it.context %}<li>{{ c.id }} {{ c.text }}</li>{% endfor %}</ol>
<ul>{% for cl in it.claims %}<li>{{ cl }} — supported: {{ reason }}</li>{% endfor %}</ul>
<table>{% for m, v in it.metrics %}<tr><td>{{ m }}</td><td>{{ v }}</td></tr>{% endfor %}</table>
</details></td></tr>
{% endfor %}</tbody></table>
<script>document.getElementById("q").addEventListener("input", (e) => { const w = e.target.value;
for (const r of document.querySelectorAll("tr.row")) r.style.display = r.cells[2].textContent.includes(w) ? "" : "none"; });
document.body.dataset.ready = "1";</script></body></html>""", autoescape=True)


def corpus(seed: int) -> tuple[list[str], list[tuple[str, str]]]:
    """Return (documents: CMRC2018 paragraphs, (question, answer) pairs)."""
    rng = random.Random(seed)
    if CMRC.exists():
        paragraphs, pairs = [], []
        for name in ("cmrc2018_dev.json", "cmrc2018_trial.json"):
            for article in json.loads((CMRC / name).read_text(encoding="utf-8"))["data"]:
                for paragraph in article["paragraphs"]:
                    paragraphs.append(paragraph["context"])
                    pairs += [(qa["question"], qa["answers"][0]["text"]) for qa in paragraph["qas"] if qa["answers"]]
    else:
        hanzi = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
        paragraphs = ["".join(rng.choice(hanzi) for _ in range(600)) + "。" for _ in range(900)]
        pairs = [("".join(rng.choice(hanzi) for _ in range(18)) + "？", "".join(rng.choice(hanzi) for _ in range(8)))
                 for _ in range(3000)]
    return paragraphs, pairs


def build(root: Path, n: int, seed: int) -> tuple[Workspace, Path]:
    """Write a workspace (the KB snapshot, a release of `n` items) and a scored run of it; return both."""
    rng = random.Random(seed)
    paragraphs, pairs = corpus(seed)
    workspace = init_workspace(root / "workspace")
    documents = [Document(doc_id=f"doc{k}", text=text, text_sha256=sha256_text(text)) for k, text in enumerate(paragraphs)]
    settings = ChunkerSettings(kind="fixed", size=400, overlap=80)
    chunks = {c.chunk_id: c for c in chunk_documents(documents, settings)}
    snapshot = SnapshotStore(workspace).write("kb", documents, list(chunks.values()), settings).snapshot_id
    ids = list(chunks)
    items, traces, rows, records = [], {}, [], {}
    for i in range(n):
        question, answer = pairs[i % len(pairs)]
        gold = rng.choice(ids)
        chunk = chunks[gold]
        sentences = [s + "。" for s in chunk.text.split("。") if len(s) > 8][:3] or [chunk.text[:60]]
        item = EvalItem(id=f"q{i:05d}", question=question + (f"（{i // len(pairs)}）" if i >= len(pairs) else ""),
                        reference_answer=answer, language="zh", source=rng.choice(["human", "production", "synthetic"]),
                        difficulty=rng.choice(["easy", "medium", "hard"]), kb_snapshot=snapshot,
                        qtype=rng.choice(["single", "multi_evidence", "confusable", "conditional"]),
                        split=rng.choice(["dev", "test"]), tags=[f"主题{rng.randrange(8)}"],
                        key_points=[KeyPoint(text=answer, evidence_ids=["e1"]), KeyPoint(text=sentences[0][:30])],
                        evidence=[Evidence(evidence_id="e1", doc_id=chunk.doc_id, start=chunk.start, end=chunk.end,
                                           text=chunk.text, chunk_ids=[gold], kb_snapshot=snapshot)])
        candidates = rng.sample(ids, 10)
        rank = rng.randrange(10) if rng.random() < 0.8 else None
        if rank is not None and gold not in candidates:
            candidates[rank] = gold
        text = "".join(s + (f"[{gold}]" if k == 0 else "") for k, s in enumerate(sentences))
        trace = Trace(item_id=item.id, question=item.question, candidates=candidates, context=candidates[:5], answer=text,
                      citations=[gold], latency_ms={"retrieval": rng.lognormvariate(3, 0.5),
                                                     "generation": rng.lognormvariate(6, 0.4), "total": 0.0})
        trace.latency_ms["total"] = trace.latency_ms["retrieval"] + trace.latency_ms["generation"]
        found = gold in candidates
        values = {}
        for layer, ranked in (("candidates", candidates), ("context", candidates[:5])):
            for k in (1, 3, 5, 10):
                hit = float(gold in ranked[:k])
                values.update({f"{layer}/hit_rate@{k}": hit, f"{layer}/recall@{k}": hit, f"{layer}/precision@{k}": hit / k,
                               f"{layer}/mrr@{k}": hit / (ranked.index(gold) + 1) if hit else 0.0,
                               f"{layer}/ndcg@{k}": hit * rng.random()})
        values.update({"lexical/f1": rng.random(), "lexical/exact_match": 0.0, "generation/correctness": float(rng.random() < 0.6),
                       "generation/completeness": rng.random(), "generation/faithfulness": rng.random(), "success": 1.0})
        judged = [{"verdict": "supported", "reason": REASON} for _ in sentences]
        row = ItemScores(item_id=item.id, answerable=True, values=values,
                         unscored={"generation/answer_relevance": "judge timeout after 3 retries"} if i % 50 == 0 else {},
                         attribution=[] if found and candidates.index(gold) < 5 else [rng.choice(ATTRIBUTIONS)],
                         generation={"claims": sentences, "claim_verdicts": judged,
                                     "key_point_verdicts": [{"verdict": "covered", "reason": REASON}] * 2,
                                     "relevance_verdict": {"verdict": "yes", "reason": REASON},
                                     "citation_verdicts": [{"chunk_id": gold, "correct": True}]})
        items.append(item)
        traces[item.id] = trace
        rows.append(row)
        records[item.id] = TraceRecord(item_id=item.id, trace=trace.model_dump(mode="json", exclude_none=True))
    DatasetStore(workspace).save(DatasetMeta(name="cmrc-bench", kb_snapshot=snapshot), items)
    released = release(workspace, dataset="cmrc-bench", message="report benchmark")
    manifest = RunManifest(dataset="cmrc-bench", version=released.version, content_sha256=released.content_sha256,
                           ref=f"cmrc-bench@{released.version}", kb_snapshot=snapshot, target="bench:rag",
                           leakage_gate=LeakageGate(status="clean", kb_snapshot=snapshot),
                           started_at="2026-12-01T00:00:00+00:00")
    summary = summarize(rows, items, traces, manifest, Counter())
    folder = root / "run"
    folder.mkdir()
    manifest.write(folder / "manifest.json")
    atomic_write_bytes(folder / "traces.jsonl", jsonl_bytes(r.model_dump(mode="json") for r in records.values()))
    atomic_write_bytes(folder / "scores.jsonl", jsonl_bytes(r.model_dump(mode="json") for r in rows))
    summary.write(folder / "summary.json")
    return workspace, folder


def naive_page(inputs: ReportInputs) -> str:
    """Return the naive reference page: every row and every item's details as static HTML."""
    rows = {row.item_id: row for row in inputs.run.scores}
    shown = []
    for item in inputs.items:
        trace, row = inputs.traces[item.id], rows[item.id]
        gold = {c for e in item.evidence for c in e.chunk_ids}
        shown.append({"id": item.id, "question": item.question, "attribution": ", ".join(row.attribution),
                      "reference": item.reference_answer, "answer": trace.answer,
                      "candidates": [{"id": p.chunk_id, "gold": p.chunk_id in gold, "text": inputs.chunks[p.chunk_id].text}
                                     for p in trace.candidates],
                      "context": [{"id": p.chunk_id, "text": inputs.chunks[p.chunk_id].text} for p in trace.context],
                      "claims": row.generation["claims"], "metrics": sorted(row.values.items())})
    return NAIVE.render(items=shown, reason=REASON)


def time_to_usable(path: Path, ours: bool) -> float:
    """Return seconds from navigation to the first rows drawn and a filter applied, in headless Chromium."""
    from playwright.sync_api import sync_playwright
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.support.browser import CHROMIUM_ARGS, chromium_path
    best = float("inf")
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        for _ in range(2):
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            page.set_default_timeout(120_000)
            start = time.perf_counter()
            page.goto(path.as_uri(), wait_until="commit")
            page.wait_for_selector("body[data-ready='1']")
            page.wait_for_selector("tr.row")
            if ours:
                page.select_option("#f-attribution", label="context_cut")
                page.wait_for_function("() => /^\\d+ of /.test(document.getElementById('count').textContent)")
                rows = page.locator("#item-table tr.row").count()
            else:
                page.fill("#q", "context_cut")
                rows = page.evaluate("() => [...document.querySelectorAll('tr.row')].filter(r => r.style.display !== 'none').length")
            best = min(best, time.perf_counter() - start)
            assert rows > 0
            page.close()
        browser.close()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="report-speed-") as root:
        root = Path(root)
        started = time.perf_counter()
        workspace, folder = build(root, args.items, args.seed)
        print(f"built a workspace and a scored {args.items}-item run in {time.perf_counter() - started:.1f} s", flush=True)
        out = root / "ours.html"
        # The command as a person runs it: a new process, imports included.
        start = time.perf_counter()
        subprocess.run([str(Path(sys.executable).parent / "evalrun"), "report", str(folder), "--out", str(out),
                        "--workspace", str(workspace.root)], check=True, stdout=subprocess.DEVNULL,
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
        command_s = time.perf_counter() - start
        start = time.perf_counter()
        written = write_report(folder, out=out, workspace=workspace)
        library_s = time.perf_counter() - start
        results["ours"] = {"command_s": round(command_s, 2), "write_s": round(library_s, 2),
                           "size_mb": round(written.size / 1e6, 2),
                           "usable_s": None if args.no_browser else round(time_to_usable(out, True), 2)}
        print(f"ours: {results['ours']}", flush=True)
        inputs = read_inputs(folder, workspace)
        start = time.perf_counter()
        data = naive_page(inputs).encode("utf-8")
        atomic_write_bytes(root / "naive.html", data)
        naive_s = time.perf_counter() - start
        results["naive"] = {"command_s": None, "write_s": round(naive_s, 2), "size_mb": round(len(data) / 1e6, 2),
                            "usable_s": None if args.no_browser else round(time_to_usable(root / "naive.html", False), 2)}
        print(f"naive: {results['naive']}", flush=True)
        chunks = len(inputs.chunks)
    print_table(("page", "command (s)", "write (s)", "size (MB)", "usable in Chromium (s)"),
                [(n, r["command_s"], r["write_s"], r["size_mb"], r["usable_s"]) for n, r in results.items()])
    save_json(RESULTS, {"measured_at": datetime.now(UTC).isoformat(timespec="seconds"), "items": args.items,
                        "chunks": chunks, "limits": {"command_s": 10, "size_mb": 15, "usable_s": 3},
                        "results": results, "machine": machine()})


if __name__ == "__main__":
    main()
