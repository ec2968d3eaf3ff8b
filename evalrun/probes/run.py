"""`evalrun probe`: build a release's probe variants from its evidence and KB snapshot, ask the target
each of them as `evalrun run` asks items (the same calls, concurrency, timeouts, traces appended one
whole line at a time, Ctrl-C and SIGTERM stopping cleanly, `--resume`), then score them.

The mode comes from the target: a Python target whose module has `generate(question, context)` (the
contract of `--oracle-context`) is given each variant's planted context and runs every probe; an HTTP
target, or a Python function of the question alone (or `end_to_end=True`), retrieves for itself and runs
only the probes that plant no context: negative (questions about content the KB does not hold) and
rewrite. The probes that cannot run are named in the manifest, the summary and the output.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from curate import (
    Budget,
    CurateError,
    EvalItem,
    InputError,
    KBIndex,
    Releases,
    SnapshotStore,
    Workspace,
    atomic_write_jsonl,
    load_release,
    now,
    parse_ref,
    progress,
    writing,
)
from evalrun.probes.build import NEEDS_CONTEXT, PLANTED, Built, Neighbours, build, confusable_chunks
from evalrun.probes.folder import (
    MANIFEST,
    SCORES,
    SKIPS,
    SUMMARY,
    TRACES,
    VARIANTS,
    VERDICTS,
    ProbeManifest,
    ProbeSettings,
    read_probe_run,
)
from evalrun.probes.injections import TEMPLATES
from evalrun.probes.judge_prompts import PROBE_PROMPTS
from evalrun.probes.judged import judge_verdicts
from evalrun.probes.paraphrase import rephrase
from evalrun.probes.records import PROBES, ProbeVariant
from evalrun.probes.rewrites import RULES
from evalrun.probes.score import answered, summarize, verdicts_of
from evalrun.probes.variants import POSITIONS
from evalrun.records import RunSettings
from evalrun.runner.gate import leakage_gate
from evalrun.runner.run import (
    RunInterrupted,
    _Terminated,
    call_record,
    check_budget,
    scope_of,
    sigterm_stops_cleanly,
    target_sees,
    traced_call,
    usable_items,
)
from evalrun.runner.scheduler import Calls, TooManyHung
from evalrun.runner.targets import (
    Target,
    callable_name,
    callable_target,
    http_target,
    is_file_target,
    module_target,
    python_module,
)
from evalrun.runner.trace_log import TraceLog
from evalrun.scoring.generation import configured_judge


def parse_probes(text: str | Sequence[str]) -> list[str]:
    """Return the probes of 'noise,negative' (or a list), in their canonical order; an unknown one is an
    InputError naming the known ones.

    >>> parse_probes("rewrite, noise")
    ['noise', 'rewrite']
    """
    asked = [p.strip() for p in (text.split(",") if isinstance(text, str) else text) if p.strip()]
    unknown = [p for p in asked if p not in PROBES]
    if unknown or not asked:
        raise InputError((f"unknown probe {unknown[0]!r}" if unknown else "no probe named")
                         + f": use some of {','.join(PROBES)}", field="probes")
    return [p for p in PROBES if p in asked]


def check_settings(settings: ProbeSettings) -> None:
    """Refuse settings no variant could be built with, before anything runs (one line each)."""
    for position in settings.positions:
        if position not in POSITIONS:
            raise InputError(f"unknown gold position {position!r}: use {', '.join(POSITIONS)}", field="positions")
    for rate in settings.rates:
        count = rate * settings.size
        if not 0 <= rate <= 1 or abs(count - round(count)) > 1e-9:
            raise InputError(f"noise rate {rate:g} of a context of {settings.size} chunks is {count:g} chunks: use "
                             f"rates between 0 and 1 that are multiples of 1/{settings.size}", field="rates")
    for template in settings.templates:
        if template not in TEMPLATES:
            raise InputError(f"unknown injection template {template!r}: use {', '.join(TEMPLATES)}", field="templates")
    for rule in settings.rewrite_rules:
        if rule not in (*RULES, "llm"):
            raise InputError(f"unknown rewrite rule {rule!r}: use {', '.join((*RULES, 'llm'))}", field="rewrite-rules")


# -- the target and its mode -----------------------------------------------------------------------------

def _takes_context(function: Callable[..., Any]) -> bool:
    """Return whether a Python callable takes a context: a parameter named context, or two positional ones."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return any(p.name == "context" for p in parameters) or len(positional) >= 2


