"""`curate add-failures`: the questions production failed on join the regression split, masked of
personal data, deduplicated, leak-checked, and recorded as a batch.

The flow, for each month's logs:

1. The logs are hashed (sha256 of the raw file, never copied); logs this month already took in a
   complete batch add nothing.
2. Rows stream through one at a time. A row that matches no failure rule is counted and dropped; a
   failing row outside the month (by its timestamp) or already counted by an earlier batch (its keyed
   fingerprint) is counted and dropped. A failing row's texts are masked (`curate.failures.pii`) at
   once: nothing unmasked is kept past this step, so the caches, indexes and embeddings the checks
   write never see personal data. Session and user ids are never stored, only how many distinct
   ones asked. Failing rows with one question (after folding) become one candidate.
3. Candidates are matched against each other and against the dataset with check-dups' own matchers
   (exact, form, fuzzy, semantic). A duplicate is not added: its rows are counted on the item it
   duplicates (`production.asked`), an existing item or the first candidate of its cluster.
4. Each new item is checked against the KB snapshot by check-leakage's rules; one whose question is
   in the KB is added quarantined (kept out of every release, visible, counted as a leak), so a
   person can fix the KB and a later month still counts on it.
5. New items get source production, split regression, status needs_evidence, the month as a tag,
   and what production retrieved (chunk ids of the snapshot) and answered (masked).
6. The batch record is written pending, the items saved atomically, then the record complete: a run
   killed at any point leaves the dataset as it was or complete, and the next run finishes it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from curate.annotate.push import push as push_items
from curate.checks.leakage import load_docs
from curate.dataset import DatasetStore
from curate.dataset.asker import checked_defaults, with_defaults
from curate.dataset.batches import MONTH, FailureBatches
from curate.errors import InputError
from curate.failures.core import FailureReport, failures_from
from curate.failures.log import LOG_ALIASES, LogRow, read_log
from curate.failures.pii import Scrubber
from curate.failures.rules import load_rules
from curate.formats.raw import parse_mapping
from curate.index.embeddings import semantic_pass
from curate.index.kb_index import KBIndex
from curate.kb import SnapshotStore
from curate.progress import progress
from curate.records import FailureBatch, FailureSource
from curate.scope import read_scope_settings
from curate.workspace import Workspace


def read_source(path: Path) -> FailureSource:
    """Return a log's name, sha256 and line count, read in one pass over its bytes."""
    digest, lines = hashlib.sha256(), 0
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
                lines += block.count(b"\n")
    except FileNotFoundError:
        raise InputError("no such file", file=str(path)) from None
    except IsADirectoryError:
        raise InputError("is a folder, a production log was expected", file=str(path)) from None
    return FailureSource(name=path.name, sha256=digest.hexdigest(), lines=lines,
                         format="csv" if path.suffix.lower() == ".csv" else "jsonl")


def _asked(rows: Iterable[LogRow | InputError], defaults: dict[str, object]) -> Iterator[LogRow | InputError]:
    """Yield the rows of a log, each that does not say who asks or when given the defaults."""
    for row in rows:
        if isinstance(row, LogRow):
            with_defaults(row.fields, defaults)
        yield row


def add_failures(workspace: Workspace, logs: Sequence[Path], *, dataset: str, month: str, kb: str | None = None,
                 mapping: Sequence[str] = (), encoding: str = "utf-8", skip_invalid: bool = False,
                 semantic: bool = True, push: bool = False, pool_k: int = 8, api_url: str | None = None,
                 argilla_workspace: str = "curate", asker: dict[str, object] | None = None) -> FailureReport:
    """Add the questions production failed on in `month`'s `logs` to `dataset`'s regression split (see
    the module docstring); with `push`, send the new items to Argilla. Nothing is written if a row is
    bad (unless `skip_invalid`). `asker`: who asks and when for the rows that do not say
    ({"asker_role": "employee"}; a row's own asker and moment win)."""
    if not MONTH.fullmatch(month or ""):
        raise InputError(f"must be a month written YYYY-MM, got {month!r}", field="month")
    if not logs:
        raise InputError("give at least one production log", field="LOG")
    rules, patterns = load_rules(workspace)
    scope = read_scope_settings(workspace)
    defaults = checked_defaults(asker, scope)
    names = parse_mapping(mapping, LOG_ALIASES)
    logs = [Path(p) for p in logs]
    sources = [read_source(p) for p in logs]
    with DatasetStore(workspace).writing(dataset):
        store = DatasetStore(workspace)
        meta, items = store.load_or_new(dataset)
        snapshot_id = SnapshotStore(workspace).resolve(kb or meta.kb_snapshot)
        if meta.kb_snapshot and meta.kb_snapshot != snapshot_id:
            raise InputError(f"dataset '{dataset}' refers to KB snapshot {meta.kb_snapshot}, not {snapshot_id}; "
                             f"run `curate remap --dataset {dataset} --kb {snapshot_id}` first", field="kb")
        batches = FailureBatches(workspace, dataset)
        done = batches.settle(items)
        hashes = sorted(s.sha256 for s in sources)
        # The same logs read with the same rules and field names add nothing; read otherwise (a --map
        # forgotten the first time), they are read again, and rows already counted stay counted once.
        same = next((b for b in done if b.month == month and sorted(s.sha256 for s in b.sources) == hashes
                     and b.rules == rules.record() and b.mapping == names and b.asker == defaults), None)
        if same is not None:
            return FailureReport(same, already=True)
        batch = FailureBatch(batch=batches.next_id(month, done), month=month, state="pending", sources=sources,
                             rules=rules.record(), mapping=dict(names), asker=defaults)
        index = KBIndex.open(workspace, snapshot_id)
        docs = load_docs(workspace, dataset)
        rows = [(source, progress(_asked(read_log(path, names, encoding), defaults), f"reading {path.name}",
                                  unit="line", total=source.lines)) for path, source in zip(logs, sources)]
        report = failures_from(rows, items=items, batch=batch, rules=rules, scrubber=Scrubber(patterns),
                               key=batches.key(), index=index, seen={r for b in done for r in b.rows},
                               skip_docs=set(docs.allow) | set(docs.exclude), skip_invalid=skip_invalid, scope=scope,
                               embed=lambda questions: semantic_pass(workspace, questions, semantic=semantic))
        kept = report.new_items
        changed = bool(kept or batch.counted_on)
        if not changed:
            batch.state = "complete"   # no item carries it: written complete at once
        batch.write(batches.path(batch.batch))
        if changed:
            meta.kb_snapshot = snapshot_id
            store.save(meta, [*items, *kept])
            batch.state = "complete"
            batch.write(batches.path(batch.batch))
    if push and batch.added:
        report.pushed = push_items(workspace, dataset=dataset, statuses=("needs_evidence",), only=set(batch.added),
                                   pool_k=pool_k, api_url=api_url, argilla_workspace=argilla_workspace)
    return report
