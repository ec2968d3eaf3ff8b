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
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from curate.annotate.push import PushReport, push as push_items
from curate.checks.clusters import Cluster
from curate.checks.duplicates import FUZZY_MAX_CHARS, find_question_clusters, keeper, too_long_for_fuzzy
from curate.checks.leakage import LeakSettings, load_docs
from curate.checks.leakage.find import kb_leaks
from curate.dataset import DatasetStore
from curate.dataset.build import derived_id
from curate.errors import InputError, InvalidRecords
from curate.failures.batches import MONTH, FailureBatches, fingerprint
from curate.failures.log import LOG_ALIASES, LogRow, read_log
from curate.failures.pii import Scrubber
from curate.failures.rules import load_rules
from curate.fileio import dumps_json
from curate.formats.raw import parse_mapping
from curate.index.embeddings import SemanticPass
from curate.index.kb_index import KBIndex
from curate.kb import SnapshotStore
from curate.progress import progress
from curate.records import UNRELEASED_STATUSES, EvalItem, FailureBatch, FailureSource, Production, ProductionAsked, PromotedDuplicate, Provenance
from curate.text.normalize import fold, language_of
from curate.workspace import Workspace

MAX_ERRORS = 1000
MAX_UNNAMED = 1000   # distinct feedback values no rule names, counted (the most frequent are recorded)
SHOWN_UNNAMED = 10
BY = "curate add-failures"


@dataclass
class FailureReport:
    """What one add-failures run did: its batch record (every number it prints), or the batch that
    had already taken these logs."""

    batch: FailureBatch
    already: bool = False                 # the month's logs were taken before: nothing was done
    semantic: SemanticPass | None = None  # the semantic pass, or why it was skipped
    skipped: list[InputError] = field(default_factory=list)   # bad rows left out (--skip-invalid)
    questions: dict[str, str] = field(default_factory=dict)   # item id -> question (masked), for the output
    pushed: PushReport | None = None
    notes: list[str] = field(default_factory=list)            # what the output must say before any number


@dataclass
class _Question:
    """A failing question of the batch, masked: its first row, and how many rows asked it."""

    item: EvalItem
    rows: int = 1
    users: set[str] = field(default_factory=set)


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


class _Reader:
    """Turns failing rows into masked candidates, one per folded question."""

    def __init__(self, scrubber: Scrubber, index: KBIndex, key: bytes, month: str, batch: str, snapshot_id: str):
        self.scrubber, self.index, self.key = scrubber, index, key
        self.month, self.batch, self.snapshot_id = month, batch, snapshot_id
        self.questions: dict[str, _Question] = {}
        self.unknown_chunks = 0
        self._by_text: dict[str, str] | None = None

    def chunk_ids(self, row: LogRow) -> list[str]:
        """Return the chunk ids production retrieved that the snapshot holds (given as ids, or found
        by their text); the texts themselves are never kept."""
        ids = row.strings("retrieved_ids")
        contexts = row.fields.get("contexts")
        if contexts and not ids:
            if self._by_text is None:
                self._by_text = {}
                for chunk, text in zip(self.index.chunks, self.index.folded):
                    self._by_text.setdefault(text, chunk.chunk_id)
            texts = [c.get("text") if isinstance(c, dict) else c for c in (contexts if isinstance(contexts, list)
                                                                            else [contexts])]
            ids = [self._by_text.get(fold(t), "") for t in texts if isinstance(t, str)]
        known = [i for i in dict.fromkeys(ids) if i in self.index.position]
        self.unknown_chunks += len(ids) - len(known)
        return known

    def add(self, row: LogRow, failed: list[str], fmt: str) -> None:
        """Take one failing row: masked, merged into the candidate of its question."""
        question = row.text("question")
        if question is None:
            raise row.error("missing or empty", "question")
        masked = self.scrubber.scrub(question)
        key = fold(masked)
        session = row.text("session")
        entry = self.questions.get(key)
        if entry is None:
            scrub = self.scrubber.scrub
            answer = row.text("answer")
            original = row.text("id")
            item = EvalItem(
                id="pending", question=masked, language=language_of(masked), source="production",
                split="regression", kb_snapshot=self.snapshot_id,
                tags=list(dict.fromkeys([self.month, *(scrub(t) for t in row.tags)])),
                provenance=Provenance(file=Path(row.file).name, line=row.line, format=fmt,
                                      original_id=self.scrubber.scrub_id(original) if original else None),
                production=Production(answer=scrub(answer) if answer else None, retrieved=self.chunk_ids(row),
                                      failed_by=failed, hints=row.hints,
                                      run_id=self.scrubber.scrub_id(row.text("run_id") or "") or None))
            entry = self.questions[key] = _Question(item)
        else:
            entry.rows += 1
            production = entry.item.production
            production.failed_by = list(dict.fromkeys(production.failed_by + failed))
            production.hints = list(dict.fromkeys(production.hints + row.hints))
        if session:
            entry.users.add(fingerprint(self.key, session))


