"""Fixtures of the evalrun tests."""

import pytest

from curate.checks.leakage import check_leakage
from curate.dataset import DatasetStore
from curate.release import release
from tests.support import scope, targets


@pytest.fixture
def released(handbook):
    """faq@v1 (five items), checked for leakage against its snapshot; GOLD filled from its evidence."""
    workspace = handbook.workspace
    check_leakage(workspace, ref="faq", semantic=False)
    release(workspace, dataset="faq", message="v1")
    targets.GOLD.clear()
    targets.CALLS.clear()
    for item in DatasetStore(workspace).items("faq"):
        targets.GOLD[item.question] = list(dict.fromkeys(c for e in item.evidence if e.grade > 0 for c in e.chunk_ids))
    return handbook


@pytest.fixture
def hr(workspace, tmp_path):
    """hr@v1, released from the scoped KB of tests/support/scope.py (HR's salary bands, a superseded
    travel policy, two tenants)."""
    scope.build(workspace, tmp_path)
    return workspace


@pytest.fixture
def hr_runs(hr, tmp_path):
    """hr@v1 run by a system that filters by scope and one that does not: (workspace, scoped, leaky)."""
    from evalrun.records import RunSettings
    from evalrun.runner import run
    settings = RunSettings(no_judge=True)
    return (hr, run(hr, ref="hr@v1", target=scope.scoped, out=tmp_path / "scoped", settings=settings),
            run(hr, ref="hr@v1", target=scope.leaky, out=tmp_path / "leaky", settings=settings))
