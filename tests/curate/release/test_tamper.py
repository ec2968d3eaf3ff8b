"""A release is tamper-evident as a whole: every file, the card and every manifest field are under its
hash, dataset.json keeps the hash from release time, and a damaged release never stops the next one
(nor gives its number away again)."""

import json
import os
import re
import shutil
import threading
import time

import datasets
import pytest
from click.testing import CliRunner

from curate.dataset import DatasetStore
from curate.errors import CurateError, IntegrityError
from curate.records import LeakageCheck
from curate.release import Releases, load_release, release
from curate.release.load import content_sha256
from evalrun.cli.main import cli as evalrun_cli

SPLITS = {"t-1": "dev", "t-2": "dev", "t-3": "test", "t-4": "test"}   # t-5 stays unassigned


def _change_draft(workspace, **fields):
    store = DatasetStore(workspace)
    meta, items = store.load("faq")
    for item in items:
        for key, value in fields.get(item.id, {}).items():
            setattr(item, key, value)
    store.save(meta, items)


@pytest.fixture
def v1(handbook):
    """faq@v1 with dev, test and unassigned files, released after a leakage check with findings
    (recorded by hand: the handbook's own items do not leak)."""
    workspace = handbook.workspace
    _change_draft(workspace, **{i: {"split": s} for i, s in SPLITS.items()})
    store = DatasetStore(workspace)
    meta, items = store.load("faq")
    meta.checks.leakage = LeakageCheck(ref="faq", checked=5, items=["t-1"], outcome="findings",
                                       counts={"question_in_kb": 1})
    store.save(meta, items)
    release(workspace, dataset="faq", message="first")
    return Releases(workspace, "faq").path("v1")


def _writable(path):
    os.chmod(path, 0o644)
    return path


def _manifest(folder):
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))


def _write_manifest(folder, data):
    _writable(folder / "manifest.json").write_text(json.dumps(data, indent=2), encoding="utf-8")


def _rehash(data):
    """Recompute content_sha256 the way curate does, as someone covering their tracks would."""
    data["content_sha256"] = content_sha256(data["files"], {k: v for k, v in data.items() if k != "content_sha256"})
    return data


def _sha(path):
    import hashlib
    return hashlib.sha256(path.read_bytes()).hexdigest()


def edit_card_split(folder):
    card = _writable(folder / "README.md")
    card.write_text(card.read_text(encoding="utf-8").replace("path: data/test.jsonl", "path: data/dev.jsonl"),
                    encoding="utf-8")


def swap_test_and_dev(folder):
    dev, test = _writable(folder / "data" / "dev.jsonl"), _writable(folder / "data" / "test.jsonl")
    a, b = dev.read_bytes(), test.read_bytes()
    dev.write_bytes(b)
    test.write_bytes(a)
    data = _manifest(folder)
    data["files"]["data/dev.jsonl"], data["files"]["data/test.jsonl"] = _sha(dev), _sha(test)
    _write_manifest(folder, data)


def leakage_set_clean(folder):
    data = _manifest(folder)
    data["checks"]["leakage"]["outcome"] = "clean"
    _write_manifest(folder, data)


def leakage_set_clean_and_rehash(folder):
    data = _manifest(folder)
    data["checks"]["leakage"]["outcome"] = "clean"
    _write_manifest(folder, _rehash(data))


def downgrade_to_schema_1(folder):
    """Schema 1 hashed the data files only: claim it, set the check clean, recompute that hash."""
    data = _manifest(folder)
    data["schema_version"] = 1
    data["checks"]["leakage"]["clean"] = True
    data["content_sha256"] = content_sha256(data["files"])
    _write_manifest(folder, data)


def add_data_file(folder):
    (folder / "data" / "extra.jsonl").write_text("{}\n", encoding="utf-8")


def add_top_file(folder):
    (folder / "NOTES.md").write_text("harmless?\n", encoding="utf-8")


def delete_data_file(folder):
    (folder / "data" / "dev.jsonl").unlink()


def truncate_manifest(folder):
    path = _writable(folder / "manifest.json")
    path.write_bytes(path.read_bytes()[:200])


def delete_manifest(folder):
    (folder / "manifest.json").unlink()


