"""`evalrun run`: call the system under test for every item of a release, appending each trace
atomically, then score. A run killed at any point resumes where it stopped (`--resume`).

Ctrl-C, and SIGTERM while a run is calling its target, stop it cleanly: no new call starts, the
calls in flight are left unrecorded (they run again on `--resume`), traces.jsonl keeps whole lines
only, the run folder's lock is let go of, and `RunInterrupted` says how many items are done and the
command that finishes the run (exit 130 on Ctrl-C, 143 on SIGTERM)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

from curate import (
    Budget,
    WORKSPACE_ENV,
    CurateError,
    EvalItem,
    InputError,
    ReleaseManifest,
    Releases,
    SnapshotStore,
    Workspace,
    load_release,
    now,
    parse_ref,
    progress,
    resolve_judge,
    writing,
)
from evalrun.records import (
    MANIFEST,
    TRACES,
    RunManifest,
    RunSettings,
    TraceRecord,
    judge_difference,
    read_traces,
)
from evalrun.runner.gate import leakage_gate
from evalrun.runner.scheduler import Calls, Finished, TooManyHung
from evalrun.runner.targets import (
    LoggedTraces,
    Target,
    TargetFailed,
    Unholdable,
    callable_name,
    callable_target,
    check_logged,
    describe,
    http_target,
    importable,
    is_file_target,
    json_value,
    logged_traces,
    python_target,
)
from evalrun.runner.trace_log import TraceLog
from evalrun.scope_records import TargetScope
from evalrun.scoring import score_run
from evalrun.scoring.generation import configured_judge, no_judge_reason
from evalrun.scoring.judged_retrieval import rough_estimate
from evalrun.scoring.retrieval_prompts import RETRIEVAL
from evalrun.scoring.generation_prompts import GENERATION
from evalrun.scoring.scope import ScopeCheck, target_note


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped a run; the message says how many items are done and the command
    that finishes the run. A KeyboardInterrupt, so that whatever stops on Ctrl-C stops on it."""

    def __init__(self, message: str, exit_code: int = 130):
        super().__init__(message)
        self.exit_code = exit_code


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread while a run calls its target."""


def _on_sigterm(signum, frame) -> None:
    raise _Terminated()


@contextlib.contextmanager
def sigterm_stops_cleanly() -> Iterator[None]:
    """Within the block, SIGTERM stops the run as Ctrl-C does; left alone where signals cannot be
    handled (not the main thread) or where someone else already handles it."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _oracle_context(item: EvalItem) -> list[dict]:
    """Return the verified evidence of an item as an --oracle-context context (the evidence its asker may
    use at its moment, on a KB with scope: `_usable`)."""
    return [{"chunk_id": e.chunk_ids[0] if e.chunk_ids else e.evidence_id, "text": e.text}
            for e in item.evidence if e.grade > 0]


def usable_items(workspace: Workspace, release: ReleaseManifest, items: list[EvalItem]) -> list[EvalItem]:
    """Return the items with only the evidence their askers may use at their moments: an oracle context of
    evidence the asker may not see would be a leak evalrun made itself."""
    check = ScopeCheck(SnapshotStore(workspace).chunks(release.kb_snapshot), release.scope, release.kb_snapshot)
    return [check.usable(item) for item in items] if check.scoped else items


def traced_call(target: Target, item_id: str, question: str, context: list[dict] | None,
                scope: dict[str, Any]) -> TraceRecord:
    """Return the trace record of one call (in the call's own thread): what the target returned,
    checked to be JSON before pydantic could turn a set into a list or a datetime into a string,
    with latency_ms.total the call's time unless the trace reports its own."""
    started = time.perf_counter()
    returned = target(item_id, question, context, scope)
    total = (time.perf_counter() - started) * 1000
    trace = json_value(returned)  # a copy: setting the latency below leaves the target's object alone
    if isinstance(trace, dict) and isinstance(trace.setdefault("latency_ms", {}), dict):
        trace["latency_ms"].setdefault("total", total)
    return TraceRecord(item_id=item_id, trace=trace)


