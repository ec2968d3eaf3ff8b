"""A shard's view (ShardIndex) answers what one index of the whole snapshot answers about its chunks: ids,
documents, neighbours, folded texts. It reads its shard's record column only when a chunk is asked for: a
leakage pass that looks up ids, documents and folded texts leaves the rows unread."""

from __future__ import annotations

from curate.engine import LocalEngine
from curate.index.kb_index import KBIndex
from curate.index.shard_index import ShardIndex, build_lexical
from curate.kb.store import SnapshotStore
from curate.records import ChunkerSettings
from curate.workspace import init_workspace

from tests.support.many_chunks import many_chunks


def test_a_view_answers_as_the_whole_snapshot_without_reading_its_rows_until_asked(tmp_path):
    chunks, _, _ = many_chunks(1_200)
    # documents listed together, and each document's chunks scattered over every shard (foreign chunks)
    for name, listed in (("in order", chunks), ("scattered", sorted(chunks, key=lambda c: c.chunk_id.split("#")[1]))):
        workspace = init_workspace(tmp_path / name.replace(" ", "-"))
        snapshot = SnapshotStore(workspace).write("kb", [], listed, ChunkerSettings(kind="imported"), parquet_from=0,
                                                  shard_size=300).snapshot_id
        whole = KBIndex.of_chunks(listed)
        build_lexical(KBIndex(workspace, snapshot), LocalEngine(1))
        for number in range(SnapshotStore(workspace).shard_count(snapshot)):
            view = ShardIndex(workspace, snapshot, number)
            positions = [view.global_position(p) for p in range(len(view.doc_ids))]
            assert {c: positions[p] for c, p in view.position.items()} == {listed[g].chunk_id: g for g in positions}
            assert [view.folded[p] for p in range(len(positions))] == [whole.folded[g] for g in positions], name
            assert {d: [positions[p] for p in ps] for d, ps in view.doc_positions.items()} == {
                d: [g for g in whole.doc_positions[d] if g in set(positions)] for d in view.doc_positions}
            for p in range(view.size):
                assert view.neighbours[p] == tuple(None if g is None else view.in_view(g)
                                                   for g in whole.neighbours[positions[p]]), (name, number, p)
            assert view.neighbours.get(view.size, (None, None)) == (None, None)   # a foreign chunk's: not held
            assert view.same_text({whole.folded[positions[0]]}) == [0]
            assert "chunks" not in view.__dict__, "the record column was read for ids, documents and texts"
            assert view.chunks[0] == listed[positions[0]]


def test_a_view_a_task_leaves_behind_is_freed_at_once(tmp_path):
    import gc
    import weakref

    chunks, _, _ = many_chunks(600)
    workspace = init_workspace(tmp_path / "ws")
    snapshot = SnapshotStore(workspace).write("kb", [], chunks, ChunkerSettings(kind="imported"), parquet_from=0,
                                              shard_size=300).snapshot_id
    build_lexical(KBIndex(workspace, snapshot), LocalEngine(1))
    view = ShardIndex(workspace, snapshot, 0)
    view.neighbours[0], view.folded[0], view.chunks[0], view.doc_positions, view.position, view.ngrams
    gone = weakref.ref(view)
    gc.disable()   # a worker runs task after task between the collector's runs: a cycle would hold its shard
    try:
        del view
        assert gone() is None
    finally:
        gc.enable()