def _identity(row: LogRow) -> str:
    """Return what makes a row the same row in any export of the log, JSONL or CSV: its texts as read."""
    return dumps_json([row.text("id"), row.text("question"), row.text("answer"), row.text("timestamp"),
                       row.text("session"), row.feedback, row.rating, sorted(row.tags), row.hints])


def _asked(item: EvalItem, month: str, batch: str, rows: int, users: int) -> None:
    """Count `rows` failing rows of `batch` on an item."""
    if item.production is None:
        item.production = Production()
    entry = next((a for a in item.production.asked if a.batch == batch), None)
    if entry is None:
        item.production.asked = [*item.production.asked, ProductionAsked(month=month, batch=batch, count=0)]
        entry = item.production.asked[-1]
    entry.count += rows
    entry.users += users


def _count_duplicates(found: Sequence[Cluster], by_id: dict[str, EvalItem], new_ids: set[str], own_rows: dict[str, int],
                      month: str, batch: FailureBatch) -> Counter:
    """Count each new item that a cluster joins to an existing one (or to an earlier new one) on that
    item, take it out of `new_ids`, and return the failing rows of its own counted, by matcher."""
    duplicates: Counter = Counter()
    for cluster in found:
        fresh = [m for m in cluster.members if m in new_ids]
        old = [by_id[m] for m in cluster.members if m not in new_ids]
        if not fresh:
            continue
        target = keeper(old) if old else by_id[fresh[0]]
        for member in fresh:
            if member == target.id:
                continue
            edge = next(e for e in cluster.edges if member in (e.a, e.b))
            production = by_id[member].production
            # what it carries (its own rows and those counted on it before) moves to the item it repeats
            _asked(target, month, batch.batch, production.asked[0].count, production.asked[0].users)
            target.production.failed_by = list(dict.fromkeys(target.production.failed_by + production.failed_by))
            duplicates[edge.method] += own_rows[member]
            for earlier in batch.counted_on:
                if earlier.item_id == member:
                    earlier.item_id, earlier.within_batch = target.id, target.id in new_ids
            batch.counted_on.append(PromotedDuplicate(item_id=target.id, method=edge.method, score=edge.score,
                                                      rows=own_rows[member], within_batch=target.id in new_ids))
            new_ids.discard(member)
    return duplicates


