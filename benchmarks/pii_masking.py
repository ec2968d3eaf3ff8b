"""Personal data in production logs: what masking misses, what it masks that it should not, and how long
a long input takes.

Run: `.venv/bin/python benchmarks/pii_masking.py` (`--small` for a quick run: long inputs of 60 KB and
600 KB instead of 600 KB and 6 MB). Writes benchmarks/results/pii_masking.json (not with --small).

1. Planted set (benchmarks/pii_data.py): personal data of every kind `curate add-failures` masks, written
   into realistic Chinese and English support-log sentences the way users write it (phones with dashes,
   slashes, underscores, spaces, Chinese numerals; e-mail with Chinese domains or spelled out; WeChat and
   QQ after their spellings; ID numbers and cards after the word that names them whatever their check
   digits; passports; plates; numbers inside row ids). A value is missed when five of its characters in a
   row survive masking, or its kind's placeholder is absent. Beside it, look-alikes (order numbers,
   amounts, error codes, dates, versions, model numbers, barcodes, timestamps): any change is a false
   mask. Names and street addresses are planted too and counted apart: they are not masked.
2. Speed on short texts: the planted and look-alike sentences, masked 200 times over (µs per text).
3. Long inputs: one text (a pasted log: sentences holding phones, e-mail, ID numbers, order numbers and
   amounts) masked at two sizes, ten times apart (linear: about ten times the time); then `add_failures`
   end to end, in a fresh workspace with the bundled handbook (semantic pass on), on a log of one failing
   row whose question, answer or retrieved context is that long text, each in a fresh process.

Times are wall and CPU seconds (CPU: this process's own, which a busy shared machine inflates far less).
"""

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import machine, print_table, save_json
from pii_data import LOOKALIKES, NOT_MASKED, PLANTED

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results" / "pii_masking.json"
HANDBOOK = REPO / "examples" / "handbook"
SIZES = (600_000, 6_000_000)
SMALL_SIZES = (60_000, 600_000)
_WIDE = str.maketrans({chr(0xFF10 + d): str(d) for d in range(10)})
SENTENCES = ["网关的日志可以导出到 S3 吗？", "请拨打 13812345678 咨询，", "订单号 20261103 金额 89.99 元，",
             "Why is LG-4031 returned after upgrade 3.2.1? ", "邮箱 a.b@example.com ", "身份证 11010519491231002X ",
             "座机 010-62345678 转 8001，", "call +44 20 7946 0958 now. "]


def _alnum(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z\u4e00-\u9fff]", "", text.translate(_WIDE))


def missed(value: str, masked: str) -> bool:
    """Return whether five characters of `value` in a row (its punctuation aside) survive in `masked`."""
    value, masked = _alnum(value), _alnum(masked)
    n = min(5, len(value))
    return any(value[i:i + n] in masked for i in range(len(value) - n + 1))


def quality() -> dict:
    """Mask the planted set and the look-alikes; return the misses and false masks, by kind."""
    from curate.failures.pii import Scrubber
    scrubber = Scrubber()
    by_kind: dict[str, dict] = {}
    misses, false_masks, unmasked = [], [], []
    for kind, text, value, field in PLANTED:
        masked = scrubber.scrub_id(text) if field == "id" else scrubber.scrub(text)
        entry = by_kind.setdefault(kind, {"planted": 0, "missed": 0})
        entry["planted"] += 1
        if missed(value, masked) or f"[{kind}]" not in masked:
            entry["missed"] += 1
            misses.append({"kind": kind, "text": text, "masked": masked})
    for text in LOOKALIKES:
        masked = Scrubber().scrub(text)
        if masked != text:
            false_masks.append({"text": text, "masked": masked})
    for kind, text, value in NOT_MASKED:
        if missed(value, Scrubber().scrub(text)):
            unmasked.append({"kind": kind, "text": text})
    return {"planted": len(PLANTED), "missed": len(misses), "lookalikes": len(LOOKALIKES),
            "false_masks": len(false_masks), "by_kind": by_kind, "misses": misses, "false_mask_examples": false_masks,
            "names_and_addresses": {"planted": len(NOT_MASKED), "left_unmasked": len(unmasked)}}


def short_speed(rounds: int = 200) -> dict:
    """Return the µs per text of masking the benchmark's sentences, `rounds` times over."""
    from curate.failures.pii import Scrubber
    texts = [t for _, t, _, _ in PLANTED] + LOOKALIKES
    scrubber = Scrubber()
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(rounds):
        for text in texts:
            scrubber.scrub(text)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"texts": len(texts) * rounds, "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2),
            "us_per_text": round(seconds / (len(texts) * rounds) * 1e6, 1),
            "cpu_us_per_text": round(cpu / (len(texts) * rounds) * 1e6, 1)}


def long_text(size: int, seed: int = 7) -> str:
    """Return a pasted log of about `size` characters (deterministic)."""
    rng = random.Random(seed)
    parts, length = [], 0
    while length < size:
        parts.append(rng.choice(SENTENCES))
        length += len(parts[-1])
    return "".join(parts)[:size]