def resolve_target(target: str | Callable[..., Any], settings: ProbeSettings,
                   end_to_end: bool) -> tuple[Target, str, str]:
    """Return (the target, its name, the mode): oracle_context when it takes a given context, else end_to_end."""
    if callable(target):
        oracle = not end_to_end and _takes_context(target)
        return callable_target(target, oracle), callable_name(target), "oracle_context" if oracle else "end_to_end"
    if not isinstance(target, str):
        raise InputError(f"a target is a Python callable, 'module:function' or an http(s):// URL, not "
                         f"{type(target).__name__}", field="target")
    if target.startswith(("http://", "https://")):
        return http_target(target, settings.timeout, settings.max_response_bytes), target, "end_to_end"
    if is_file_target(target):
        where, _, function = target.rpartition(":")
        target = f"{os.path.abspath(where)}:{function}"
    module, module_name, function = python_module(target)
    oracle = not end_to_end and callable(getattr(module, "generate", None))
    return module_target(module, module_name, function, oracle), target, "oracle_context" if oracle else "end_to_end"


def not_run(probes: Sequence[str], mode: str, built: Built | None = None) -> dict[str, str]:
    """Return the probes asked for that cannot run in this mode (or built no variant), and why."""
    missing = {}
    for probe in probes:
        if mode == "end_to_end" and probe in PLANTED and probe != "negative":
            missing[probe] = f"end-to-end target: {NEEDS_CONTEXT}"
        elif built is not None and not any(v.probe == probe for v in built.variants):
            reasons = sorted({s.reason for s in built.skips if s.probe == probe})
            missing[probe] = ("no variant could be built: " + "; ".join(reasons[:3]) if reasons else
                              "no question about absent content could be mined from the KB (no code, year or name "
                              "family), or --absent 0" if probe == "negative" else "no variant could be built")
    return missing


# -- building ---------------------------------------------------------------------------------------------

def _neighbours(workspace: Workspace, snapshot: str, planted: bool) -> tuple[Neighbours, list]:
    """Return the KB's chunks and where hard negatives come from: BM25, and the stored embeddings when the
    snapshot's chunks are embedded (never embedded here: said why not). Without a noise or negative context
    to plant (`planted` false) none is needed, and none of them is built or mined."""
    index = KBIndex.open(workspace, snapshot)
    chunks = index.chunks
    if not planted:
        return Neighbours(note="none planted (no noise or negative context in this run)"), chunks
    model = workspace.setting("embedding", "model") or None
    vectors = index.stored_dense(model) if model else None
    confusable = confusable_chunks(chunks)
    note = (f"near misses (graded 0, and {len(confusable):,} chunks with confusable chunks mined: near codes, near "
            f"copies), BM25") + (f", embeddings ({model})" if vectors is not None else
                                  f"; embeddings not used: the chunks of {snapshot} are not embedded"
                                  + (f" with {model} (`curate grade --dense` embeds them once)" if model else
                                     " (no [embedding] model)"))
    scope = SnapshotStore(workspace).scope_index(snapshot)
    allowed = None
    if scope.scoped:
        def allowed(item: EvalItem, chunk_id: str) -> bool:
            return scope.usable(chunk_id, item.asker_groups, item.as_of)
    return Neighbours(bm25=index.bm25, vectors=vectors, note=note, allowed=allowed, confusable=confusable), chunks


def _items(workspace: Workspace, release, items: list[EvalItem], settings: ProbeSettings, oracle: bool) -> list[EvalItem]:
    chosen = sorted(items, key=lambda i: i.id)[:settings.limit] if settings.limit else items
    return usable_items(workspace, release, chosen) if oracle else chosen


