"""Argilla round trip speed: push 1,000 items with 8 candidate chunks each to a local server and pull them back.

Run: `make bench` (runs `.venv/bin/python benchmarks/argilla_push.py`), optionally `--items N`, `--pool-k K`,
`--data FILE` (a SQuAD-format JSON); the default data is ../shared/data/cmrc2018/cmrc2018_dev.json beside the
repo when present, else the bundled examples/cmrc2018/cmrc2018_sample.json (`--sample` forces it). Needs the
`argilla` extra. Writes benchmarks/results/argilla_push.json.

In a temporary workspace: the data, cut (or extended with deterministic question variants) to exactly N
questions, is imported with `import_items(format="squad")` (one chunk per paragraph); a local argilla-server
(`start_server`, SQLite) runs in the temporary folder on a free port. Timed once each with time.perf_counter:
1. `push` of the N items (the dataset is created), 2. `push` again (every record updated in place),
3. two annotators submitting an answer to every record over HTTP (`POST /api/v1/records/{id}/responses`, as
the web UI does; a thread pool; argilla-server's time, not curate's), 4. `pull` reading the records back and
applying the answers (one record in 10 has a disagreement, so goes to adjudication), 5. `pull` again (nothing
new). Every HTTP request this process makes through httpx is counted per endpoint (so batching shows), with
the time spent waiting for answers; the server process's CPU time per step is read from /proc when there is one.
Not timed: building the workspace, starting the server, creating the annotators and logging them in.
"""

import argparse
import json
import logging
import os
import random
import re
import shutil
import socket
import sys
import tempfile
import threading
import time
import warnings
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import httpx
from common import machine, save_json

from curate.annotate.pull import pull
from curate.annotate.push import BATCH, push
from curate.annotate.server.process import start_server
from curate.annotate.state import load_state
from curate.dataset import DatasetStore, import_items
from curate.workspace import init_workspace

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results" / "argilla_push.json"
SAMPLE = REPO / "examples" / "cmrc2018" / "cmrc2018_sample.json"
SHARED = REPO.parent / "shared" / "data" / "cmrc2018" / "cmrc2018_dev.json"
DATASET = "bench"
ITEMS = 1000
POOL_K = 8
ANNOTATORS = 2
THREADS = 4
DISAGREE_EVERY = 10          # every 10th record: the second annotator grades candidate 2 differently
PASSWORD = "bench-annotator-pw"
API_KEY = "curate-bench-owner-api-key"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


# ---------------------------------------------------------------- data --

def questions_of(squad: dict) -> list[tuple[int, int, dict]]:
    """Return (article index, paragraph index, qa) of every question, in file order."""
    return [(a, p, qa) for a, article in enumerate(squad["data"])
            for p, paragraph in enumerate(article["paragraphs"]) for qa in paragraph.get("qas", [])]


def exactly(squad: dict, count: int) -> tuple[dict, int]:
    """Return a copy of `squad` holding exactly `count` questions (every paragraph kept as a document) and
    how many of them are variants: the first questions, then deterministic rewordings of them."""
    found = questions_of(squad)
    chosen = found[:count]
    variants = []
    for n in range(count - len(chosen)):
        a, p, qa = found[n % len(found)]
        round_ = n // len(found) + 1
        variants.append((a, p, {**qa, "id": f"{qa['id']}-v{round_}",
                                "question": f"{qa['question']}（问法{round_}）"}))
    keep: dict[tuple[int, int], list[dict]] = {}
    for a, p, qa in chosen + variants:
        keep.setdefault((a, p), []).append(qa)
    data = [{**article, "paragraphs": [{**paragraph, "qas": keep.get((a, p), [])}
                                        for p, paragraph in enumerate(article["paragraphs"])]}
            for a, article in enumerate(squad["data"])]
    return {**squad, "data": data}, len(variants)


def build_workspace(root: Path, source: Path, count: int) -> dict:
    """Create the workspace with KB + dataset `DATASET` of exactly `count` items; return what was built."""
    workspace = init_workspace(root)
    squad, _ = exactly(json.loads(source.read_text(encoding="utf-8")), count + 50)  # spares, in case some are skipped
    path = root.parent / "bench_squad.json"
    path.write_text(json.dumps(squad, ensure_ascii=False), encoding="utf-8")
    report = import_items(workspace, path, dataset=DATASET, source="human", kb=DATASET, format="squad",
                          skip_invalid=True)
    store = DatasetStore(workspace)
    meta, items = store.load(DATASET)
    if len(items) < count:
        raise SystemExit(f"only {len(items)} items imported from {source}; wanted {count}")
    is_variant = {i.id: bool(re.search(r"-v\d+$", i.id)) for i in items}
    keep = {i.id for i in sorted(items, key=lambda i: is_variant[i.id])[:count]}   # originals first
    items = [i for i in items if i.id in keep]
    store.save(meta, items)
    documents = sum(len(article["paragraphs"]) for article in squad["data"])
    return {"workspace": workspace, "documents": documents, "skipped": len(report.skipped),
            "variants": sum(is_variant[i.id] for i in items), "statuses": dict(Counter(i.status for i in items))}


