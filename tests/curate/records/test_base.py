"""Every file on disk is read through its record: a newer schema version is one line naming the
file, an older one is brought up to date, damage is one line, chunks are validated on load."""

import json

import pytest
from click.testing import CliRunner

from curate.cli.main import cli
from curate.dataset import DatasetStore
from curate.errors import CurateError, InputError, SchemaVersionError
from curate.kb import SnapshotStore
from curate.records import DatasetMeta, EvalItem
from curate.release import Releases, load_release, release
from evalrun.records import RunManifest, read_run


def _bump(path, version=99):
    data = json.loads(path.read_text(encoding="utf-8"))
    data["schema_version"] = version
    path.chmod(0o644)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_a_newer_dataset_record_is_one_line(handbook):
    path = handbook.workspace.datasets_dir / "faq" / "dataset.json"
    _bump(path)
    with pytest.raises(SchemaVersionError, match=r"dataset.json: written by a newer version: schema 99, "
                                                 r"this version reads 2"):
        DatasetStore(handbook.workspace).meta("faq")
    result = CliRunner(mix_stderr=False).invoke(cli, ["--workspace", str(handbook.workspace.root), "show", "faq"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "schema 99" in result.stderr


def test_a_newer_item_line_names_its_line(handbook):
    path = handbook.workspace.datasets_dir / "faq" / "items.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[2])
    row["schema_version"] = 7
    lines[2] = json.dumps(row, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(SchemaVersionError, match=r"items.jsonl:3: written by a newer version: schema 7"):
        DatasetStore(handbook.workspace).items("faq")


def test_a_newer_release_and_run_manifest_are_one_line(handbook, tmp_path):
    manifest = release(handbook.workspace, dataset="faq", message="v1")
    path = Releases(handbook.workspace, "faq").path(manifest.version) / "manifest.json"
    _bump(path)
    with pytest.raises(SchemaVersionError, match="schema 99, this version reads 2"):
        load_release(path.parent)
    run_folder = tmp_path / "run"
    run_folder.mkdir()
    (run_folder / "manifest.json").write_text(json.dumps({"schema_version": 99}), encoding="utf-8")
    with pytest.raises(SchemaVersionError, match=f"schema 99, this version reads {RunManifest.SCHEMA}"):
        read_run(run_folder)


def test_a_schema_1_dataset_record_is_upgraded():
    old = {"schema_version": 1, "name": "faq", "kb_snapshot": "kb-1", "checks": {
        "leakage": {"at": "t", "ref": "faq", "kb_snapshot": "kb-1", "clean": False, "items_sha256": "a",
                    "checked": 4, "items": ["x"], "counts": {"question_in_kb": 1}, "allowed_docs": [],
                    "excluded_docs": [], "settings": {}},
        "split": {"at": "t", "seed": 1, "test_fraction": 0.5, "reassign": False, "synthetic_in_test": False,
                  "units": 3, "counts": {"dev": 2, "test": 2}}}}
    meta = DatasetMeta.parse(old)
    assert meta.schema_version == 2 and meta.checks.leakage.outcome == "findings"
    assert meta.checks.split.outcome == "clean" and meta.checks.split.settings["seed"] == 1
    item = EvalItem.parse({"schema_version": 1, "id": "a", "question": "q", "language": "en", "source": "human"})
    assert item.schema_version == EvalItem.SCHEMA and item.answers == []   # schema 1 items read as the current one


def test_a_schema_1_run_manifest_is_upgraded():
    manifest = RunManifest.parse({
        "dataset": "faq", "version": "v1", "content_sha256": "x", "ref": "faq@v1", "kb_snapshot": "kb",
        "target": "t", "diagnostic": False, "judge": {}, "prompt_versions": {}, "packages": {},
        "started_at": "t", "leakage_gate": {"status": "clean", "kb_snapshot": "kb", "excluded_docs": []},
        "settings": {"k": [1, 5], "concurrency": 2, "timeout": 3.0, "precision_denominator": "k",
                     "price_per_million_tokens": {"input": 1.0, "output": None}}})
    assert manifest.settings.ks == [1, 5] and manifest.settings.price_input == 1.0


def test_damaged_records_are_one_line(handbook):
    path = handbook.workspace.datasets_dir / "faq" / "dataset.json"
    path.write_text('{"name": "faq", "checks": ', encoding="utf-8")
    with pytest.raises(InputError, match=r"dataset.json: damaged: not valid JSON"):
        DatasetStore(handbook.workspace).meta("faq")
    path.write_text('{"schema_version": 2, "name": "faq", "checks": {"leakage": {"outcome": "maybe"}}}',
                    encoding="utf-8")
    with pytest.raises(CurateError, match=r"dataset.json: field 'checks.leakage"):
        DatasetStore(handbook.workspace).meta("faq")


def test_chunks_are_validated_when_a_snapshot_loads(handbook):
    store = SnapshotStore(handbook.workspace)
    snapshot = DatasetStore(handbook.workspace).meta("faq").kb_snapshot
    path = store.root / snapshot / "chunks.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    broken = json.loads(lines[3])
    broken["start"] = "not a number"
    lines[3] = json.dumps(broken, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"chunks.jsonl:4: field 'start': damaged"):
        store.chunks(snapshot)
