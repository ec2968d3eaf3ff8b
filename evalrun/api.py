"""The Python API of evalrun, exported from `evalrun`: `run`, `read_run`, `compare`, `report`, `probe`,
`compare_probes`. Each is the
function the command of the same name calls; its keyword arguments carry the options' names, and
it raises the errors the command prints (curate's `CurateError` and its kinds).

A workspace is a `curate.Workspace`, the path of one, or None: found from the current folder up.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from curate import InputError, NotFound, ReleaseManifest, Workspace, WorkspaceError, find_workspace
from evalrun.compare.comparable import check_comparable
from evalrun.compare.comparison import ALPHA, Comparison, release_items
from evalrun.review.records import read_reviews
from evalrun.compare.core import compare_scored
from evalrun.compare.gate import read_gate, refuse_diagnostic
from evalrun.probes.compare import ProbeComparison, compare_probe_runs
from evalrun.probes.folder import ProbeRun, ProbeSettings, is_probe_run, read_probe_run, scored_probe_run
from evalrun.probes.gate import ProbeGateRules, read_probe_gate
from evalrun.probes.run import probe as probe_release
from evalrun.records import Run, RunSettings, read_run, scored_run
from evalrun.report import write_report
from evalrun.runner import run as run_release

WorkspaceLike = Workspace | str | os.PathLike | None


def workspace_from(workspace: WorkspaceLike) -> Workspace:
    """Return the workspace `workspace` names (a Workspace, a path), or the one found from here up."""
    if isinstance(workspace, Workspace):
        return workspace
    return find_workspace(explicit=Path(workspace) if workspace is not None else None)


def _scored(run: Run | str | os.PathLike) -> Run:
    """Return the scored run `run` is, or is the folder of."""
    if not isinstance(run, Run):
        return scored_run(Path(run))
    if run.summary is None or run.scores is None:
        raise NotFound(f"{run.folder} has not been scored yet (no summary.json): "
                       f"`evalrun run --resume --out {run.folder}`")
    return run


def retrieval_by_default(workspace: Workspace) -> bool:
    """Return curate.toml's [judge] retrieval (False when unset): whether runs grade retrieved chunks."""
    value = workspace.setting("judge", "retrieval", False)
    if not isinstance(value, bool):
        raise workspace.setting_error(f"must be true or false, not {value!r}", "judge", "retrieval")
    return value