def _build(workspace: Workspace, release, items: list[EvalItem], probes: list[str], mode: str,
           settings: ProbeSettings) -> tuple[Built, list[str]]:
    """Return the variants and what to note of how they were made (the negatives' sources, the model's
    rephrasings)."""
    planted = mode == "oracle_context" and bool({"noise", "negative"} & set(probes))
    neighbours, chunks = _neighbours(workspace, release.kb_snapshot, planted)
    rephrased, asked = None, None
    if "rewrite" in probes and "llm" in settings.rewrite_rules:
        rephrased, asked = rephrase(workspace, items, no_judge=settings.no_judge)
    built = build(progress(items, "building probe variants", unit="item"), chunks, probes,
                  oracle=mode == "oracle_context", neighbours=neighbours, settings=settings, rephrased=rephrased)
    return built, [f"hard negatives: {neighbours.note}", *([asked] if asked else [])]


# -- calling -------------------------------------------------------------------------------------------------

def _call(target: Target, variants: list[ProbeVariant], items: dict[str, EvalItem], mode: str,
          settings: ProbeSettings, log: TraceLog) -> None:
    run_settings = RunSettings(concurrency=settings.concurrency, timeout=settings.timeout, warmup=0)

    def ask(variant: ProbeVariant):
        context = ([{"chunk_id": c.chunk_id, "text": c.text} for c in variant.context]
                   if mode == "oracle_context" else None)
        item = items.get(variant.item_id)
        return traced_call(target, variant.variant_id, variant.question, context, scope_of(item) if item else {})

    calls = Calls(ask, concurrency=settings.concurrency, timeout=settings.timeout)
    failed = [0]
    for finished in progress(calls.run(variants), "asking the probe variants", unit="variant",
                             total=len(variants), status=lambda: f"{failed[0]} errors"):
        record = call_record(finished, run_settings, item_id=finished.item.variant_id)
        failed[0] += record.error is not None
        log.append(record)
    if calls.abandoned:
        print(f"evalrun: {calls.abandoned} calls to the target ran past the {settings.timeout:g} s timeout and were "
              f"abandoned ({calls.hung} still running; whatever they return is ignored)", file=sys.stderr, flush=True)


def score_probe_run(workspace: Workspace, folder: Path, items: dict[str, EvalItem] | None = None) -> None:
    """Score the probe run in `folder`: verdicts.jsonl and probe_summary.json (written atomically)."""
    run = read_probe_run(folder)
    if items is None:
        manifest = run.manifest
        items = {i.id: i for i in load_release(Releases(workspace, manifest.dataset).path(manifest.version))[1]}
    done = answered(run.variants, run.traces)
    lexical = verdicts_of(done, items)
    settings = run.manifest.settings
    budget = (Budget(usd=settings.budget_usd, tokens=settings.budget_tokens)
              if settings.budget_usd is not None or settings.budget_tokens is not None else None)
    judged, failed, note, usage = judge_verdicts(workspace, done, items, no_judge=settings.no_judge, budget=budget)
    atomic_write_jsonl(folder / VERDICTS, [v.model_dump(mode="json") for v in (*lexical, *judged)])
    summary, scores = summarize(run.manifest, run.variants, run.skips, run.traces, items, lexical, judged, failed,
                                note, usage)
    atomic_write_jsonl(folder / SCORES, [s.model_dump(mode="json") for s in scores])
    summary.write(folder / SUMMARY)


def _resume_command(workspace: Workspace, ref: str, target: str, folder: Path) -> str:
    return shlex.join(["evalrun", "probe", "--dataset", ref, "--target", target, "--out", str(folder), "--resume",
                       "--workspace", str(workspace.root)])


