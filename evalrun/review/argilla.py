"""`evalrun review push` and `evalrun review pull`: a sample of a run's judged items to Argilla, people's
verdicts back into the run folder.

Push draws the sample once (`evalrun.review.select`) and keeps its design in review.json; pushing
again sends what a killed push did not (records are upserted by item id, so a reviewer's answers stay)
and never draws again. Pull stores every submitted review as `Review` lines (reviews.jsonl, rewritten
whole and atomically: a pull is repeatable), refusing a record whose judge configuration or answer is
not the run's any more. Reviewers see only their own responses (Argilla's annotator role).
"""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from curate import (
    BUNDLED_GUIDELINES,
    ArgillaTarget,
    CurateError,
    EvalItem,
    InputError,
    Releases,
    SnapshotStore,
    Workspace,
    argilla_errors,
    argilla_markdown,
    argilla_members,
    argilla_records,
    argilla_sdk,
    atomic_write_jsonl,
    connect_argilla,
    ensure_argilla_dataset,
    find_argilla_dataset,
    load_release,
    log_records,
    now,
    progress,
    writing,
)
from evalrun.records import Run, Trace, scored_run
from evalrun.review.form import (
    AGREE,
    record_id,
    record_value,
    review_answers,
    person_verdict,
    settings,
    shown,
    slot_names,
)
from evalrun.review.records import (
    REVIEWS,
    STATE,
    Review,
    ReviewedItem,
    ReviewState,
    VerdictReview,
    answer_digest,
    judge_digest,
    read_reviews,
)
from evalrun.review.select import candidates, select
from evalrun.review.verdicts import KIND_OF, METRICS, judged_verdicts, metric_values
from evalrun.scoring.score import readable_traces

BATCH = 100
LANGUAGE_HEADINGS = {"en": "English", "zh": "中文"}


@dataclass
class PushReport:
    """What a review push chose and sent."""

    argilla_dataset: str
    candidates: int
    chosen: int
    pushed: int                      # records sent by this push
    drawn: bool                      # the sample was drawn by this push (else review.json's was kept)
    dimensions: list[str]
    carried: int = 0                 # --like: items whose answer did not change, their reviews carried over
    unreviewable: int = 0            # --like: items of the sample this run has no reviewable verdict on
    left_out: Counter = field(default_factory=Counter)   # kind -> chosen items whose verdicts of it did not fit


@dataclass
class PullReport:
    """What a review pull stored."""

    reviews: int                     # Review lines written (reviewer x item x metric)
    records: int                     # records with at least one submitted review
    waiting: int                     # records still waiting for their reviews
    refused: dict[str, str] = field(default_factory=dict)    # item id -> why its reviews were refused
    carried: int = 0                                         # --like: items whose reviews were carried over
    unreadable: list[str] = field(default_factory=list)      # "item (reviewer): slot: why"


def _items(workspace: Workspace, run: Run) -> list[EvalItem]:
    _, items = load_release(Releases(workspace, run.manifest.dataset).path(run.manifest.version))
    return items


def _judged(folder: Path) -> tuple[Run, str]:
    run = scored_run(folder)
    digest = judge_digest(run.summary)
    if digest is None:
        raise InputError(f"{folder}: no judge scored this run (the summary names none), so there is no verdict to "
                         "review; score it with a judge first", field="RUN")
    return run, digest


def guidelines_text(workspace: Workspace) -> str:
    """Return the judge review guidelines, each language under its heading (judge-review.LANG.md of the
    workspace's guideline folder, else the ones bundled), within Argilla's 10,000 characters."""
    path = workspace.setting("guidelines", "path")
    folder = (workspace.root / path) if path and not Path(path).is_absolute() else Path(path or BUNDLED_GUIDELINES)
    parts = []
    for language in ("en", "zh"):
        for place in (folder, BUNDLED_GUIDELINES):
            file = place / f"judge-review.{language}.md"
            if file.is_file():
                body = argilla_markdown(file.read_text(encoding="utf-8"))
                parts.append(f"# {LANGUAGE_HEADINGS[language]}\n\n{body}")
                break
    return "\n\n---\n\n".join(parts)[:10_000] or "Agree with each verdict of the judge, or give the right one."