def run(release: str | ReleaseManifest, *, target: str | Callable[..., Any] | None = None,
        traces: str | os.PathLike | None = None, workspace: WorkspaceLike = None, out: str | os.PathLike | None = None,
        resume: bool = False, ks: Sequence[int] = (1, 3, 5, 10), concurrency: int = 4, warmup: int = 1,
        timeout: float = 60.0,
        max_response_bytes: int = 10_000_000, precision_denominator: Literal["k", "returned"] = "k",
        oracle_context: bool = False, allow_unchecked: bool = False, exclude_errors: bool = False,
        price_input: float | None = None, price_output: float | None = None, judge_repeats: int = 1,
        no_judge: bool = False, judge_retrieval: bool | None = None, judge_retrieval_k: int | None = None,
        budget_usd: float | None = None, budget_tokens: int | None = None) -> Run:
    """Return the run of a system over the release `release`, scored, as read back from its folder (`run.folder`).

    `release` is "NAME@vN" (or the `ReleaseManifest` of one). The system is `target`: a Python
    callable `f(question) -> trace` (with `oracle_context`, called `f(question, context)`), a
    "module:function" called the same way, or an http(s):// URL; or else `traces`, a JSONL file of traces
    or a TREC run it already logged. A Python target also gets each item's `asker_groups`, `asker_role`
    and `as_of` as the keyword arguments its signature accepts; an HTTP target those the item sets in its
    request body (docs/how-to/run.md, "The asker and the moment"). `out` is the run folder (default: `runs/NAME-vN-TIME` in the
    workspace); `resume` finishes one a kill interrupted. The other arguments are `evalrun run`'s
    options of the same names (`no_judge=True`: no judge is asked, the judged metrics are
    unscored, never 0; `warmup`: the first calls per worker are timed apart as warm-up, out of the
    latency percentiles; `judge_retrieval=True`: the judge grades each item's top `judge_retrieval_k`
    candidates and its context, metrics under judged/, None: as curate.toml's [judge] retrieval says;
    `budget_usd` and `budget_tokens`: no judge request is sent past them). Ctrl-C raises
    `RunInterrupted`, which names the call that finishes the run.

    In the README's workspace (release `hr@v1`, and `rag.py`'s `answer` a function that takes a
    question and returns a trace):

    ```python
    import evalrun
    from rag import answer

    run = evalrun.run("hr@v1", target=answer, out="runs/python")
    print(run.folder, run.summary.metrics["all"]["candidates/recall@5"].mean)
    ```
    """
    ref = release if isinstance(release, str) else f"{release.name}@{release.version}"
    if judge_retrieval is None:
        judge_retrieval = retrieval_by_default(workspace_from(workspace))
    try:
        settings = RunSettings(ks=list(ks), concurrency=concurrency, warmup=warmup, timeout=timeout,
                               max_response_bytes=max_response_bytes, oracle_context=oracle_context,
                               allow_unchecked=allow_unchecked, exclude_errors=exclude_errors,
                               precision_denominator=precision_denominator, price_input=price_input,
                               price_output=price_output, judge_repeats=judge_repeats, no_judge=no_judge,
                               judge_retrieval=judge_retrieval, judge_retrieval_k=judge_retrieval_k,
                               budget_usd=budget_usd, budget_tokens=budget_tokens)
    except ValidationError as exc:
        raise InputError.from_validation(exc) from None
    settings = settings.model_copy(update={"ks": sorted(set(settings.ks))})
    folder = run_release(workspace_from(workspace), ref=ref, target=target, traces=Path(traces) if traces else None,
                         out=Path(out) if out else None, resume=resume, settings=settings)
    return read_run(folder)


def compare(base: Run | str | os.PathLike, new: Run | str | os.PathLike, *,
            gate: str | os.PathLike | bool | None = None, workspace: WorkspaceLike = None, metrics: Sequence[str] = (),
            primary: Sequence[str] = (), alpha: float = ALPHA, allow_weak_rules: bool = False) -> Comparison:
    """Return the comparison of the scored run `new` against `base` (Run objects or run folders):
    every row (`comparison.rows`, `comparison.row(metric, subset)`), the warnings to read first, and
    with `gate` the gate's verdict (`comparison.gate.passed`, and each failed rule in `.failed`).

    `gate` is a TOML file with a `[gate]` table, or True for the workspace's curate.toml. The subsets
    come from the release, read from the workspace; without one (none found, and no `gate=True`)
    only "all" is compared, and the comparison says so. `comparison.verdict` says better, worse, mixed
    or no detectable difference, from the primary family: `primary` (metric globs), else the
    workspace's `[compare] primary`, else the default list (`evalrun.compare.family`). `metrics`
    (globs, narrowing the exploratory rows), `alpha` and `allow_weak_rules` are `evalrun compare`'s
    options. The core, with no workspace and no file read, is `evalrun.compare.core.compare_scored`.

    In the README's workspace, a second run against the first, held to a gate:

    ```python
    from pathlib import Path

    import evalrun

    Path("gate.toml").write_text('[gate]\\nguard = ["candidates/recall@5"]\\n')
    comparison = evalrun.compare("runs/first", "runs/python", gate="gate.toml", allow_weak_rules=True)
    print(comparison.verdict.sentence)
    print(comparison.gate.passed, comparison.row("candidates/recall@5").difference, comparison.warnings)
    ```
    """
    if allow_weak_rules and gate in (None, False):
        raise InputError("--allow-weak-rules loosens --gate: pass both", field="allow-weak-rules")
    if both_probe_runs(base, new):
        raise InputError(f"{base} and {new} are probe runs (`evalrun probe`): compare them with compare_probes")
    try:
        found = workspace_from(workspace)
    except WorkspaceError:
        if gate is True:   # the rules are the workspace's own
            raise
        found = None
    # The gate file is read first: a bad one is refused before any run is read or computed.
    rules, source = None, "gate"
    if gate is True:
        rules, source = read_gate(found.config_path), str(found.config_path)
    elif gate not in (None, False):
        rules, source = read_gate(Path(gate)), str(gate)
    base_run, new_run = _scored(base), _scored(new)
    checked = check_comparable(base_run, new_run)
    if rules is not None:
        refuse_diagnostic(str(new_run.folder), checked.new_diagnostic)   # before the release is read
    items = release_items(found, new_run) or release_items(found, base_run)
    declared, declared_from = list(primary), "--primary"
    if not declared and found is not None:
        declared, declared_from = declared_primary(found), str(found.config_path)
    return compare_scored(base_run, new_run, items, metrics=metrics, primary=declared, primary_source=declared_from,
                          alpha=alpha, rules=rules, gate_source=source, allow_weak_rules=allow_weak_rules,
                          checked=checked, reviews=(read_reviews(base_run.folder), read_reviews(new_run.folder)))


