"""`curate import`: bring items (and, for BEIR/SQuAD, their KB) into a draft dataset."""

from __future__ import annotations

from pathlib import Path

from collections.abc import Iterable

from curate.dataset.asker import checked_defaults, scope_index, with_defaults
from curate.dataset.build import EVIDENCE_MODES, ImportReport, build_items, summarize_locations
from curate.dataset.locate import Locator
from curate.dataset.store import DatasetStore
from curate.errors import InputError
from curate.formats.beir import read_beir
from curate.formats.raw import RawItem, parse_mapping, read_raw_items
from curate.formats.squad import read_squad
from curate.index.kb_index import KBIndex
from curate.kb import SnapshotStore, chunk_documents, content_sha256, snapshot_id_of
from curate.records import ChunkerSettings, EvalItem, extend_evidence, item_groups
from curate.scope import read_scope_settings
from curate.workspace import Workspace


def extend_to_copies(workspace: Workspace, snapshot_id: str, items: Iterable[EvalItem]) -> int:
    """Extend the items' evidence to every copy of its chunks, if the snapshot has duplicate
    groups (check-dups --kb); return how many evidence entries changed."""
    # run even without groups: copies of a group since undone are taken out again
    return extend_evidence(items, KBIndex(workspace, snapshot_id).copies)


FORMATS = ("auto", "beir", "squad")


def with_default_asker(raws: Iterable[RawItem | InputError], defaults: dict[str, object]) -> list[RawItem | InputError]:
    """Return `raws` with the default asker and moment (`checked_defaults`) on the records that do not say
    (`with_defaults`); curate's own item records keep what they carry."""
    raws = list(raws)
    for raw in raws:
        if isinstance(raw, RawItem) and raw.record is None:
            with_defaults(raw.fields, defaults)
    return raws


def import_items(workspace: Workspace, path: Path, *, dataset: str, source: str, kb: str | None = None,
                 format: str = "auto", mapping: list[str] | tuple[str, ...] = (), encoding: str = "utf-8",
                 skip_invalid: bool = False, min_score: float = 90.0, chunker: str | None = None,
                 chunk_size: int | None = None, evidence_mode: str = "all",
                 asker: dict[str, object] | None = None) -> ImportReport:
    """Import the items of `path` into `dataset`; nothing is written if any record is bad
    (unless `skip_invalid`). BEIR and SQuAD inputs also create their KB snapshot, named `kb`
    (default: the dataset's name). `evidence_mode` "any": a record's passages are alternatives for
    one fact (finding any one counts); "all": each is needed. `asker`: who asks and when for the records
    that do not say ({"asker_role": "employee", "as_of": "2026"}; a record's own asker_groups or
    asker_role, and its own as_of, win)."""
    with DatasetStore(workspace).writing(dataset):
        path = Path(path)
        if evidence_mode not in EVIDENCE_MODES:
            raise InputError(f"unknown evidence mode {evidence_mode!r} ({', '.join(EVIDENCE_MODES)})",
                             field="evidence-mode")
        if not 0 <= min_score <= 100:
            raise InputError(f"--min-score is a similarity from 0 to 100, got {min_score:g}", field="min-score")
        if chunk_size is not None and chunk_size <= 0:
            raise InputError(f"--chunk-size must be at least 1, got {chunk_size}", field="chunk-size")
        store = DatasetStore(workspace)
        snapshots = SnapshotStore(workspace)
        scope = read_scope_settings(workspace)   # each item's asker and moment is checked against it
        meta, items = store.load_or_new(dataset)
        pending = None
        if format == "auto":
            raws = with_default_asker(read_raw_items(path, parse_mapping(mapping), encoding),
                                      checked_defaults(asker, scope))
            snapshot_id = snapshots.resolve(kb or meta.kb_snapshot)
            chunks = snapshots.chunks(snapshot_id)
            locator = Locator(chunks, snapshots.documents(snapshot_id), min_score,
                              scope=scope_index(chunks, scope, snapshot_id))
        elif format in ("beir", "squad"):
            if mapping:
                raise InputError("--map applies to JSONL/CSV files, not to --format " + format, field="map")
            if asker:
                raise InputError(f"--{next(iter(asker)).replace('_', '-')} applies to JSONL/CSV files, not to --format "
                                 f"{format}", field=next(iter(asker)))
            if format == "beir":
                documents, chunks, raws = read_beir(path, encoding)
                settings = ChunkerSettings(kind="one_per_document" if documents else "imported")
            else:
                documents, raws = read_squad(path, encoding)
                if chunker:
                    settings = ChunkerSettings(kind=chunker, size=chunk_size or 500,
                                               overlap=50 if chunker == "fixed" else None)
                else:
                    settings = ChunkerSettings(kind="one_per_document")
                chunks = chunk_documents(documents, settings)
            snapshot_id = snapshot_id_of(content_sha256(documents, chunks))
            pending = (kb or dataset, documents, chunks, settings)
            locator = Locator(chunks, documents, min_score)
        else:
            raise InputError(f"unknown format {format!r} ({', '.join(FORMATS)})", field="format")
        if meta.kb_snapshot and meta.kb_snapshot != snapshot_id:
            raise InputError(f"dataset '{dataset}' refers to KB snapshot {meta.kb_snapshot}, not {snapshot_id}; "
                             f"run `curate remap --dataset {dataset} --kb {snapshot_id}` first", field="kb")
        # evidence is extended to chunk copies before the qtype is decided: quotes of one text in
        # two copies of a chunk are one group
        copies = KBIndex(workspace, snapshot_id).copies
        new_items, skipped = build_items(raws, source=source, locator=locator, kb_snapshot=snapshot_id,
                                         evidence_mode=evidence_mode, copies=copies, scope=scope,
                                         existing_ids={i.id for i in items}, skip_invalid=skip_invalid)
        extend_evidence(new_items, copies)   # curate's own records were built whole: their copies here too
        records = {r.record.id: r.record for r in raws if isinstance(r, RawItem) and r.record is not None}
        regrouped = []
        for item in new_items:
            if item.id in records:
                before, after = item_groups(records[item.id]), item_groups(item)
                if [g.evidence_ids for g in before] != [g.evidence_ids for g in after]:
                    regrouped.append((item.id, len(before), len(after)))
        if pending is not None:
            name, documents, chunks, settings = pending
            snapshots.write(name, documents, chunks, settings, sources=[str(path)])
        meta.kb_snapshot = snapshot_id
        store.save(meta, items + new_items)
        return ImportReport(dataset=dataset, kb_snapshot=snapshot_id, imported=[i.id for i in new_items],
                            skipped=skipped, located_by=summarize_locations(new_items),
                            records=sum(i.id in records for i in new_items), regrouped=regrouped)