def draw(run: Run, items: list[EvalItem], digest: str, n: int, seed: int) -> ReviewState:
    """Return a new review state: a stratified sample of `n` of the run's reviewable items."""
    rows = {row.item_id: row for row in run.scores or []}
    found = candidates(items, rows)
    if not found:
        raise InputError("no item of this run has a judge verdict to review (no answer was judged)", field="RUN")
    selection = select(found, n, seed)
    return ReviewState(judge_digest=digest, seed=seed, n=n, dimensions=list(selection.dimensions),
                       strata=selection.stratum_of, created_at=now(),
                       items={i: ReviewedItem(stratum=selection.stratum_of[i], answer_digest="", kinds={})
                              for i in selection.chosen})


def like(run: Run, items: list[EvalItem], digest: str, base: Path) -> ReviewState:
    """Return a review state holding the sample of the run in `base` (its design and items): the items whose
    answer and context did not change are carried over (their reviews hold for this run too), the others
    are to be reviewed again."""
    base = Path(base)
    if not (base / STATE).exists():
        raise InputError(f"{base}: no review sample to reuse (no {STATE}); push a review of it first", field="like")
    sample = ReviewState.read(base / STATE)
    traces = readable_traces(run, {i.id: i for i in items})
    state = ReviewState(judge_digest=digest, seed=sample.seed, n=sample.n, dimensions=sample.dimensions,
                        strata=sample.strata, created_at=now(), like=str(base.resolve()))
    for item_id, entry in sample.items.items():
        trace = traces.get(item_id)
        same = trace is not None and entry.pushed and answer_digest(trace) == entry.answer_digest
        state.items[item_id] = ReviewedItem(stratum=entry.stratum, answer_digest=entry.answer_digest if same else "",
                                            kinds=dict(entry.kinds) if same else {}, carried=same)
    return state


def push(workspace: Workspace, folder: Path, *, n: int = 100, seed: int = 0, min_submitted: int = 1,
         api_url: str | None = None, argilla_workspace: str = "curate", argilla_dataset: str | None = None,
         like_run: Path | None = None) -> PushReport:
    """Send a stratified sample of a run's judged items to Argilla for review (see the module); `like_run`:
    the sample of that run's review instead of a new one, only the items whose answer changed sent. One
    command at a time writes a run folder: a second push or pull waits for the first."""
    if n < 1:
        raise InputError(f"must be at least 1, got {n}", field="n")
    folder = Path(folder)
    with writing(folder, f"run folder {folder}", clean=[(folder, 1)]):
        return _push(workspace, folder, n, seed, min_submitted, api_url, argilla_workspace, argilla_dataset, like_run)


