"""Nothing destroys what it did not make: an export's --out may not be the workspace or its state,
and an existing file or non-empty folder is replaced only with --force."""

import pytest

from curate.dataset import DatasetStore
from curate.release import release


def _digest(root):
    import hashlib
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def released(handbook):
    release(handbook.workspace, dataset="faq", message="v1")
    return handbook


@pytest.mark.parametrize("out", ["datasets", "datasets/faq", "kb", "kb/snapshots", ".", "..", "curate.toml",
                                 "datasets/faq/items.jsonl", "cache/x", "guidelines"])
@pytest.mark.parametrize("fmt", ["beir", "hf", "jsonl"])
def test_an_export_into_the_workspace_state_is_one_line_and_changes_nothing(released, fmt, out, monkeypatch):
    root = released.workspace.root
    monkeypatch.chdir(root)
    before = _digest(root)
    result = released("export", "faq@v1", "--format", fmt, "--out", out, "--force", code=2)
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: field 'out': ")
    assert _digest(root) == before
    assert len(DatasetStore(released.workspace).items("faq")) == 5


def test_an_existing_folder_or_file_needs_force(released, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("the user's own", encoding="utf-8")
    result = released("export", "faq@v1", "--format", "beir", "--out", folder, code=2)
    assert "is not empty: give a new folder, or --force" in result.stderr
    assert (folder / "notes.txt").read_text(encoding="utf-8") == "the user's own"
    released("export", "faq@v1", "--format", "beir", "--out", folder, "--force")
    assert (folder / "corpus.jsonl").exists() and not (folder / "notes.txt").exists()
    path = tmp_path / "items.jsonl"
    path.write_text("keep me", encoding="utf-8")
    released("export", "faq@v1", "--out", path, code=2)
    assert path.read_text(encoding="utf-8") == "keep me"
    released("export", "faq@v1", "--out", path, "--force")
    assert path.read_text(encoding="utf-8").count("\n") == 5


def test_a_workspace_is_never_an_export_target(released, tmp_path, workspace):
    other = tmp_path / "other"
    from curate.workspace import init_workspace
    init_workspace(other)
    result = released("export", "faq@v1", "--format", "hf", "--out", other, "--force", code=2)
    assert "is a curate workspace" in result.stderr and (other / "curate.toml").exists()


def test_reports_and_runs_cannot_land_on_state(released):
    result = released("check-leakage", "--dataset", "faq", "--no-semantic", "--report",
                      released.workspace.root / "datasets" / "faq" / "dataset.json", code=2)
    assert "inside the workspace's own datasets" in result.stderr
    assert DatasetStore(released.workspace).meta("faq").checks.leakage is None      # the check did not run
