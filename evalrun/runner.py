"""`evalrun run`: call the system under test for every item of a release, appending each trace
atomically, then score. A run killed at any point resumes where it stopped (`--resume`)."""

from __future__ import annotations

import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from curate.dataset import parse_ref
from curate.errors import CurateError, InputError
from curate.fileio import atomic_write_json, dumps_json
from curate.progress import progress
from curate.release import Releases, load_release
from curate.schema import EvalItem, now
from curate.workspace import Workspace

from .gate import leakage_gate
from .targets import Target, describe, http_target, logged_traces, python_target

TRACES = "traces.jsonl"


@dataclass
class RunSettings:
    """How a run is made and scored."""

    ks: tuple[int, ...] = (1, 3, 5, 10)
    concurrency: int = 4
    timeout: float = 60.0
    oracle_context: bool = False
    allow_unchecked: bool = False
    precision_denominator: str = "k"
    # USD per million tokens for the system's own usage, when its traces report no cost
    price_input: float | None = None
    price_output: float | None = None


def read_traces(path: Path) -> dict[str, dict]:
    """Return the traces written so far, by item id; a last line cut short by a kill is dropped."""
    if not path.exists():
        return {}
    done = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # the line a kill interrupted: that item runs again
            done[record["item_id"]] = record
    return done


class TraceLog:
    """traces.jsonl, one complete line per item: written with one write() and fsync, so a kill
    leaves whole lines and at most one partial last line."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        if path.exists():  # cut a partial last line, so the next append starts clean
            data = path.read_bytes()
            if data and not data.endswith(b"\n"):
                path.write_bytes(data[: data.rfind(b"\n") + 1])

    def append(self, record: dict) -> None:
        line = (dumps_json(record) + "\n").encode("utf-8")
        with self._lock, open(self.path, "ab") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())


def _oracle_context(item: EvalItem) -> list[dict]:
    return [{"chunk_id": e.chunk_ids[0] if e.chunk_ids else e.evidence_id, "text": e.text}
            for e in item.evidence if e.grade > 0]


def _call(target: Target, item: EvalItem, settings: RunSettings, pool: ThreadPoolExecutor) -> dict:
    """Return the trace record of one item: the target's trace, or the error that stopped it."""
    started = time.perf_counter()
    context = _oracle_context(item) if settings.oracle_context else None
    future = pool.submit(target, item.id, item.question, context)
    try:
        trace = future.result(timeout=settings.timeout)
        return {"item_id": item.id, "trace": trace}
    except FutureTimeout:
        return {"item_id": item.id, "error": f"target timed out after {settings.timeout:g} s"}
    except Exception as exc:  # the system under test failed on this item: data, not a crash
        return {"item_id": item.id, "error": f"target raised {type(exc).__name__}: {str(exc)[:200]}",
                "elapsed_ms": (time.perf_counter() - started) * 1000}


def _manifest(workspace: Workspace, ref: str, manifest, description: str, settings: RunSettings,
              kb_snapshot: str, gate: dict) -> dict:
    versions = {}
    for package in ("curate-evalrun", "openai", "rapidfuzz", "numpy", "bm25s"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    from curate.judge.config import resolve

    from .generation import versions as prompt_versions
    try:
        judge = resolve(workspace).public()
    except CurateError as exc:
        judge = {"unavailable": str(exc)}
    return {"dataset": manifest.name, "version": manifest.version, "content_sha256": manifest.content_sha256,
            "judge": judge, "prompt_versions": prompt_versions(),
            "ref": ref, "kb_snapshot": kb_snapshot, "target": description,
            "diagnostic": settings.oracle_context, "settings": {
                "k": list(settings.ks), "concurrency": settings.concurrency, "timeout": settings.timeout,
                "precision_denominator": settings.precision_denominator,
                "price_per_million_tokens": {"input": settings.price_input, "output": settings.price_output}},
            "leakage_gate": gate, "packages": versions, "started_at": now()}


def run(workspace: Workspace, *, ref: str, target: str | None = None, traces: Path | None = None,
        out: Path | None = None, resume: bool = False, settings: RunSettings | None = None) -> Path:
    """Run the system over the release `ref` (NAME@vN) into a run folder and return the folder."""
    settings = settings or RunSettings()
    name, version = parse_ref(ref)
    if version is None:
        raise InputError("evalrun runs a release: give NAME@vN (curate release writes one)", field="dataset")
    if (target is None) == (traces is None):
        raise InputError("give exactly one of --target or --traces", field="target")
    if settings.oracle_context and traces is not None:
        raise InputError("--oracle-context needs a Python --target", field="oracle-context")
    manifest, items = load_release(Releases(workspace, name).path(version))
    kb_snapshot = manifest.kb_snapshot
    gate = leakage_gate(workspace, manifest, kb_snapshot, settings.allow_unchecked)
    folder = Path(out) if out else workspace.root / "runs" / f"{name}-{version}-{time.strftime('%Y%m%d-%H%M%S')}"
    if folder.exists() and not resume and any(folder.iterdir()):
        raise CurateError(f"run folder {folder} is not empty: pass --resume to finish it, or another --out")
    folder.mkdir(parents=True, exist_ok=True)
    run_manifest_path = folder / "manifest.json"
    if resume and run_manifest_path.exists():
        previous = json.loads(run_manifest_path.read_text(encoding="utf-8"))
        if previous["content_sha256"] != manifest.content_sha256:
            raise CurateError(f"{folder} is a run of another release ({previous['ref']}); not resuming it")
    else:
        atomic_write_json(run_manifest_path, _manifest(workspace, ref, manifest, describe(target, traces,
                                                       settings.oracle_context), settings, kb_snapshot, gate))
    log = TraceLog(folder / TRACES)
    done = read_traces(folder / TRACES)
    todo = [i for i in items if i.id not in done]
    if traces is not None:
        logged = logged_traces(traces)
        for item in todo:
            record = logged.get(item.id)
            log.append({"item_id": item.id, "trace": record} if record is not None
                       else {"item_id": item.id, "error": f"no trace for this item in {traces}"})
    else:
        call = (http_target(target, settings.timeout) if target.startswith(("http://", "https://"))
                else python_target(target, settings.oracle_context))
        with ThreadPoolExecutor(max_workers=max(1, settings.concurrency)) as workers, \
                ThreadPoolExecutor(max_workers=max(1, settings.concurrency)) as calls:
            futures = [workers.submit(_call, call, item, settings, calls) for item in todo]
            failed = [0]
            for future in progress(futures, "running the target", unit="item", total=len(futures),
                                   status=lambda: f"{failed[0]} errors"):
                record = future.result()
                failed[0] += "error" in record
                log.append(record)
    from .score import score_run
    score_run(workspace, folder)
    return folder