def both_probe_runs(base: Run | ProbeRun | str | os.PathLike, new: Run | ProbeRun | str | os.PathLike) -> bool:
    """Return whether BASE and NEW are both probe runs (True) or both ordinary runs (False); one of each is an
    InputError: a probe run's variants and a run's items have nothing to pair."""
    kinds = [isinstance(x, ProbeRun) or (not isinstance(x, Run) and is_probe_run(Path(x))) for x in (base, new)]
    if kinds[0] != kinds[1]:
        probe, ordinary = (base, new) if kinds[0] else (new, base)
        name = [getattr(x, "folder", x) for x in (probe, ordinary)]
        raise InputError(f"{name[0]} is a probe run (`evalrun probe`) and {name[1]} a run (`evalrun run`): compare "
                         f"two probe runs, or two runs")
    return kinds[0]


def probe_gate(gate: str | os.PathLike | bool, *, workspace: WorkspaceLike = None,
               base: bool = True) -> tuple[ProbeGateRules, str]:
    """Return the `[probe_gate]` rules of the gate file `gate` (True: the workspace's curate.toml) and the
    file they came from; without a `base` (one probe run gated), a table of guards only is refused."""
    path = workspace_from(workspace).config_path if gate is True else Path(gate)
    return read_probe_gate(path, base=base), str(path)


def compare_probes(base: ProbeRun | str | os.PathLike, new: ProbeRun | str | os.PathLike, *,
                   gate: str | os.PathLike | bool | None = None, workspace: WorkspaceLike = None, alpha: float = ALPHA,
                   allow_weak_rules: bool = False) -> ProbeComparison:
    """Return the comparison of the scored probe run `new` against `base` (ProbeRuns or probe folders): a
    verdict per probe (`comparison.probes`), every metric both hold paired over their items
    (`comparison.rows`, `comparison.row(metric)`), and with `gate` the probe gate's decision
    (`comparison.gate.passed`, each failed rule in `.failed`).

    `gate` is a TOML file with a `[probe_gate]` table, or True for the workspace's curate.toml (the only
    use of `workspace`). Runs whose variants differ (another release, mode, seed or variant settings)
    raise NotComparable. `alpha` and `allow_weak_rules` are `evalrun compare`'s options. The core, with
    no file read, is `evalrun.probes.compare.compare_probe_runs`.

    ```python
    import evalrun

    comparison = evalrun.compare_probes("runs/probe-old", "runs/probe-new", gate="gate.toml")
    print(comparison.sentence, comparison.gate.passed)
    ```
    """
    if allow_weak_rules and gate in (None, False):
        raise InputError("--allow-weak-rules loosens --gate: pass both", field="allow-weak-rules")
    # The gate file is read first: a bad one is refused before any run is read or computed.
    rules, source = probe_gate(gate, workspace=workspace) if gate not in (None, False) else (None, "gate")
    base_run, new_run = (x if isinstance(x, ProbeRun) and x.summary is not None and x.scores is not None
                         else scored_probe_run(getattr(x, "folder", x)) for x in (base, new))
    return compare_probe_runs(base_run, new_run, alpha=alpha, rules=rules, gate_source=source,
                              allow_weak_rules=allow_weak_rules)