# ---------------------------------------------------------------- measuring --

class Requests:
    """Counts every request httpx sends in this process, per method and path (ids folded), with wait time."""

    def __init__(self):
        self.lock = threading.Lock()
        self.counts: Counter = Counter()
        self.seconds: Counter = Counter()
        self.original = httpx.Client.send

    def reset(self) -> None:
        with self.lock:
            self.counts, self.seconds = Counter(), Counter()

    def snapshot(self) -> dict:
        with self.lock:
            return {"total": sum(self.counts.values()), "waiting_s": sum(self.seconds.values()),
                    "by_endpoint": {k: {"requests": n, "seconds": round(self.seconds[k], 4)}
                                    for k, n in sorted(self.counts.items())}}

    @contextmanager
    def installed(self):
        counter, original = self, self.original

        def send(client, request, *args, **kwargs):
            key = f"{request.method} {_UUID.sub('{id}', request.url.path)}"
            started = time.perf_counter()
            try:
                return original(client, request, *args, **kwargs)
            finally:
                with counter.lock:
                    counter.counts[key] += 1
                    counter.seconds[key] += time.perf_counter() - started

        httpx.Client.send = send
        try:
            yield self
        finally:
            httpx.Client.send = original


def server_cpu(pid: int) -> float | None:
    """Return the CPU seconds (user + system) the process `pid` has used, None where /proc is absent."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def timed(name: str, records: int, requests: Requests, pid: int, function, *args, **kwargs) -> tuple[dict, object]:
    """Return (a result row, what `function` returned) after running it once under the clock."""
    requests.reset()
    cpu_before, client_before = server_cpu(pid), time.process_time()
    started = time.perf_counter()
    result = function(*args, **kwargs)
    seconds = time.perf_counter() - started
    cpu_after, client_cpu = server_cpu(pid), time.process_time() - client_before
    http = requests.snapshot()
    return {"step": name, "records": records, "seconds": seconds, "records_per_s": records / seconds,
            "http_requests": http["total"], "http_waiting_s": http["waiting_s"],
            "client_cpu_s": client_cpu, "server_cpu_s": None if cpu_before is None or cpu_after is None
            else cpu_after - cpu_before, "requests": http["by_endpoint"]}, result


# ---------------------------------------------------------------- annotating --

def annotator_headers(url: str, owner: httpx.Client, space_id: str, name: str) -> dict:
    """Return the Authorization header of a new annotator of workspace `space_id`, logged in with a password."""
    response = owner.post("/api/v1/users", json={"first_name": name, "username": name, "password": PASSWORD,
                                                 "role": "annotator"})
    response.raise_for_status()
    owner.post(f"/api/v1/workspaces/{space_id}/users", json={"user_id": response.json()["id"]}).raise_for_status()
    token = httpx.post(f"{url}/api/v1/token", data={"username": name, "password": PASSWORD})
    token.raise_for_status()
    return {"Authorization": f"Bearer {token.json()['access_token']}"}


def server_records(owner: httpx.Client, dataset_id: str) -> dict[str, str]:
    """Return item id -> Argilla record id of every record in the dataset."""
    ids, offset = {}, 0
    while True:
        response = owner.get(f"/api/v1/datasets/{dataset_id}/records", params={"offset": offset, "limit": 1000})
        response.raise_for_status()
        batch = response.json()["items"]
        ids.update({str(r["external_id"]): r["id"] for r in batch})
        if len(batch) < 1000:
            return ids
        offset += 1000


def answer(item_id: str, position: int, who: int, pool_k: int) -> dict:
    """Return the answer annotator `who` gives: candidate 1 is evidence (2), the rest not (0); on every
    DISAGREE_EVERY-th record the second annotator grades candidate 2 as partial evidence (1)."""
    grades = {n: 0 for n in range(1, pool_k + 1)}
    grades[1] = 2
    if who == 1 and position % DISAGREE_EVERY == 0:
        grades[2] = 1
    values = {f"relevance_{n}": {"value": g} for n, g in grades.items()}
    values["answerable"] = {"value": "answerable"}
    return {"values": values, "status": "submitted"}


def submit_all(url: str, headers: list[dict], record_ids: dict[str, str], pool_k: int) -> Counter:
    """Submit every annotator's answer to every record over HTTP, THREADS at a time; return status codes."""
    local = threading.local()

    def client() -> httpx.Client:
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=url, timeout=120)
        return local.client

    jobs = [(who, position, item_id, record_id)
            for position, (item_id, record_id) in enumerate(sorted(record_ids.items())) for who in range(len(headers))]
    random.Random(5).shuffle(jobs)   # annotators work at the same time, on records in no particular order

    def send(job) -> int:
        who, position, item_id, record_id = job
        response = client().post(f"/api/v1/records/{record_id}/responses", headers=headers[who],
                                 json=answer(item_id, position, who, pool_k))
        return response.status_code

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        return Counter(pool.map(send, jobs))


