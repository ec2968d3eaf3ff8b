"""`evalrun history DIR...`: the runs of one dataset over time (release version, KB snapshot, target)
with chosen metrics and their intervals, and the alerts a scheduled job raises: the latest run
significantly below the previous one (paired, as `evalrun compare`), or a metric that dropped in N
consecutive runs. An alert never looks past the newest run: a newer run folder that is not scored or
cannot be read, or a metric the latest run has no value of, is an alert too."""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from pydantic import Field

from curate import CurateError, EvalItem, InputError, NotFound, Record
from evalrun.compare.comparable import check_comparable
from evalrun.compare.comparison import (
    ALPHA,
    LOWER_IS_BETTER,
    compare_runs,
    metric_names,
    metric_order,
    scored_run,
)
from evalrun.compare.stats import holm
from evalrun.records import MANIFEST, SCORES, SUMMARY, TRACES, MetricSummary, Run, RunManifest

DROPS = 3
RUN_FILES = (MANIFEST, TRACES, SCORES, SUMMARY)  # a folder holding any of them is a run folder, scored or not


class HistoryPoint(Record):
    """One metric of one run on one subset, as the run's summary has it."""

    run: str = Field(description="The run folder.")
    started_at: str = Field(description="When the run started (UTC).")
    version: str = Field(description="Release version.")
    kb_snapshot: str | None = Field(None, description="KB snapshot.")
    target: str = Field(description="The system under test.")
    metric: str = Field(description="The metric.")
    subset: str = Field(description="'all' or a subset label.")
    summary: MetricSummary = Field(description="n, mean and 95% interval.")


@dataclass(frozen=True)
class SkippedRun:
    """A run folder history cannot use: not scored yet, or a file of it cannot be read."""

    folder: Path
    reason: str
    started_at: str | None = None
    """When it started, from its manifest (None: the manifest cannot be read)."""
    dataset: str | None = None
    """Its dataset, from its manifest (None: the manifest cannot be read)."""


def _run_folders(folders: Sequence[Path]) -> list[Path]:
    """Return the run folders of `folders` (each a run folder, or a folder of run folders): any folder
    holding one of a run's files, scored or not."""
    found = []
    for folder in map(Path, folders):
        if any((folder / name).is_file() for name in RUN_FILES):
            found.append(folder)
        elif folder.is_dir():
            found += sorted(p for p in folder.iterdir() if any((p / name).is_file() for name in RUN_FILES))
        else:
            raise NotFound(f"{folder} is neither a run folder nor a folder of runs")
    return list(dict.fromkeys(found))


def _skipped(folder: Path, problem: CurateError) -> SkippedRun:
    """Return why `folder` is not a scored run, with its start time when its manifest can be read."""
    try:
        manifest = RunManifest.read(folder / MANIFEST)
    except (CurateError, OSError):
        return SkippedRun(folder, str(problem))
    return SkippedRun(folder, str(problem), manifest.started_at, manifest.dataset)


def scan_runs(folders: Sequence[Path]) -> tuple[list[Run], list[SkippedRun]]:
    """Return the scored runs in `folders` (each a run folder, or a folder of run folders), oldest first,
    and the run folders that are not scored or cannot be read; runs of more than one dataset are refused
    (name one folder per dataset)."""
    runs, skipped = [], []
    for folder in _run_folders(folders):
        try:
            runs.append(scored_run(folder))
        except CurateError as exc:
            skipped.append(_skipped(folder, exc))
    if not runs:
        raise NotFound(f"no scored run in {', '.join(map(str, folders))}"
                       + (f" ({len(skipped)} run folders not scored or unreadable: {skipped[0].reason})"
                          if skipped else ""))
    runs.sort(key=lambda r: (r.manifest.started_at, str(r.folder)))
    datasets = sorted({r.manifest.dataset for r in runs})
    if len(datasets) > 1:
        raise InputError(f"runs of {len(datasets)} datasets ({', '.join(datasets)}): history follows one dataset; "
                         f"give the folders of one")
    return runs, skipped


def find_runs(folders: Sequence[Path]) -> list[Run]:
    """Return the scored runs in `folders`, oldest first (see `scan_runs`)."""
    return scan_runs(folders)[0]


def newest_run_alerts(runs: Sequence[Run], skipped: Sequence[SkippedRun], metrics: Sequence[str],
                      chosen: bool = False) -> list[str]:
    """Return a line for each reason the newest run cannot be judged, so that an alert never looks past it:
    a run folder newer than the latest scored run that is not scored, one that cannot be read (it may be
    the newest), and each metric of `metrics` the latest run has no value of; unless the metrics were
    `chosen` (--metric), every metric of the previous run too."""
    latest = runs[-1]
    key = (latest.manifest.started_at, str(latest.folder))
    lines = []
    for run in skipped:
        if run.dataset not in (None, latest.manifest.dataset):
            continue   # another dataset's run in the same folder: not this history's newest
        if run.started_at is None:
            lines.append(f"run folder {run.folder} cannot be read, so it may be the newest run: {run.reason}")
        elif (run.started_at, str(run.folder)) > key:
            lines.append(f"the newest run {run.folder} (started {run.started_at}) is not scored, so the latest "
                         f"scored run {latest.folder} is not the newest: {run.reason}")
    overall = latest.summary.metrics.get("all", {})
    wanted = list(metrics)
    if len(runs) > 1 and not chosen:
        wanted += sorted(m for m in runs[-2].summary.metrics.get("all", {}) if m not in wanted)
    for metric in wanted:
        summary = overall.get(metric)
        if summary is None:
            lines.append(f"{metric}: the latest run {latest.folder} does not have it")
        elif summary.n == 0 and summary.unscored:
            why = "; ".join(f"{n} {reason}" for reason, n in sorted(summary.unscored.items()))
            lines.append(f"{metric} on all: the latest run {latest.folder} scored no item of it ({why[:300]})")
    return lines


