"""`curate annotate pull|status`: submitted labels back from Argilla, applied where annotators
agree (or an adjudication settles it), with agreement reported; and progress per annotator.

A dataset's items may live in several Argilla datasets (`PushedItem.argilla_dataset`, None for the
main one, `state.argilla.dataset`); pull and status read every one of them. Disputes go to the
adjudication dataset (`curate.annotate.adjudication`), whose answers settle them on a later pull.
Where a push suggested the judge's grades (`--suggest-from`), the pull sets every submitted grade of
those slots against the judge's and keeps them in datasets/NAME/judge_suggestions.json.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from curate.annotate import adjudication as adj
from curate.annotate.agreement import krippendorff_alpha, pairwise
from curate.annotate.apply import Applied, apply_answers, disputes, merged_answer
from curate.annotate.form import Answer, annotation_digest, answers_of, discarded_by
from curate.annotate.remote import argilla_errors, argilla_records
from curate.annotate.state import connect, judge_suggestions_path, load_state, state_path
from curate.dataset import DatasetStore, items_digest
from curate.errors import CurateError, InputError
from curate.index.kb_index import KBIndex
from curate.progress import progress
from curate.records import (
    UNRELEASED_STATUSES,
    AnnotationCheck,
    AnnotationState,
    JudgeCheck,
    JudgeSuggestionsPulled,
    PushedItem,
    now,
)
from curate.workspace import Workspace

BULK = 500   # records argilla-server takes in one bulk update


@dataclass
class PullReport:
    """What a pull applied, the disputes still open, and how far annotators agree."""

    applied: list[Applied] = field(default_factory=list)
    conflicts: dict[str, str] = field(default_factory=dict)   # item id -> why it was left alone
    pending: int = 0
    agreement: dict = field(default_factory=dict)
    open_disputes: dict[str, str] = field(default_factory=dict)   # item id -> what is disputed, after this pull
    adjudication_dataset: str | None = None                       # where they are adjudicated
    status_updates: int = 0                                       # Argilla records whose `status` metadata changed
    judge: JudgeSuggestionsPulled | None = None                   # submitted grades of the judge's suggestions
    rejected: list[str] = field(default_factory=list)             # generated items their reviewers discarded


def argilla_datasets(state: AnnotationState) -> dict[str, set[str]]:
    """Return the item ids per Argilla dataset the dataset's items were pushed to."""
    by_dataset: dict[str, set[str]] = defaultdict(set)
    for item_id, pushed in state.items.items():
        by_dataset[getattr(pushed, "argilla_dataset", None) or state.argilla.dataset].add(item_id)
    if not by_dataset:
        by_dataset[state.argilla.dataset] = set()
    return dict(by_dataset)


def _annotation_records(client, state: AnnotationState) -> dict[str, tuple[object, dict]]:
    """Return item id -> (Argilla dataset, record) over every Argilla dataset the items were pushed to."""
    records = {}
    for name, item_ids in argilla_datasets(state).items():
        target = _dataset(client, name, state.argilla.workspace)
        for record in argilla_records(client, target.id):
            if _item_id(record) in item_ids:
                records[_item_id(record)] = (target, record)
    return records


def _item_id(record: dict) -> str:
    """Return the item id of an Argilla record (its external id, which push sets to the item id)."""
    return str(record.get("external_id") or record["id"])


def _dataset(client, name: str, workspace: str):
    """Return an Argilla dataset the state names, or raise one line saying it is gone."""
    target = adj.find_dataset(client, name, workspace)
    if target is None:
        raise CurateError(f"Argilla has no dataset '{name}' in workspace '{workspace}' any more")
    return target


def _update_metadata(client, dataset_id, updates: list[tuple[str, dict]]) -> None:
    """Replace the metadata of records (Argilla id, metadata), leaving fields, suggestions and
    responses as they are."""
    for start in range(0, len(updates), BULK):
        items = [{"id": record_id, "metadata": metadata} for record_id, metadata in updates[start:start + BULK]]
        response = client.http_client.put(f"/api/v1/datasets/{dataset_id}/records/bulk", json={"items": items})
        response.raise_for_status()


