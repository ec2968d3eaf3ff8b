"""Leakage check quality and speed: `kb_leaks` over a 100,000-chunk KB with injected leaks, against all-pairs
rapidfuzz, same data, same run.

Run: `.venv/bin/python benchmarks/leakage.py`, optionally `--data DIR` (default ../shared/data beside the
repo). Reads <data>/cmrc2018/cmrc2018_dev.json and cmrc2018_trial.json (missing: says so, exits 0); writes
benchmarks/results/leakage.json. Embeddings are not part of this benchmark: no model is loaded, only the
lexical index (folded texts + character 4-gram index) and containment verification are measured.

The benchmark (~100,000 chunks, 5,000 items, 500 injected leaks of six kinds) is built deterministically
(fixed seed) in a temporary workspace by leakage_data.py, whose docstring describes it. Expected findings:
exact/width_punct/words_inserted/partial_copy -> question_in_kb (or qa_pair_in_kb), qa_pair -> qa_pair_in_kb,
long_answer -> answer_in_kb; a leak counts as found only when a finding of an expected kind points at one of
its injected chunks.

Natural data (leakage_data.py: keyword queries over news passages written for it, and SciFact claims against
their abstracts when <data>/scifact is there): nothing is injected but six FAQ controls in the news case. An
item flagged whose every match is its own evidence is a false positive the rules exist to prevent (target 0);
the controls (the same keyword queries as questions in an FAQ) must be found. `--natural-only` runs just these.

Timed with time.perf_counter in one process: cold lexical index (`index.lexical` on a fresh index folder,
chunks already loaded: folding + 4-gram index + writing it), warm check (a new KBIndex loading chunks and the
cached lexical index from disk, plus kb_leaks over all items), and all-pairs `rapidfuzz.process.cdist(...,
scorer=fuzz.partial_ratio, workers=-1)` on a sample of questions x all chunks, extrapolated to all items x all
chunks. Not timed: building the benchmark, writing the snapshot.
"""

import argparse
import gc
import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import rapidfuzz
from common import machine, print_table, save_json
from leakage_data import (
    DEFAULT_DATA,
    FILES,
    KINDS,
    REPO,
    build,
    eval_items,
    find_data,
    load_paragraphs,
    natural_news,
    natural_scifact,
)
from rapidfuzz import fuzz, process

from curate.checks.leakage.find import LeakSettings
from curate.checks.leakage.over_shards import kb_leaks
from curate.index.kb_index import KBIndex
from curate.index.ngrams import NgramIndex
from curate.kb import SnapshotStore
from curate.records import ChunkerSettings, EvalItem
from curate.text.containment import containment
from curate.text.normalize import fold
from curate.workspace import init_workspace

RESULTS = REPO / "benchmarks" / "results" / "leakage.json"
SEED = 20240611
EXPECTED = {"exact": {"question_in_kb", "qa_pair_in_kb"}, "width_punct": {"question_in_kb", "qa_pair_in_kb"},
            "words_inserted": {"question_in_kb", "qa_pair_in_kb"}, "partial_copy": {"question_in_kb", "qa_pair_in_kb"},
            "qa_pair": {"qa_pair_in_kb"}, "long_answer": {"answer_in_kb"}}
NAIVE_MIN = 85
MARGIN_MIN = 0.90
TARGETS = {"recall_min": 0.98, "false_positives_max": 0, "warm_check_s_max": 5.0, "cold_lexical_s_max": 20.0,
           "speedup_min": 300.0}


# -- measuring -------------------------------------------------------------------------------------------

def origin(chunk_id: str, leak_owner: dict[str, str]) -> str:
    """Return what a chunk is: paragraph, filler, or leak of item X."""
    if chunk_id in leak_owner:
        return f"leak of {leak_owner[chunk_id]}"
    doc = chunk_id.split("#")[0]
    if doc.startswith("filler-"):
        return "filler"
    if doc.startswith("leak-"):
        return "leak document filler"
    return "paragraph"


