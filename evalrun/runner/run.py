"""`evalrun run`: call the system under test for every item of a release, appending each trace
atomically, then score. A run killed at any point resumes where it stopped (`--resume`)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from importlib import metadata
from pathlib import Path

from curate import (
    CurateError,
    EvalItem,
    InputError,
    ReleaseManifest,
    Releases,
    Workspace,
    load_release,
    now,
    parse_ref,
    progress,
    resolve_judge,
    writing,
)
from evalrun.records import MANIFEST, TRACES, RunManifest, RunSettings, TraceRecord, read_traces
from evalrun.runner.gate import leakage_gate
from evalrun.runner.targets import Target, describe, http_target, logged_traces, python_target
from evalrun.runner.trace_log import TraceLog
from evalrun.scoring import score_run
from evalrun.scoring.generation_prompts import GENERATION


def _oracle_context(item: EvalItem) -> list[dict]:
    return [{"chunk_id": e.chunk_ids[0] if e.chunk_ids else e.evidence_id, "text": e.text}
            for e in item.evidence if e.grade > 0]


def _call(target: Target, item: EvalItem, settings: RunSettings, pool: ThreadPoolExecutor) -> TraceRecord:
    """Return the trace record of one item: the target's trace, or the error that stopped it."""
    started = time.perf_counter()
    context = _oracle_context(item) if settings.oracle_context else None
    future = pool.submit(target, item.id, item.question, context)
    try:
        return TraceRecord(item_id=item.id, trace=future.result(timeout=settings.timeout))
    except FutureTimeout:
        return TraceRecord(item_id=item.id, error=f"target timed out after {settings.timeout:g} s")
    except Exception as exc:  # the system under test failed on this item: data, not a crash
        return TraceRecord(item_id=item.id, error=f"target raised {type(exc).__name__}: {str(exc)[:200]}",
                           elapsed_ms=(time.perf_counter() - started) * 1000)


def _manifest(workspace: Workspace, ref: str, release: ReleaseManifest, description: str, settings: RunSettings,
              gate) -> RunManifest:
    versions = {}
    for package in ("curate-evalrun", "openai", "rapidfuzz", "numpy", "bm25s"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    try:
        judge = resolve_judge(workspace).public()
    except CurateError as exc:
        judge = {"unavailable": str(exc)}
    return RunManifest(dataset=release.name, version=release.version, content_sha256=release.content_sha256,
                       judge=judge, prompt_versions=GENERATION.versions(), ref=ref, kb_snapshot=release.kb_snapshot,
                       target=description, diagnostic=settings.oracle_context, settings=settings,
                       leakage_gate=gate, packages=versions, started_at=now())


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
    release, items = load_release(Releases(workspace, name).path(version))
    gate = leakage_gate(workspace, release, release.kb_snapshot, settings.allow_unchecked)
    # Everything that can be refused is refused before the run folder exists: a bad --traces file or
    # target leaves nothing behind.
    logged = logged_traces(traces) if traces is not None else None
    call = None
    if target is not None:
        call = (http_target(target, settings.timeout) if target.startswith(("http://", "https://"))
                else python_target(target, settings.oracle_context))
    folder = Path(out) if out else workspace.root / "runs" / f"{name}-{version}-{time.strftime('%Y%m%d-%H%M%S')}"
    folder = workspace.refuse_state(folder, allow=("runs",))   # resolved once; never over the workspace's state
    if folder.exists() and not resume and any(folder.iterdir()):
        raise CurateError(f"run folder {folder} is not empty: pass --resume to finish it, or another --out")
    folder.mkdir(parents=True, exist_ok=True)
    # one run writes a folder at a time: a second (a --resume beside the run itself) stops at once
    with writing(folder, f"run folder {folder}", wait=False, clean=[(folder, 1)]):
        manifest_path = folder / MANIFEST
        if resume and manifest_path.exists():
            previous = RunManifest.read(manifest_path)
            if previous.content_sha256 != release.content_sha256:
                raise CurateError(f"{folder} is a run of another release ({previous.ref}); not resuming it")
        else:
            _manifest(workspace, ref, release, describe(target, traces, settings.oracle_context), settings,
                      gate).write(manifest_path)
        log = TraceLog(folder / TRACES)
        done = read_traces(folder / TRACES)
        todo = [i for i in items if i.id not in done]
        if logged is not None:
            for item in todo:
                record = logged.get(item.id)
                log.append(TraceRecord(item_id=item.id, trace=record) if record is not None
                           else TraceRecord(item_id=item.id, error=f"no trace for this item in {traces}"))
        else:
            with ThreadPoolExecutor(max_workers=max(1, settings.concurrency)) as workers, \
                    ThreadPoolExecutor(max_workers=max(1, settings.concurrency)) as calls:
                futures = [workers.submit(_call, call, item, settings, calls) for item in todo]
                failed = [0]
                for future in progress(futures, "running the target", unit="item", total=len(futures),
                                       status=lambda: f"{failed[0]} errors"):
                    record = future.result()
                    failed[0] += record.error is not None
                    log.append(record)
        score_run(workspace, folder, release=(release, items))
    return folder