def _manifest(ref: str, release, target: str, mode: str, settings: ProbeSettings, probes: list[str], gate,
              judge: dict, built: Built, notes: list[str]) -> ProbeManifest:
    versions = {}
    for package in ("curate-evalrun", "rapidfuzz", "numpy", "bm25s"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    missing = not_run(probes, mode, built)
    return ProbeManifest(dataset=release.name, version=release.version, ref=ref, content_sha256=release.content_sha256,
                         kb_snapshot=release.kb_snapshot, target=target, mode=mode, settings=settings,
                         prompt_versions=PROBE_PROMPTS.versions() if "unavailable" not in judge else {},
                         run=[p for p in probes if p not in missing], not_run=missing, notes=notes, judge=judge,
                         leakage_gate=gate, started_at=now(), packages=versions)


def probe(workspace: Workspace, *, ref: str, target: str | Callable[..., Any], settings: ProbeSettings,
          out: Path | None = None, resume: bool = False, end_to_end: bool = False) -> Path:
    """Probe the system with variants of the release `ref` (NAME@vN) into a folder and return it.

    A resumed probe run keeps the variants and settings it was started with (probe.json, variants.jsonl):
    only the calls not yet answered are made. While it runs, CURATE_WORKSPACE names `workspace`."""
    with target_sees(workspace):
        return _probe(workspace, ref=ref, target=target, settings=settings, out=out, resume=resume,
                      end_to_end=end_to_end)


def _probe(workspace: Workspace, *, ref: str, target, settings: ProbeSettings, out: Path | None, resume: bool,
           end_to_end: bool) -> Path:
    name, version = parse_ref(ref)
    if version is None:
        raise InputError("evalrun probes a release: give NAME@vN (curate release writes one)", field="dataset")
    probes = parse_probes(settings.probes)
    check_settings(settings)
    check_budget(workspace, settings)
    workspace = dataclasses.replace(workspace, root=Path(os.path.abspath(workspace.root)))
    folder = Path(out) if out else workspace.root / "runs" / f"probe-{name}-{version}-{time.strftime('%Y%m%d-%H%M%S')}"
    folder = workspace.refuse_state(folder, allow=("runs",))
    release, items = load_release(Releases(workspace, name).path(version))
    if not release.kb_snapshot:
        raise InputError(f"{ref} names no KB snapshot: probes are built from the KB's chunks", field="dataset")
    gate = leakage_gate(workspace, release, release.kb_snapshot, settings.allow_unchecked)
    call, target_name, mode = resolve_target(target, settings, end_to_end)
    if folder.exists() and not resume and any(folder.iterdir()):
        raise CurateError(f"probe folder {folder} is not empty: pass --resume to finish it, or another --out")
    folder.mkdir(parents=True, exist_ok=True)
    finish = _resume_command(workspace, ref, target_name, folder) if isinstance(target, str) else \
        f"evalrun.probe({ref!r}, target=..., out={str(folder)!r}, resume=True) with the same settings"
    with writing(folder, f"probe folder {folder}", wait=False, clean=[(folder, 1)]):
        if resume and (folder / MANIFEST).exists():
            manifest = ProbeManifest.read(folder / MANIFEST)
            if manifest.content_sha256 != release.content_sha256:
                raise CurateError(f"{folder} probes another release ({manifest.ref}); not resuming it")
            if manifest.target != target_name or manifest.mode != mode:
                raise CurateError(f"{folder} probed {manifest.target} ({manifest.mode}), not {target_name} ({mode}); "
                                  f"not resuming it")
            settings = manifest.settings
        else:
            asked = _items(workspace, release, items, settings, mode == "oracle_context")
            built, notes = _build(workspace, release, asked, probes, mode, settings)
            atomic_write_jsonl(folder / VARIANTS, [v.model_dump(mode="json") for v in built.variants])
            atomic_write_jsonl(folder / SKIPS, [s.model_dump(mode="json") for s in built.skips])
            manifest = _manifest(ref, release, target_name, mode, settings, probes, gate,
                                 configured_judge(workspace, settings.no_judge), built, notes)
            manifest.write(folder / MANIFEST)
        for probe_name, why in manifest.not_run.items():
            print(f"evalrun: {probe_name}: not run: {why}", file=sys.stderr, flush=True)
        run = read_probe_run(folder)
        log = TraceLog(folder / TRACES)
        todo = [v for v in run.variants if v.variant_id not in run.traces]   # read_probe_run read traces.jsonl
        by_id = {i.id: i for i in items}
        done, scoring = len(run.variants) - len(todo), False
        try:
            with sigterm_stops_cleanly():
                _call(call, todo, by_id, manifest.mode, settings, log)
                scoring = True
                score_probe_run(workspace, folder, by_id)
        except TooManyHung as exc:
            raise CurateError(f"{exc}: stopped, {done + log.appended} of {len(run.variants)} variants done; fix the "
                              f"target, then finish with: {finish}") from None
        except KeyboardInterrupt as exc:
            log.cut_partial_line()
            where = "done, not yet scored" if scoring else "done"
            raise RunInterrupted(f"{done + log.appended} of {len(run.variants)} variants {where}; finish with: "
                                 f"{finish}", exit_code=143 if isinstance(exc, _Terminated) else 130) from None
    return folder
