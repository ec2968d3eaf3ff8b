"""Running the leakage check on a dataset or a release, applying fixes and acceptances, and recording
the result with every finding and its status."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from curate.checks.leakage.accept import accept, apply_acceptances, fingerprint, load_acceptances
from curate.checks.leakage.find import LeakReport, LeakSettings, kb_leaks, split_edges, split_leaks, summarize
from curate.checks.leakage.paraphrase import paraphrase_leaks
from curate.dataset import DatasetStore, items_digest, parse_ref
from curate.errors import InputError
from curate.index.embeddings import semantic_pass
from curate.index.kb_index import KBIndex
from curate.records import UNRELEASED_STATUSES, LeakageCheck, LeakageDocs, LeakFinding, now
from curate.release import Releases, resolve_items
from curate.workspace import Workspace

FIXES = ("quarantine", "exclude-docs")


def _docs_file(workspace: Workspace, name: str) -> Path:
    return DatasetStore(workspace).folder(name) / "leakage_docs.json"


def _accepted_file(workspace: Workspace, name: str) -> Path:
    return DatasetStore(workspace).folder(name) / "leakage_accepted.json"


def load_docs(workspace: Workspace, name: str) -> LeakageDocs:
    """Return the documents a dataset's leakage checks allow and evaluation excludes."""
    path = _docs_file(workspace, name)
    return LeakageDocs.read(path) if path.exists() else LeakageDocs()


def _carried(previous: LeakageCheck | None, snapshot: str, quarantined: set[str], checked: set[str]) -> list[LeakFinding]:
    """Return the quarantined findings of an earlier check of the same snapshot whose items are still
    quarantined (a draft's check no longer sees them: their findings are kept)."""
    if previous is None or previous.kb_snapshot != snapshot:
        return []
    return [f for f in previous.findings
            if f.status == "quarantined" and f.item_id in quarantined and f.item_id not in checked]


def check_leakage(workspace: Workspace, *, ref: str, kb: str | None = None, fix: str | None = None,
                  allow_docs: tuple[str, ...] = (), accept_items: tuple[str, ...] = (), reason: str | None = None,
                  accepted_by: str | None = None, settings: LeakSettings | None = None,
                  semantic: bool = True) -> LeakReport:
    """Check the items `ref` names (NAME: the draft; NAME@vN: a release) against a snapshot
    (default: theirs); accept the open findings of `accept_items` with `reason`; apply `fix` to the
    findings left open; record the result in the dataset (and, for a release, beside it)."""
    settings = settings or LeakSettings()
    for language, chars in settings.answer_min_chars.items():
        if not isinstance(chars, int) or chars < 1:
            raise InputError(f"must be a whole number >= 1, got {chars!r}", field=f"answer-min-chars-{language}")
    if fix is not None and fix not in FIXES:
        raise InputError(f"unknown fix {fix!r} ({', '.join(FIXES)})", field="fix")
    if accept_items and not (reason or "").strip():
        raise InputError("accepting a finding needs a reason (--reason TEXT)", field="reason")
    if reason is not None and not accept_items:
        raise InputError("--reason goes with --allow ITEM", field="reason")
    name, version = parse_ref(ref)
    if fix == "quarantine" and version:
        raise InputError("a release is immutable: quarantine items in the draft (check NAME, not NAME@vN)",
                         field="fix")
    with DatasetStore(workspace).writing(name):
        items, _, own_snapshot = resolve_items(workspace, ref)
        index = KBIndex.open(workspace, kb or own_snapshot)
        docs = load_docs(workspace, name)
        kept = load_acceptances(_accepted_file(workspace, name))
        for doc_id in allow_docs:
            if doc_id not in index.doc_positions:
                raise InputError(f"document '{doc_id}' is not in KB snapshot {index.snapshot_id}", field="allow-docs")
            docs.allow[doc_id] = f"allowed {now()}"
        unknown = [i for i in accept_items if i not in {item.id for item in items}]
        if unknown:
            raise InputError(f"item '{unknown[0]}' is not among the items checked ({ref})", field="allow")
        skip = set(docs.allow) | set(docs.exclude)
        findings = kb_leaks(items, index, settings, skip)
        paraphrased, asked = paraphrase_leaks(workspace, items, index, skip_docs=skip, found=findings,
                                              semantic=semantic, threshold=settings.paraphrase_min,
                                              min_chars=settings.question_min_chars)
        findings += paraphrased
        live = [i for i in items if i.split in ("dev", "test")]
        # alike by the embedding model's own threshold unless one is given: what check-dups and split use
        used = semantic_pass(workspace, [i.question for i in live], semantic=semantic,
                             threshold=settings.split_semantic_min)
        split_settings = replace(settings, split_semantic_min=used.semantic_min if used.vectors is not None else None)
        findings += split_leaks(split_edges(live, split_settings, used.vectors, used.readable),
                                {i.id: i for i in items})
        fingerprint(findings, {i.id: i for i in items}, index)
        report = LeakReport(ref=ref, kb_snapshot=index.snapshot_id, checked=len(items), findings=findings,
                            allowed_docs=sorted(docs.allow), excluded_docs=sorted(docs.exclude), semantic=used,
                            paraphrase=asked)
        report.lapsed = apply_acceptances(findings, kept)
        if accept_items:
            report.accepted = accept(findings, accept_items, reason or "", accepted_by, kept)
        store = DatasetStore(workspace)
        meta, draft = store.load(name)
        if fix == "exclude-docs":
            for finding in report.with_status("open"):
                # every document holding the copy: the finding's own and those of the copies it lists
                for doc_id in [finding.doc_id] + [index.chunks[index.position[c]].doc_id for c in finding.copies]:
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
                    item.set_status("quarantined", "leakage: " + ", ".join(kinds), by="curate check-leakage")
                    report.quarantined.append(item.id)
            for finding in report.with_status("open"):
                finding.status = "quarantined"
        if not version:
            report.findings += _carried(meta.checks.leakage, index.snapshot_id,
                                        {i.id for i in draft if i.status == "quarantined"}, {i.id for i in items})
        if allow_docs or fix == "exclude-docs":
            docs.write(_docs_file(workspace, name))
        if accept_items:
            kept.write(_accepted_file(workspace, name))
        checked_items = items if version else [i for i in draft if i.status not in UNRELEASED_STATUSES]
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
        if version:
            report.record.write(Releases(workspace, name).leakage_check_path(version, index.snapshot_id))
        else:
            meta.checks.leakage = report.record
            store.save(meta, draft)
        return report
