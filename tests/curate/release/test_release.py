import itertools
import json
import os
import re

import datasets
import pytest
from click.testing import CliRunner

from curate.checks.difficulty import grade
from curate.checks.leakage import check_leakage
from curate.checks.split import split
from curate.dataset import DatasetStore
from curate.errors import CurateError, IntegrityError
from curate.release import Releases, diff, load_release, release
from evalrun.cli.main import cli as evalrun_cli
from evalrun.runner.gate import leakage_gate


def _edit_item(workspace, item_id, **changes):
    store = DatasetStore(workspace)
    meta, items = store.meta("faq"), store.items("faq")
    for item in items:
        if item.id == item_id:
            for key, value in changes.items():
                setattr(item, key, value)
    store.save(meta, items)


def test_release_writes_manifest_and_hash(handbook):
    workspace = handbook.workspace
    manifest = release(workspace, dataset="faq", message="first")
    assert (manifest.version, manifest.parent_version, manifest.items) == ("v1", None, 5)
    assert manifest.kb_snapshot == DatasetStore(workspace).meta("faq").kb_snapshot
    assert manifest.counts["answerable"] == {"false": 1, "true": 4}
    assert manifest.counts["language"] == {"en": 3, "zh": 2}
    assert manifest.counts["split"] == {"unassigned": 5}
    assert manifest.changelog == {"added": ["t-1", "t-2", "t-3", "t-4", "t-5"], "removed": [], "changed": []}
    folder = Releases(workspace, "faq").path("v1")
    loaded_manifest, items = load_release(folder)
    assert loaded_manifest == manifest and [i.id for i in items] == ["t-1", "t-2", "t-3", "t-4", "t-5"]
    assert not os.access(folder / "data" / "unassigned.jsonl", os.W_OK) or os.geteuid() == 0
    assert oct((folder / "data" / "unassigned.jsonl").stat().st_mode & 0o777) == "0o444"


def test_releases_follow_each_other_and_refuse_no_change(handbook):
    workspace = handbook.workspace
    release(workspace, dataset="faq", message="first")
    with pytest.raises(CurateError, match="nothing changed since faq@v1"):
        release(workspace, dataset="faq", message="again")
    _edit_item(workspace, "t-2", split="test", reference_answer="30 seconds by default.")
    _edit_item(workspace, "t-5", status="rejected")
    second = release(workspace, dataset="faq", message="second")
    assert (second.version, second.parent_version, second.items) == ("v2", "v1", 4)
    assert second.changelog == {"added": [], "removed": ["t-5"], "changed": ["t-2"]}
    assert second.excluded == {"rejected": 1}
    assert sorted(second.files) == ["README.md", "data/test.jsonl", "data/unassigned.jsonl"]
    result = handbook("versions", "faq")
    assert "v1" in result.stdout and "v2" in result.stdout and "second" in result.stdout


def test_diff_lists_items_fields_and_count_changes(handbook):
    workspace = handbook.workspace
    release(workspace, dataset="faq", message="first")
    _edit_item(workspace, "t-2", split="test", reference_answer="30 seconds by default.")
    _edit_item(workspace, "t-5", status="rejected")
    release(workspace, dataset="faq", message="second")
    result = diff(workspace, old="faq@v1", new="faq@v2")
    assert (result["added"], result["removed"], result["changed"]) == ([], ["t-5"], ["t-2"])
    assert result["changed_fields"] == {"t-2": ["reference_answer", "split"]}
    assert result["counts"]["split"] == {"test": (0, 1), "unassigned": (5, 3)}
    assert result["counts"]["answerable"] == {"false": (1, 0)}
    shown = handbook("diff", "faq@v1", "faq@v2").stdout
    assert "removed" in shown and "t-5" in shown and "reference_answer, split" in shown
    as_json = json.loads(handbook("diff", "faq@v1", "faq@v2", "--json").stdout)
    assert as_json["removed"] == ["t-5"]


def test_tampered_release_is_refused(handbook):
    workspace = handbook.workspace
    release(workspace, dataset="faq", message="first")
    path = Releases(workspace, "faq").path("v1") / "data" / "unassigned.jsonl"
    os.chmod(path, 0o644)
    path.write_text(path.read_text(encoding="utf-8").replace("LG-4031 是什么意思？", "LG-4031 是什么？"), encoding="utf-8")
    with pytest.raises(IntegrityError, match="faq@v1 was modified: data/unassigned.jsonl"):
        Releases(workspace, "faq").items("v1")
    result = handbook("export", "faq@v1", "--out", "-", code=2)
    assert "faq@v1 was modified" in result.stderr
    checked = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["verify", "faq@v1", "--workspace", str(workspace.root)])
    assert checked.exit_code == 2 and "was modified" in checked.stderr


