"""A snapshot's chunks in Parquet shards (issue 29, point 1): every field reads back as written, in order,
across shards; one shard is read without the others; a snapshot written before shards (chunks.jsonl) still
reads; a damaged or changed shard is one line naming it; the snapshot id does not depend on the storage."""

from __future__ import annotations

import json
import shutil

import pytest

from curate.errors import InputError, IntegrityError
from curate.kb.shards import read_column, verify_shard
from curate.kb.store import SnapshotStore, content_sha256
from curate.records import Chunk, ChunkerSettings, Scope
from curate.kb import sha256_text


def _chunks(n: int) -> list[Chunk]:
    found = []
    for k in range(n):
        text = f"第{k}段：退款期限为 {k} 天。\u00a0Refunds take {k} days; \"quotes\" and a \\ backslash."
        found.append(Chunk(chunk_id=f"doc{k // 3}#{k % 3}", doc_id=f"doc{k // 3}", text=text,
                           start=(k % 3) * 100, end=(k % 3) * 100 + len(text), text_sha256=sha256_text(text),
                           metadata={"title": f"文档 {k // 3}", "page": k, "draft": k % 2 == 0, "score": 0.5, "none": None},
                           scope=Scope(groups=["staff"], valid_from="2025-01-01") if k % 4 == 0 else None))
    return found


def test_chunks_read_back_exactly_in_order_across_shards(workspace):
    chunks = _chunks(25)
    store = SnapshotStore(workspace)
    manifest = store.write("kb", [], chunks, ChunkerSettings(kind="structure", size=200), shard_size=10,
                           parquet_from=0)
    assert [(s.file, s.chunks, s.first) for s in manifest.shards] == [
        ("chunks/part-00000.parquet", 9, 0), ("chunks/part-00001.parquet", 9, 9), ("chunks/part-00002.parquet", 7, 18)]
    assert all(s.foreign == [] for s in manifest.shards)        # shards end between documents
    assert store.chunks(manifest.snapshot_id) == chunks
    assert manifest.snapshot_id == "kb-" + content_sha256([], chunks)[:16]    # the storage is not in the id


def test_one_shard_is_read_without_the_others(workspace):
    chunks = _chunks(25)
    store = SnapshotStore(workspace)
    manifest = store.write("kb", [], chunks, ChunkerSettings(kind="structure", size=200), shard_size=10,
                           parquet_from=0)
    folder = store.root / manifest.snapshot_id
    for other in manifest.shards[:2]:
        (folder / other.file).unlink()
    assert list(store.shard_chunks(manifest.snapshot_id, 2)) == chunks[18:]
    assert read_column(folder / manifest.shards[2].file, "text") == [c.text for c in chunks[18:]]


def test_a_snapshot_written_before_shards_still_reads(workspace):
    chunks = _chunks(7)
    store = SnapshotStore(workspace)
    manifest = store.write("kb", [], chunks, ChunkerSettings(kind="structure", size=200), parquet_from=0)
    folder = store.root / manifest.snapshot_id
    shutil.rmtree(folder / "chunks")                    # as schema 2 wrote it: chunks.jsonl, no shards
    (folder / "chunks.jsonl").write_text("".join(json.dumps(c.model_dump(mode="json"), ensure_ascii=False) + "\n"
                                                 for c in chunks), encoding="utf-8")
    old = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    old.pop("shards")
    old["schema_version"] = 2
    (folder / "manifest.json").write_text(json.dumps(old), encoding="utf-8")
    assert store.shards(manifest.snapshot_id) == [] and store.chunks(manifest.snapshot_id) == chunks


def test_a_damaged_or_changed_shard_is_named(workspace):
    store = SnapshotStore(workspace)
    manifest = store.write("kb", [], _chunks(5), ChunkerSettings(kind="structure", size=200), parquet_from=0)
    folder = store.root / manifest.snapshot_id
    shard = manifest.shards[0]
    verify_shard(folder, shard)
    (folder / shard.file).write_bytes(b"PAR1 not a parquet file PAR1")
    with pytest.raises(IntegrityError, match="changed since it was written"):
        verify_shard(folder, shard)
    with pytest.raises(InputError, match=r"part-00000\.parquet.*damaged Parquet shard"):
        store.chunks(manifest.snapshot_id)


def test_a_small_kb_keeps_one_chunks_jsonl_and_is_one_shard(workspace):
    chunks = _chunks(12)
    store = SnapshotStore(workspace)
    manifest = store.write("kb", [], chunks, ChunkerSettings(kind="structure", size=200))
    folder = store.root / manifest.snapshot_id
    assert manifest.shards == [] and (folder / "chunks.jsonl").is_file() and not (folder / "chunks").exists()
    assert store.shard_count(manifest.snapshot_id) == 1 and list(store.shard_chunks(manifest.snapshot_id, 0)) == chunks
    big = store.write("big", [], chunks[:11], ChunkerSettings(kind="structure", size=200), parquet_from=11,
                      shard_size=5)
    assert store.shard_count(big.snapshot_id) == 3 and store.chunks(big.snapshot_id) == chunks[:11]


def test_shards_name_each_chunks_neighbours_and_the_chunks_of_their_documents_held_elsewhere(workspace):
    chunks = _chunks(12)
    # imported in another order: doc1's third chunk listed last, after the first shard has closed
    chunks = chunks[:5] + chunks[6:] + [chunks[5]]
    store = SnapshotStore(workspace)
    manifest = store.write("kb", [], chunks, ChunkerSettings(kind="structure", size=200), shard_size=6,
                           parquet_from=0)
    folder = store.root / manifest.snapshot_id
    assert [(s.first, s.chunks) for s in manifest.shards] == [(0, 5), (5, 6), (11, 1)]
    assert [s.foreign for s in manifest.shards] == [[11], [], [3, 4]]
    # doc1 is chunks 3, 4 and 11 (offsets 0, 100, 200): each names its neighbours by snapshot position
    assert read_column(folder / manifest.shards[0].file, "next")[3:] == [4, 11]
    assert read_column(folder / manifest.shards[2].file, "prev") == [4]
    assert read_column(folder / manifest.shards[2].file, "next") == [-1]


def test_a_damaged_row_names_the_shard_the_row_and_the_field(workspace):
    import pyarrow as pa
    import pyarrow.parquet as pq
    store = SnapshotStore(workspace)
    manifest = store.write("kb", [], _chunks(6), ChunkerSettings(kind="structure", size=200), parquet_from=0)
    path = store.root / manifest.snapshot_id / manifest.shards[0].file
    table = pq.read_table(path)
    records = table.column("record").to_pylist()
    broken = json.loads(records[3])
    broken["start"] = "not a number"
    records[3] = json.dumps(broken, ensure_ascii=False)
    pq.write_table(table.set_column(table.schema.get_field_index("record"), "record", pa.array(records)), path)
    with pytest.raises(InputError, match=r"part-00000.parquet: field 'start': row 4: damaged"):
        store.chunks(manifest.snapshot_id)