def _signature(answers: list[Answer], decisions: list[Answer]) -> str:
    """Return what decides an item's outcome: the annotators' answers and the decisions read on it."""
    return json.dumps([[a.__dict__ for a in decisions], [a.__dict__ for a in answers]], sort_keys=True,
                      ensure_ascii=False, default=str)


def _agreement(relevance_units: dict, answerability: dict) -> dict:
    """Return alpha on relevance (overall and per pair) and kappa on answerability (mean of pairs)."""
    alpha = krippendorff_alpha(relevance_units, "ordinal")
    result = {"relevance_alpha": None if alpha is None else round(alpha, 4),
              "relevance_alpha_pairs": pairwise(relevance_units, "alpha", "ordinal"),
              "answerability_kappa_pairs": pairwise(answerability, "kappa"),
              "units": sum(1 for u in relevance_units.values() if len(u) > 1)}
    kappas = [p["agreement"] for p in result["answerability_kappa_pairs"].values() if p["agreement"] is not None]
    result["answerability_kappa"] = round(sum(kappas) / len(kappas), 4) if kappas else None
    return result


def pull(workspace: Workspace, *, dataset: str, api_url: str | None = None, adjudicator: str | None = None,
         min_submitted: int | None = None) -> PullReport:
    """Read submitted responses from every Argilla dataset of `dataset` and apply them (see
    `apply_answers`); send open disputes to the adjudication dataset and apply its decisions; set each
    record's `status` metadata to its item's status; report agreement.

    `adjudicator` names a reviewer: their answers (in the annotation datasets, or the only ones read
    from the adjudication dataset) are decisions on disputed items, never votes; without it, any
    submitted answer in the adjudication dataset decides, except one by an annotator of that item."""
    with DatasetStore(workspace).writing(dataset):
        store = DatasetStore(workspace)
        meta, items = store.load(dataset)
        state = load_state(workspace, dataset)
        if state.argilla is None:
            raise InputError(f"dataset '{dataset}' was never pushed: run `curate annotate push --dataset {dataset}`",
                             field="dataset")
        if state.push_started:
            raise InputError(f"the last push of '{dataset}' (started {state.push_started}) did not finish, so its "
                             f"records may not match what was recorded here: run `curate annotate push --dataset "
                             f"{dataset}` again, then pull", field="dataset")
        client = connect(api_url or state.argilla.api_url)
        with argilla_errors(client.api_url, "reading the answers", then="nothing was applied here; pull again"):
            usernames = {str(user.id): user.username for user in client.users}
            records = _annotation_records(client, state)
            adjudication = adj.load_adjudication(workspace, dataset)
            adjudication_target = (adj.find_dataset(client, adjudication.dataset, adjudication.workspace)
                                   if adjudication.dataset else None)
            adjudication_records = (list(argilla_records(client, adjudication_target.id))
                                    if adjudication_target is not None else [])
        decisions = adj.decisions_of(adjudication_records, usernames, adjudicator)

        needed = min_submitted or state.min_submitted
        by_id = {i.id: i for i in items}
        index = KBIndex(workspace, meta.kb_snapshot)
        chunks = {c.chunk_id: c for c in index.chunks}
        report = PullReport()
        judge_file = judge_suggestions_path(workspace, dataset)
        if judge_file.exists() or any(p.judge for p in state.items.values()):
            report.judge = JudgeSuggestionsPulled()
        relevance_units: dict = {}
        answerability: dict = {}
        disputed: dict[str, tuple[list[Answer], list[str]]] = {}   # open disputes: answers, what differs
        for item_id, (_, record) in progress(sorted(records.items()), "pulling from Argilla", unit="record"):
            pushed, item = state.items[item_id], by_id.get(item_id)
            if item is None:
                continue
            every = answers_of(record.get("responses") or [], usernames)
            answers = [a for a in every if a.user != adjudicator]   # an adjudicator's answer is never a vote
            for answer in answers:
                for n in range(1, len(pushed.slots) + 1):
                    relevance_units.setdefault((item_id, n), {})[answer.user] = answer.grade(n)
                if answer.answerable is not None:
                    answerability.setdefault(item_id, {})[answer.user] = answer.answerable
            if report.judge is not None and pushed.judge and answers:
                report.judge.items[item_id] = judge_checks(pushed, answers)
            discarded = discarded_by(record.get("responses") or [], usernames)
            if item.source == "synthetic" and not answers and len(discarded) >= needed:
                if item.status != "rejected":   # a generated question every reviewer discarded: rejected
                    item.set_status("rejected", f"discarded in Argilla by {', '.join(discarded)}: a generated "
                                    f"question its reviewers rejected", by=", ".join(discarded))
                    report.rejected.append(item_id)
                continue
            if len(answers) < needed:
                report.pending += 1
                continue
            differing = disputes(answers, pushed.slots)
            # Decisions are read only where annotators disagree: on an agreed item they change nothing. An
            # annotator cannot settle their own dispute in the adjudication dataset.
            voters = {a.user for a in answers}
            decided = ([d for d in decisions.get(item_id, []) if d.user not in voters]
                       + [a for a in every if a.user == adjudicator]) if differing else []
            signature = _signature(answers, decided)
            if pushed.applied != signature:
                if annotation_digest(item) != pushed.digest:
                    report.conflicts[item_id] = "changed locally after it was pushed; push it again to re-annotate"
                    continue
                applied = apply_answers(item, answers, pushed.slots, chunks, index.copies, meta.kb_snapshot,
                                        state.guideline_version, decided)
                report.applied.append(applied)
                pushed.applied = signature
                pushed.digest = annotation_digest(item)
                if applied.adjudicated_by and item_id in adjudication.items:
                    adjudication.items[item_id].settled_by = applied.adjudicated_by
                    adjudication.items[item_id].settled_at = now()
            if item.status == "needs_adjudication" and differing:
                disputed[item_id] = (answers, differing)
                report.open_disputes[item_id] = item.status_history[-1].reason

        report.agreement = _agreement(relevance_units, answerability)
        counts = {"labelled": sum(a.outcome == "labelled" for a in report.applied),
                  "needs_adjudication": len(report.open_disputes),
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
        if report.judge is not None:
            report.judge.write(judge_file)
        adjudication.write(adj.adjudication_path(workspace, dataset))

        # Argilla follows the local outcome: records show their item's status, disputes wait for a reviewer.
        with argilla_errors(client.api_url, "updating Argilla after the pull",
                            then="the labels were applied here; pull again to update Argilla"):
            report.status_updates = _sync_status(client, records, by_id)
            if disputed:
                _write_disputes(workspace, client, state, adjudication, disputed, by_id, index, items)
                adjudication_target = adj.find_dataset(client, adjudication.dataset, adjudication.workspace)
                adjudication_records = list(argilla_records(client, adjudication_target.id))
            if adjudication_target is not None:
                report.adjudication_dataset = adjudication.dataset
                _sync_adjudication_status(client, adjudication_target, adjudication_records, adjudication, disputed)
        adjudication.write(adj.adjudication_path(workspace, dataset))
        return report


def judge_checks(pushed: PushedItem, answers: list[Answer]) -> list[JudgeCheck]:
    """Return each annotator's submitted grade of every slot whose suggestion was the judge's grade.

    >>> from curate.records import JudgeSuggestion
    >>> pushed = PushedItem(slots=["a", "b"], digest="d", pushed_at="t",
    ...                     judge=[JudgeSuggestion(slot=2, chunk_id="b", grade=2, judge_model="m")])
    >>> [(c.chunk_id, c.judge_grade, c.person_grade) for c in judge_checks(pushed, [Answer("ann", {1: 2, 2: 0})])]
    [('b', 2, 0)]
    """
    return [JudgeCheck(slot=s.slot, chunk_id=s.chunk_id, judge_grade=s.grade, person_grade=answer.grade(s.slot),
                       user=answer.user, judge_model=s.judge_model) for answer in answers for s in pushed.judge]


def _sync_status(client, records: dict[str, tuple[object, dict]], by_id: dict) -> int:
    """Set the `status` metadata of every record whose item's status differs from it; return how many."""
    updates: dict[object, list[tuple[str, dict]]] = defaultdict(list)
    for item_id, (target, record) in records.items():
        item = by_id.get(item_id)
        metadata = dict(record.get("metadata") or {})
        if item is not None and metadata.get("status") != item.status:
            metadata["status"] = item.status
            updates[target.id].append((record["id"], metadata))
    for dataset_id, batch in updates.items():
        _update_metadata(client, dataset_id, batch)
    return sum(len(batch) for batch in updates.values())


def _write_disputes(workspace: Workspace, client, state: AnnotationState, adjudication, disputed: dict, by_id: dict,
                    index: KBIndex, items: list) -> None:
    """Write one adjudication record per open dispute (only those whose content changed)."""
    from curate.annotate.push import guidelines_text

    wanted = {item_id for item_id in disputed}
    texts = {c.chunk_id: (str(c.metadata.get("title") or ""), c.text) for c in index.chunks
             if any(c.chunk_id in state.items[i].slots for i in wanted)}
    built = []
    for item_id, (answers, differing) in sorted(disputed.items()):
        item, slots = by_id[item_id], state.items[item_id].slots
        proposal, _ = merged_answer(answers, item)
        record, digest = adj.adjudication_record(item, slots, texts, answers, differing, proposal)
        built.append((item_id, record, digest, differing))
    adj.write_disputes(client, adjudication, annotation_dataset=state.argilla.dataset,
                       argilla_workspace=state.argilla.workspace, pool_k=state.pool_k or max(
                           len(state.items[i].slots) for i in wanted),
                       guidelines=guidelines_text(workspace, items), records=built)


def _sync_adjudication_status(client, target, records: list[dict], adjudication, disputed: dict) -> None:
    """Set the adjudication records' `status` metadata: open while disputed, settled once a decision was
    applied, closed when the dispute went away otherwise (annotators changed their answers)."""
    updates = []
    for record in records:
        item_id = _item_id(record)
        kept = adjudication.items.get(item_id)
        wanted = (adj.OPEN if item_id in disputed else
                  adj.SETTLED if kept is not None and kept.settled_at else adj.CLOSED)
        metadata = dict(record.get("metadata") or {})
        if metadata.get("status") != wanted:
            metadata["status"] = wanted
            updates.append((record["id"], metadata))
    if updates:
        _update_metadata(client, target.id, updates)


COUNTS = ("submitted", "draft", "discarded", "pending", "completed_by_others")


def _responders(records: list[dict], usernames: dict[str, str]) -> set[str]:
    """Return the users who answered (submitted, draft or discarded) any of the records."""
    return {usernames.get(str(r.get("user_id")), str(r.get("user_id"))) for record in records
            for r in record.get("responses") or []}


def _user_counts(records: list[dict], users: set[str], usernames: dict[str, str]) -> dict[str, dict[str, int]]:
    """Return per user: records they submitted, saved as draft, discarded; records still open to them
    (pending: no answer of theirs, not yet completed); records completed by others without them; and
    `records`, the sum of those five (every record).

    >>> _user_counts([{"status": "pending", "responses": [{"user_id": "1", "status": "draft"}]},
    ...               {"status": "completed", "responses": []}, {"status": "pending"}], {"ann", "bo"}, {"1": "ann"})["ann"]
    {'submitted': 0, 'draft': 1, 'discarded': 0, 'pending': 1, 'completed_by_others': 1, 'records': 3}
    """
    counts = {user: dict.fromkeys(COUNTS, 0) for user in sorted(users)}
    for record in records:
        answered = {usernames.get(str(r.get("user_id")), str(r.get("user_id"))): r.get("status")
                    for r in record.get("responses") or []}
        for user, counter in counts.items():
            if user in answered:
                counter[answered[user]] += 1
            elif record.get("status") == "completed":
                counter["completed_by_others"] += 1
            else:
                counter["pending"] += 1
    return {user: {**counter, "records": sum(counter.values())} for user, counter in counts.items()}


def _members(client, workspace_id) -> dict[str, str]:
    """Return {user id: username} of an Argilla workspace's members."""
    response = client.http_client.get(f"/api/v1/workspaces/{workspace_id}/users")
    response.raise_for_status()
    return {str(u["id"]): u["username"] for u in response.json()["items"]}


def status(workspace: Workspace, *, dataset: str, api_url: str | None = None) -> dict:
    """Return local counts per status and, when the dataset was pushed, exact counts per annotator
    over every Argilla dataset of it.

    {"statuses": {status: items}, "argilla": None | {"datasets": {name: {"records", "completed",
    "users": {user: counts}}}, "users": {user: counts summed}, "records", "completed",
    "adjudication": None | {"dataset", "records", "open", "users"}}}; counts are submitted, draft,
    discarded, pending, completed_by_others and records (their sum: every record of the datasets)."""
    items = DatasetStore(workspace).items(dataset)
    result = {"statuses": dict(Counter(i.status for i in items)), "argilla": None}
    state = load_state(workspace, dataset)
    if state.argilla is None:
        return result
    client = connect(api_url or state.argilla.api_url)
    with argilla_errors(client.api_url, "reading progress", then="try again"):
        return _status(client, state, result, workspace, dataset)


def _status(client, state, result: dict, workspace: Workspace, dataset: str) -> dict:
    """The part of `status` that reads Argilla."""
    space = client.workspaces(state.argilla.workspace)
    if space is None:
        raise CurateError(f"Argilla has no workspace '{state.argilla.workspace}' any more")
    usernames = {str(user.id): user.username for user in client.users}
    members = set(_members(client, space.id).values())
    read = {name: list(argilla_records(client, _dataset(client, name, state.argilla.workspace).id))
            for name in sorted(argilla_datasets(state))}
    # every member sees every dataset of the workspace; a user who answered and left is still counted
    users = members | _responders([r for records in read.values() for r in records], usernames)
    progress_ = {"datasets": {}, "users": {}, "records": 0, "completed": 0, "adjudication": None}
    totals: dict[str, Counter] = {user: Counter() for user in users}
    for name, records in read.items():
        counted = _user_counts(records, users, usernames)
        completed = sum(r.get("status") == "completed" for r in records)
        progress_["datasets"][name] = {"records": len(records), "completed": completed, "users": counted}
        progress_["records"] += len(records)
        progress_["completed"] += completed
        for user, counts in counted.items():
            totals[user].update(counts)
    progress_["users"] = {user: {k: totals[user][k] for k in (*COUNTS, "records")} for user in sorted(totals)}
    adjudication = adj.load_adjudication(workspace, dataset)
    target = adj.find_dataset(client, adjudication.dataset, adjudication.workspace) if adjudication.dataset else None
    if target is not None:
        records = list(argilla_records(client, target.id))
        reviewers = _responders(records, usernames)
        progress_["adjudication"] = {
            "dataset": adjudication.dataset, "records": len(records),
            "open": sum((r.get("metadata") or {}).get("status") == adj.OPEN for r in records),
            "users": _user_counts(records, reviewers, usernames)}
    result["argilla"] = progress_
    return result
