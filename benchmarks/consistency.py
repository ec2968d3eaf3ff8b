"""Judge quality and runner overhead of `curate check-consistency` (issue 4: point 5 and "Speed").

Run: `.venv/bin/python benchmarks/consistency.py [--items N] [--repeat R] [--concurrency C] [--judge-base-url URL
--judge-model M --judge-api-key-env VAR | --llama] [--part all|judge|speed] [--data DIR]`. Needs <data>/cmrc2018/
cmrc2018_dev.json (missing: says so, exits 0), uses <data>/scifact if present; writes benchmarks/results/
consistency.json.

Part 1: a set with known defects (CMRC2018 dev in Chinese; SciFact in English, which has no answers: a claim its cited
abstract SUPPORTs is asked "Is it true that <claim>?" with the rationale sentences as evidence, "Yes. <claim>" as
answer and the claim as key point), imported as SQuAD into a temporary workspace. Per language N/2 items per defect:
shuffled_answer and swapped_key_point (answer and key point, or the key point alone, of an item of another document),
false_unanswerable (marked unanswerable, evidence removed, the KB still holds the answer); beside them 1.5N clean
items and 0.5N truly unanswerable controls (held-out CMRC articles; SciFact claims with no evidence). Judge: the flags,
else CURATE_JUDGE_*; --llama runs SmolLM2 (meaningless verdicts). Recall is over defect items whose target check was
scored; precision counts clean items flagged by that check; flip rate: tasks whose verdicts differ across repeats.
Part 2: 2,000 tasks through check_consistency at concurrency 16 against an instant scripted server in this process,
cold (fresh workspace) then warm (all cached, 0 requests); data building not timed. Target: cold < 20 s on 2 cores.
"""

import argparse
import contextlib
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # for tests/servers.py

from common import machine, save_json  # noqa: E402

from curate.checks.consistency import CONSISTENCY, check_consistency, plan  # noqa: E402
from curate.dataset import DatasetStore, import_items  # noqa: E402
from curate.errors import InputError  # noqa: E402
from curate.judge.config import JudgeConfig, resolve  # noqa: E402
from curate.records import KeyPoint  # noqa: E402
from curate.workspace import init_workspace  # noqa: E402
from tests.support.servers import LlamaServer, ScriptedServer  # noqa: E402

RESULTS = REPO / "benchmarks" / "results" / "consistency.json"
DEFAULT_DATA = REPO.parent / "shared" / "data"
SEED = 20240611
TARGET_CHECK = {"shuffled_answer": "answers_question", "swapped_key_point": "key_point_supported",
                "false_unanswerable": "unanswerable_check"}
KINDS = tuple(TARGET_CHECK)
CHECKS = ("answers_question", "key_point_supported", "answer_against_evidence", "unanswerable_check")
GROUPS = ("clean", "clean_unanswerable") + KINDS
LLAMA_MAX_ITEMS = 2
SPEED = {"tasks": 2000, "concurrency": 16, "cold_s_max": 20.0, "warm_requests_max": 0, "cores": 2}
HOW_TO = ("configure a judge to measure it: CURATE_JUDGE_BASE_URL=https://api.openai.com/v1 CURATE_JUDGE_MODEL="
          "gpt-4o-mini CURATE_JUDGE_API_KEY_ENV=OPENAI_API_KEY (any OpenAI-compatible endpoint: vLLM, Ollama, DeepSeek,"
          " Qwen), or --judge-base-url/--judge-model/--judge-api-key-env; --llama only exercises the path")


# -- data ------------------------------------------------------------------------------------------------