def diagnose_miss(item: EvalItem, info: dict, index: KBIndex, settings: LeakSettings) -> dict:
    """Explain why an injected leak was not found: candidate rank and share, containment alone and joined."""
    needle = fold(item.reference_answer) if info["kind"] == "long_answer" else fold(item.question)
    threshold = settings.answer_min if info["kind"] == "long_answer" else settings.question_min
    ranked = index.ngrams.candidates(needle, min_share=0.0, limit=10 ** 9)
    rank = {p: (r, share) for r, (p, share) in enumerate(ranked)}
    out = {"item": item.id, "kind": info["kind"], "needle": item.reference_answer if info["kind"] == "long_answer"
           else item.question, "folded_length": len(needle), "threshold": threshold,
           "leak_text": info.get("leak_text"), "chunks": []}
    for chunk_id in info["chunk_ids"]:
        p = index.position[chunk_id]
        r, share = rank.get(p, (None, 0.0))
        entry = {"chunk_id": chunk_id, "text": index.chunks[p].text, "candidate_rank": r,
                 "share": round(share, 3), "ngrams_in_needle": len(index.ngrams.grams_of(needle)),
                 "in_candidates": r is not None and r < settings.candidates and share >= 0.3,
                 "containment_alone": round(containment(needle, index.folded[p])[0], 4)}
        before, after = index.neighbours.get(p, (None, None))
        for name, pair in (("with_previous", (before, p)), ("with_next", (p, after))):
            if None not in pair:
                entry["containment_" + name] = round(containment(needle, index.folded[pair[0]]
                                                                 + index.folded[pair[1]])[0], 4)
        out["chunks"].append(entry)
    best = max(out["chunks"], key=lambda c: (c["in_candidates"], c["share"]))
    if any(c["in_candidates"] for c in out["chunks"]):
        out["reason"] = "verification: a leak chunk was a candidate, but containment (alone or joined) stayed below"
    elif best["share"] == 0:
        out["reason"] = "candidates: no 4-gram of the needle lies wholly in any leak chunk"
    elif best["share"] < 0.3:
        out["reason"] = f"candidates: best leak chunk holds {best['share']} of the needle's 4-grams, below min_share 0.3"
    else:
        out["reason"] = (f"candidates: leak chunk ranked {best['candidate_rank']} (share {best['share']}), beyond the "
                         f"{settings.candidates}-candidate limit")
    if ranked:
        out["share_of_30th_candidate"] = round(ranked[min(len(ranked), settings.candidates) - 1][1], 3)
        out["candidates_with_share_ge_leak"] = sum(1 for _, s in ranked if s >= max(
            (c["share"] for c in out["chunks"]), default=0))
    return out


def all_pairs(questions: list[str], chunks: list[str]) -> tuple[float, np.ndarray]:
    """Return (seconds, score matrix) of all-pairs partial_ratio."""
    gc.collect()
    started = time.perf_counter()
    scores = process.cdist(questions, chunks, scorer=fuzz.partial_ratio, workers=-1, dtype=np.uint8)
    return time.perf_counter() - started, scores


def cell(value, spec: str = "") -> str:
    """Return `value` formatted by `spec`, or "-" for None."""
    return "-" if value is None else format(value, spec)


