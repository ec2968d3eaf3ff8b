"""Whether two runs can be compared, checked rather than assumed: which items both scored, which K
both used, and every difference that makes the comparison no longer controlled (a change besides
the system under test)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from curate import CurateError
from evalrun.compare.scope import scope_difference
from evalrun.records import Run


class NotComparable(CurateError):
    """Two runs that cannot be compared at all (runs of different datasets, no item in common)."""


@dataclass
class Comparability:
    """What the comparison may claim: the items and cutoffs it compares, the warnings to print first,
    and what differs besides the system (empty for a controlled comparison)."""

    items: list[str]
    base_only: list[str] = field(default_factory=list)
    new_only: list[str] = field(default_factory=list)
    ks: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    uncontrolled: list[str] = field(default_factory=list)
    new_diagnostic: bool = False
    base_diagnostic: bool = False

    @property
    def controlled(self) -> bool:
        return not self.uncontrolled


def _degraded(run: Run) -> int:
    """Return how many of a run's traces say the system ran degraded."""
    return sum(1 for record in run.traces.values()
               if isinstance(record.trace, dict) and record.trace.get("mode") == "degraded")


def _rejudged(base: Run, new: Run) -> str | None:
    """Return the line saying one run is the other's answers judged again (`evalrun rejudge`), or None."""
    for copy, original, side in ((new, base, "NEW"), (base, new, "BASE")):
        if copy.manifest.rejudged_from and Path(copy.manifest.rejudged_from) == Path(original.folder).resolve():
            return (f"{side} is the other run's answers judged again (judge model {copy.manifest.judge.get('model')} "
                    f"vs {original.manifest.judge.get('model')}; the system was not called): every difference "
                    "below is the judges', not the system's")
    return None


def judged_difference(base: Run, new: Run) -> str | None:
    """Return the line saying how the runs' judged retrieval (--judge-retrieval) differs, or None: graded in one
    run only, to another depth, or under another guideline text (the judged/ rows then compare unlike grades)."""
    b, n = (run.summary.judged_retrieval if run.summary is not None else None for run in (base, new))
    if b is None and n is None:
        return None
    if b is None or n is None:
        return (f"retrieval was judged in {'NEW' if b is None else 'BASE'} only (--judge-retrieval): no judged/ row "
                f"can be compared")
    found = []
    if b.k != n.k:
        found.append(f"the top {b.k} vs {n.k} candidates graded")
    if b.guideline_versions != n.guideline_versions:
        found.append("another relevance guideline text")
    if b.model != n.model:
        found.append(f"judge model {b.model} vs {n.model}")
    return f"judged/ rows compare grades made differently: {'; '.join(found)}" if found else None


def _diagnostic(run: Run) -> bool:
    return run.manifest.diagnostic or run.manifest.settings.oracle_context


def check_comparable(base: Run, new: Run) -> Comparability:
    """Return what a comparison of `new` against `base` may claim; raise NotComparable when it can
    claim nothing (different datasets, no item in common)."""
    b, n = base.manifest, new.manifest
    if b.dataset != n.dataset:
        raise NotComparable(f"runs of different datasets cannot be compared: {b.dataset} ({base.folder}) and "
                            f"{n.dataset} ({new.folder})")
    base_ids = {row.item_id for row in base.scores or []}
    new_ids = {row.item_id for row in new.scores or []}
    common = sorted(base_ids & new_ids)
    if not common:
        raise NotComparable(f"{base.folder} and {new.folder} have no scored item in common")
    result = Comparability(items=common, base_only=sorted(base_ids - new_ids), new_only=sorted(new_ids - base_ids),
                           new_diagnostic=_diagnostic(new), base_diagnostic=_diagnostic(base))
    if b.content_sha256 != n.content_sha256:
        result.uncontrolled.append(f"release {b.dataset}@{b.version} vs {n.dataset}@{n.version} (content differs)")
    if result.base_only or result.new_only:
        result.warnings.append(f"the runs hold different items: compared on the {len(common)} both scored "
                               f"({len(result.base_only)} only in BASE, {len(result.new_only)} only in NEW)")
    result.ks = sorted(set(b.settings.ks) & set(n.settings.ks))
    if b.settings.ks != n.settings.ks:
        result.warnings.append(f"K differs (BASE {','.join(map(str, b.settings.ks))}; NEW "
                               f"{','.join(map(str, n.settings.ks))}): retrieval is compared at the cutoffs both have "
                               f"({','.join(map(str, result.ks)) or 'none'})")
    differs = result.uncontrolled
    if b.kb_snapshot != n.kb_snapshot:
        differs.append(f"KB snapshot {b.kb_snapshot} vs {n.kb_snapshot}")
    rejudged = _rejudged(base, new)
    if rejudged:   # the same answers, judged twice: the judge is what is compared
        result.warnings.append(rejudged)
    elif b.judge.get("model") != n.judge.get("model"):
        differs.append(f"judge model {b.judge.get('model')} vs {n.judge.get('model')}")
    # the grading prompts of --judge-retrieval concern the judged/ rows only: `judged_difference` says those
    changed = sorted(k for k in set(b.prompt_versions) | set(n.prompt_versions)
                     if b.prompt_versions.get(k) != n.prompt_versions.get(k) and not k.startswith("ret_grade/"))
    if changed and not rejudged:
        differs.append(f"prompt versions of {', '.join(changed)}")
    if b.settings.precision_denominator != n.settings.precision_denominator:
        differs.append(f"precision denominator {b.settings.precision_denominator} vs "
                       f"{n.settings.precision_denominator}")
    if b.settings.exclude_errors != n.settings.exclude_errors:
        differs.append("--exclude-errors in one run only")
    if judged := judged_difference(base, new):
        result.warnings.append(judged)
    if scope := scope_difference(base, new):
        differs.append(scope)
    for side, run in (("BASE", base), ("NEW", new)):
        degraded = _degraded(run)
        if degraded:
            differs.append(f"{side} ran degraded on {degraded} items")
        if _diagnostic(run):
            differs.append(f"{side} is a diagnostic --oracle-context run")
    return result
