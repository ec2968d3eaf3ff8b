"""The pure core of `curate check-leakage`: items and a KB index in, findings and what to change out.
No workspace, no lock, no file: `curate.checks.leakage.run` loads what this takes and writes what it
returns (the dataset's record, the documents allowed and excluded, the acceptances).

The passes by meaning need an embedding model: they come in as functions (`embed` for alike items
across the split, `paraphrases` for KB questions asking an item's question in other words); without
them the check compares copies and fuzzy matches only and says so in the record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from curate.checks.leakage.accept import accept, apply_acceptances, fingerprint
from curate.checks.leakage.find import LeakReport, LeakSettings, split_edges, split_leaks, summarize
from curate.checks.leakage.over_shards import kb_leaks
from curate.index.shard_lookup import doc_ids_of, documents_held
from curate.checks.leakage.paraphrase import ParaphrasePass
from curate.dataset.store import items_digest
from curate.errors import InputError
from curate.index.embeddings import Embed, no_embedding
from curate.engine import Engine, LocalEngine
from curate.index.kb_index import KBIndex
from curate.records import (UNRELEASED_STATUSES, EvalItem, LeakageAcceptances, LeakageCheck, LeakageDocs,
                            LeakFinding, now)

FIXES = ("quarantine", "exclude-docs")
BY = "curate check-leakage"

Paraphrases = Callable[[Sequence[EvalItem], KBIndex, set[str], list[LeakFinding]],
                       tuple[list[LeakFinding], ParaphrasePass]]
"""The paraphrase pass as the core takes it: (items, index, documents skipped, the copies found) in,
its findings and what it compared out (`paraphrase_leaks` bound to a workspace)."""


def no_paraphrases(items, index, skip_docs, found) -> tuple[list[LeakFinding], ParaphrasePass]:
    """Return the paraphrase pass of a check asked to compare no embeddings (`--no-semantic`)."""
    return [], ParaphrasePass(None, skipped="--no-semantic", chosen=True)


def check_options(settings: LeakSettings, *, fix: str | None, accept_items: Sequence[str], reason: str | None,
                  release: bool) -> None:
    """Raise InputError for options that do not go together (checked before anything is loaded)."""
    for language, chars in settings.answer_min_chars.items():
        if not isinstance(chars, int) or chars < 1:
            raise InputError(f"must be a whole number >= 1, got {chars!r}", field=f"answer-min-chars-{language}")
    if fix is not None and fix not in FIXES:
        raise InputError(f"unknown fix {fix!r} ({', '.join(FIXES)})", field="fix")
    if accept_items and not (reason or "").strip():
        raise InputError("accepting a finding needs a reason (--reason TEXT)", field="reason")
    if reason is not None and not accept_items:
        raise InputError("--reason goes with --allow ITEM", field="reason")
    if fix == "quarantine" and release:
        raise InputError("a release is immutable: quarantine items in the draft (check NAME, not NAME@vN)",
                         field="fix")


def _carried(previous: LeakageCheck | None, snapshot: str, quarantined: set[str], checked: set[str]) -> list[LeakFinding]:
    """Return the quarantined findings of an earlier check of the same snapshot whose items are still
    quarantined (a draft's check no longer sees them: their findings are kept)."""
    if previous is None or previous.kb_snapshot != snapshot:
        return []
    return [f for f in previous.findings
            if f.status == "quarantined" and f.item_id in quarantined and f.item_id not in checked]


def leak_check(items: Sequence[EvalItem], index: KBIndex, *, ref: str, draft: Sequence[EvalItem] | None = None,
               docs: LeakageDocs | None = None, acceptances: LeakageAcceptances | None = None,
               previous: LeakageCheck | None = None, settings: LeakSettings | None = None, fix: str | None = None,
               allow_docs: Sequence[str] = (), accept_items: Sequence[str] = (), reason: str | None = None,
               accepted_by: str | None = None, embed: Embed = no_embedding,
               paraphrases: Paraphrases = no_paraphrases, engine: Engine | None = None) -> LeakReport:
    """Return the leakage report of `items` (those `ref` names) against `index`, its record in
    `report.record`: every leak copied into the KB, asked there in other words, or alike across the
    split, with the acceptances of `acceptances` applied and `fix` decided.

    `draft` is the draft's items when `ref` names the draft (`fix="quarantine"` changes their
    statuses); `docs` the documents allowed and excluded (`allow_docs` and `fix="exclude-docs"` add
    to it); `acceptances` the reviewed findings (`accept_items` adds to it, with `reason`); `previous`
    the draft's last record, whose quarantined findings are carried. Those four are changed in place,
    for the caller to write; `items` and `index` are not. A snapshot in many shards is searched on `engine`
    (default: the local engine).

    >>> from curate.kb import sha256_text
    >>> from curate.records import Chunk
    >>> text = "Q: How long do refunds take? A: Refunds take 14 days."
    >>> index = KBIndex.of_chunks([Chunk(chunk_id="c1", doc_id="faq", text=text, text_sha256=sha256_text(text))])
    >>> item = EvalItem(id="q1", question="How long do refunds take?", reference_answer="14 days", language="en",
    ...                 source="human", split="test")
    >>> report = leak_check([item], index, ref="faq")
    >>> [(f.item_id, f.kind, f.chunk_ids) for f in report.findings], report.record.outcome
    ([('q1', 'qa_pair_in_kb', ['c1'])], 'findings')
    """
    settings = settings or LeakSettings()
    docs = docs if docs is not None else LeakageDocs()
    acceptances = acceptances if acceptances is not None else LeakageAcceptances()
    release = draft is None
    draft = list(draft or [])
    check_options(settings, fix=fix, accept_items=accept_items, reason=reason, release=release)
    held = documents_held(index, engine or LocalEngine(), allow_docs) if allow_docs else set()
    for doc_id in allow_docs:
        if doc_id not in held:
            raise InputError(f"document '{doc_id}' is not in KB snapshot {index.snapshot_id}", field="allow-docs")
        docs.allow[doc_id] = f"allowed {now()}"
    unknown = [i for i in accept_items if i not in {item.id for item in items}]
    if unknown:
        raise InputError(f"item '{unknown[0]}' is not among the items checked ({ref})", field="allow")
    skip = set(docs.allow) | set(docs.exclude)
    findings = kb_leaks(items, index, settings, skip, engine)
    paraphrased, asked = paraphrases(items, index, skip, findings)
    findings += paraphrased
    live = [i for i in items if i.split in ("dev", "test")]
    used = embed([i.question for i in live])
    split_settings = replace(settings, split_semantic_min=used.semantic_min if used.vectors is not None else None)
    findings += split_leaks(split_edges(live, split_settings, used.vectors, used.readable), {i.id: i for i in items})
    fingerprint(findings, {i.id: i for i in items}, index)
    report = LeakReport(ref=ref, kb_snapshot=index.snapshot_id, checked=len(items), findings=findings,
                        allowed_docs=sorted(docs.allow), excluded_docs=sorted(docs.exclude), semantic=used,
                        paraphrase=asked)
    report.lapsed = apply_acceptances(findings, acceptances)
    if accept_items:
        report.accepted = accept(findings, accept_items, reason or "", accepted_by, acceptances)
    if fix == "exclude-docs":
        open_findings = report.with_status("open")
        copies = {c for finding in open_findings for c in finding.copies}
        doc_of = doc_ids_of(index, engine or LocalEngine(), copies)
        for finding in open_findings:
            # every document holding the copy: the finding's own and those of the copies it lists
            for doc_id in [finding.doc_id] + [doc_of[c] for c in finding.copies]:
                if doc_id and finding.kind != "split_leak" and doc_id not in docs.exclude:
                    docs.exclude[doc_id] = f"{finding.kind} of {finding.item_id} ({now()})"
                    report.newly_excluded.append(doc_id)
        report.excluded_docs = sorted(docs.exclude)
        report.findings = [f for f in findings if f.kind == "split_leak" or f.doc_id not in docs.exclude]
    if fix == "quarantine":
        flagged = {f.item_id for f in report.with_status("open")}
        for item in draft:
            if item.id in flagged and item.status not in UNRELEASED_STATUSES:
                kinds = sorted({f.kind for f in findings if f.item_id == item.id and f.status == "open"})
                item.set_status("quarantined", "leakage: " + ", ".join(kinds), by=BY)
                report.quarantined.append(item.id)
        for finding in report.with_status("open"):
            finding.status = "quarantined"
    if not release:
        report.findings += _carried(previous, index.snapshot_id, {i.id for i in draft if i.status == "quarantined"},
                                    {i.id for i in items})
    checked_items = items if release else [i for i in draft if i.status not in UNRELEASED_STATUSES]
    summary = summarize(report.findings)
    report.record = LeakageCheck(
        ref=ref, kb_snapshot=index.snapshot_id,
        outcome="findings" if not report.clean else "incomplete" if used.degraded or asked.degraded else "clean",
        items_sha256=items_digest(checked_items, ignore=LeakageCheck.IGNORES), checked=len(items),
        items=summary["items"],
        counts=summary["counts"], allowed_docs=report.allowed_docs, excluded_docs=report.excluded_docs,
        findings=report.findings,
        settings={"question_min": settings.question_min, "question_min_chars": settings.question_min_chars,
                  "question_whole_below": settings.question_whole_below, "answer_min": settings.answer_min,
                  "answer_min_chars": settings.answer_min_chars, "split_fuzzy_min": settings.split_fuzzy_min,
                  **used.settings(), "split_semantic_min": split_settings.split_semantic_min,
                  "unreadable_questions": used.unreadable, **asked.settings()})
    return report