def run(data: Path, workdir: Path, sample: int) -> dict:
    """Return the measurements: build the benchmark in `workdir`, time the index and the check, judge findings."""
    rng = random.Random(SEED)
    settings = LeakSettings()
    paragraphs = load_paragraphs(data / "cmrc2018")
    started = time.perf_counter()
    bench = build(paragraphs, rng)
    ws = init_workspace(workdir / "ws")
    manifest = SnapshotStore(ws).write("leakage-bench", [], bench["chunks"], ChunkerSettings(kind="imported"),
                                       sources=[str(data / "cmrc2018" / f) for f in FILES])
    snapshot_id = manifest.snapshot_id
    items = eval_items(bench["items"], snapshot_id)
    build_s = time.perf_counter() - started
    counts = bench["counts"]
    print(f"built: {counts['chunks']:,} chunks ({counts['paragraph_chunks']:,} paragraphs, {counts['filler_chunks']:,} "
          f"filler, {counts['leak_chunks']:,} in {counts['leak_documents']} leak documents), {len(items):,} items "
          f"({counts['variant_items']} variants), {counts['leaked_items']} leaked; snapshot {snapshot_id} "
          f"({build_s:.1f} s, not timed)")
    del bench["chunks"]

    # cold lexical index
    cold_index = KBIndex(ws, snapshot_id)
    gc.collect()
    t = time.perf_counter()
    _ = cold_index.chunks
    load_chunks_s = time.perf_counter() - t
    t = time.perf_counter()
    _ = cold_index.lexical
    cold_s = time.perf_counter() - t
    lexical_bytes = sum(f.stat().st_size for f in (cold_index.folder / "lexical").iterdir())
    del cold_index

    # warm check: a new index object, everything from disk, then kb_leaks over all items
    gc.collect()
    t = time.perf_counter()
    index = KBIndex(ws, snapshot_id)
    _ = index.chunks, index.lexical
    warm_load_s = time.perf_counter() - t
    t = time.perf_counter()
    findings = kb_leaks(items, index, settings, skip_docs=set())
    warm_check_s = time.perf_counter() - t
    warm_s = warm_load_s + warm_check_s

    # the cold build's two parts, timed apart afterwards (for diagnosis; not judged)
    gc.collect()
    t = time.perf_counter()
    folded_again = [fold(c.text) for c in index.chunks]
    fold_s = time.perf_counter() - t
    t = time.perf_counter()
    NgramIndex.build(folded_again)
    ngram_build_s = time.perf_counter() - t
    del folded_again

    # quality
    leaks = bench["leaks"]
    leak_owner = {c: item_id for item_id, info in leaks.items() for c in info["chunk_ids"]}
    by_item = defaultdict(list)
    for f in findings:
        by_item[f.item_id].append(f)
    by_id = {it.id: it for it in items}
    per_kind = {kind: {"injected": 0, "found": 0, "kinds_reported": Counter()} for kind in KINDS}
    misses, extra_on_leaked = [], []
    for item_id, info in leaks.items():
        row = per_kind[info["kind"]]
        row["injected"] += 1
        hits = [f for f in by_item.get(item_id, []) if f.kind in EXPECTED[info["kind"]]
                and set(f.chunk_ids) & set(info["chunk_ids"])]
        for f in hits[:1]:
            row["kinds_reported"][f.kind] += 1
        if hits:
            row["found"] += 1
        else:
            misses.append(diagnose_miss(by_id[item_id], info, index, settings)
                          | {"findings": [f.__dict__ for f in by_item.get(item_id, [])]})
        for f in by_item.get(item_id, []):
            if f not in hits:
                extra_on_leaked.append({"item": item_id, "leak_kind": info["kind"], "kind": f.kind,
                                        "method": f.method, "score": f.score, "chunk_ids": f.chunk_ids,
                                        "where": origin(f.chunk_ids[0], leak_owner), "matched": f.matched})
    for row in per_kind.values():
        row["recall"] = row["found"] / row["injected"] if row["injected"] else None
        row["kinds_reported"] = dict(row["kinds_reported"])
    clean_ids = [it.id for it in items if it.id not in leaks]
    false_positives = []
    for item_id in clean_ids:
        for f in by_item.get(item_id, []):
            false_positives.append({"item": item_id, "question": by_id[item_id].question,
                                    "reference_answer": by_id[item_id].reference_answer, "kind": f.kind,
                                    "method": f.method, "score": f.score, "chunk_ids": f.chunk_ids,
                                    "where": origin(f.chunk_ids[0], leak_owner), "matched": f.matched,
                                    "chunk_text": "".join(index.chunks[index.position[c]].text for c in f.chunk_ids)})
    fp_items = sorted({f["item"] for f in false_positives})
    total_found = sum(r["found"] for r in per_kind.values())

    # clean questions against their own paragraph (orientation for the threshold), and naive partial_ratio
    clean = [by_id[i] for i in clean_ids]
    own_scores = [containment(fold(it.question), index.folded[index.position[it.evidence[0].chunk_ids[0]]])[0]
                  for it in clean]
    naive_evidence = sum(fuzz.partial_ratio(fold(it.question), fold(it.evidence[0].text)) >= NAIVE_MIN for it in clean)
    naive_evidence_raw = sum(fuzz.partial_ratio(it.question, it.evidence[0].text) >= NAIVE_MIN for it in clean)
    naive_paragraph = sum(fuzz.partial_ratio(fold(it.question), index.folded[index.position[it.evidence[0].chunk_ids[0]]])
                          >= NAIVE_MIN for it in clean)

    # margin: clean items' best question score anywhere in the KB, by running the check at a lower threshold
    # (sensitivity only: the check's own threshold is unchanged and judged above)
    lower = LeakSettings(question_min=MARGIN_MIN)
    near = [f for f in kb_leaks(clean, index, lower, skip_docs=set()) if f.kind in ("question_in_kb", "qa_pair_in_kb")]
    best_near = {}
    for f in near:
        if f.score > best_near.get(f.item_id, (0,))[0]:
            best_near[f.item_id] = (f.score, f)
    margin = {"question_min_tried": MARGIN_MIN,
              "clean_items_at_or_above": {str(x): sum(1 for s, _ in best_near.values() if s >= 100 * x)
                                          for x in (0.90, 0.93, 0.95, 0.97, 0.98)},
              "closest": [{"item": f.item_id, "question": by_id[f.item_id].question, "score": sc,
                           "where": origin(f.chunk_ids[0], leak_owner), "chunk_ids": f.chunk_ids, "matched": f.matched}
                          for sc, f in sorted(best_near.values(), key=lambda x: -x[0])[:8]]}

    # all-pairs rapidfuzz on a sample of questions x all chunks, extrapolated
    sample_items = random.Random(SEED + 1).sample(items, sample)
    ap_s, scores = all_pairs([fold(it.question) for it in sample_items], index.folded)
    pairs = len(sample_items) * len(index.folded)
    ap_full_s = ap_s * len(items) / len(sample_items)  # all chunks were scored: only the questions scale
    ap_flags = int((scores >= NAIVE_MIN).sum())
    clean_rows = np.array([it.id not in leaks for it in sample_items])
    ap_clean_flags = int((scores[clean_rows] >= NAIVE_MIN).sum())
    sample_leaked = int((~clean_rows).sum())
    speedup = ap_full_s / warm_s

    recall_ok = all(r["recall"] is not None and r["recall"] >= TARGETS["recall_min"] for r in per_kind.values())
    met = {"recall": recall_ok, "false_positives": len(fp_items) <= TARGETS["false_positives_max"],
           "warm_check": warm_s <= TARGETS["warm_check_s_max"], "cold_lexical": cold_s <= TARGETS["cold_lexical_s_max"],
           "speedup": speedup >= TARGETS["speedup_min"]}
    return {"snapshot_id": snapshot_id, "counts": counts, "leaks_per_kind": bench["per_kind"], "settings": settings.__dict__,
            "per_kind": per_kind, "total_injected": len(leaks), "total_found": total_found,
            "clean_items": len(clean_ids), "false_positive_items": len(fp_items), "false_positive_findings": len(false_positives),
            "false_positive_examples": false_positives[:10], "false_positive_where": dict(Counter(f["where"].split(" of ")[0]
                                                                                                 for f in false_positives)),
            "leak_examples": {kind: [{"item": i, "question": by_id[i].question, "reference_answer": by_id[i].reference_answer,
                                      "leak_text": info.get("leak_text"), "words": info.get("words"),
                                      "chunk_ids": info["chunk_ids"],
                                      "chunk_texts": [index.chunks[index.position[c]].text for c in info["chunk_ids"]]}
                                     for i, info in list((i, v) for i, v in leaks.items() if v["kind"] == kind)[:2]]
                              for kind in KINDS},
            "misses": misses, "extra_findings_on_leaked_items": extra_on_leaked[:20],
            "extra_findings_on_leaked_items_count": len(extra_on_leaked), "findings": len(findings),
            "clean_own_paragraph_containment": {"max": round(max(own_scores), 4),
                                                "ge_0.95": sum(s >= 0.95 for s in own_scores),
                                                "ge_0.98": sum(s >= 0.98 for s in own_scores),
                                                "top5": [(it.id, it.question, round(s, 4)) for s, it in
                                                         sorted(zip(own_scores, clean), key=lambda x: -x[0])[:5]]},
            "clean_margin": margin,
            "naive_partial_ratio": {"threshold": NAIVE_MIN, "clean_vs_own_evidence_sentence": naive_evidence,
                                    "clean_vs_own_evidence_sentence_unfolded": naive_evidence_raw,
                                    "clean_vs_own_paragraph_chunk": naive_paragraph, "clean_items": len(clean),
                                    "sample_pairs_flagged": ap_flags, "sample_pairs": pairs,
                                    "sample_clean_question_pairs_flagged": ap_clean_flags,
                                    "sample_leaked_items": sample_leaked,
                                    "extrapolated_flags_all_pairs": round(ap_flags * len(items) / len(sample_items))},
            "timings_s": {"build_benchmark_untimed": round(build_s, 2), "load_chunks": round(load_chunks_s, 3),
                          "cold_lexical_index": round(cold_s, 3),
                          "cold_parts_timed_apart": {"fold_all_chunks": round(fold_s, 3),
                                                     "NgramIndex.build": round(ngram_build_s, 3)}, "warm_load": round(warm_load_s, 3),
                          "warm_kb_leaks": round(warm_check_s, 3), "warm_total": round(warm_s, 3),
                          "all_pairs_sample": round(ap_s, 3), "all_pairs_extrapolated": round(ap_full_s, 1)},
            "all_pairs": {"sample_questions": len(sample_items), "chunks": len(index.folded), "pairs": pairs,
                          "scorer": "fuzz.partial_ratio", "workers": -1,
                          "extrapolated_to": f"{len(items)} x {len(index.folded)}"},
            "lexical_index_bytes": lexical_bytes, "speedup": round(speedup, 1), "targets": TARGETS, "met": met}