# ---------------------------------------------------------------- report --

def cell(value, spec: str) -> str:
    """Return `value` formatted with `spec`, or '-' when there is none."""
    return "-" if value is None else format(value, spec)


def endpoints(row: dict) -> str:
    """Return the requests of a step as 'n x METHOD path' parts, the most frequent first."""
    parts = sorted(row["requests"].items(), key=lambda kv: -kv[1]["requests"])
    return ", ".join(f"{v['requests']}x {k}" for k, v in parts)


def print_table(rows: list[dict]) -> None:
    """Print the rows as a plain-text table, then the requests of each step."""
    header = ("step", "records", "seconds", "records/s", "HTTP requests", "waiting on HTTP s", "client CPU s",
              "server CPU s")
    lines = [header] + [(r["step"], cell(r["records"], ","), cell(r["seconds"], ".2f"),
                         cell(r["records_per_s"], ",.0f"), cell(r["http_requests"], ","),
                         cell(r["http_waiting_s"], ".2f"), cell(r["client_cpu_s"], ".2f"),
                         cell(r["server_cpu_s"], ".2f")) for r in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for index, line in enumerate(lines):
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))))
        if index == 0:
            print("  ".join("-" * w for w in widths))
    print("requests per step:")
    for r in rows:
        print(f"  {r['step']}: {endpoints(r)}")


