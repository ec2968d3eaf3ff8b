"""The terminal view of a probe run (`evalrun probe`, `evalrun show PROBE_FOLDER`)."""

from __future__ import annotations

from pathlib import Path

from curate.cli import console, table
from evalrun.probes.folder import scored_probe_run
from evalrun.probes.views import (
    METRIC_COLUMNS,
    PAIRED,
    PAIRED_COLUMNS,
    VERDICTS,
    curve_line,
    failure_lines,
    headline,
    judge_line,
    metric_rows,
    paired_row,
)


def print_probe_summary(folder: Path, failures: int = 5, every_failure: bool = False) -> None:
    """Print a probe run's summary: the headline, its metrics, the pairs against clean, the curves, and the
    first `failures` failures of each probe (`every_failure`: all of them)."""
    summary = scored_probe_run(folder).summary
    out = console()
    for line in headline(summary):
        out.print(line, soft_wrap=True)
    out.print(table("probes (lexical)", METRIC_COLUMNS, metric_rows(summary.metrics)))
    out.print(VERDICTS, soft_wrap=True)
    judged = metric_rows(summary.metrics, "judge")
    if judged:
        out.print(table("probes (judge verdicts, counted apart from the lexical ones)", METRIC_COLUMNS, judged))
    if line := judge_line(summary):
        out.print(line, soft_wrap=True)
    if summary.paired:
        out.print(table("against the same items asked clean", PAIRED_COLUMNS, [paired_row(r) for r in summary.paired]))
        out.print(PAIRED, soft_wrap=True)
    for name in ("by_rate", "by_position"):
        if line := curve_line(summary, name):
            out.print(line, soft_wrap=True)
    lines = failure_lines(summary.failures, per_probe=len(summary.failures) if every_failure else failures)
    if lines:
        out.print("\nfailures (the variant, the verdict, what was planted, the answer):")
        for line in lines:
            out.print(line, soft_wrap=True)
    elif failures:
        out.print("failures: none")