def scope_of(item: EvalItem) -> dict[str, Any]:
    """Return the asker and moment an item's question is asked by and at (what the target is given)."""
    return {"asker_groups": item.asker_groups, "asker_role": item.asker_role, "as_of": item.as_of}


def _traced(target: Target, item: EvalItem, settings: RunSettings) -> TraceRecord:
    """Return the trace record of one item's call (`traced_call`), its oracle context with --oracle-context."""
    context = _oracle_context(item) if settings.oracle_context else None
    return traced_call(target, item.id, item.question, context, scope_of(item))


def _printable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def failure_line(exc: BaseException) -> str:
    """Return why a call failed, in one line of valid text, whatever the exception holds."""
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - an exception whose __str__ fails still fails the item
        message = "(its message cannot be printed)"
    if isinstance(exc, TargetFailed):
        return _printable(message[:300])
    return _printable(f"target raised {type(exc).__name__}" + (f": {message[:200]}" if message else ""))


def call_record(finished: Finished, settings: RunSettings, warmup: bool = False,
                item_id: str | None = None) -> TraceRecord:
    """Return the trace record of one ended call: its trace, or why it has none; `warmup`: the call
    was a warm-up call (marked whether it succeeded or not); `item_id`: what the record is of (default:
    the item's id)."""
    if finished.timed_out:
        error = f"target timed out after {settings.timeout:g} s"
    elif finished.error is not None:
        error = failure_line(finished.error)
    else:
        return finished.value.model_copy(update={"warmup": warmup})
    return TraceRecord(item_id=item_id or finished.item.id, error=error, elapsed_ms=finished.seconds * 1000,
                       warmup=warmup)


def warmup_ids(todo: list[str], settings: RunSettings) -> set[str]:
    """Return the item ids, of those in `todo` (in the order their calls start), whose calls are
    warm-up calls: the first `warmup` calls of each of the `concurrency` workers, which are the first
    warmup x concurrency of `todo`. A run resumed in a new process is cold again: its first calls
    are warm-up too.

    >>> sorted(warmup_ids(["q0", "q1", "q2", "q3", "q4"], RunSettings(concurrency=2)))
    ['q0', 'q1']
    >>> warmup_ids(["q0", "q1", "q2"], RunSettings(concurrency=2, warmup=0))
    set()
    """
    return set(todo[:settings.warmup * settings.concurrency])