TAMPERING = [
    (edit_card_split, "release faq@v1 was modified: README.md has sha256 "),
    (swap_test_and_dev, "release faq@v1 was modified: its manifest no longer matches its content hash "
                        "(a field was edited)"),
    (leakage_set_clean, "release faq@v1 was modified: its manifest no longer matches its content hash "
                        "(a field was edited)"),
    (leakage_set_clean_and_rehash, "release faq@v1 was modified: its content hash differs from the one "
                                   "dataset.json recorded at release time"),
    (downgrade_to_schema_1, "release faq@v1 was modified: its content hash differs from the one "
                            "dataset.json recorded at release time"),
    (add_data_file, "release faq@v1 was modified: data/extra.jsonl is not in the manifest"),
    (add_top_file, "release faq@v1 was modified: NOTES.md is not in the manifest"),
    (delete_data_file, "release faq@v1 is damaged: data/dev.jsonl is missing"),
    (truncate_manifest, "release faq@v1 is damaged: manifest.json is not valid JSON"),
    (delete_manifest, "release faq@v1 is damaged: it has no manifest.json"),
]


def _verify(workspace, ref="faq@v1"):
    return CliRunner(mix_stderr=False).invoke(evalrun_cli, ["verify", ref, "--workspace", str(workspace.root)])