def natural(data: Path | None, workdir: Path) -> dict:
    """Return, per natural case, the items flagged and where: none may be flagged whose every match is in
    its own evidence; the news case's FAQ controls must be found in the FAQ."""
    ws = init_workspace(workdir / "natural")
    cases = {"news": natural_news()}
    scifact = natural_scifact(data / "scifact") if data else None
    if scifact:
        cases["scifact"] = scifact
    out = {}
    for name, case in cases.items():
        manifest = SnapshotStore(ws).write(f"natural-{name}", [], case["chunks"], ChunkerSettings(kind="imported"))
        index = KBIndex(ws, manifest.snapshot_id)
        t = time.perf_counter()
        findings = kb_leaks(case["items"], index, LeakSettings(), skip_docs=set())
        seconds = time.perf_counter() - t
        by_item = defaultdict(list)
        for f in findings:
            by_item[f.item_id].append(f)
        own = {it.id: {c for e in it.evidence for c in e.chunk_ids} for it in case["items"]}
        editions = set(case.get("editions", {}).values())
        controls = set(case.get("faq_items", []))
        own_only, elsewhere = [], []
        for item_id, found in sorted(by_item.items()):
            rows = [{"kind": f.kind, "method": f.method, "score": f.score, "chunk_ids": f.chunk_ids, "matched": f.matched,
                     "standing": getattr(f, "standing", ""),
                     "where": ("own evidence" if set(f.chunk_ids) <= own[item_id] else "FAQ control"
                               if "support-faq#0" in f.chunk_ids else "edition (a year differs)"
                               if set(f.chunk_ids) & editions else "another passage")} for f in found]
            entry = {"item": item_id, "question": next(i.question for i in case["items"] if i.id == item_id),
                     "findings": rows}
            (own_only if all(r["where"] == "own evidence" for r in rows) else elsewhere).append(entry)
        found_controls = sorted(i for i in controls if any("support-faq#0" in f.chunk_ids for f in by_item.get(i, [])))
        uncontrolled = [e for e in elsewhere if e["item"] not in controls
                        or any(r["where"] != "FAQ control" for r in e["findings"])]
        out[name] = {"items": len(case["items"]), "chunks": len(case["chunks"]), "check_s": round(seconds, 3),
                     "languages": dict(Counter(i.language for i in case["items"])),
                     "flagged_items": len(by_item), "flagged_own_evidence_only": len(own_only),
                     "flagged_elsewhere_besides_controls": len(uncontrolled),
                     "faq_controls": len(controls), "faq_controls_found": len(found_controls),
                     "own_only_examples": own_only[:10], "elsewhere_examples": uncontrolled[:10]}
    return out


