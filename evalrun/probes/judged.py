"""Judge verdicts on probe answers (placeholder being replaced in this change)."""

from __future__ import annotations


def judge_verdicts(workspace, done, items, *, no_judge: bool = False):
    """Return (judge verdicts, judge failures per probe, why none were asked)."""
    return [], {}, "judge verdicts on probes are not built yet"