def _remove(folder):
    for path in [folder, *folder.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    shutil.rmtree(folder)


@pytest.mark.parametrize("tamper, message", TAMPERING, ids=[t.__name__ for t, _ in TAMPERING])
def test_tampering_is_one_line_and_the_next_releases_take_new_numbers(v1, handbook, tamper, message):
    workspace = handbook.workspace
    tamper(v1)
    checked = _verify(workspace)
    assert (checked.exit_code, checked.stdout) == (2, "")
    assert checked.stderr.startswith(f"error: {message}") and checked.stderr.count("\n") == 1
    with pytest.raises(IntegrityError) as raised:
        load_release(v1)
    assert str(raised.value).startswith(message)
    with pytest.raises(IntegrityError):
        Releases(workspace, "faq").items("v1")
    assert re.search(r"v1 +damaged ", handbook("versions", "faq").stdout)

    _change_draft(workspace, **{"t-1": {"reference_answer": "changed after v1"}})
    second = release(workspace, dataset="faq", message="second")
    assert (second.version, second.parent_version, second.skipped_damaged) == ("v2", None, ["v1"])
    assert load_release(Releases(workspace, "faq").path("v2"))[0] == second

    _remove(Releases(workspace, "faq").path("v2"))
    assert "release faq@v2 is missing" in _verify(workspace, "faq@v2").stderr
    _change_draft(workspace, **{"t-1": {"reference_answer": "changed after v2"}})
    result = handbook("release", "--dataset", "faq", "-m", "third")
    assert result.stdout.startswith("released faq@v3: 5 items (+5 -0 ~0)")
    assert result.stderr == ("warning: passed over damaged or missing faq@v1, faq@v2 (`curate versions faq` says "
                             "why); v3 follows no intact release\n")
    third = Releases(workspace, "faq").manifest("v3")
    assert (third.parent_version, third.skipped_damaged) == (None, ["v1", "v2"])
    assert sorted(DatasetStore(workspace).meta("faq").releases) == ["v1", "v2", "v3"]
    listed = handbook("versions", "faq").stdout
    assert re.search(r"v1 +damaged ", listed) and re.search(r"v2 +missing ", listed) and re.search(r"v3 +intact ", listed)


def test_an_intact_release_names_every_file_and_loads_with_hugging_face(v1, handbook, tmp_path):
    manifest, items = load_release(v1)
    assert sorted(manifest.files) == ["README.md", "data/dev.jsonl", "data/test.jsonl", "data/unassigned.jsonl"]
    fields = manifest.model_dump(mode="json", exclude={"content_sha256"})
    assert manifest.content_sha256 == content_sha256(manifest.files, fields)
    assert DatasetStore(handbook.workspace).meta("faq").releases == {"v1": manifest.content_sha256}
    assert manifest.checks.leakage.outcome == "findings" and manifest.skipped_damaged == []
    assert {i.id: i.split for i in items} == {**SPLITS, "t-5": None}
    checked = _verify(handbook.workspace)
    assert checked.exit_code == 0 and f"content sha256 {manifest.content_sha256} verified" in checked.stdout
    loaded = datasets.load_dataset(str(v1), cache_dir=str(tmp_path / "hf-cache"))
    assert {k: sorted(v["id"]) for k, v in loaded.items()} == {"dev": ["t-1", "t-2"], "test": ["t-3", "t-4"],
                                                                "unassigned": ["t-5"]}
    assert re.search(r"v1 +intact .* first", handbook("versions", "faq").stdout)


def test_a_copied_release_is_checked_on_its_own_card_included(v1, tmp_path):
    """Outside its workspace no dataset.json vouches for the hash, so a card whose split was moved and
    whose hashes were all recomputed is caught by the card check."""
    copy = tmp_path / "copy"
    shutil.copytree(v1, copy)
    assert load_release(copy)[0].version == "v1"
    edit_card_split(copy)
    data = _manifest(copy)
    data["files"]["README.md"] = _sha(copy / "README.md")
    _write_manifest(copy, _rehash(data))
    with pytest.raises(IntegrityError, match=r"^release faq@v1 was modified: README.md sends dev -> data/dev.jsonl, "
                                             r"test -> data/dev.jsonl, unassigned -> data/unassigned.jsonl, its data "
                                             r"files are data/dev.jsonl, data/test.jsonl, data/unassigned.jsonl$"):
        load_release(copy)


def test_an_item_moved_to_another_split_file_is_caught_in_a_copy(v1, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(v1, copy)
    dev, test = _writable(copy / "data" / "dev.jsonl"), _writable(copy / "data" / "test.jsonl")
    first, *rest = dev.read_text(encoding="utf-8").splitlines(keepends=True)
    dev.write_text("".join(rest), encoding="utf-8")
    test.write_text(test.read_text(encoding="utf-8") + first, encoding="utf-8")
    data = _manifest(copy)
    data["files"]["data/dev.jsonl"], data["files"]["data/test.jsonl"] = _sha(dev), _sha(test)
    _write_manifest(copy, _rehash(data))
    with pytest.raises(IntegrityError, match=r"data/test.jsonl:3 holds item t-1 of split dev"):
        load_release(copy)


def test_a_schema_1_release_still_loads_checked_the_old_way(v1, handbook):
    """As curate wrote it before schema 2: the data files alone hashed, checks as free dicts, no record
    in dataset.json."""
    data = _manifest(v1)
    data["schema_version"] = 1
    del data["skipped_damaged"]
    data["files"] = {k: v for k, v in data["files"].items() if k.startswith("data/")}
    data["content_sha256"] = content_sha256(data["files"])
    data["checks"] = {"leakage": {"at": "t", "ref": "faq", "clean": False, "checked": 5, "items": ["t-1"]}}
    _write_manifest(v1, data)
    store = DatasetStore(handbook.workspace)
    meta, items = store.load("faq")
    meta.releases = {}
    store.save(meta, items)
    manifest, items = load_release(v1)
    assert manifest.checks.leakage.outcome == "findings" and len(items) == 5
    dev = _writable(v1 / "data" / "dev.jsonl")
    dev.write_bytes(dev.read_bytes().replace(b"t-1", b"t-9"))
    with pytest.raises(IntegrityError, match="release faq@v1 was modified: data/dev.jsonl has sha256"):
        load_release(v1)


def test_an_empty_or_stray_version_folder_is_never_reused(handbook):
    workspace = handbook.workspace
    root = Releases(workspace, "faq").root
    (root / "v4").mkdir(parents=True)          # left by an interrupted copy, say
    first = release(workspace, dataset="faq", message="first")
    assert (first.version, first.parent_version, first.skipped_damaged) == ("v5", None, ["v4"])
    listed = handbook("versions", "faq").stdout
    assert re.search(r"v4 +damaged .*is damaged: it has no", listed) and re.search(r"v5 +intact ", listed)


def test_concurrent_releases_take_turns(handbook, monkeypatch):
    """Two releases at once: the second waits, finds v1 and nothing changed, instead of writing v1 too."""
    from curate.release import store

    original = store.changes

    def slow(*args):
        time.sleep(0.3)  # both would have picked v1 by now without the lock
        return original(*args)

    monkeypatch.setattr(store, "changes", slow)
    outcomes = []

    def run():
        try:
            outcomes.append(release(handbook.workspace, dataset="faq", message="at once").version)
        except CurateError as exc:
            outcomes.append(str(exc))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["nothing changed since faq@v1", "v1"]
