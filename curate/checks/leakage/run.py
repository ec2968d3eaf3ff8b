"""Running the leakage check on a dataset or a release, applying fixes and recording the result."""

from __future__ import annotations

from pathlib import Path

from curate.checks.leakage.find import LeakReport, LeakSettings, kb_leaks, split_edges, split_leaks, summarize
from curate.dataset import DatasetStore, items_digest, parse_ref
from curate.errors import InputError
from curate.index.embeddings import question_vectors
from curate.index.kb_index import KBIndex
from curate.records import UNRELEASED_STATUSES, LeakageCheck, LeakageDocs, now
from curate.release import Releases, resolve_items
from curate.workspace import Workspace

FIXES = ("quarantine", "exclude-docs")


def _docs_file(workspace: Workspace, name: str) -> Path:
    return DatasetStore(workspace).folder(name) / "leakage_docs.json"


def load_docs(workspace: Workspace, name: str) -> LeakageDocs:
    """Return the documents a dataset's leakage checks allow and evaluation excludes."""
    path = _docs_file(workspace, name)
    return LeakageDocs.read(path) if path.exists() else LeakageDocs()


def check_leakage(workspace: Workspace, *, ref: str, kb: str | None = None, fix: str | None = None,
                  allow_docs: tuple[str, ...] = (), settings: LeakSettings | None = None,
                  semantic: bool = True) -> LeakReport:
    """Check the items `ref` names (NAME: the draft; NAME@vN: a release) against a snapshot
    (default: theirs); apply `fix`; record the result in the dataset (and, for a release, beside it)."""
    settings = settings or LeakSettings()
    for language, chars in settings.answer_min_chars.items():
        if not isinstance(chars, int) or chars < 1:
            raise InputError(f"must be a whole number >= 1, got {chars!r}", field=f"answer-min-chars-{language}")
    if fix is not None and fix not in FIXES:
        raise InputError(f"unknown fix {fix!r} ({', '.join(FIXES)})", field="fix")
    name, version = parse_ref(ref)
    if fix == "quarantine" and version:
        raise InputError("a release is immutable: quarantine items in the draft (check NAME, not NAME@vN)",
                         field="fix")
    with DatasetStore(workspace).writing(name):
        items, _, own_snapshot = resolve_items(workspace, ref)
        index = KBIndex.open(workspace, kb or own_snapshot)
        docs = load_docs(workspace, name)
        for doc_id in allow_docs:
            if doc_id not in index.doc_positions:
                raise InputError(f"document '{doc_id}' is not in KB snapshot {index.snapshot_id}", field="allow-docs")
            docs.allow[doc_id] = f"allowed {now()}"
        skip = set(docs.allow) | set(docs.exclude)
        findings = kb_leaks(items, index, settings, skip)
        live = [i for i in items if i.split in ("dev", "test")]
        vectors, readable = question_vectors(workspace, live, semantic and settings.split_semantic_min is not None)
        findings += split_leaks(split_edges(live, settings, vectors, readable), {i.id: i for i in items})
        report = LeakReport(ref=ref, kb_snapshot=index.snapshot_id, checked=len(items), findings=findings,
                            allowed_docs=sorted(docs.allow), excluded_docs=sorted(docs.exclude))
        store = DatasetStore(workspace)
        meta, draft = store.load(name)
        if fix == "exclude-docs":
            for finding in findings:
                if finding.doc_id and finding.kind != "split_leak" and finding.doc_id not in docs.exclude:
                    docs.exclude[finding.doc_id] = f"{finding.kind} of {finding.item_id} ({now()})"
                    report.newly_excluded.append(finding.doc_id)
            report.excluded_docs = sorted(docs.exclude)
            report.findings = [f for f in findings if f.kind == "split_leak" or f.doc_id not in docs.exclude]
        if fix == "quarantine":
            flagged = {f.item_id for f in findings}
            for item in draft:
                if item.id in flagged and item.status not in UNRELEASED_STATUSES:
                    kinds = sorted({f.kind for f in findings if f.item_id == item.id})
                    item.set_status("quarantined", "leakage: " + ", ".join(kinds), by="curate check-leakage")
                    report.quarantined.append(item.id)
            report.findings = [f for f in findings if f.item_id not in flagged]
        if allow_docs or fix == "exclude-docs":
            docs.write(_docs_file(workspace, name))
        checked_items = items if version else [i for i in draft if i.status not in UNRELEASED_STATUSES]
        summary = summarize(report.findings)
        report.record = LeakageCheck(
            ref=ref, kb_snapshot=index.snapshot_id, outcome="clean" if report.clean else "findings",
            items_sha256=items_digest(checked_items), checked=len(items), items=summary["items"],
            counts=summary["counts"], allowed_docs=report.allowed_docs, excluded_docs=report.excluded_docs,
            settings={"question_min": settings.question_min, "answer_min": settings.answer_min,
                      "answer_min_chars": settings.answer_min_chars, "split_fuzzy_min": settings.split_fuzzy_min,
                      "split_semantic_min": settings.split_semantic_min if semantic else None})
        if version:
            report.record.write(Releases(workspace, name).leakage_check_path(version, index.snapshot_id))
        else:
            meta.checks.leakage = report.record
            store.save(meta, draft)
        return report