def declared_primary(workspace: Workspace) -> list[str]:
    """Return the workspace's `[compare] primary` metric globs (empty: the default family); a value that
    is not a list of metric names is an InputError naming curate.toml, line and field."""
    table = workspace.config().get("compare", {})
    if not isinstance(table, dict):
        raise workspace.setting_error("must be a table, [compare]", "compare")
    value = table.get("primary", [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise workspace.setting_error("must be a list of metric names or globs, e.g. [\"context/recall@5\", "
                                      "\"lexical/f1\"]", "compare", "primary")
    return [v.strip() for v in value]


def report(run: Run | ProbeRun | str | os.PathLike, *, vs: Run | str | os.PathLike | None = None,
           probes: ProbeRun | str | os.PathLike | None = None, out: str | os.PathLike | None = None,
           workspace: WorkspaceLike = None) -> Path:
    """Return the path of the HTML report written of the scored run `run` (a Run or its folder): one
    self-contained file, against the BASE run `vs` when given, with the probe run `probes` (`probe`'s, or
    its folder) in a section when given. `out` defaults to `report.html` in the run's folder (replaced if
    it exists). The run's release and KB snapshot are read from the workspace. A probe run (`probe`'s, or
    its folder) as `run` gets the page of its probes, read from its folder alone.

    ```python
    import evalrun

    print(evalrun.report("runs/python", vs="runs/first"))
    ```
    """
    folder = run.folder if isinstance(run, (Run, ProbeRun)) else Path(run)
    base = vs.folder if isinstance(vs, Run) else Path(vs) if vs is not None else None
    probe_folder = probes.folder if isinstance(probes, ProbeRun) else Path(probes) if probes is not None else None
    written = write_report(folder, out=Path(out) if out else folder / "report.html",
                           workspace=None if is_probe_run(folder) else workspace_from(workspace), vs=base,
                           probes=probe_folder)
    return written.path


def probe(release: str, *, target: str | Callable[..., Any], probes: Sequence[str] | str = (
              "noise", "negative", "counterfactual", "injection", "rewrite"),
          workspace: WorkspaceLike = None, out: str | os.PathLike | None = None, resume: bool = False,
          end_to_end: bool = False, **settings: Any) -> ProbeRun:
    """Return the probe run of a system over the release `release` (NAME@vN), scored, as read back from its
    folder (`probe_run.folder`, `probe_run.summary`).

    `target` is a Python callable, "module:function" or an http(s):// URL, as for `run`. A callable that
    takes a context (`f(question, context)`), or a module with `generate(question, context)`, is given each
    variant's planted context and runs every probe; any other target (or `end_to_end=True`) runs negative
    (questions about content the KB does not hold) and rewrite only, and the others are named as not run.
    `settings` are `evalrun probe`'s options (`evalrun.probes.folder.ProbeSettings`: seed, rates, positions,
    size, templates, rewrite_rules, absent, limit, concurrency, timeout, k, allow_unchecked, no_judge).

    In the README's workspace (`rag.py`'s `answer` takes the question alone: an end-to-end target, which runs
    negative and rewrite; a `generate(question, context)` would run every probe):

    ```python
    import evalrun
    from rag import answer

    probed = evalrun.probe("hr@v1", target=answer, out="runs/probes")
    print(probed.summary.mode, sorted(probed.summary.not_run))
    ```
    """
    try:
        chosen = ProbeSettings(probes=list(probes.split(",")) if isinstance(probes, str) else list(probes), **settings)
    except ValidationError as exc:
        raise InputError.from_validation(exc) from None
    folder = probe_release(workspace_from(workspace), ref=release, target=target, settings=chosen,
                           out=Path(out) if out else None, resume=resume, end_to_end=end_to_end)
    return read_probe_run(folder)


__all__ = ["compare", "compare_probes", "probe", "read_run", "report", "run"]