def _manifest(workspace: Workspace, ref: str, release: ReleaseManifest, description: str, settings: RunSettings,
              gate, target_scope: TargetScope) -> RunManifest:
    versions = {}
    for package in ("curate-evalrun", "openai", "rapidfuzz", "numpy", "bm25s"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    judge = configured_judge(workspace, settings.no_judge)
    return RunManifest(dataset=release.name, version=release.version, content_sha256=release.content_sha256,
                       judge=judge, prompt_versions=GENERATION.versions() | (
                           RETRIEVAL.versions() if settings.judge_retrieval else {}), ref=ref, kb_snapshot=release.kb_snapshot,
                       target=description, target_scope=target_scope, diagnostic=settings.oracle_context,
                       settings=settings,
                       leakage_gate=gate, packages=versions, started_at=now())


def _resume_command(workspace: Workspace, ref: str, target: str | None, traces: Path | None, folder: Path,
                   settings: RunSettings, python: bool = False) -> str:
    """Return the `evalrun run ... --resume` command that finishes the run in `folder` as it was
    started (the calls' settings; K, prices and the rest are the manifest's); with `python` (a callable
    the command line cannot name), the `evalrun.run(...)` call that does."""
    if python:
        return (f"evalrun.run({ref!r}, target={target.partition(':')[2] or target}, out={str(folder)!r}, "
                f"resume=True, workspace={str(workspace.root)!r}) with the same settings")
    args = ["evalrun", "run", "--dataset", ref, *(["--target", target] if target else ["--traces", str(traces)]),
            "--out", str(folder), "--resume"]
    defaults = RunSettings()
    for option, field in (("--concurrency", "concurrency"), ("--warmup", "warmup"), ("--timeout", "timeout"),
                          ("--max-response-bytes", "max_response_bytes")):
        if getattr(settings, field) != getattr(defaults, field):
            args += [option, repr(getattr(settings, field))]
    args += [flag for flag, on in (("--oracle-context", settings.oracle_context),
                                   ("--allow-unchecked", settings.allow_unchecked),
                                   ("--exclude-errors", settings.exclude_errors),
                                   ("--no-judge", settings.no_judge)) if on]
    return shlex.join([*args, "--workspace", str(workspace.root)])


def check_budget(workspace: Workspace, settings: RunSettings) -> None:
    """Refuse, before anything runs, a budget in USD the judge's model has no price for (it could not hold);
    `settings`: a run's, or a probe run's (both carry budget_usd and no_judge)."""
    if settings.budget_usd is None or settings.no_judge:
        return
    try:
        config = resolve_judge(workspace)
    except InputError:
        return   # no judge configured: scoring says so, and nothing is spent
    Budget(usd=settings.budget_usd).check_priced(config.prices, config.model)


def _say_grading_cost(workspace: Workspace, release: ReleaseManifest, items: list[EvalItem],
                      settings: RunSettings) -> None:
    """Say, before the system is called, what grading its retrieved chunks will cost at most (--judge-retrieval),
    and whether the budget will stop it part way."""
    if not settings.judge_retrieval or settings.no_judge:
        return
    config, reason = no_judge_reason(workspace, False)
    if config is None:
        print(f"evalrun: warning: --judge-retrieval, but {reason}: the judged/ metrics will be unscored",
              file=sys.stderr, flush=True)
        return
    texts = [c.text for c in SnapshotStore(workspace).chunks(release.kb_snapshot)] if release.kb_snapshot else []
    found = rough_estimate(items, texts, settings.judge_retrieval_k or max(settings.ks), workspace, config)
    cost = f", at most ${found.usd_most:,.2f}" if found.usd_most is not None else ""
    print(f"evalrun: grading retrieved chunks (--judge-retrieval) will ask about {found.requests:,} requests, about "
          f"{found.prompt_tokens:,} prompt tokens and at most {found.answer_tokens_most:,} answer tokens{cost} "
          f"(before the cache; said exactly before grading)", file=sys.stderr, flush=True)
    budget = Budget(usd=settings.budget_usd, tokens=settings.budget_tokens)
    if not budget.fits(found.prompt_tokens + found.answer_tokens_most, found.usd_most):
        print("evalrun: warning: that is more than the judge budget: grading stops where the budget would be "
              "exceeded, and the items left are unscored with the reason", file=sys.stderr, flush=True)


def _call_target(call: Target, todo: list[EvalItem], settings: RunSettings, log: TraceLog) -> None:
    """Call the target for every item of `todo`, appending each record as its call ends; the first
    calls (`warmup_ids`) are marked as warm-up."""
    calls = Calls(lambda item: _traced(call, item, settings), concurrency=settings.concurrency,
                  timeout=settings.timeout)
    warm = warmup_ids([item.id for item in todo], settings)
    failed = [0]  # read by the progress bar's status after every item
    for finished in progress(calls.run(todo), "running the target", unit="item", total=len(todo),
                             status=lambda: f"{failed[0]} errors"):
        record = call_record(finished, settings, warmup=finished.item.id in warm)
        failed[0] += record.error is not None
        log.append(record)
    if calls.abandoned:
        print(f"evalrun: {calls.abandoned} calls to the target ran past the {settings.timeout:g} s timeout and were "
              f"abandoned ({calls.hung} still running; whatever they return is ignored)", file=sys.stderr, flush=True)


def _append_logged(logged: LoggedTraces, todo: list[EvalItem], traces: Path, log: TraceLog) -> None:
    """Append the record of every item of `todo` from traces a system already logged."""
    for item in todo:
        trace = logged.traces.get(item.id)
        if trace is None:
            record = TraceRecord(item_id=item.id, kind=logged.kind, error="no trace for this item in the --traces file")
        elif logged.kind == "trec":  # built here from strictly decoded text: lists of strings, nothing to check
            record = TraceRecord(item_id=item.id, kind="trec", trace=trace)
        else:  # loads_json read it; a line nested 100 deep still cannot be put one level down in traces.jsonl
            try:
                record = TraceRecord(item_id=item.id, kind=logged.kind, trace=json_value(trace))
            except Unholdable as exc:
                record = TraceRecord(item_id=item.id, kind=logged.kind,
                                     error=f"its trace in {traces} cannot be recorded: {exc.problem}")
        log.append(record)


@contextlib.contextmanager
def target_sees(workspace: Workspace) -> Iterator[None]:
    """While a run lasts, CURATE_WORKSPACE names its workspace: a target that opens the workspace itself
    (`curate.find_workspace()`, `curate.open_workspace()`) opens this one, from whatever folder evalrun
    was started in."""
    before = os.environ.get(WORKSPACE_ENV)
    os.environ[WORKSPACE_ENV] = str(Path(os.path.abspath(workspace.root)))
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(WORKSPACE_ENV, None)
        else:
            os.environ[WORKSPACE_ENV] = before


def run(workspace: Workspace, *, ref: str, target: str | Callable[..., Any] | None = None,
        traces: Path | None = None, out: Path | None = None, resume: bool = False,
        settings: RunSettings | None = None) -> Path:
    """Run the system over the release `ref` (NAME@vN) into a run folder and return the folder.

    `target`: "module:function", an http(s):// URL, or a Python callable called as "module:function"
    is (`evalrun.runner.targets.callable_target`). While it runs, CURATE_WORKSPACE names `workspace`,
    so a target that finds the workspace itself finds this one from any folder."""
    with target_sees(workspace):
        return _run(workspace, ref=ref, target=target, traces=traces, out=out, resume=resume, settings=settings)


def _run(workspace: Workspace, *, ref: str, target: str | Callable[..., Any] | None, traces: Path | None,
         out: Path | None, resume: bool, settings: RunSettings | None) -> Path:
    settings = settings or RunSettings()
    name, version = parse_ref(ref)
    if version is None:
        raise InputError("evalrun runs a release: give NAME@vN (curate release writes one)", field="dataset")
    if (target is None) == (traces is None):
        raise InputError("give exactly one of --target or --traces", field="target")
    if settings.oracle_context and traces is not None:
        raise InputError("--oracle-context needs a Python --target", field="oracle-context")
    if traces is not None:   # no call is made: the system logged its own latencies, none of them a warm-up
        settings = settings.model_copy(update={"warmup": 0})
    # Every path is made absolute now, before the target is imported: a target that changes the
    # working folder (on import or on a call) does not move where the run reads or writes.
    workspace = dataclasses.replace(workspace, root=Path(os.path.abspath(workspace.root)))
    traces = Path(os.path.abspath(traces)) if traces is not None else None
    if isinstance(target, str) and is_file_target(target):   # the --resume command works from any folder too
        where, _, function = target.rpartition(":")
        target = f"{os.path.abspath(where)}:{function}"
    folder = Path(out) if out else workspace.root / "runs" / f"{name}-{version}-{time.strftime('%Y%m%d-%H%M%S')}"
    folder = workspace.refuse_state(folder, allow=("runs",))   # resolved once; never over the workspace's state
    release, items = load_release(Releases(workspace, name).path(version))
    gate = leakage_gate(workspace, release, release.kb_snapshot, settings.allow_unchecked)
    # Everything that can be refused is refused before the run folder exists: a bad --traces file or
    # target leaves nothing behind.
    logged = logged_traces(traces) if traces is not None else None
    stray = check_logged(logged, traces, [i.id for i in items], ref) if logged is not None else None
    call, target_name = None, target
    if callable(target):
        call, target_name = callable_target(target, settings.oracle_context), callable_name(target)
    elif target is not None and not isinstance(target, str):
        raise InputError(f"a target is a Python callable, 'module:function' or an http(s):// URL, not "
                         f"{type(target).__name__}", field="target")
    elif target is not None:
        call = (http_target(target, settings.timeout, settings.max_response_bytes)
                if target.startswith(("http://", "https://")) else python_target(target, settings.oracle_context))
    check_budget(workspace, settings)
    if folder.exists() and not resume and any(folder.iterdir()):
        raise CurateError(f"run folder {folder} is not empty: pass --resume to finish it, or another --out")
    folder.mkdir(parents=True, exist_ok=True)
    if stray:
        print(f"evalrun: warning: {stray}", file=sys.stderr, flush=True)
    target_scope = call.scope if call is not None else TargetScope(how="logged traces")
    if cannot := target_note(target_scope, items):
        print(f"evalrun: warning: {cannot}", file=sys.stderr, flush=True)
    finish = _resume_command(workspace, ref, target_name, traces, folder, settings,
                             python=callable(target) and not importable(target_name))
    # one run writes a folder at a time: a second (a --resume beside the run itself) stops at once
    with writing(folder, f"run folder {folder}", wait=False, clean=[(folder, 1)]):
        manifest_path = folder / MANIFEST
        if resume and manifest_path.exists():
            previous = RunManifest.read(manifest_path)
            if previous.content_sha256 != release.content_sha256:
                raise CurateError(f"{folder} is a run of another release ({previous.ref}); not resuming it")
            # Scoring asks the judge configured now: a resumed run keeps the judge it started with, or its
            # manifest and summary would name different judges.
            if settings.no_judge != previous.settings.no_judge:
                raise CurateError(f"{folder} was started {'without' if settings.no_judge else 'with'} --no-judge: "
                                  f"finish it as it was started, or run into a new --out; not resuming it")
            changed = judge_difference(previous.judge, configured_judge(workspace, previous.settings.no_judge))
            if changed:
                raise CurateError(f"{folder} keeps the judge it started with, and the judge differs ({changed}): "
                                  f"configure that judge again (curate.toml [judge], CURATE_JUDGE_BASE_URL, "
                                  f"CURATE_JUDGE_MODEL) to finish this run, or run into a new --out; not resuming it")
        else:
            kind = logged.kind if logged is not None else "trace"
            _manifest(workspace, ref, release, describe(target_name, traces, settings.oracle_context, kind), settings,
                      gate, target_scope).write(manifest_path)
        log = TraceLog(folder / TRACES)
        todo = [i for i in items if i.id not in read_traces(log.path)]
        if todo and not (resume and manifest_path.exists()):
            _say_grading_cost(workspace, release, items, settings)
        done, scoring = len(items) - len(todo), False
        try:
            with sigterm_stops_cleanly():
                if logged is not None:
                    _append_logged(logged, todo, traces, log)
                else:
                    _call_target(call, usable_items(workspace, release, todo) if settings.oracle_context else todo,
                                 settings, log)
                scoring = True
                score_run(workspace, folder, release=(release, items))
        except TooManyHung as exc:
            raise CurateError(f"{exc}: stopped, {done + log.appended} of {len(items)} items done; fix the target, "
                              f"then finish with: {finish}") from None
        except KeyboardInterrupt as exc:
            log.cut_partial_line()  # a line cut short by the interrupt itself: whole lines only
            where = "done, not yet scored" if scoring else "done"
            raise RunInterrupted(f"{done + log.appended} of {len(items)} items {where}; finish with: {finish}",
                                 exit_code=143 if isinstance(exc, _Terminated) else 130) from None
    return folder
