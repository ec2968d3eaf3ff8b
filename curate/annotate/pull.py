"""`curate annotate pull|status`: submitted labels back from Argilla, applied where annotators
agree (or an adjudicator settles it), with agreement reported; and progress per annotator."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from curate.annotate.agreement import krippendorff_alpha, pairwise
from curate.annotate.apply import Applied, apply_answers, disagreements
from curate.annotate.form import Answer, annotation_digest, answers_of
from curate.annotate.state import connect, load_state, state_path
from curate.dataset import DatasetStore, items_digest
from curate.errors import CurateError, InputError
from curate.index.kb_index import KBIndex
from curate.progress import progress
from curate.records import UNRELEASED_STATUSES, AnnotationCheck
from curate.workspace import Workspace


@dataclass
class PullReport:
    """What a pull applied and how far annotators agree."""

    applied: list[Applied] = field(default_factory=list)
    conflicts: dict[str, str] = field(default_factory=dict)   # item id -> why it was left alone
    pending: int = 0
    agreement: dict = field(default_factory=dict)


def _records_with_responses(client, dataset_id, page: int = 1000):
    """Yield (record id, responses) of every record, read over the API directly: SDK 2.8 crashes on a
    discarded response stored without values."""
    offset = 0
    while True:
        response = client.http_client.get(f"/api/v1/datasets/{dataset_id}/records",
                                          params={"offset": offset, "limit": page, "include": ["responses"]})
        response.raise_for_status()
        batch = response.json()["items"]
        for item in batch:
            yield str(item.get("external_id") or item["id"]), item.get("responses") or []
        if len(batch) < page:
            return
        offset += page


def _signature(answers: list[Answer], adjudicator: str | None) -> str:
    """Return what decides an item's outcome: the answers and who adjudicates."""
    return json.dumps([adjudicator, [a.__dict__ for a in answers]], sort_keys=True, ensure_ascii=False, default=str)


def pull(workspace: Workspace, *, dataset: str, api_url: str | None = None, adjudicator: str | None = None,
         min_submitted: int | None = None) -> PullReport:
    """Read submitted responses and apply them (see `apply_answers`); report agreement."""
    with DatasetStore(workspace).writing(dataset):
        store = DatasetStore(workspace)
        meta, items = store.load(dataset)
        state = load_state(workspace, dataset)
        if state.argilla is None:
            raise InputError(f"dataset '{dataset}' was never pushed: run `curate annotate push --dataset {dataset}`",
                             field="dataset")
        client = connect(api_url or state.argilla.api_url)
        target = client.datasets(name=state.argilla.dataset, workspace=state.argilla.workspace)
        if target is None:
            raise CurateError(f"Argilla has no dataset '{state.argilla.dataset}' any more")
        usernames = {str(user.id): user.username for user in client.users}
        needed = min_submitted or state.min_submitted
        by_id = {i.id: i for i in items}
        index = KBIndex(workspace, meta.kb_snapshot)
        chunks = {c.chunk_id: c for c in index.chunks}
        report = PullReport()
        relevance_units: dict = {}
        answerability: dict = {}
        for item_id, responses in progress(list(_records_with_responses(client, target.id)),
                                           "pulling from Argilla", unit="record"):
            pushed = state.items.get(item_id)
            item = by_id.get(item_id)
            if pushed is None or item is None:
                continue
            answers = answers_of(responses, usernames)
            for answer in answers:
                for n in range(1, len(pushed.slots) + 1):
                    relevance_units.setdefault((item_id, n), {})[answer.user] = answer.grade(n)
                if answer.answerable is not None:
                    answerability.setdefault(item_id, {})[answer.user] = answer.answerable
            if len(answers) < needed:
                report.pending += 1
                continue
            # The adjudicator decides only where annotators disagree.
            signature = _signature(answers, adjudicator if disagreements(answers, pushed.slots) else None)
            if pushed.applied == signature:
                continue  # nothing new since the last pull
            if annotation_digest(item) != pushed.digest:
                report.conflicts[item_id] = "changed locally after it was pushed; push it again to re-annotate"
                continue
            applied = apply_answers(item, answers, pushed.slots, chunks, index.copies, meta.kb_snapshot,
                                    state.guideline_version, adjudicator)
            report.applied.append(applied)
            pushed.applied = signature
            pushed.digest = annotation_digest(item)
        alpha = krippendorff_alpha(relevance_units, "ordinal")
        report.agreement = {
            "relevance_alpha": None if alpha is None else round(alpha, 4),
            "relevance_alpha_pairs": pairwise(relevance_units, "alpha", "ordinal"),
            "answerability_kappa_pairs": pairwise(answerability, "kappa"),
            "units": sum(1 for u in relevance_units.values() if len(u) > 1)}
        kappas = [p["agreement"] for p in report.agreement["answerability_kappa_pairs"].values()
                  if p["agreement"] is not None]
        report.agreement["answerability_kappa"] = round(sum(kappas) / len(kappas), 4) if kappas else None
        counts = {"labelled": sum(a.outcome == "labelled" for a in report.applied),
                  "needs_adjudication": sum(a.outcome == "needs_adjudication" for a in report.applied),
                  "conflicts": len(report.conflicts), "pending": report.pending}
        outcome = ("findings" if counts["needs_adjudication"] or counts["conflicts"] else
                   "incomplete" if report.pending else "clean")
        meta.checks.annotation = AnnotationCheck(
            kb_snapshot=meta.kb_snapshot, outcome=outcome, counts=counts,
            items_sha256=items_digest(i for i in items if i.status not in UNRELEASED_STATUSES),
            argilla=state.argilla.model_dump(mode="json"), guideline_version=state.guideline_version,
            conflict_items=sorted(report.conflicts), agreement=report.agreement)
        store.save(meta, items)
        state.write(state_path(workspace, dataset))
        return report


def status(workspace: Workspace, *, dataset: str, api_url: str | None = None) -> dict:
    """Return local counts per status and, when the dataset was pushed, Argilla's progress per annotator."""
    items = DatasetStore(workspace).items(dataset)
    result = {"statuses": dict(Counter(i.status for i in items)), "argilla": None}
    state = load_state(workspace, dataset)
    if state.argilla is not None:
        client = connect(api_url or state.argilla.api_url)
        target = client.datasets(name=state.argilla.dataset, workspace=state.argilla.workspace)
        if target is not None:
            result["argilla"] = target.progress(with_users_distribution=True)
    return result
