"""Import of a large production file over an engine (issue 29): the same snapshot as one process, byte for
byte, from chunks in any order (a document's chunks scattered over the file and its batches, offsets given or
not), with the same lines named as bad or skipped (a chunk_id repeated batches later, a bad field, bytes that
are not UTF-8); on the local engine and on a local Ray cluster; a killed import resumes from its batches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curate.errors import InputError, InvalidRecords
from curate.kb import store as store_module
from curate.kb.documents import read_production_chunks
from curate.kb.scope_fields import ScopeReader
from curate.kb.staged import plan_batches
from curate.kb.documents import Part
from curate.kb.store import SnapshotStore, import_chunks
from curate.kb.documents import IMPORTED
from curate.scope import read_scope_settings
from curate.workspace import Workspace, init_workspace

from tests.curate.kb.test_staged import _Counting, _same, _staged
from tests.support.killed import kill_when
from tests.support.production_export import production_file

SMALL = dict(shard_size=500, parquet_from=1_000, batch_bytes=40_000)   # staged from 500,000 bytes


def _one_process(workspace: Workspace, path: Path, skip_invalid: bool = False):
    """The snapshot and skipped lines as one process reads and writes them."""
    reader = ScopeReader(read_scope_settings(workspace))
    chunks, skipped = read_production_chunks(path, "utf-8", skip_invalid, reader)
    manifest = SnapshotStore(workspace).write("prod", [], chunks, IMPORTED, sources=[str(path)],
                                              scope=reader.settings, shard_size=500, parquet_from=1_000)
    return manifest, skipped


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    return production_file(tmp_path_factory.mktemp("export") / "chunks.jsonl")


def test_chunks_in_any_order_are_the_snapshot_one_process_writes_on_either_engine(tmp_path, export, ray_address):
    one = init_workspace(tmp_path / "one")
    expected, _ = _one_process(one, export)
    assert expected.chunks > 2_500 and len(expected.shards) >= 5
    assert len(plan_batches([Part(export, export.parent)], SMALL["batch_bytes"])) >= 20
    assert sum(len(s.foreign) for s in expected.shards) > 1_000   # documents scattered over the shards
    assert expected.scope.superseded and expected.scope.unknown_superseded == ["gone"]
    for engine in ("local", ray_address):
        workspace = init_workspace(tmp_path / engine.replace(":", "-"))
        where: list[str] = []
        manifest, skipped = import_chunks(workspace, export, name="prod", engine=engine, note=where.append, **SMALL)
        assert manifest.snapshot_id == expected.snapshot_id and skipped == [], engine
        _same(one, workspace, expected.snapshot_id)
        assert where[0].startswith(f"read and checked {len(plan_batches([Part(export, export.parent)], 40_000))} "
                                   f"batches into {len(expected.shards)} shards on "), where


def _messy(export: Path, folder: Path) -> Path:
    """The export with a chunk_id repeated batches after its first line (twice), a repeated id on a line
    that is bad anyway, a bad offset and a line that is not JSON."""
    lines = export.read_text(encoding="utf-8").splitlines(keepends=True)
    first = json.loads(lines[3])
    first.pop("start", None), first.pop("end", None)
    lines[2_000] = json.dumps({**first, "text": "another text"}, ensure_ascii=False) + "\n"
    lines[2_400] = json.dumps({**first, "doc_id": "elsewhere"}, ensure_ascii=False) + "\n"
    lines[1_500] = json.dumps({"chunk_id": first["chunk_id"], "doc_id": "x", "text": "t", "start": 3}) + "\n"
    lines[900] = json.dumps({"chunk_id": "bad", "doc_id": "x", "text": "abc", "start": 0, "end": 5}) + "\n"
    lines[10] = "{not json\n"
    path = folder / "messy.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_bad_lines_are_named_and_skipped_as_one_process_names_and_skips_them(tmp_path, export):
    messy = _messy(export, tmp_path)
    with pytest.raises(InvalidRecords) as one:
        _one_process(init_workspace(tmp_path / "one"), messy)
    workspace = init_workspace(tmp_path / "staged")
    with pytest.raises(InvalidRecords) as staged:
        import_chunks(workspace, messy, name="prod", engine="local", **SMALL)
    assert [e.located() for e in staged.value.errors] == [e.located() for e in one.value.errors]
    assert [e.line for e in staged.value.errors] == [11, 901, 1501, 2001, 2401]
    assert "duplicate chunk_id" in staged.value.errors[3].message and "(first on line 4)" in staged.value.errors[3].message
    assert not (workspace.kb_dir / "ingesting").exists()   # the input must change: nothing kept

    one_skip = init_workspace(tmp_path / "one-skip")
    expected, skipped_one = _one_process(one_skip, messy, skip_invalid=True)
    manifest, skipped = import_chunks(workspace, messy, name="prod", engine="local", skip_invalid=True, **SMALL)
    assert manifest.snapshot_id == expected.snapshot_id
    assert [e.located() for e in skipped] == [e.located() for e in skipped_one] and len(skipped) == 5
    _same(one_skip, workspace, expected.snapshot_id)


def test_bytes_that_are_not_utf8_are_named_by_byte_and_line_as_one_process_names_them(tmp_path, export):
    data = bytearray(export.read_bytes())
    at = data.index(b"\n", len(data) * 2 // 3) + 5   # inside a line of a late batch
    data[at:at + 1] = b"\xff"
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(bytes(data))
    with pytest.raises(InputError) as one:
        read_production_chunks(broken)
    with pytest.raises(InputError) as staged:
        import_chunks(init_workspace(tmp_path / "w"), broken, name="prod", engine="local", **SMALL)
    assert str(staged.value) == str(one.value) and f"at byte {at}" in str(one.value)


def test_a_killed_import_resumes_from_the_batches_it_completed_on_either_engine(tmp_path, export, ray_address,
                                                                               monkeypatch):
    one = init_workspace(tmp_path / "one")
    expected, _ = _one_process(one, export)
    total = len(plan_batches([Part(export, export.parent)], SMALL["batch_bytes"]))
    monkeypatch.setenv("CURATE_LOCK_TIMEOUT", "30")
    for engine in ("local", ray_address):
        workspace = init_workspace(tmp_path / engine.replace(":", "-"))
        script = ("from pathlib import Path\nfrom curate.kb.store import import_chunks\n"
                  "from curate.workspace import Workspace\n"
                  f"import_chunks(Workspace(Path({str(workspace.root)!r})), Path({str(export)!r}), name='prod', "
                  f"engine={engine!r}, **{SMALL!r})\n")
        kill_when(script, lambda: _staged(workspace) >= 3, "staged batch")
        kept = _staged(workspace)
        seen: dict[str, int] = {}
        monkeypatch.setattr(store_module, "open_engine", lambda *_: _Counting(2, seen))
        manifest, _ = import_chunks(workspace, export, name="prod", **SMALL)
        assert manifest.snapshot_id == expected.snapshot_id, engine
        assert seen["reading and checking"] == total - kept and kept >= 3, (engine, seen, kept)
        _same(one, workspace, expected.snapshot_id)
        monkeypatch.undo()
        monkeypatch.setenv("CURATE_LOCK_TIMEOUT", "30")


def test_the_command_says_where_it_imported(curate, tmp_path, ray_address, data_dir):
    big = production_file(tmp_path / "big.jsonl", documents=4_000)
    assert big.stat().st_size > 5_000_000   # staged from 5 MB
    result = curate("kb", "import", big, "--name", "big", "--engine", ray_address)
    assert f"on ray at {ray_address}" in result.stderr and result.stderr.startswith("note: read and checked ")
    local = curate("kb", "import", big, "--name", "again", "--engine", "local")
    assert local.stdout.split("snapshot ")[1].split()[0] == result.stdout.split("snapshot ")[1].split()[0]
    small = curate("kb", "import", production_file(tmp_path / "small.jsonl", documents=50), "--name", "small",
                   "--engine", ray_address)
    assert small.stderr == ""   # a small file: in the command's own process, as before


def test_what_a_killed_import_of_other_input_left_is_said_not_kept_silently(tmp_path, export):
    workspace = init_workspace(tmp_path / "w")
    left = workspace.kb_dir / "ingesting" / "0123456789abcdef" / "batches" / "00000"
    left.mkdir(parents=True)
    (left / "chunks.arrow").write_bytes(b"x" * 3 * 2**20)
    notes: list[str] = []
    import_chunks(workspace, export, name="prod", engine="local", note=notes.append, **SMALL)
    assert notes[1] == (f"{left.parent.parent} holds 3.0 MB staged by an ingest or import that was killed and not "
                        "run again with the same input: run it again to finish it, or remove the folder")
    assert len(notes) == 2 and left.exists()   # said, not removed: that input may come back
