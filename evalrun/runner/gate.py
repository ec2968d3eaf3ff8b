"""The leakage gate: a release is evaluated only against a snapshot it was checked on, with no leak
left open: every finding of that check quarantined (its item is not in the release) or accepted."""

from __future__ import annotations

from collections.abc import Collection

from curate import CurateError, LeakageCheck, ReleaseManifest, Releases, Workspace
from evalrun.records import LeakageGate


def _problem(source: str, check: LeakageCheck, released: Collection[str] | None) -> str | None:
    """Return why `check` does not clear the release, or None when it does."""
    if check.current is False:
        return f"its leakage check ({source}) saw other items than the release holds"
    still = check.with_status("open")
    if check.outcome == "incomplete" and not still:
        why = check.settings.get("semantic_reason") or "part of it could not be done"
        return f"its leakage check ({source}) was incomplete ({why}); run it again, or with --no-semantic"
    if still or (not check.findings and not check.clean):   # a record from before findings were kept
        leaking = len({f.item_id for f in still}) if still else len(check.items)
        return f"its leakage check ({source}) left leaks open in {leaking} items"
    inside = sorted({f.item_id for f in check.with_status("quarantined") if released is not None and f.item_id in released})
    if inside:
        return f"items its leakage check ({source}) quarantined are in the release: {', '.join(inside[:5])}"
    return None


def leakage_gate(workspace: Workspace, manifest: ReleaseManifest, kb_snapshot: str | None,
                 allow_unchecked: bool, released: Collection[str] | None = None) -> LeakageGate:
    """Return the leakage check that clears this release for `kb_snapshot`, or raise with one line
    (unless `allow_unchecked`, which is then recorded). `released`: the release's item ids, to make
    sure no quarantined item is among them (a current check already guarantees it)."""
    candidates: list[tuple[str, LeakageCheck]] = []
    if manifest.checks.leakage is not None:
        candidates.append(("release manifest", manifest.checks.leakage))
    beside = Releases(workspace, manifest.name).leakage_check_path(manifest.version, kb_snapshot)
    if beside.exists():
        candidates.append((beside.name, LeakageCheck.read(beside)))
    for source, check in reversed(candidates):
        if check.kb_snapshot != kb_snapshot:
            continue
        problem = _problem(source, check, released)
        if problem is None:
            return LeakageGate(status="clean", source=source, at=check.at, kb_snapshot=kb_snapshot,
                               excluded_docs=check.excluded_docs, accepted=len(check.with_status("accepted")),
                               quarantined=len(check.with_status("quarantined")))
        break
    else:
        problem = f"no leakage check against KB snapshot {kb_snapshot}"
    label = f"{manifest.name}@{manifest.version}"
    if not allow_unchecked:
        raise CurateError(f"{label} is not cleared for evaluation: {problem}; run `curate check-leakage "
                          f"--dataset {label} --kb {kb_snapshot}` (or pass --allow-unchecked)")
    return LeakageGate(status="unchecked", problem=problem, kb_snapshot=kb_snapshot)