def add_failures(workspace: Workspace, logs: Sequence[Path], *, dataset: str, month: str, kb: str | None = None,
                 mapping: Sequence[str] = (), encoding: str = "utf-8", skip_invalid: bool = False,
                 semantic: bool = True, push: bool = False, pool_k: int = 8, api_url: str | None = None,
                 argilla_workspace: str = "curate") -> FailureReport:
    """Add the questions production failed on in `month`'s `logs` to `dataset`'s regression split (see
    the module docstring); with `push`, send the new items to Argilla. Nothing is written if a row is
    bad (unless `skip_invalid`)."""
    if not MONTH.fullmatch(month or ""):
        raise InputError(f"must be a month written YYYY-MM, got {month!r}", field="month")
    if not logs:
        raise InputError("give at least one production log", field="LOG")
    rules, patterns = load_rules(workspace)
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
                     and b.rules == rules.record() and b.mapping == names), None)
        if same is not None:
            return FailureReport(same, already=True)
        batch = FailureBatch(batch=batches.next_id(month, done), month=month, state="pending", sources=sources,
                             rules=rules.record(), mapping=dict(names))
        index = KBIndex.open(workspace, snapshot_id)
        key = batches.key()
        seen = {r for b in done for r in b.rows}
        scrubber = Scrubber(patterns)
        reader = _Reader(scrubber, index, key, month, batch.batch, snapshot_id)
        counts, by_rule, by_hint, unnamed = Counter(), Counter(), Counter(), Counter()
        errors: list[InputError] = []
        silent: list[str] = []   # logs none of whose rows has a field the rules read
        for path, source in zip(logs, sources):
            rows_before, signals = counts["rows"], 0
            for row in progress(read_log(path, names, encoding), f"reading {path.name}", unit="line",
                                total=source.lines):
                counts["rows"] += 1
                try:
                    if isinstance(row, InputError):
                        raise row
                    by_hint.update(row.hints)
                    signals += bool(row.feedback is not None or row.rating is not None or row.tags or row.hints)
                    if row.rating is not None and row.rating > rules.rating_scale:
                        raise row.error(f"is {row.rating:g}, above the rating_scale ({rules.rating_scale:g}) of "
                                        f"[failures] in curate.toml", "rating")
                    if rules.unnamed(row.feedback) and (row.feedback in unnamed or len(unnamed) < MAX_UNNAMED):
                        unnamed[row.feedback] += 1
                    failed = rules.failed_by(row.feedback, row.rating, row.tags, row.hints)
                    if not failed:
                        continue
                    if row.month() not in (None, month):
                        counts["outside_month"] += 1
                        continue
                    mark = fingerprint(key, _identity(row))
                    if mark in seen:
                        counts["already_added"] += 1
                        continue
                    reader.add(row, failed, source.format)
                    seen.add(mark)
                    batch.rows.append(mark)
                    counts["failing_rows"] += 1
                    by_rule.update(failed)
                except InputError as exc:
                    counts["invalid_rows"] += 1
                    if len(errors) < MAX_ERRORS:
                        errors.append(exc)
            if counts["rows"] > rows_before and not signals:
                silent.append(path.name)
        if errors and not skip_invalid:
            raise InvalidRecords(errors)
        report = FailureReport(batch, skipped=errors)
        report.notes += [f"no row of {name} has feedback, a rating, tags, escalated or follow_up: no rule could "
                         f"find a failure in it (are its fields named otherwise? --map OLD=NEW)" for name in silent]
        entries = list(reader.questions.values())
        taken = {i.id for i in items}
        for entry in entries:
            entry.item.id = derived_id(entry.item.question, taken)
            taken.add(entry.item.id)
            _asked(entry.item, month, batch.batch, entry.rows, len(entry.users))
        candidates = [e.item for e in entries]
        own_rows = {e.item.id: e.rows for e in entries}
        too_long = too_long_for_fuzzy([c.question for c in candidates])
        if too_long:
            report.notes.append(f"{too_long} failing questions are longer than {FUZZY_MAX_CHARS:,} characters: they "
                                f"are matched exactly and by form only, not by fuzzy ratio or by meaning")
        new_ids = {c.id for c in candidates}
        by_id = {i.id: i for i in [*items, *candidates]}
        # exact, form and fuzzy first; then the embedding model only for what is left (the costly pass:
        # production asks the same things again and again, and a repeat need not be embedded)
        # Two questions one character apart that name another year or code ask different things: such a
        # fuzzy or semantic match is no duplicate (`numbers_of`); it is recorded, and the new item added.
        apart: list = []
        found, _ = find_question_clusters(workspace, [*items, *candidates], semantic=False, apart_numbers=apart)
        duplicates = _count_duplicates(found, by_id, new_ids, own_rows, month, batch)
        survivors = [c for c in candidates if c.id in new_ids]
        found, used = find_question_clusters(workspace, [*items, *survivors], semantic=semantic, apart_numbers=apart)
        duplicates += _count_duplicates(found, by_id, new_ids, own_rows, month, batch)
        existing = {i.id for i in items}
        pairs = {tuple(sorted((e.a, e.b), key=lambda i: (i not in new_ids, i))) for e in apart}
        batch.numbers_differ = sorted([a, b] for a, b in pairs if a in new_ids and (b in new_ids or b in existing))
        report.semantic = used
        report.questions.update({d.item_id: by_id[d.item_id].question for d in batch.counted_on})
        kept = [c for c in candidates if c.id in new_ids]
        docs = load_docs(workspace, dataset)
        leaks: dict[str, set[str]] = {}
        for finding in kb_leaks(kept, index, LeakSettings(), set(docs.allow) | set(docs.exclude)):
            leaks.setdefault(finding.item_id, set()).add(finding.kind)
        for item in kept:
            duplicates["exact"] += own_rows[item.id] - 1   # the rows of one folded question beyond the first
            if item.id in leaks:
                item.set_status("quarantined", "leakage: " + ", ".join(sorted(leaks[item.id])), by=BY)
                batch.leaked.append(item.id)
            else:
                item.set_status("needs_evidence", f"production failure {month} ({', '.join(item.production.failed_by)})",
                                by=BY)
                batch.added.append(item.id)
            report.questions[item.id] = item.question
        batch.duplicates = {k: v for k, v in sorted(duplicates.items()) if v}
        batch.by_rule = {name: by_rule[name] for name in rules.names() if by_rule[name]}
        batch.by_hint = dict(sorted(by_hint.items()))
        # masked like everything kept: feedback is free text in some logs
        batch.unnamed_feedback = {scrubber.scrub(value)[:40]: n for value, n in unnamed.most_common(SHOWN_UNNAMED)}
        batch.personal_data = dict(sorted(scrubber.counts.items()))
        batch.semantic = used.settings()
        regression = [i for i in items if i.split == "regression" and i.status not in UNRELEASED_STATUSES]
        counts.update({
            "added": len(batch.added), "leaks": len(batch.leaked), "duplicates": sum(duplicates.values()),
            "failing_questions": len(entries), "personal_data_masked": sum(scrubber.counts.values()),
            "too_long_to_compare": too_long,
            "unknown_chunk_ids": reader.unknown_chunks, "logs_without_rule_fields": len(silent), "numbers_differ": len(batch.numbers_differ), "regression_before": len(regression),
            "regression_after": len(regression) + len(batch.added),
            "semantically_deduplicated": int(used.vectors is not None and not used.degraded)})
        batch.counts = dict(counts)
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