def test_extra_data_file_is_refused(handbook):
    workspace = handbook.workspace
    release(workspace, dataset="faq", message="first")
    folder = Releases(workspace, "faq").path("v1")
    os.chmod(folder / "data", 0o755)
    (folder / "data" / "test.jsonl").write_text("{}\n", encoding="utf-8")
    with pytest.raises(IntegrityError, match="data/test.jsonl is not in the manifest"):
        load_release(folder)


def test_failed_release_leaves_nothing_behind(handbook, monkeypatch):
    workspace = handbook.workspace
    import curate.records.base as module  # where every record is written

    def broken(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(module, "atomic_write_json", broken)
    with pytest.raises(KeyboardInterrupt):
        release(workspace, dataset="faq", message="interrupted")
    root = Releases(workspace, "faq").root
    assert list(root.iterdir()) == []
    monkeypatch.undo()
    assert release(workspace, dataset="faq", message="now").version == "v1"


def test_releases_load_with_hugging_face_datasets(handbook, tmp_path):
    workspace = handbook.workspace
    release(workspace, dataset="faq", message="first")
    _edit_item(workspace, "t-2", split="test")
    _edit_item(workspace, "t-5", status="quarantined")
    release(workspace, dataset="faq", message="second")
    cache = str(tmp_path / "hf-cache")
    v1 = datasets.load_dataset(str(Releases(workspace, "faq").path("v1")), cache_dir=cache)
    v2 = datasets.load_dataset(str(Releases(workspace, "faq").path("v2")), cache_dir=cache)
    assert {k: len(v) for k, v in v1.items()} == {"unassigned": 5}
    assert {k: len(v) for k, v in v2.items()} == {"unassigned": 3, "test": 1}
    row = v2["test"][0]
    assert row["id"] == "t-2" and row["evidence"][0]["located_by"] == "exact"
    assert row["evidence"][0]["chunk_ids"] and row["question"].startswith("What does version 3.2")


def test_show_summarises_draft_and_release(handbook):
    handbook("release", "--dataset", "faq", "-m", "first")
    draft = handbook("show", "faq").stdout
    shown = handbook("show", "faq@v1").stdout
    for out in (draft, shown):
        assert "5 items" in out and "answerable" in out and "language" in out
    assert "sha256" in shown


GUARDS = {"check-leakage": lambda ws: check_leakage(ws, ref="faq", semantic=False),
          "split": lambda ws: split(ws, dataset="faq", seed=1, semantic=False),
          "grade": lambda ws: grade(ws, dataset="faq", dense=False)}


@pytest.mark.parametrize("order", list(itertools.permutations(GUARDS)), ids=" ".join)
def test_the_guards_in_any_order_give_a_release_evalrun_takes_or_say_what_to_rerun(handbook, order):
    workspace = handbook.workspace
    for guard in order:
        GUARDS[guard](workspace)
    if order.index("check-leakage") < order.index("split"):
        # the leakage check reads the split (alike items on both sides): a split after it makes it stale
        with pytest.raises(CurateError) as refused:
            release(workspace, dataset="faq", message="first")
        meta = DatasetStore(workspace).meta("faq")
        assert re.fullmatch(
            re.escape(f"not released: the leakage check of 'faq' ({meta.checks.leakage.at}) no longer matches its "
                      f"items: ") + r"(\d+ items changed since|they changed after it)" + re.escape(
                " (`curate split` ran since); run `curate check-leakage --dataset faq` again, then `curate release` "
                "(`evalrun run` refuses a release whose leakage check saw other items)"), str(refused.value))
        assert not Releases(workspace, "faq").versions()
        check_leakage(workspace, ref="faq", semantic=False)
    manifest = release(workspace, dataset="faq", message="first")
    assert {name: record.current for name, record in manifest.checks.present().items()} == {
        "leakage": True, "split": True, "difficulty": True}
    manifest, items = load_release(Releases(workspace, "faq").path("v1"))
    gate = leakage_gate(workspace, manifest, manifest.kb_snapshot, False, released={i.id for i in items})
    assert gate.status == "clean"


def test_a_release_without_a_leakage_check_says_evalrun_will_refuse_it_and_how_to_clear_it(handbook, tmp_path):
    result = handbook("release", "--dataset", "faq", "-m", "first")
    note = ("note: faq@v1 has no leakage check, so `evalrun run` refuses it until "
            "`curate check-leakage --dataset faq@v1` clears it")
    assert note in " ".join(result.stderr.split())
    handbook("check-leakage", "--dataset", "faq@v1", "--no-semantic")
    manifest, items = load_release(Releases(handbook.workspace, "faq").path("v1"))
    gate = leakage_gate(handbook.workspace, manifest, manifest.kb_snapshot, False, released={i.id for i in items})
    assert gate.status == "clean"
    _edit_item(handbook.workspace, "t-2", reference_answer="30 seconds by default.")
    check_leakage(handbook.workspace, ref="faq", semantic=False)
    second = handbook("release", "--dataset", "faq", "-m", "second")
    assert "no leakage check" not in second.stderr