def load_cmrc(path: Path) -> list[dict]:
    """Return CMRC2018 paragraphs as {id, title, context, qas}."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    return [{"id": p["id"], "title": a.get("title"), "context": p["context"], "qas": p["qas"]}
            for a in data for p in a["paragraphs"]]


def load_scifact(folder: Path) -> tuple[list[dict], list[dict], list[dict]]:
    """Return (abstracts as SQuAD paragraphs, supported claims as SQuAD questions, claims with no evidence)."""
    with (folder / "corpus.jsonl").open(encoding="utf-8") as handle:
        corpus = {r["_id"]: r for r in map(json.loads, handle)}
    supported, unsupported = [], []
    with (folder / "queries.jsonl").open(encoding="utf-8") as handle:
        for query in map(json.loads, handle):
            claim = query["text"].strip().rstrip(".")
            claim = claim[0].lower() + claim[1:] if claim[:2].istitle() else claim  # not "ADAR1", "A mutation"
            qa = {"id": f"scifact-{query['_id']}", "question": f"Is it true that {claim}?", "claim": query["text"]}
            if not query.get("metadata"):
                unsupported.append(qa)
            for doc_id, groups in (query.get("metadata") or {}).items():
                group = next((g for g in groups if g["label"] == "SUPPORT"), None)
                if group and doc_id in corpus:  # the abstract's text is its sentences joined by spaces
                    sentences, (first, last) = corpus[doc_id]["sentences"], (min(group["sentences"]),
                                                                             max(group["sentences"]))
                    start = len(" ".join(sentences[:first])) + (1 if first else 0)
                    answer = corpus[doc_id]["text"][start:len(" ".join(sentences[:last + 1]))]
                    supported.append(qa | {"doc": f"sf-{doc_id}", "answers": [{"text": answer, "answer_start": start}]})
                    break
    return ([{"id": f"sf-{d}", "title": r.get("title"), "context": r["text"], "qas": []} for d, r in corpus.items()],
            supported, unsupported)


def squad_file(path: Path, paragraphs: list[dict]) -> Path:
    """Write `paragraphs` as a SQuAD file (one article per paragraph) and return its path."""
    data = [{"title": p["title"], "paragraphs": [{"id": p["id"], "context": p["context"], "qas": p["qas"]}]}
            for p in paragraphs]
    path.write_text(json.dumps({"version": "bench", "data": data}, ensure_ascii=False), encoding="utf-8")
    return path


def build_source(data: Path, per_kind: int, rng: random.Random) -> tuple[list[dict], dict, dict[str, int]]:
    """Return (SQuAD paragraphs holding the chosen questions, claim by SciFact item id, items per kind by language)."""
    has_en = all((data / "scifact" / name).is_file() for name in ("corpus.jsonl", "queries.jsonl"))
    counts = {"zh": (per_kind + 1) // 2 if has_en else per_kind}
    counts["en"] = per_kind - counts["zh"]
    cmrc = load_cmrc(data / "cmrc2018" / "cmrc2018_dev.json")
    rng.shuffle(cmrc)
    controls_of = {language: max(1, n // 2) if n else 0 for language, n in counts.items()}
    held = set(rng.sample(sorted({p["title"] for p in cmrc}), controls_of["zh"]))
    kb = [dict(p, qas=[]) for p in cmrc if p["title"] not in held]
    questions = {p["id"]: p["qas"] for p in cmrc}
    order = sorted((q, rank) for rank, p in enumerate(kb) for q in range(len(questions[p["id"]])))
    for q, rank in order[:int(counts["zh"] * 5.4) + 4]:  # 3 kinds + 1.5 clean, 20% spare
        kb[rank]["qas"].append(questions[kb[rank]["id"]][q])
    controls = [p["qas"][0] for p in cmrc if p["title"] in held][:controls_of["zh"]]
    claims = {}
    if counts["en"]:
        abstracts, supported, unsupported = load_scifact(data / "scifact")
        rng.shuffle(supported)
        rng.shuffle(unsupported)
        where = {p["id"]: p for p in abstracts}
        for qa in supported[:int(counts["en"] * 5.4) + 4]:
            where[qa["doc"]]["qas"].append({"id": qa["id"], "question": qa["question"], "answers": qa["answers"]})
            claims[qa["id"]] = qa["claim"]
        controls += unsupported[:controls_of["en"]]
        kb += abstracts
    kb[0]["qas"] += [{"id": qa["id"], "question": qa["question"], "answers": [], "is_impossible": True}
                     for qa in controls]
    return kb, claims, counts


def pick_donor(item, pool: list, documents: dict[str, str], rng: random.Random):
    """Return an item of another document whose key point does not occur in `item`'s document."""
    own = documents[item.evidence[0].doc_id].casefold()
    for _ in range(200):
        donor = rng.choice(pool)
        text = donor.key_points[0].text.casefold()
        if donor.evidence[0].doc_id != item.evidence[0].doc_id and text not in own:
            return donor
    raise RuntimeError(f"no donor found for {item.id}")


