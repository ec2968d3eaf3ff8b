"""The pure core of `curate add-failures`: a month's production log rows in, the items they add and
the batch record out. No workspace, no lock, no file: the caller (`curate.failures.add`) reads the
logs, settles earlier batches, and writes what this returns.

What it does, in order (the module docstring of `curate.failures.add` says why):

1. Each row is checked and matched against the failure rules; a failing row outside the month or
   already counted by an earlier batch (its keyed fingerprint is in `seen`) is counted and dropped.
   A failing row's texts are masked at once; failing rows with one question (after folding) become
   one candidate.
2. Candidates are matched against each other and the dataset with check-dups' matchers (exact,
   form, fuzzy; then `embed`, the semantic pass, on what is left); a duplicate's rows are counted on
   the item it repeats.
3. Each new item is checked against the KB by check-leakage's rules: one whose question is in the
   KB is quarantined, the others need evidence.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from curate.checks.clusters import Cluster
from curate.checks.duplicates import FUZZY_MAX_CHARS, keeper, question_clusters, too_long_for_fuzzy
from curate.checks.leakage.find import LeakSettings
from curate.checks.leakage.over_shards import kb_leaks
from curate.dataset.asker import read_asker
from curate.dataset.batches import fingerprint
from curate.dataset.build import NO_SCOPE, derived_id
from curate.errors import InputError, InvalidRecords
from curate.failures.log import LogRow
from curate.failures.pii import Scrubber
from curate.failures.rules import FailureRules
from curate.fileio import dumps_json
from curate.index.embeddings import Embed, SemanticPass, no_embedding
from curate.index.kb_index import KBIndex
from curate.records import (UNRELEASED_STATUSES, EvalItem, FailureBatch, FailureSource, Production, ProductionAsked,
                            PromotedDuplicate, Provenance, ScopeSettings)
from curate.text.normalize import fold, language_of

if TYPE_CHECKING:
    from curate.annotate.push import PushReport

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
    new_items: list[EvalItem] = field(default_factory=list)   # the items the batch adds (quarantined leaks too)


@dataclass
class _Question:
    """A failing question of the batch, masked: its first row, and how many rows asked it."""

    item: EvalItem
    rows: int = 1
    users: set[str] = field(default_factory=set)


class _Reader:
    """Turns failing rows into masked candidates, one per folded question and asker and moment."""

    def __init__(self, scrubber: Scrubber, index: KBIndex, key: bytes, month: str, batch: str, snapshot_id: str,
                 scope: ScopeSettings):
        self.scrubber, self.index, self.key = scrubber, index, key
        self.month, self.batch, self.snapshot_id, self.scope = month, batch, snapshot_id, scope
        self.questions: dict[tuple, _Question] = {}
        self.unknown_chunks = 0
        self.groups_masked = 0   # rows whose asker groups held personal data: masked, so they match no chunk
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
        """Take one failing row: masked, merged into the candidate of its question asked by its asker at
        its moment (the same question for another asker or moment is another sample)."""
        question = row.text("question")
        if question is None:
            raise row.error("missing or empty", "question")
        # a log's values may be personal data: an error names the field, never the value
        asker = read_asker(row.fields, self.scope, row.label, file=row.file, line=row.line, empty_is_absent=row.csv,
                           show_values=False)
        masked = self.scrubber.scrub(question)
        groups = None if asker.groups is None else [self.scrubber.scrub(g) for g in asker.groups]
        self.groups_masked += groups != asker.groups
        key = (fold(masked), None if groups is None else tuple(sorted(set(groups))), asker.as_of)
        session = row.text("session")
        entry = self.questions.get(key)
        if entry is None:
            scrub = self.scrubber.scrub
            answer = row.text("answer")
            original = row.text("id")
            item = EvalItem(
                id="pending", question=masked, language=language_of(masked), source="production",
                split="regression", kb_snapshot=self.snapshot_id, asker_groups=groups, asker_role=asker.role,
                as_of=asker.as_of, tags=list(dict.fromkeys([self.month, *(scrub(t) for t in row.tags)])),
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


def failures_from(logs: Sequence[tuple[FailureSource, Iterable[LogRow | InputError]]], *, items: Sequence[EvalItem],
                  batch: FailureBatch, rules: FailureRules, scrubber: Scrubber, key: bytes, index: KBIndex,
                  seen: set[str] | frozenset[str] = frozenset(), skip_docs: set[str] | frozenset[str] = frozenset(),
                  embed: Embed = no_embedding, skip_invalid: bool = False,
                  scope: ScopeSettings | None = None) -> FailureReport:
    """Return what the failing rows of `logs` (each a source record and its rows as `read_log` gives
    them) add to a dataset holding `items`: the report, `batch` filled in (rows, counts, added,
    leaked, duplicates), and the new items in `report.new_items`.

    A duplicate's rows are counted on the item it repeats, so the existing `items` they repeat are
    changed in place; nothing else given is. `seen` holds the fingerprints (keyed by `key`) of rows
    earlier batches took; `skip_docs` the documents the leakage check leaves out; `embed` compares
    the questions by meaning (none by default). A row's asker and moment are checked against the `scope`
    settings and kept on its item. A bad row raises InvalidRecords unless `skip_invalid`.

    >>> rules = FailureRules(frozenset({"down"}), 2, 5, frozenset(), frozenset())
    >>> rows = [LogRow(file="log.jsonl", line=1, fields={"question": "Why is 13812345678 blocked?"}, names={},
    ...                feedback="down")]
    >>> batch = FailureBatch(batch="2026-05-1", month="2026-05", state="pending")
    >>> source = FailureSource(name="log.jsonl", sha256="0" * 64, lines=1, format="jsonl")
    >>> report = failures_from([(source, rows)], items=[], batch=batch, rules=rules, scrubber=Scrubber(),
    ...                        key=b"k", index=KBIndex.of_chunks([]))
    >>> [(i.question, i.split, i.status) for i in report.new_items]
    [('Why is [PHONE] blocked?', 'regression', 'needs_evidence')]
    """
    month = batch.month
    reader = _Reader(scrubber, index, key, month, batch.batch, index.snapshot_id, scope or NO_SCOPE)
    seen = set(seen)
    counts, by_rule, by_hint, unnamed = Counter(), Counter(), Counter(), Counter()
    errors: list[InputError] = []
    silent: list[str] = []   # logs none of whose rows has a field the rules read
    for source, rows in logs:
        rows_before, signals = counts["rows"], 0
        for row in rows:
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
            silent.append(source.name)
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
    # The same question asked for another asker or at another moment is another sample: kept apart, added.
    apart: list = []
    scope_apart: list = []
    found, _ = question_clusters([*items, *candidates], apart_numbers=apart, apart_scope=scope_apart)
    duplicates = _count_duplicates(found, by_id, new_ids, own_rows, month, batch)
    survivors = [c for c in candidates if c.id in new_ids]
    found, used = question_clusters([*items, *survivors], embed=embed, apart_numbers=apart, apart_scope=scope_apart)
    duplicates += _count_duplicates(found, by_id, new_ids, own_rows, month, batch)
    existing = {i.id for i in items}
    pairs = {tuple(sorted((e.a, e.b), key=lambda i: (i not in new_ids, i))) for e in apart}
    batch.numbers_differ = sorted([a, b] for a, b in pairs if a in new_ids and (b in new_ids or b in existing))
    report.semantic = used
    report.questions.update({d.item_id: by_id[d.item_id].question for d in batch.counted_on})
    kept = [c for c in candidates if c.id in new_ids]
    leaks: dict[str, set[str]] = {}
    for finding in kb_leaks(kept, index, LeakSettings(), set(skip_docs)):
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
    report.new_items = kept
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
        "unknown_chunk_ids": reader.unknown_chunks, "logs_without_rule_fields": len(silent),
        "numbers_differ": len(batch.numbers_differ), "regression_before": len(regression),
        "regression_after": len(regression) + len(batch.added),
        "semantically_deduplicated": int(used.vectors is not None and not used.degraded)})
    # said only where askers or moments are in play, so a batch without them records what it did before
    kept_apart = {tuple(sorted((e.a, e.b))) for e in scope_apart if new_ids.intersection((e.a, e.b))}
    counts.update({k: v for k, v in (("kept_apart_by_scope", len(kept_apart)),
                                     ("asker_groups_masked", reader.groups_masked)) if v})
    batch.counts = dict(counts)
    return report