def report_natural(cases: dict) -> None:
    """Print the natural cases: flagged items, those whose only match is their own evidence, the controls."""
    print()
    print_table(("natural case", "items", "chunks", "flagged", "only own evidence", "elsewhere (not controls)",
                 "FAQ controls found", "only-own = 0"), [
        (name, c["items"], c["chunks"], c["flagged_items"], c["flagged_own_evidence_only"],
         c["flagged_elsewhere_besides_controls"],
         f"{c['faq_controls_found']} of {c['faq_controls']}" if c["faq_controls"] else "-",
         "PASS" if c["flagged_own_evidence_only"] == 0 and c["faq_controls_found"] == c["faq_controls"] else "FAIL")
        for name, c in cases.items()])
    for name, c in cases.items():
        for e in (c["own_only_examples"] + c["elsewhere_examples"])[:6]:
            f = e["findings"][0]
            print(f"  {name} {e['item']} {e['question'][:60]!r}: {f['kind']} in {f['where']} {f['chunk_ids']} "
                  f"{f['standing']}")


def report(r: dict) -> None:
    """Print the recall table, the measures table, the clean margin, misses and false positives."""
    t = r["timings_s"]
    print()
    print_table(("leak kind", "injected", "found", "recall", "reported as", f">= {TARGETS['recall_min']}"), [
        (kind, row["injected"], row["found"], cell(row["recall"], ".3f"),
         ", ".join(f"{k} {v}" for k, v in sorted(row["kinds_reported"].items())) or "-",
         "PASS" if row["recall"] is not None and row["recall"] >= TARGETS["recall_min"] else "FAIL")
        for kind, row in r["per_kind"].items()] + [
        ("all", r["total_injected"], r["total_found"], f"{r['total_found'] / max(1, r['total_injected']):.3f}", "", "")])
    print()
    m = r["met"]
    naive = r["naive_partial_ratio"]
    print_table(("measure", "value", "target", "met"), [
        ("false positives (clean items flagged)", f"{r['false_positive_items']} of {r['clean_items']:,}", "0",
         "PASS" if m["false_positives"] else "FAIL"),
        ("cold lexical index (fold + 4-grams + save)", f"{t['cold_lexical_index']:.2f} s", f"<= {TARGETS['cold_lexical_s_max']:.0f} s",
         "PASS" if m["cold_lexical"] else "FAIL"),
        ("  fold all chunks (timed apart)", f"{t['cold_parts_timed_apart']['fold_all_chunks']:.2f} s", "", ""),
        ("  NgramIndex.build (timed apart)", f"{t['cold_parts_timed_apart']['NgramIndex.build']:.2f} s", "", ""),
        ("  (loading 100k chunks before it, apart)", f"{t['load_chunks']:.2f} s", "", ""),
        ("warm check: load index + kb_leaks", f"{t['warm_total']:.2f} s", f"<= {TARGETS['warm_check_s_max']:.0f} s",
         "PASS" if m["warm_check"] else "FAIL"),
        ("  load (chunks + cached lexical)", f"{t['warm_load']:.2f} s", "", ""),
        ("  kb_leaks over all items", f"{t['warm_kb_leaks']:.2f} s", "", ""),
        (f"all-pairs cdist partial_ratio, {r['all_pairs']['sample_questions']} x {r['all_pairs']['chunks']:,}",
         f"{t['all_pairs_sample']:.2f} s", "", ""),
        (f"  extrapolated to {r['all_pairs']['extrapolated_to']}", f"{t['all_pairs_extrapolated']:,.0f} s", "", ""),
        ("speed-up (all-pairs / warm check)", f"{r['speedup']:,.0f}x", f">= {TARGETS['speedup_min']:.0f}x",
         "PASS" if m["speedup"] else "FAIL"),
        (f"naive partial_ratio >= {NAIVE_MIN}: clean q vs own evidence sentence",
         f"{naive['clean_vs_own_evidence_sentence']:,} of {naive['clean_items']:,}", "", ""),
        ("  same, texts not folded", f"{naive['clean_vs_own_evidence_sentence_unfolded']:,} of {naive['clean_items']:,}",
         "", ""),
        (f"naive partial_ratio >= {NAIVE_MIN}: clean q vs own paragraph",
         f"{naive['clean_vs_own_paragraph_chunk']:,} of {naive['clean_items']:,}", "", ""),
        (f"naive partial_ratio >= {NAIVE_MIN}: sample pairs flagged",
         f"{naive['sample_pairs_flagged']:,} ({naive['sample_clean_question_pairs_flagged']:,} of clean questions; "
         f"{naive['sample_leaked_items']} leaked in sample)", "", ""),
        ("clean q vs own paragraph: max containment", f"{r['clean_own_paragraph_containment']['max']:.3f}",
         f"< {r['settings']['question_min']}", ""),
    ])
    cm = r["clean_margin"]
    print("\nclean items by their best score as a question finding anywhere in the KB (check rerun at question_min "
          f"{cm['question_min_tried']}; copies in their own evidence count only as questions): " + ", ".join(f">= {k}: {v}" for k, v in cm["clean_items_at_or_above"].items()))
    for c in cm["closest"][:5]:
        print(f"  {c['item']} {c['score']} ({c['where']}) {c['question']!r} ~ {c['matched']!r}")
    if r["misses"]:
        print(f"\nmisses ({len(r['misses'])}):")
        for miss in r["misses"][:15]:
            chunks = "; ".join(f"{c['chunk_id']} rank {c['candidate_rank']} share {c['share']} "
                               f"containment {c['containment_alone']}"
                               + "".join(f" {k[12:]} {v}" for k, v in c.items() if k.startswith("containment_with"))
                               for c in miss["chunks"])
            print(f"  {miss['item']} [{miss['kind']}] {miss['needle']!r} (leak {miss['leak_text']!r}): {chunks}")
            print(f"      -> {miss['reason']}")
    if r["false_positive_examples"]:
        print(f"\nfalse positives ({r['false_positive_items']} items, {r['false_positive_findings']} findings, "
              f"by chunk origin {r['false_positive_where']}):")
        for fp in r["false_positive_examples"]:
            print(f"  {fp['item']} {fp['kind']} {fp['method']} {fp['score']} {fp['chunk_ids']} ({fp['where']}): "
                  f"{fp['question']!r} ~ {fp['matched']!r}")
    print("\nEmbeddings are not part of this benchmark (no model loaded): lexical index and containment only.")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the tables and write benchmarks/results/leakage.json."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="folder holding cmrc2018/ (default: ../shared/data beside the repo)")
    parser.add_argument("--sample", type=int, default=50,
                        help="questions timed against all chunks with all-pairs rapidfuzz (default 50)")
    parser.add_argument("--natural-only", action="store_true",
                        help="run only the natural-data cases (news, SciFact); print them, write nothing")
    args = parser.parse_args(argv)
    data = find_data(args.data)
    if args.natural_only:
        workdir = Path(tempfile.mkdtemp(prefix="curate-leakage-natural-"))
        try:
            report_natural(natural(data, workdir))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        return 0
    if not data or not any((data / "cmrc2018" / f).is_file() for f in FILES):
        where = args.data or " or ".join(str(p) for p in DEFAULT_DATA)
        print(f"No CMRC2018 data found in {where}; nothing to measure (pass --data DIR to point at it).")
        return 0
    print(f"data: {data}  cpus: {os.cpu_count()}  python {sys.version.split()[0]}  rapidfuzz {rapidfuzz.__version__}"
          f"  seed {SEED}, one process")
    load_before = os.getloadavg()
    workdir = Path(tempfile.mkdtemp(prefix="curate-leakage-bench-"))
    try:
        result = run(data, workdir, args.sample)
        result["natural"] = natural(data, workdir)
        result["met"]["natural"] = all(c["flagged_own_evidence_only"] == 0 and c["faq_controls_found"] == c["faq_controls"]
                                       for c in result["natural"].values())
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    load_after = os.getloadavg()
    report(result)
    report_natural(result["natural"])
    print(f"load average (1, 5, 15 min) at start {', '.join(f'{x:.2f}' for x in load_before)}, at end "
          f"{', '.join(f'{x:.2f}' for x in load_after)} (timings are noisy if other work shares the CPUs)")
    met = all(result["met"].values())
    print(f"targets: {'MET' if met else 'NOT MET'} ({', '.join(k for k, v in result['met'].items() if not v) or 'all met'}"
          f"{' failing' if not met else ''})"
          + ("" if os.cpu_count() == 2 else f" (note: this machine has {os.cpu_count()} CPUs; targets are for 2)"))
    save_json(RESULTS, {
        "benchmark": "leakage", "date": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
        "machine": machine(rapidfuzz=rapidfuzz.__version__, numpy=np.__version__, loadavg_start=load_before,
                           loadavg_end=load_after),
        "data": str(data), "seed": SEED, "timer": "time.perf_counter, single run, one process",
        "untimed": "building the benchmark and writing the snapshot; reading the CMRC2018 files",
        "embeddings": "not part of this benchmark; no model loaded",
        **result, "targets_met": met})
    print(f"wrote {RESULTS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