def _push(workspace: Workspace, folder: Path, n: int, seed: int, min_submitted: int, api_url: str | None,
          argilla_workspace: str, argilla_dataset: str | None, like_run: Path | None) -> PushReport:
    run, digest = _judged(folder)
    items = _items(workspace, run)
    path = folder / STATE
    state = ReviewState.read(path) if path.exists() else None
    if state is None and like_run is not None:
        state = like(run, items, digest, like_run)
        n = state.n
        state.write(path)
    if state is not None and state.judge_digest != digest:
        raise InputError(f"{path} holds a sample of another judge's verdicts (the run was scored again since): "
                         f"pull what was reviewed, then remove {path.name} to draw a new sample", field="RUN")
    if state is not None and state.n != n and state.like is None:
        raise InputError(f"{path} holds a sample drawn with --n {state.n}; push with --n {state.n} to finish it, or "
                         f"remove {path.name} (after pulling) to draw another", field="n")
    drawn = state is None
    state = state or draw(run, items, digest, n, seed)
    rg = argilla_sdk()
    by_id = {i.id: i for i in items}
    rows = {row.item_id: row for row in run.scores or []}
    traces = readable_traces(run, {i.id: i for i in items})
    chunk_texts = {c.chunk_id: c.text for c in SnapshotStore(workspace).chunks(run.manifest.kb_snapshot)}
    name = argilla_dataset or (state.argilla.dataset if state.argilla else None) or f"review-{folder.name}"
    client = connect_argilla(api_url)
    url = client.api_url
    state.argilla = ArgillaTarget(api_url=url, dataset=name, workspace=argilla_workspace)
    state.min_submitted = min_submitted
    state.write(path)
    report = PushReport(name, len(state.strata), len(state.items), 0, drawn, state.dimensions)
    with argilla_errors(url, f"finding workspace '{argilla_workspace}'"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        space = client.workspaces(argilla_workspace) or rg.Workspace(name=argilla_workspace).create()
    with argilla_errors(url, f"preparing Argilla dataset '{name}'"):
        target = ensure_argilla_dataset(client, rg, space, name, settings(guidelines_text(workspace), min_submitted)).dataset
    gone = [i for i, entry in state.items.items() if not entry.carried and (i not in traces or i not in rows
                                                                            or not judged_verdicts(by_id[i], rows[i]))]
    for item_id in gone:   # --like: an item this run did not answer, or whose verdicts cannot be reviewed
        state.items[item_id] = state.items[item_id].model_copy(update={"pushed": False, "carried": False})
    report.unreviewable = len(gone)
    report.carried = sum(entry.carried for entry in state.items.values())
    waiting = [i for i, entry in state.items.items() if not entry.pushed and not entry.carried and i not in gone]
    for start in progress(range(0, len(waiting), BATCH), f"pushing reviews to Argilla '{name}'", unit="batch",
                          total=(len(waiting) + BATCH - 1) // BATCH):
        batch = waiting[start:start + BATCH]
        records = []
        for item_id in batch:
            item, trace = by_id[item_id], traces[item_id]
            show = shown(judged_verdicts(item, rows[item_id]))
            records.append(rg.Record(id=record_id(item_id), fields={"review": record_value(item, trace, chunk_texts, show)},
                                     metadata={"language": item.language, "difficulty": item.difficulty or "ungraded",
                                               "stratum": state.items[item_id].stratum}))
            state.items[item_id] = state.items[item_id].model_copy(update={
                "answer_digest": answer_digest(trace), "kinds": dict(Counter(v.kind for v in show.verdicts)),
                "left_out": show.left_out})
        with argilla_errors(url, f"sending records to Argilla dataset '{name}'"):
            log_records(target, records)
        for item_id in batch:
            state.items[item_id] = state.items[item_id].model_copy(update={"pushed": True})
        state.write(path)
        report.pushed += len(batch)
    for entry in state.items.values():
        report.left_out.update(entry.left_out.keys())
    return report


def reviews_of(item: EvalItem, row, answer, state_item: ReviewedItem, digest: str, answer_now: str
               ) -> tuple[list[Review], list[str]]:
    """Return the reviews one submitted answer gives (one per metric whose verdicts were shown), and the
    slots it answered that cannot be read (pure)."""
    found = judged_verdicts(item, row)
    reviews, unreadable = [], []
    shown = {slot for kind, verdicts in found.items() if kind not in state_item.left_out
             for slot in slot_names(kind)[:len(verdicts)]}
    marked = [slot for slot in shown if answer.slots.get(slot, AGREE) != AGREE]
    if answer.overall == "wrong" and not marked:
        return [], ["said some verdicts are wrong but marked none"]
    unreadable += [f"{slot}: marked {said!r}, but the record has no such verdict (not counted)"
                   for slot, said in sorted(answer.slots.items()) if slot not in shown and said != AGREE]
    for kind, verdicts in found.items():
        if kind in state_item.left_out or state_item.kinds.get(kind, 0) != len(verdicts):
            continue
        checked = []
        for verdict, slot in zip(verdicts, slot_names(kind)):
            person, problem = person_verdict(kind, verdict.verdict, answer.slots.get(slot))
            if problem:
                unreadable.append(f"{slot}: {problem}")
            checked.append(VerdictReview(kind=kind, index=verdict.index, judge=verdict.verdict, person=person))
        people = [c.person for c in checked]
        person_values = metric_values(kind, people) if None not in people else {}
        judge_values = metric_values(kind, [c.judge for c in checked])
        for metric in METRICS[kind]:
            reviews.append(Review(item_id=item.id, metric=metric, judge_digest=digest, answer_digest=answer_now,
                                  judge_value=judge_values[metric], person_value=person_values.get(metric),
                                  reviewer=answer.user, reason=answer.reason, verdicts=checked,
                                  reviewed_at=answer.updated_at))
    return reviews, unreadable


def pull(workspace: Workspace, folder: Path, *, api_url: str | None = None) -> PullReport:
    """Store the submitted reviews of a run's review in reviews.jsonl (see the module)."""
    folder = Path(folder)
    with writing(folder, f"run folder {folder}", clean=[(folder, 1)]):
        return _pull(workspace, folder, api_url)


def _pull(workspace: Workspace, folder: Path, api_url: str | None) -> PullReport:
    path = folder / STATE
    if not path.exists():
        raise InputError(f"{folder}: nothing was pushed for review (no {STATE}); `evalrun review push` first",
                         field="RUN")
    state = ReviewState.read(path)
    run, digest = _judged(folder)
    if state.argilla is None:
        raise InputError(f"{path}: the push never reached Argilla; push again", field="RUN")
    items = {i.id: i for i in _items(workspace, run)}
    rows = {row.item_id: row for row in run.scores or []}
    traces = readable_traces(run, items)
    client = connect_argilla(api_url or state.argilla.api_url)
    url = client.api_url
    with argilla_errors(url, "reading the review records", then="nothing was changed; pull again"):
        target = find_argilla_dataset(client, state.argilla.dataset, state.argilla.workspace)
        if target is None:
            raise CurateError(f"Argilla has no dataset '{state.argilla.dataset}' in workspace "
                              f"'{state.argilla.workspace}' any more")
        usernames = argilla_members(client, target.workspace.id)
        records = list(argilla_records(client, target.id))
    report = PullReport(0, 0, 0)
    stored: list[Review] = []
    item_of = {record_id(i): i for i in state.items}
    for record in records:
        item_id = item_of.get(str(record.get("external_id") or record["id"]), "")
        entry = state.items.get(item_id)
        if entry is None or item_id not in items:
            continue
        answers = review_answers(record.get("responses") or [], usernames)
        if len(answers) < state.min_submitted:
            report.waiting += 1
        if not answers:
            continue
        trace = traces.get(item_id)
        answer_now = answer_digest(trace) if trace is not None else None
        if digest != state.judge_digest:
            report.refused[item_id] = "reviewed another judge's verdicts (the run was scored again since the push)"
            continue
        if answer_now != entry.answer_digest:
            report.refused[item_id] = "reviewed another answer (the run's answer or context changed since the push)"
            continue
        report.records += 1
        for answer in answers:
            reviews, unreadable = reviews_of(items[item_id], rows[item_id], answer, entry, digest, answer_now)
            stored += reviews
            report.unreadable += [f"{item_id} ({answer.user}): {u}" for u in unreadable]
    if state.like is not None:
        found = carried(state, items, rows, traces, digest)
        report.carried = len({r.item_id for r in found})
        stored += found
    stored.sort(key=lambda r: (r.item_id, r.metric, r.reviewer))
    atomic_write_jsonl(folder / REVIEWS, [r.model_dump(mode="json") for r in stored])
    report.reviews = len(stored)
    return report


def carried(state: ReviewState, items: dict[str, EvalItem], rows: dict, traces: dict[str, Trace], digest: str
            ) -> list[Review]:
    """Return the reviews of the run `state.like` names that hold for this run (--like): those of an item whose
    answer and context this run gave unchanged, each person's verdicts set against this run's judge (the same
    answer has the same key points and claims; the judge may be another one)."""
    base = Path(state.like)
    if not (base / REVIEWS).exists():
        return []
    found = []
    for review in read_reviews(base).reviews:
        item_id = review.item_id
        entry, trace = state.items.get(item_id), traces.get(item_id)
        if entry is None or not entry.carried or trace is None or item_id not in rows:
            continue
        if answer_digest(trace) != review.answer_digest:
            continue
        kind = KIND_OF.get(review.metric)
        mine = judged_verdicts(items[item_id], rows[item_id]).get(kind, [])
        if kind is None or len(mine) != len(review.verdicts):
            continue
        verdicts = [VerdictReview(kind=kind, index=v.index, judge=j.verdict, person=v.person)
                    for v, j in zip(review.verdicts, mine)]
        people = [v.person for v in verdicts]
        found.append(review.model_copy(update={
            "judge_digest": digest, "verdicts": verdicts,
            "judge_value": metric_values(kind, [v.judge for v in verdicts])[review.metric],
            "person_value": metric_values(kind, people)[review.metric] if None not in people else None,
            "carried_from": str(base)}))
    return found