def long_masking(sizes: tuple[int, int]) -> dict:
    """Return the seconds of masking the long text at both sizes, and their ratio."""
    from curate.failures.pii import Scrubber
    seconds, cpu = {}, {}
    for size in sizes:
        text = long_text(size)
        start, cpu[size] = time.perf_counter(), time.process_time()
        masked = Scrubber().scrub(text)
        seconds[size], cpu[size] = time.perf_counter() - start, time.process_time() - cpu[size]
        assert "13812345678" not in masked
    small, large = sizes
    return {"chars": list(sizes), "seconds": [round(seconds[s], 2) for s in sizes],
            "cpu_seconds": [round(cpu[s], 2) for s in sizes], "cpu_ratio": round(cpu[large] / cpu[small], 1)}


def one(log: Path) -> dict:
    """In this process: a fresh workspace with the handbook, then add_failures over `log`, timed."""
    from curate.dataset import import_items
    from curate.failures.add import add_failures
    from curate.kb import ingest
    from curate.workspace import init_workspace
    with tempfile.TemporaryDirectory() as folder:
        workspace = init_workspace(Path(folder) / "ws", default_kb="handbook")
        ingest(workspace, [HANDBOOK / "docs"], name="handbook")
        import_items(workspace, HANDBOOK / "questions.jsonl", dataset="handbook", source="human")
        start, cpu = time.perf_counter(), time.process_time()
        report = add_failures(workspace, [log], dataset="handbook", month="2026-11")
        return {"seconds": round(time.perf_counter() - start, 2), "cpu_seconds": round(time.process_time() - cpu, 2),
                "added": report.batch.counts["added"],
                "personal_data_masked": report.batch.counts["personal_data_masked"],
                "too_long_to_compare": report.batch.counts.get("too_long_to_compare", 0)}


def long_add_failures(size: int) -> dict:
    """Return add_failures' seconds on a log whose one failing row has a `size`-character question, answer
    or retrieved context, each in a fresh process."""
    text = long_text(size)
    runs = {}
    with tempfile.TemporaryDirectory() as folder:
        for field in ("question", "answer", "contexts"):
            row = {"question": text if field == "question" else "升级需要多长时间？", "feedback": "thumbs_down",
                   "timestamp": "2026-11-02T10:00:00Z"}
            if field != "question":
                row[field] = [text] if field == "contexts" else text
            log = Path(folder) / f"{field}.jsonl"
            log.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
            env = {**os.environ, "PYTHONPATH": str(REPO)}
            done = subprocess.run([sys.executable, __file__, "--one", str(log)], capture_output=True, text=True,
                                  env=env, check=True)
            runs[field] = json.loads(done.stdout.strip().splitlines()[-1])
    return runs


def main(argv: list[str] | None = None) -> int:
    """Measure the three parts (see the module docstring), print them and save them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="long inputs of 60 KB and 600 KB; nothing saved")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)   # internal: one add_failures run
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one)))
        return 0
    sizes = SMALL_SIZES if args.small else SIZES
    found = quality()
    speed = short_speed(20 if args.small else 200)
    masking = long_masking(sizes)
    end_to_end = long_add_failures(sizes[1])
    rows = [(kind, v["planted"], v["missed"]) for kind, v in sorted(found["by_kind"].items())]
    rows.append(("all", found["planted"], found["missed"]))
    print_table(("planted personal data", "planted", "missed"), rows)
    print(f"look-alikes: {found['lookalikes']}, masked by mistake: {found['false_masks']}")
    for miss in found["misses"]:
        print(f"  missed {miss['kind']}: {miss['text']!r} -> {miss['masked']!r}")
    for false in found["false_mask_examples"]:
        print(f"  false mask: {false['text']!r} -> {false['masked']!r}")
    names = found["names_and_addresses"]
    print(f"names and street addresses: {names['left_unmasked']} of {names['planted']} left unmasked (not detected)")
    print(f"short texts: {speed['us_per_text']} µs per text, CPU {speed['cpu_us_per_text']} µs ({speed['texts']:,} texts)")
    print(f"one long text masked: {sizes[0]:,} chars {masking['seconds'][0]} s (CPU {masking['cpu_seconds'][0]} s), "
          f"{sizes[1]:,} chars {masking['seconds'][1]} s (CPU {masking['cpu_seconds'][1]} s): CPU x{masking['cpu_ratio']} "
          f"for x10 the text")
    print_table((f"add_failures, one {sizes[1]:,}-character field", "seconds", "CPU seconds"),
                [(field, run["seconds"], run["cpu_seconds"]) for field, run in end_to_end.items()])
    if not args.small:
        # the load average says how far a shared machine inflated the wall times (CPU seconds beside them)
        load = [round(x, 1) for x in os.getloadavg()]
        save_json(RESULTS, {"benchmark": "pii_masking", "machine": machine(load_average=load), "quality": found,
                            "short_texts": speed,
                            "long_masking": masking, "long_add_failures": {"chars": sizes[1], **end_to_end}})
        print(f"wrote {RESULTS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
