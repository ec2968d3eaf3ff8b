"""The leakage gate: a release is evaluated only against a snapshot it was checked on, and clean."""

from __future__ import annotations

from curate import CurateError, LeakageCheck, ReleaseManifest, Releases, Workspace
from evalrun.records import LeakageGate


def leakage_gate(workspace: Workspace, manifest: ReleaseManifest, kb_snapshot: str | None,
                 allow_unchecked: bool) -> LeakageGate:
    """Return the leakage check that clears this release for `kb_snapshot`, or raise with one line
    (unless `allow_unchecked`, which is then recorded)."""
    candidates: list[tuple[str, LeakageCheck]] = []
    if manifest.checks.leakage is not None:
        candidates.append(("release manifest", manifest.checks.leakage))
    beside = Releases(workspace, manifest.name).leakage_check_path(manifest.version, kb_snapshot)
    if beside.exists():
        candidates.append((beside.name, LeakageCheck.read(beside)))
    for source, check in reversed(candidates):
        if check.kb_snapshot != kb_snapshot:
            continue
        if check.current is False:
            problem = f"its leakage check ({source}) saw other items than the release holds"
        elif not check.clean:
            problem = f"its leakage check ({source}) found leaks in {len(check.items)} items"
        else:
            return LeakageGate(status="clean", source=source, at=check.at, kb_snapshot=kb_snapshot,
                               excluded_docs=check.excluded_docs)
        break
    else:
        problem = f"no leakage check against KB snapshot {kb_snapshot}"
    label = f"{manifest.name}@{manifest.version}"
    if not allow_unchecked:
        raise CurateError(f"{label} is not cleared for evaluation: {problem}; run `curate check-leakage "
                          f"--dataset {label} --kb {kb_snapshot}` (or pass --allow-unchecked)")
    return LeakageGate(status="unchecked", problem=problem, kb_snapshot=kb_snapshot)
