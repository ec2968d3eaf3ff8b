"""Fixtures of the evalrun tests."""

import pytest

from curate.checks.leakage import check_leakage
from curate.dataset import DatasetStore
from curate.release import release
from tests.support import targets


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