def chosen_metrics(runs: Sequence[Run], patterns: Sequence[str]) -> list[str]:
    """Return the metrics of the runs' "all" matching the globs `patterns` (every metric of the latest
    run when none is given); a glob that matches nothing is an InputError."""
    names = {m for run in runs for m in run.summary.metrics.get("all", {})}
    if not patterns:
        return sorted(runs[-1].summary.metrics.get("all", {}), key=metric_order)
    for pattern in patterns:
        if not any(fnmatch.fnmatchcase(n, pattern) for n in names):
            raise InputError(f"no metric of these runs matches {pattern!r} (e.g. 'context/recall@*')", field="metric")
    return sorted((n for n in names if any(fnmatch.fnmatchcase(n, p) for p in patterns)), key=metric_order)


SUBSETS_SHOWN = 12


def check_subset(runs: Sequence[Run], subset: str) -> str:
    """Return `subset` when some run's summary has it; else raise an InputError naming the closest
    subset the runs have and the subsets they have (an unknown subset would show an empty history
    and, with --alert, say "no alert" about nothing)."""
    known = sorted({label for run in runs for label in run.summary.metrics}, key=lambda s: (s != "all", s))
    if subset in known:
        return subset
    folded = {label.casefold(): label for label in known}
    close = [folded[m] for m in difflib.get_close_matches(subset.casefold(), list(folded), n=1, cutoff=0.6)]
    shown = ", ".join(known[:SUBSETS_SHOWN]) + (f", ... ({len(known)} in all)" if len(known) > SUBSETS_SHOWN else "")
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise InputError(f"no run here has a subset {subset!r}: {hint}these runs have {shown or 'none'}", field="subset")


def history(runs: Sequence[Run], metrics: Sequence[str], subset: str = "all") -> list[HistoryPoint]:
    """Return every run's summary of each metric on `subset`, oldest run first."""
    points = []
    for run in runs:
        m = run.manifest
        for metric in metrics:
            summary = run.summary.metrics.get(subset, {}).get(metric)
            if summary is not None:
                points.append(HistoryPoint(run=str(run.folder), started_at=m.started_at, version=m.version,
                                           kb_snapshot=m.kb_snapshot, target=m.target, metric=metric, subset=subset,
                                           summary=summary))
    return points


def consecutive_drops(runs: Sequence[Run], metrics: Sequence[str], drops: int = DROPS) -> list[str]:
    """Return a line for each metric and subset whose mean got worse in each of the last `drops` runs
    (a fall; a rise where lower is better), from the runs' summaries.

    Needs drops + 1 runs; a run without the metric on the subset breaks the sequence."""
    if len(runs) < drops + 1:
        return []
    last = runs[-(drops + 1):]
    labels = sorted({label for run in last for label in run.summary.metrics})
    lines = []
    for label in labels:
        for metric in metrics:
            means = [run.summary.metrics.get(label, {}).get(metric) for run in last]
            if any(s is None or s.mean is None for s in means):
                continue
            values = [s.mean for s in means]
            steps = [b - a for a, b in pairwise(values)]
            worse = all(s > 0 for s in steps) if metric in LOWER_IS_BETTER else all(s < 0 for s in steps)
            if worse:
                trail = " -> ".join(f"{v:.3f}" for v in values)
                lines.append(f"{metric} on {label} got worse in {drops} consecutive runs: {trail}")
    return lines


def latest_alerts(runs: Sequence[Run], metrics: Sequence[str], items: list[EvalItem] | None = None) -> list[str]:
    """Return a line for each metric and subset on which the latest run is significantly worse than the
    previous one, paired over the items both scored (Holm over the metrics x subsets compared)."""
    if len(runs) < 2:
        return []
    previous, latest = runs[-2], runs[-1]
    checked = check_comparable(previous, latest)
    common = set(metric_names(previous, latest, checked.ks))
    names = [m for m in metrics if m in common]
    if not names:
        return []
    comparison = compare_runs(previous, latest, items=items, metrics=names, checked=checked)
    # every chosen metric on every subset is one family here: an alert is a claim about any of them
    tested = [r for r in comparison.rows if r.metric in names and r.p_value is not None]
    lines = []
    for r, adjusted in zip(tested, holm([r.p_value for r in tested]).tolist()):
        falls = r.difference > 0 if r.metric in LOWER_IS_BETTER else r.difference < 0
        if adjusted < ALPHA and falls:
            lines.append(f"{r.metric} on {r.subset}: latest {latest.folder} is significantly worse than "
                         f"{previous.folder}: {r.base:.3f} -> {r.new:.3f} ({r.difference:+.3f}, n {r.n}, "
                         f"p {adjusted:.3g} Holm over the {len(tested)} metrics x subsets compared)")
    return lines
