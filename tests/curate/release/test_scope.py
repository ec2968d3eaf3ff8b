"""A release records who asks and when, and reports the items scope leaves without usable evidence (an
item whose only evidence is forbidden to its asker, one whose only evidence is superseded) and those
whose asker is not checked; `curate show` says the same; the release loads with Hugging Face datasets."""

from __future__ import annotations

from pathlib import Path

import datasets
import pytest

from curate.dataset import DatasetStore
from curate.records import ReleaseScope
from curate.release import Releases
from tests.support.scoped import scoped_kb

DATA = Path(__file__).parents[1] / "dataset" / "data"

# s-1 .. s-7 of scoped_items.jsonl: s-3 (staff) asks about salary bands, which only hr and managers may see;
# s-5 (manager, at the latest moment) has only the 2025 travel policy, which the 2026 one supersedes;
# s-7 names no asker while the KB has access groups.
EXPECTED = ReleaseScope(
    by_asker={"groups:[]": 1, "groups:staff": 2, "no asker": 1, "role:hr": 1, "role:manager": 1, "role:staff": 1},
    by_moment={"2025": 1, "2026-03-01": 2, "latest": 4},
    should_decline={"forbidden": ["s-3"], "superseded": ["s-5"]}, kb_groups=True, unchecked=1, undecided=0)
LINES = [
    "scope: 2 items whose evidence is all unusable to their asker at their moment: the system should decline them",
    "scope:   forbidden to their asker: s-3",
    "scope:   superseded at their moment: s-5",
    "scope: 1 item names no asker while the KB has access groups: what it may see is not checked (give asker_groups "
    "or asker_role)",
    "scope: by asker: groups:[] 1, groups:staff 2, no asker 1, role:hr 1, role:manager 1, role:staff 1; by moment: "
    "2025 1, 2026-03-01 2, latest 4",
]


@pytest.fixture
def released(curate):
    scoped_kb(curate.workspace)
    curate("import", DATA / "scoped_items.jsonl", "--dataset", "hr", "--source", "human", "--kb", "policies")
    result = curate("release", "--dataset", "hr", "-m", "scoped items")
    return curate, result


def test_release_reports_scope_first_and_records_it(released):
    curate, result = released
    assert result.stdout.splitlines()[:len(LINES)] == LINES
    assert result.stdout.splitlines()[len(LINES)].startswith("released hr@v1: 7 items")
    manifest = Releases(curate.workspace, "hr").manifest("v1")
    assert manifest.scope_report == EXPECTED
    assert manifest.scope.roles["manager"] == ["manager", "staff"]


def test_show_says_the_same_of_the_release_and_of_the_draft(released):
    curate, _ = released
    for ref in ("hr@v1", "hr"):
        shown = curate("show", ref).stdout.splitlines()
        assert shown[1:1 + len(LINES)] == LINES, ref


def test_a_workspace_without_scope_records_none_and_says_nothing(handbook):
    result = handbook("release", "--dataset", "faq", "-m", "first")
    assert "scope:" not in result.stdout and "scope:" not in handbook("show", "faq@v1").stdout
    assert Releases(handbook.workspace, "faq").manifest("v1").scope_report is None


def test_the_release_loads_with_datasets_with_the_asker_and_the_moment(released, tmp_path):
    curate, _ = released
    loaded = datasets.load_dataset(str(Releases(curate.workspace, "hr").path("v1")), cache_dir=str(tmp_path / "hf"))
    rows = {row["id"]: row for row in loaded["unassigned"]}
    assert (rows["s-1"]["asker_groups"], rows["s-1"]["asker_role"], rows["s-1"]["as_of"]) == (
        ["staff"], "staff", "2026-03-01")
    assert (rows["s-2"]["asker_groups"], rows["s-2"]["as_of"]) == (["staff"], "2025")
    assert rows["s-4"]["asker_groups"] == [] and rows["s-7"]["asker_groups"] is None
    assert rows["s-6"]["question"] == "What does level L5 pay?" and rows["s-5"]["question"].startswith("出差一线城市")


def test_a_release_needs_its_kb_snapshot_only_when_items_name_an_asker_or_a_moment(handbook):
    import shutil
    workspace = handbook.workspace
    snapshot = DatasetStore(workspace).meta("faq").kb_snapshot
    shutil.rmtree(workspace.kb_dir / "snapshots" / snapshot)
    handbook("release", "--dataset", "faq", "-m", "no KB here, no scope either")
    store = DatasetStore(workspace)
    meta, items = store.load("faq")
    items[0].asker_groups = ["staff"]
    store.save(meta, items)
    result = handbook("release", "--dataset", "faq", "-m", "an asker", code=2)
    assert result.stderr.strip() == (f"error: items name an asker or a moment, and their KB snapshot {snapshot} is "
                                     f"not in this workspace to check them against")


def test_a_scoped_kb_with_no_asker_anywhere_is_reported_unchecked(curate, tmp_path):
    scoped_kb(curate.workspace, settings=False)
    path = tmp_path / "plain.jsonl"
    path.write_text('{"id": "p-1", "question": "What does level L5 pay?", "evidence": ["level L5 pays"]}\n'
                    '{"id": "p-2", "question": "年假几天？", "evidence": ["25 days of paid annual leave"]}\n',
                    encoding="utf-8")
    curate("import", path, "--dataset", "plain", "--source", "human", "--kb", "policies")
    result = curate("release", "--dataset", "plain", "-m", "no askers")
    assert result.stdout.splitlines()[:2] == [
        "scope: 2 items name no asker while the KB has access groups: what they may see is not checked (give "
        "asker_groups or asker_role)",
        "scope: by asker: no asker 2; by moment: latest 2"]
    assert Releases(curate.workspace, "plain").manifest("v1").scope_report.unchecked == 2