def build_defects(ws, source: list[dict], claims: dict, counts: dict, rng: random.Random) -> tuple[dict, dict]:
    """Inject the defects into the imported items; return (group by item id, gold chunks of false_unanswerable)."""
    store = DatasetStore(ws)
    meta, items = store.load("defects")
    documents = {p["id"]: p["context"] for p in source}
    for item in items:
        if item.id in claims:
            item.reference_answer = "Yes. " + claims[item.id]
            item.key_points = [KeyPoint(text=claims[item.id], evidence_ids=[item.evidence[0].evidence_id])]
    originals = {i.id: i.model_copy(deep=True) for i in items}
    truth, gold = {}, {}
    for language, n in counts.items():
        answerable = [i for i in items if i.language == language and i.answerable and i.key_points and i.evidence]
        rng.shuffle(answerable)
        pool = [originals[i.id] for i in answerable]
        groups = [kind for kind in KINDS for _ in range(n)] + ["clean"] * (max(1, n * 3 // 2) if n else 0)
        if len(groups) > len(answerable):
            raise RuntimeError(f"only {len(answerable)} usable {language} items, {len(groups)} needed")
        for kind, item in zip(groups, answerable):
            truth[item.id] = kind
            if kind in ("shuffled_answer", "swapped_key_point"):
                donor = pick_donor(item, pool, documents, rng)
                point = donor.key_points[0].text
                item.key_points = [KeyPoint(text=point, evidence_ids=item.key_points[0].evidence_ids)]
                if kind == "shuffled_answer":
                    item.reference_answer = donor.reference_answer
            elif kind == "false_unanswerable":
                gold[item.id] = sorted({c for e in item.evidence for c in e.chunk_ids})
                item.answerable, item.evidence, item.reference_answer, item.key_points = False, [], None, []
                item.qtype = "unanswerable"
        truth |= {i.id: "clean_unanswerable" for i in items if i.language == language and not i.answerable
                  and i.id not in truth}
    store.save(meta, [i for i in items if i.id in truth])
    return truth, gold


# -- part 1: measuring a judge -----------------------------------------------------------------------------

@contextlib.contextmanager
def stderr_to(path: Path):
    """Send this process's standard error (llama.cpp's C logging too) to `path` while inside."""
    sys.stderr.flush()
    saved, handle = os.dup(2), path.open("wb")
    os.dup2(handle.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        handle.close()


def ratio(part: int, whole: int) -> float | None:
    """Return part / whole, or None when whole is 0."""
    return part / whole if whole else None


def cell(value, spec: str = "") -> str:
    """Return `value` formatted with `spec`, or '-' when there is none."""
    return "-" if value is None else format(value, spec)


def print_table(header: tuple, lines: list[tuple]) -> None:
    """Print a plain-text table, first two columns left-aligned."""
    lines = [header] + [tuple(map(str, line)) for line in lines]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for index, line in enumerate(lines):
        print("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))))
        if index == 0:
            print("  ".join("-" * w for w in widths))


def score(report, truth: dict, gold: dict, languages: dict) -> dict:
    """Return detection per defect kind and language, flags per check and group, unscored tasks and flips."""
    state: dict = {}  # (item, check) -> [scored, flagged]
    for outcome in report.outcomes:
        entry = state.setdefault((outcome.task.item_id, outcome.task.check), [False, False])
        entry[0] |= bool(outcome.scored)
        entry[1] |= outcome.flagged
    flagged_any = {item for (item, _), (_, flag) in state.items() if flag}
    shown = {o.task.item_id: o.task.payload["chunks"] for o in report.outcomes if o.task.check == "unanswerable_check"}
    rows = []
    for kind, check in TARGET_CHECK.items():
        clean = "clean_unanswerable" if kind == "false_unanswerable" else "clean"
        for language in ("zh", "en", "all"):
            items, controls = ([i for i, g in truth.items() if g == group and language in ("all", languages[i])]
                               for group in (kind, clean))
            if not items:
                continue
            scored, clean_scored = ([i for i in group if state.get((i, check), [0])[0]] for group in (items, controls))
            detected, false_pos = (sum(state[(i, check)][1] for i in group) for group in (scored, clean_scored))
            row = {"kind": kind, "language": language, "items": len(items), "check": check, "scored": len(scored),
                   "detected": detected, "recall": ratio(detected, len(scored)), "clean_scored": len(clean_scored),
                   "clean_flagged": false_pos, "precision": ratio(detected, detected + false_pos),
                   "recall_any_check": ratio(sum(i in flagged_any for i in items), len(items))}
            if kind == "false_unanswerable":
                hits = [i for i in items if any(f"[{c}]" in shown.get(i, "") for c in gold[i])]
                row["gold_chunk_retrieved"] = ratio(len(hits), len(items))
                row["recall_when_retrieved"] = ratio(sum(state.get((i, check), [0, 0])[1] for i in hits), len(hits))
            rows.append(row)
    by_check = {c: {g: [0, 0] for g in GROUPS} for c in CHECKS}  # check -> group -> [flagged, scored]
    for (item, check), (scored, flagged) in state.items():
        by_check[check][truth[item]][0] += flagged
        by_check[check][truth[item]][1] += scored
    repeated = [o for o in report.outcomes if len(o.scored) >= 2]
    flips = {c: [sum(o.flipped for o in repeated if o.task.check == c), sum(o.task.check == c for o in repeated)]
             for c in CHECKS}
    return {"rows": rows, "flags_by_check": by_check, "flips_by_check": flips, "tasks": len(report.outcomes),
            "flip_rate": ratio(sum(o.flipped for o in repeated), len(repeated)),
            "tasks_repeated_and_scored": len(repeated), "unscored_tasks_by_reason": dict(report.unscored),
            "unscored_answers_by_reason": dict(report.judge.stats.unscored),
            "clean_items_flagged_any_check": sum(i in flagged_any for i, g in truth.items() if g.startswith("clean"))}


def print_judge(result: dict, stats, config: JudgeConfig, seconds: float, repeat: int, k: int) -> None:
    """Print the judge's figures."""
    print(f"judge {config.model} at {config.base_url}: {result['tasks']} tasks x {repeat} in {seconds:.1f} s, "
          f"{stats.requests} requests, {stats.cache_hits} cache hits, {stats.retries} retries, {stats.repairs} repairs,"
          " "
          f"tokens {stats.prompt_tokens:,} in / {stats.completion_tokens:,} out, cost {cell(stats.cost, '.4f')} USD")
    print_table(("defect", "lang", "items", "target check", "scored", "detected", "recall", "clean flagged",
                 "precision", "any-check recall", f"gold in top {k}", "recall if gold"),
                [(r["kind"], r["language"], r["items"], r["check"], r["scored"], r["detected"],
                  cell(r["recall"], ".2f"), f"{r['clean_flagged']}/{r['clean_scored']}", cell(r["precision"], ".2f"),
                  cell(r["recall_any_check"], ".2f"), cell(r.get("gold_chunk_retrieved"), ".0%"),
                  cell(r.get("recall_when_retrieved"), ".2f")) for r in result["rows"]])
    print("flagged/scored per check and group of items:")
    print_table(("check",) + GROUPS, [(c,) + tuple("{}/{}".format(*result["flags_by_check"][c][g]) for g in GROUPS)
                                      for c in CHECKS])
    print(f"unscored tasks by reason: {result['unscored_tasks_by_reason'] or 'none'}; unscored answers (of "
          f"{stats.requests + stats.cache_hits} asked): {result['unscored_answers_by_reason'] or 'none'}")
    print(f"flip rate: {cell(result['flip_rate'], '.1%')} of {result['tasks_repeated_and_scored']} tasks with >= 2 "
          f"scored verdicts (flipped/repeated per check: {result['flips_by_check']})")


def measure_judge(args, data: Path, tmp: Path) -> dict:
    """Build the defect set, run check-consistency with the judge, print and return the figures."""
    config = None
    if not args.llama:
        try:
            config = resolve(None, base_url=args.judge_base_url, model=args.judge_model,
                             api_key_env=args.judge_api_key_env, concurrency=args.concurrency)
        except InputError as exc:
            print(f"part 1 skipped: {exc}.\n  To {HOW_TO}.")
            return {"skipped": str(exc)}
    per_kind = min(args.items, LLAMA_MAX_ITEMS) if args.llama else args.items
    if args.llama:
        print(f"{'*' * 100}\n*** --llama: SmolLM2-135M judges. ITS VERDICTS ARE MEANINGLESS (135M parameters, fails "
              "Chinese);\n*** this only exercises the HTTP path, repeats and unscored reasons. Items capped at "
              f"{per_kind} per kind.")
    rng = random.Random(SEED)
    started = time.perf_counter()
    source, claims, counts = build_source(data, per_kind, rng)
    ws = init_workspace(tmp / "judge-ws")
    import_items(ws, squad_file(tmp / "defects.json", source), dataset="defects", source="human", format="squad",
                 skip_invalid=True)
    truth, gold = build_defects(ws, source, claims, counts, rng)
    languages = {i.id: i.language for i in DatasetStore(ws).items("defects")}
    build_s = time.perf_counter() - started
    print(f"defect set: {len(truth)} items {dict(Counter(truth.values()))}, per kind zh {counts['zh']} / en "
          f"{counts['en']}, KB {len(source):,} documents; built in {build_s:.1f} s (not timed below)")
    with contextlib.ExitStack() as stack:
        if args.llama:  # its log goes to a file in the temporary folder
            stack.enter_context(stderr_to(tmp / "llama.log"))
            server = stack.enter_context(contextlib.closing(LlamaServer(parallel=args.concurrency or 2)))
            config = JudgeConfig(base_url=server.base_url, model="smollm2-135m", max_tokens=80, timeout=120,
                                 concurrency=args.concurrency or 2)
        started = time.perf_counter()
        report = check_consistency(ws, dataset="defects", config=config, repeat=args.repeat)
        check_s = time.perf_counter() - started
    result, stats = score(report, truth, gold, languages), report.judge.stats
    print_judge(result, stats, config, check_s, args.repeat, report.record.settings["k"])
    if args.llama:
        print("*** REMINDER: SmolLM2's verdicts are meaningless; these figures say nothing about judge quality. ***")
    return {"llama_smollm2": args.llama, "meaningless_verdicts": args.llama, "judge": config.public(),
            "prompt_versions": CONSISTENCY.versions(), "repeat": args.repeat, "items_per_kind": per_kind,
            "items_per_kind_by_language": counts, "items": dict(Counter(truth.values())), "kb_documents": len(source),
            "build_s": build_s, "check_s": check_s, "check_s_includes": "BM25 index of the KB, built on first use",
            "cost_usd": stats.cost, **{name: getattr(stats, name) for name in (
                "requests", "cache_hits", "retries", "repairs", "prompt_tokens", "completion_tokens")}, **result}


# -- part 2: runner overhead -------------------------------------------------------------------------------

INSTANT = {'"yes"': {"verdict": "yes"}, '"not_supported"': {"verdict": "supported"},
           '"contradicts"': {"verdict": "consistent"}, '"unanswerable"': {"verdict": "unanswerable", "chunk": None}}


def instant_verdict(messages: list[dict]) -> str:
    """Answer any consistency prompt with a valid, positive verdict, at once."""
    tail = messages[-1]["content"][-240:]
    return json.dumps(next(v for marker, v in INSTANT.items() if marker in tail) | {"reason": "scripted"})


def speed_dataset(ws, data: Path, tmp: Path, tasks: int) -> int:
    """Import CMRC items into `ws`, keep the first ones giving exactly `tasks` tasks; return how many items."""
    cmrc, budget = load_cmrc(data / "cmrc2018" / "cmrc2018_dev.json"), int(tasks / 3 * 1.3) + 10
    for paragraph in cmrc:
        paragraph["qas"], budget = paragraph["qas"][:max(0, budget)], budget - len(paragraph["qas"])
    import_items(ws, squad_file(tmp / "speed.json", cmrc), dataset="speed", source="human", format="squad",
                 skip_invalid=True)
    store = DatasetStore(ws)
    meta, items = store.load("speed")
    kept, total = [], 0
    for item in items:
        if total + len(plan([item])) > tasks:
            item.key_points = []  # 3 tasks -> 2
        if 0 < len(plan([item])) <= tasks - total:
            kept.append(item)
            total += len(plan([item]))
    store.save(meta, kept)
    if total != tasks:
        raise RuntimeError(f"built {total} tasks, wanted {tasks}")
    return len(kept)


def measure_speed(data: Path, tmp: Path) -> dict:
    """Time check_consistency over SPEED['tasks'] tasks against the instant server, cold then warm."""
    ws = init_workspace(tmp / "speed-ws")
    items = speed_dataset(ws, data, tmp, SPEED["tasks"])
    server = ScriptedServer(instant_verdict)
    config = JudgeConfig(base_url=server.base_url, model="scripted-instant", concurrency=SPEED["concurrency"])
    runs = {}
    try:
        for name in ("cold", "warm"):
            before, cpu, started = server.requests, time.process_time(), time.perf_counter()
            report = check_consistency(ws, dataset="speed", config=config)
            seconds, stats = time.perf_counter() - started, report.judge.stats
            runs[name] = {"seconds": seconds, "cpu_s": time.process_time() - cpu, "tasks": report.record.tasks,
                          "server_requests": server.requests - before, "judge_requests": stats.requests,
                          "cache_hits": stats.cache_hits, "flagged_items": len(report.flagged),
                          "unscored": dict(report.unscored), "max_in_flight": stats.max_in_flight,
                          "tasks_per_s": report.record.tasks / seconds}
    finally:
        server.close()
    cold, warm = runs["cold"], runs["warm"]
    met = {"cold": cold["seconds"] < SPEED["cold_s_max"] and cold["server_requests"] == SPEED["tasks"]
           and not cold["unscored"], "warm": warm["server_requests"] <= SPEED["warm_requests_max"]}
    print_table(("run", "cache", "tasks", "seconds", "cpu s", "tasks/s", "requests", "cache hits", "max in flight",
                 "unscored", "target"),
                [(name, "empty" if name == "cold" else "full", r["tasks"], f"{r['seconds']:.2f}", f"{r['cpu_s']:.2f}",
                  f"{r['tasks_per_s']:,.0f}", r["server_requests"], r["cache_hits"], r["max_in_flight"],
                  sum(r["unscored"].values()), ("PASS" if met[name] else "FAIL")
                  + (f" (< {SPEED['cold_s_max']:g} s)" if name == "cold" else " (0 requests)"))
                 for name, r in runs.items()])
    print(f"target: {SPEED['tasks']:,} checks cold in < {SPEED['cold_s_max']:g} s on {SPEED['cores']} cores: "
          f"{'MET' if met['cold'] else 'NOT MET'}; warm re-run makes 0 requests: {'MET' if met['warm'] else 'NOT MET'}"
          + ("" if os.cpu_count() == SPEED["cores"] else f" (note: this machine has {os.cpu_count()} CPUs)"))
    return {"items": items, "concurrency": SPEED["concurrency"], "runs": runs, "met": met,
            "per_task_ms_cold": 1000 * cold["seconds"] / cold["tasks"]}


# -- main --------------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    """Run the parts, print their tables and write benchmarks/results/consistency.json."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="folder holding cmrc2018/ and scifact/ (default: ../shared/data)")
    parser.add_argument("--items", type=int, default=60, help="items per defect kind (clean: twice as many)")
    parser.add_argument("--repeat", type=int, default=2, help="judge each task this many times (flip rate)")
    parser.add_argument("--concurrency", type=int, help="requests in flight to the judge")
    for flag in ("--judge-base-url", "--judge-model", "--judge-api-key-env"):  # the key's variable NAME, never a key
        parser.add_argument(flag)
    parser.add_argument("--llama", action="store_true", help="judge with SmolLM2 in llama.cpp (meaningless verdicts)")
    parser.add_argument("--part", choices=("all", "judge", "speed"), default="all")
    args = parser.parse_args(argv)
    data = Path(args.data) if args.data else DEFAULT_DATA
    if not (data / "cmrc2018" / "cmrc2018_dev.json").is_file():
        print(f"No benchmark data found in {data} (needs cmrc2018/cmrc2018_dev.json); nothing to measure "
              "(pass --data DIR to point at it).")
        return 0
    load = os.getloadavg()
    print(f"data: {data}  cpus: {os.cpu_count()}  load average {load[0]:.1f}  python {sys.version.split()[0]}")
    results = {"benchmark": "consistency", "date": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
               "machine": machine(load_average_at_start=load),
               "data": str(data), "seed": SEED, "parts": args.part,
               "settings": {"items_per_kind": args.items, "repeat": args.repeat, "concurrency": args.concurrency,
                            "llama": args.llama, "speed": SPEED},
               "timer": "time.perf_counter around check_consistency, one process; building the data not timed"}
    with tempfile.TemporaryDirectory(prefix="curate-consistency-") as tmp:
        if args.part in ("all", "judge"):
            print("\n== part 1: measuring a judge (issue 4, point 5) ==")
            results["judge_quality"] = measure_judge(args, data, Path(tmp))
        if args.part in ("all", "speed"):
            print(f"\n== part 2: runner overhead, {SPEED['tasks']:,} tasks at concurrency {SPEED['concurrency']} "
                  "against an instant scripted server ==")
            results["runner_overhead"] = measure_speed(data, Path(tmp))
    results["machine"]["load_average_at_end"] = os.getloadavg()
    results["targets"] = {"speed_cold_s_max": SPEED["cold_s_max"], "speed_warm_requests": SPEED["warm_requests_max"],
                          "met": results.get("runner_overhead", {}).get("met")}
    save_json(RESULTS, results)  # a temporary file beside it, then os.replace
    print(f"wrote {RESULTS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