def free_port() -> int:
    """Return a TCP port free on 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def environment(**values: str):
    """Set environment variables for the block, then restore what was there."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def log_problems(log: Path) -> list[str]:
    """Return the server log lines that report an error or a traceback."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if re.search(r"\b(ERROR|Traceback|CRITICAL)\b", line)]


# ---------------------------------------------------------------- main --

def run(tmp: Path, source: Path, count: int, pool_k: int) -> dict:
    """Build, serve, measure; return the results (the caller removes `tmp`)."""
    started = time.perf_counter()
    built = build_workspace(tmp / "ws", source, count)
    workspace = built["workspace"]
    setup_s = time.perf_counter() - started
    print(f"workspace: {count:,} items over {built['documents']:,} paragraphs from {source.name} "
          f"({built['variants']} question variants, {built['skipped']} skipped on import) in {setup_s:.1f} s")
    server = start_server(tmp / "argilla", free_port(), api_key=API_KEY)
    rows, checks = [], {}
    try:
        print(f"argilla-server at {server.url}, started in {server.started_in:.1f} s (pid {server.process.pid})")
        requests = Requests()
        pid = server.process.pid
        with environment(ARGILLA_API_KEY=server.api_key, ARGILLA_API_URL=server.url, TQDM_DISABLE="1"), \
                requests.installed(), httpx.Client(base_url=server.url, headers={"X-Argilla-Api-Key": server.api_key},
                                                   timeout=120) as owner:
            row, first = timed("push (create)", count, requests, pid, push, workspace, dataset=DATASET, pool_k=pool_k,
                               min_submitted=ANNOTATORS)
            rows.append(row)
            row, second = timed("push again (update)", count, requests, pid, push, workspace, dataset=DATASET,
                                pool_k=pool_k, min_submitted=ANNOTATORS)
            rows.append(row)
            state = load_state(workspace, DATASET)
            datasets = owner.get("/api/v1/me/datasets").json()["items"]
            dataset_id = next(d["id"] for d in datasets if d["name"] == state.argilla.dataset)
            record_ids = server_records(owner, dataset_id)
            space_id = next(d["workspace_id"] for d in datasets if d["id"] == dataset_id)
            headers = [annotator_headers(server.url, owner, space_id, f"annotator{n + 1}") for n in range(ANNOTATORS)]
            row, codes = timed(f"{ANNOTATORS} annotators submit (HTTP, {THREADS} threads)", count * ANNOTATORS,
                               requests, pid, submit_all, server.url, headers, record_ids, pool_k)
            row["note"] = "argilla-server's time, not curate's: one POST per response, as the web UI sends"
            rows.append(row)
            row, pulled = timed("pull (apply)", count, requests, pid, pull, workspace, dataset=DATASET)
            rows.append(row)
            row, again = timed("pull again (nothing new)", count, requests, pid, pull, workspace, dataset=DATASET)
            rows.append(row)
        items = DatasetStore(workspace).items(DATASET)
        outcomes = Counter(a.outcome for a in pulled.applied)
        checks = {
            "first_push": {"pushed": first.pushed, "created": first.created,
                           "pool_sizes": {str(k): v for k, v in sorted(first.pool_sizes.items())}},
            "second_push": {"pushed": second.pushed, "created": second.created},
            "records_in_argilla": len(record_ids),
            "response_status_codes": {str(k): v for k, v in sorted(codes.items())},
            "pull": {"applied": len(pulled.applied), "outcomes": dict(outcomes), "pending": pulled.pending,
                     "conflicts": len(pulled.conflicts),
                     "agreement": {k: pulled.agreement.get(k)
                                   for k in ("relevance_alpha", "units", "answerability_kappa")}},
            "pull_again": {"applied": len(again.applied), "pending": again.pending, "conflicts": len(again.conflicts)},
            "statuses_after": dict(Counter(i.status for i in items)),
            "expected_adjudication": len(range(0, count, DISAGREE_EVERY)),
        }
        problems = log_problems(server.log_path)
    finally:
        server.stop()
    return {"setup": {"seconds": setup_s, "documents": built["documents"], "variants": built["variants"],
                      "skipped_on_import": built["skipped"], "statuses": built["statuses"],
                      "server_started_in_s": server.started_in},
            "rows": rows, "checks": checks, "server_log_problems": problems[:20]}


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the table and write benchmarks/results/argilla_push.json."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=ITEMS, help=f"items to push (default {ITEMS:,})")
    parser.add_argument("--pool-k", type=int, default=POOL_K, help=f"candidate chunks per item (default {POOL_K})")
    parser.add_argument("--data", help="a SQuAD-format JSON file (default: ../shared cmrc2018 dev when present)")
    parser.add_argument("--sample", action="store_true",
                        help="use the bundled cmrc2018 sample even if ../shared exists")
    args = parser.parse_args(argv)
    import importlib.util
    if importlib.util.find_spec("argilla_server") is None or importlib.util.find_spec("argilla") is None:
        print("argilla is not installed (pip install -e '.[argilla]'); nothing to measure.")
        return 0
    # The SDK warns that the workspace and dataset are missing (the first push creates them) and that it
    # "normalized" its batch size to the slice push gives it: expected here, so kept off the table.
    warnings.filterwarnings("ignore", category=UserWarning, module=r"argilla\b")
    logging.getLogger("argilla.sdk").setLevel(logging.ERROR)
    source = Path(args.data) if args.data else (SAMPLE if args.sample or not SHARED.is_file() else SHARED)
    if not source.is_file():
        print(f"no data at {source}")
        return 2
    print(f"cpus: {os.cpu_count()}  python {sys.version.split()[0]}  items {args.items:,}  pool_k {args.pool_k}  "
          f"SDK batch {BATCH}  one run")
    tmp = Path(tempfile.mkdtemp(prefix="curate-bench-argilla-"))
    try:
        result = run(tmp, source, args.items, args.pool_k)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print_table(result["rows"])
    checks = result["checks"]
    print(f"checks: pools {checks['first_push']['pool_sizes']} (size: items); records in Argilla after two pushes "
          f"{checks['records_in_argilla']:,}; responses {checks['response_status_codes']}; "
          f"pull {checks['pull']['outcomes']} pending {checks['pull']['pending']} "
          f"conflicts {checks['pull']['conflicts']} (expected "
          f"{checks['expected_adjudication']} to adjudication); pull again applied {checks['pull_again']['applied']}")
    if result["server_log_problems"]:
        problems = result["server_log_problems"]
        print(f"server log: {len(problems)} error lines, first: {problems[0]}")
    import argilla
    save_json(RESULTS, {
        "benchmark": "argilla_push", "date": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
        "machine": machine(argilla=argilla.__version__, httpx=httpx.__version__),
        "data": str(source.relative_to(REPO.parent) if source.is_relative_to(REPO.parent) else source),
        "counts": {"items": args.items, "pool_k": args.pool_k, "annotators": ANNOTATORS, "threads": THREADS,
                   "sdk_batch": BATCH, "disagree_every": DISAGREE_EVERY},
        "timer": "time.perf_counter, one run per step, one client process; server in its own process",
        "untimed": "workspace build and import, server start, annotator creation and login, record id lookup",
        **result})
    print(f"wrote {RESULTS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
