"""What `curate grade` reads of a snapshot in shards (`ShardedKB`): the chunks its items cite and their copies,
read by id from the shards, the scope of those chunks, BM25 over the shards (`curate.index.shard_bm25`) and
the texts of the chunks ranked above gold, on an engine. Nothing holds the snapshot's chunks: the grade is
the one `KBIndex` of the whole snapshot gives (`item_features` reads the same `position`, `chunks` and
`copies` of the chunks it asks for)."""

from __future__ import annotations

from collections.abc import Iterable

from curate.dataset.asker import scope_index
from curate.engine import Engine
from curate.errors import InputError
from curate.index.kb_index import KBIndex, within_scope
from curate.index.shard_bm25 import ShardBM25
from curate.index.shard_lookup import chunks_named, superseding, texts_at
from curate.records import Chunk, ChunkGroups, EvalItem
from curate.scope import ScopeIndex
from curate.scope.moment import MomentError
from curate.scope.settings import ScopeSettings, version_order


class ShardedKB:
    """The chunks a dataset's items cite in a snapshot in shards, with their copies and scope, and BM25 over it."""

    def __init__(self, index: KBIndex, engine: Engine, items: Iterable[EvalItem], settings: ScopeSettings):
        self.index, self.engine, self.snapshot_id = index, engine, index.snapshot_id
        self.bm25 = ShardBM25(index, engine)
        cited = {c for item in items for evidence in item.evidence for c in evidence.chunk_ids}
        # `KBIndex.copies` of the cited chunks: groups.json holds the duplicate groups only, not every chunk
        groups = ChunkGroups.read(index.groups_path).groups if index.groups_path.exists() else []
        copies = {chunk_id: group.chunks for group in groups for chunk_id in group.chunks if chunk_id in cited}
        found = chunks_named(index, engine, cited.union(*copies.values()))
        self.position = {chunk_id: position for chunk_id, (position, _) in found.items()}
        self.chunks: dict[int, Chunk] = dict(found.values())
        manifest = index.store.manifest(index.snapshot_id)
        if copies and manifest.scope is not None:
            copies = within_scope(copies, list(self.chunks.values()))
        self.copies = copies
        self.scope = self._scope(cited, manifest.scope, settings)

    def _scope(self, cited: set[str], counts, settings: ScopeSettings) -> ScopeIndex:
        """Return the scope of the cited chunks: theirs, and that of every chunk superseding their documents or
        them (a chunk's `replaced_by`), in snapshot order; an undeclared version anywhere in the snapshot is
        refused as `scope_index` refuses it."""
        if counts is None:   # the manifest says no chunk has a scope
            return scope_index([], settings, self.snapshot_id)
        rows = {position: chunk for position, chunk in self.chunks.items() if chunk.chunk_id in cited}
        if counts.superseded:
            targets = {chunk.doc_id for chunk in rows.values()} | {chunk.chunk_id for chunk in rows.values()}
            rows.update(superseding(self.index, self.engine, targets))
        order = version_order(settings)
        try:
            for version in counts.versions:
                order.key(version.name)
        except MomentError as exc:
            raise InputError(f"KB snapshot {self.snapshot_id}: {exc}: add it to [scope] versions, or re-ingest the "
                             f"KB", file="curate.toml", field="scope.versions") from None
        return scope_index([rows[p] for p in sorted(rows)], settings, self.snapshot_id)

    def texts(self, positions: Iterable[int]) -> dict[int, str]:
        """Return snapshot position -> text of the chunks at `positions`, read from their shards."""
        return texts_at(self.index, self.engine, positions)
