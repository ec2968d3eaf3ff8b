"""Locating evidence quotes: how many copies differing in white space or a few characters are found, at
the right place, and what a quote costs, found or not, on CMRC 2018 and on a KB twelve times its size.

Run: `.venv/bin/python benchmarks/locate_quotes.py` (options: --data DIR holding cmrc2018/ and, optional,
scifact/, default ../shared/data beside the repo; --quotes N per set, default 300; --scale-quotes N per set
on the large KB, default 60; --before FILE, an earlier results file to print beside these figures, and
--before-label TEXT, what it measured);
writes benchmarks/results/locate_quotes.json. Without CMRC 2018 it says so and measures nothing.

Quotes are `curate.dataset.locate.Locator.by_text(quote)` over the whole KB (no doc_id), as `curate import`
and `curate remap` call it for an evidence text; the KB is built as `curate import --format squad` builds it
(one document per paragraph, structure chunks of 500 characters). Sets (each drawn with a fixed seed):

- `cmrc2018` KB, the 848 dev paragraphs as they are (447 of them hold some white space):
  `verbatim` (the sentence holding a question's answer, as the SQuAD reader takes it), `spaces_removed`
  (such a sentence that holds white space, all of it removed), `spaces_around_punctuation` (a space put on
  both sides of every CJK punctuation mark: "。 ", " ，", "： "), `perturbed` (one character in 20, at least
  one, replaced by another Chinese character: a fuzzy match), `not_in_kb` (sentences of the 256 trial
  paragraphs, which the dev set does not hold);
- `cmrc2018_segmented` KB, the same paragraphs segmented into words by jieba and joined by one space, as
  many Chinese corpora are ("港珠澳大桥 于 2018 年 开通 。"): `unsegmented` (the dev sentence copied from
  the unsegmented paragraph, no white space at all), `unsegmented_perturbed`, `not_in_kb`;
- `cmrc2018_scifact` KB (with scifact/ present), the dev paragraphs and the 5,183 SciFact abstracts
  (about 8 million characters, 6,031 documents): `not_in_kb_zh` (trial sentences), `not_in_kb_en`
  (SciFact claims, which paraphrase abstracts and are not copied from them), `not_in_kb_long_zh` (whole
  trial paragraphs, about 500 characters), `not_in_kb_long_en` (four claims joined, about 400 characters),
  `perturbed_zh`, `perturbed_en` (an abstract sentence, one letter in 20 replaced).

Sentences are those of `curate.text.sentences.sentence_spans`, 15 to 400 characters long. The quotes are
drawn from them, so two versions of the locating code compare on the same quotes only with the same
sentence splitter: run the older code with the current curate/text/sentences.py.

A quote is `found` when by_text returns a location, `right` when that location is in the quote's own
document and overlaps at least half of its true span; for `not_in_kb` sets every location found is
counted as `found` (a wrong place). Times are CPU time (time.process_time) around each by_text call, in
milliseconds (`ms_*`), because the machine is shared and wall time measures the neighbours too (`wall_ms_mean`
is given beside it); the first two calls on a KB, one Chinese and one English quote found nowhere (they build
its normalised forms and n-gram indexes), are timed apart as `first_call_s`, CPU seconds.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import statistics
import sys
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

from common import machine, print_table, save_json

from curate.dataset.locate import Locator
from curate.formats.squad import read_squad
from curate.kb import chunk_documents, sha256_text
from curate.records import ChunkerSettings, Document
from curate.text.sentences import sentence_spans

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results" / "locate_quotes.json"
DEFAULT_DATA = REPO.parent / "shared" / "data"
CHUNKER = ChunkerSettings(kind="structure", size=500)
CJK_PUNCTUATION = "，。、；：？！「」『』“”‘’（）《》"
# Replacement characters for perturbed Chinese quotes: common ones, so a replaced character is plausible.
ZH_REPLACEMENTS = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年"
EN_REPLACEMENTS = "etaoinshrdlu"


# -- quote sets -------------------------------------------------------------------------------------

def evidence_sentences(raws) -> list[tuple[str, int, int, str]]:
    """Return the distinct (doc_id, start, end, text) evidence spans the SQuAD reader took."""
    seen = {}
    for raw in raws:
        fields = getattr(raw, "fields", None)
        for entry in (fields or {}).get("evidence") or []:
            seen.setdefault((entry["doc_id"], entry["start"], entry["end"]), entry["text"])
    return [(doc, a, b, text) for (doc, a, b), text in seen.items()]


def perturbed(text: str, rng: random.Random, pool: str, every: int = 20) -> str:
    """Return `text` with one in `every` of its letters (at least one) replaced by another from `pool`."""
    letters = [i for i, c in enumerate(text) if c.isalpha()]
    chars = list(text)
    for i in rng.sample(letters, max(1, len(letters) // every)):
        chars[i] = rng.choice([c for c in pool if c != chars[i]])
    return "".join(chars)


def spaced_punctuation(text: str) -> str:
    return "".join(f" {c} " if c in CJK_PUNCTUATION else c for c in text).strip()


def segmented(doc: Document) -> tuple[Document, list[int]]:
    """Return the document segmented by jieba into words joined by one space, and where each original
    character went (-1 for white space, which segmentation replaces)."""
    import jieba
    jieba.setLogLevel(logging.WARNING)
    out, where, position = [], [-1] * len(doc.text), 0
    for word in jieba.cut(doc.text):
        if not word.strip():
            position += len(word)
            continue
        if out:
            out.append(" ")
        start = sum(map(len, out))
        for k, char in enumerate(word):
            if not char.isspace():
                where[position + k] = start + k
        out.append(word)
        position += len(word)
    text = "".join(out)
    return Document(doc_id=doc.doc_id, text=text, title=doc.title, text_sha256=sha256_text(text)), where


def moved(span: tuple[str, int, int, str], where: list[int]) -> tuple[str, int, int, str]:
    doc, a, b, text = span
    inside = [where[i] for i in range(a, b) if where[i] >= 0]
    return doc, inside[0], inside[-1] + 1, text


def scifact_documents(folder: Path) -> list[Document]:
    docs = []
    with (folder / "corpus.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            text = (row.get("title", "") + "\n\n" + row["text"]).strip()
            docs.append(Document(doc_id="scifact-" + row["_id"], text=text, text_sha256=sha256_text(text)))
    return docs


def sentences_of(docs: list[Document], shortest: int, longest: int = 400) -> list[tuple[str, int, int, str]]:
    return [(d.doc_id, a, b, d.text[a:b]) for d in docs for a, b in sentence_spans(d.text) if shortest <= b - a <= longest]


# -- measuring --------------------------------------------------------------------------------------

def locator_of(documents: list[Document]) -> tuple[Locator, float]:
    """Return a Locator over `documents` and the seconds of its first not-found call (its warm-up)."""
    locator = Locator(chunk_documents(documents, CHUNKER), documents)
    started = time.process_time()
    locator.by_text("这一句不在任何文档里，用来预热。")
    locator.by_text("This sentence is in no document at all, it warms up.")
    return locator, round(time.process_time() - started, 2)


def measure(locator: Locator, quotes: list[tuple[str, tuple[str, int, int, str] | None]]) -> dict:
    """Return what by_text did with (quote, true span or None when the KB does not hold it)."""
    times, walls, found, right, how = [], [], 0, 0, Counter()
    for quote, truth in quotes:
        started, wall = time.process_time(), time.perf_counter()
        location = locator.by_text(quote)
        times.append(time.process_time() - started)
        walls.append(time.perf_counter() - wall)
        if location is None:
            continue
        found += 1
        how[location.located_by] += 1
        if truth is not None and location.doc_id == truth[0] and location.start is not None:
            overlap = min(location.end, truth[2]) - max(location.start, truth[1])
            right += overlap >= (truth[2] - truth[1]) / 2
    ms = sorted(1000 * t for t in times)
    return {"quotes": len(quotes), "found": found, "right": right if quotes and quotes[0][1] else None,
            "located_by": dict(sorted(how.items())),
            "ms_mean": round(statistics.fmean(ms), 2) if ms else None,
            "ms_p50": round(ms[len(ms) // 2], 2) if ms else None,
            "ms_p95": round(ms[int(0.95 * (len(ms) - 1))], 2) if ms else None,
            "ms_max": round(ms[-1], 2) if ms else None,
            "wall_ms_mean": round(1000 * statistics.fmean(walls), 2) if walls else None}


def run(data: Path, quotes: int, scale_quotes: int) -> dict:
    rng = random.Random(21)
    cmrc = data / "cmrc2018"
    docs, raws = read_squad(cmrc / "cmrc2018_dev.json")
    trial_docs, _ = read_squad(cmrc / "cmrc2018_trial.json")
    spans = evidence_sentences(raws)
    by_id = {d.doc_id: d for d in docs}
    sample = rng.sample(spans, min(quotes, len(spans)))
    with_spaces = [s for s in spans if any(c.isspace() for c in s[3])]
    outside = [(text, None) for *_, text in rng.sample(sentences_of(trial_docs, 15), quotes)]
    results: dict = {"kbs": {}}

    locator, first = locator_of(docs)
    results["kbs"]["cmrc2018"] = {"documents": len(docs), "characters": sum(len(d.text) for d in docs),
                                  "first_call_s": first, "sets": {
        "verbatim": measure(locator, [(s[3], s) for s in sample]),
        "spaces_removed": measure(locator, [("".join(s[3].split()), s)
                                            for s in rng.sample(with_spaces, min(quotes, len(with_spaces)))]),
        "spaces_around_punctuation": measure(locator, [(spaced_punctuation(s[3]), s) for s in sample]),
        "perturbed": measure(locator, [(perturbed(s[3], rng, ZH_REPLACEMENTS), s) for s in sample]),
        "not_in_kb": measure(locator, outside)}}

    pairs = {d.doc_id: segmented(d) for d in docs}
    seg_docs = [doc for doc, _ in pairs.values()]
    locator, first = locator_of(seg_docs)
    truth = [moved(s, pairs[s[0]][1]) for s in sample]
    results["kbs"]["cmrc2018_segmented"] = {"documents": len(seg_docs),
                                            "characters": sum(len(d.text) for d in seg_docs),
                                            "first_call_s": first, "sets": {
        "unsegmented": measure(locator, [("".join(by_id[s[0]].text[s[1]:s[2]].split()), t)
                                         for s, t in zip(sample, truth)]),
        "unsegmented_perturbed": measure(locator, [(perturbed("".join(s[3].split()), rng, ZH_REPLACEMENTS), t)
                                                   for s, t in zip(sample, truth)]),
        "not_in_kb": measure(locator, outside)}}

    scifact = data / "scifact"
    if not (scifact / "corpus.jsonl").exists():
        results["kbs"]["cmrc2018_scifact"] = {"skipped": f"no {scifact}/corpus.jsonl"}
        return results
    science = scifact_documents(scifact)
    claims = [json.loads(line)["text"] for line in (scifact / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    locator, first = locator_of(docs + science)
    en = rng.sample(sentences_of(science, 40), scale_quotes)
    zh = sample[:scale_quotes]
    results["kbs"]["cmrc2018_scifact"] = {"documents": len(docs) + len(science),
                                          "characters": sum(len(d.text) for d in docs + science),
                                          "first_call_s": first, "sets": {
        "not_in_kb_zh": measure(locator, outside[:scale_quotes]),
        "not_in_kb_en": measure(locator, [(c, None) for c in rng.sample(claims, scale_quotes)]),
        "not_in_kb_long_zh": measure(locator, [(d.text, None) for d in rng.sample(trial_docs, scale_quotes)]),
        "not_in_kb_long_en": measure(locator, [(" ".join(rng.sample(claims, 4)), None) for _ in range(scale_quotes)]),
        "perturbed_zh": measure(locator, [(perturbed(s[3], rng, ZH_REPLACEMENTS), s) for s in zh]),
        "perturbed_en": measure(locator, [(perturbed(s[3], rng, EN_REPLACEMENTS), s) for s in en])}}
    return results


def show(results: dict, before: dict | None) -> None:
    rows = []
    for kb, figures in results["kbs"].items():
        if "skipped" in figures:
            rows.append((kb, figures["skipped"], "", "", "", "", ""))
            continue
        old_kb = ((before or {}).get("kbs") or {}).get(kb) or {}
        rows.append((f"{kb} ({figures['documents']:,} docs, first calls {figures['first_call_s']} s)", "", "", "", "",
                     "", ""))
        for name, m in figures["sets"].items():
            old = (old_kb.get("sets") or {}).get(name)
            right = "" if m["right"] is None else f"{m['right']}"
            rows.append((f"  {name}", m["quotes"], m["found"], right, m["ms_mean"], m["ms_max"],
                         "" if old is None else f"{old['found']} found, {old['right'] or '-'} right, "
                                                f"{old['ms_mean']} ms (max {old['ms_max']})"))
    print_table(("set", "quotes", "found", "right", "CPU ms mean", "CPU ms max", "before"), rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder holding cmrc2018/ (and scifact/)")
    parser.add_argument("--quotes", type=int, default=300, help="quotes per set (default 300)")
    parser.add_argument("--scale-quotes", type=int, default=60, help="quotes per set on the large KB (default 60)")
    parser.add_argument("--before", type=Path, help="an earlier results file, printed beside these figures")
    parser.add_argument("--before-label", help="what --before measured (default: its file name)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if not (args.data / "cmrc2018" / "cmrc2018_dev.json").exists():
        print(f"no {args.data / 'cmrc2018'}/cmrc2018_dev.json: nothing measured")
        return 0
    results = run(args.data, args.quotes, args.scale_quotes)
    before = json.loads(args.before.read_text(encoding="utf-8")) if args.before else None
    show(results, before)
    save_json(args.out, {"benchmark": "locate_quotes", "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                         "machine": machine(), "chunker": CHUNKER.model_dump(), "quotes": args.quotes,
                         "scale_quotes": args.scale_quotes, **results,
                         **({"before": {"label": args.before_label or args.before.name, **before}} if before else {})})
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
