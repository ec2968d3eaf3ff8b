"""`curate annotate push`: items with their candidate chunks to Argilla, recording locally what
was pushed (see `curate.annotate.state`).

Argilla's questions are fixed per dataset, so a record asks only what it has: items with the full
pool of `pool_k` candidates go to the main dataset, items with N < pool_k candidates to
`NAME-kN` (`NAME-k0`: answerability questions only). Every push can be retried to completion: a
half-made dataset is rebuilt (see `curate.annotate.remote`), records are upserted by item id (an
annotator's responses stay), and the local state is written after every batch, so a push killed
at any point is finished by the next one. `--suggest-from RUN` shows a run's judge grades as
suggestions (see `curate.annotate.suggestions`); later pushes keep showing them until
`--no-suggestions`.
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from curate.annotate.form import SCOPE_FIELD, annotation_digest, record, settings
from curate.annotate.marks import RecordScope
from curate.annotate.pool import Candidate, candidate_pools, keep_slots
from curate.annotate.remote import argilla_errors, delete_records, ensure_dataset, remote_records
from curate.annotate.state import argilla_sdk, connect, load_state, state_path
from curate.annotate.suggestions import (
    JudgeGrade,
    RunSuggestions,
    SuggestionsReport,
    drop_stale_suggestions,
    judge_slots,
    read_suggestions,
)
from curate.dataset import DatasetStore
from curate.dataset.asker import names_scope, scope_index
from curate.errors import CurateError, InputError
from curate.guidelines import workspace_guideline_version
from curate.index.kb_index import KBIndex
from curate.progress import progress
from curate.records import ArgillaTarget, PushedItem, now
from curate.scope import read_scope_settings
from curate.workspace import Workspace

DEFAULT_STATUSES = ("needs_evidence", "draft", "needs_adjudication", "needs_rewrite")
BATCH = 256
ARGILLA_GUIDELINES_LIMIT = 10_000  # characters Argilla accepts as a dataset's guidelines
LANGUAGE_HEADINGS = {"en": "English", "zh": "中文"}
CUT_NOTES = {"en": ("(Cut to fit Argilla: the whole guideline, version {version}, is {file}.)",
                    "{path} in the curate workspace"),
             "zh": ("（为符合 Argilla 的长度限制，此处有删节。完整规范（版本 {version}）：{file}。）", "curate 工作区中的 {path}")}
_GUIDELINE_FILE = re.compile(r"relevance\.([A-Za-z]{2,3}(?:[-_][A-Za-z]+)?)\.md")
_HEADING = re.compile(r"^(#{1,5}) ", re.MULTILINE)
_FENCE = re.compile(r"^(```|~~~)", re.MULTILINE)


def _guideline_files(workspace: Workspace) -> dict[str, Path]:
    """Return the relevance guideline per language (relevance.LANG.md) of the workspace's guideline folder."""
    path = workspace.setting("guidelines", "path")
    folder = (workspace.root / path) if path and not Path(path).is_absolute() else Path(path or "")
    named = [(_GUIDELINE_FILE.fullmatch(p.name), p) for p in sorted(folder.glob("relevance.*.md"))] if path else []
    files = {match.group(1): p for match, p in named if match}
    if not files:
        raise InputError("no relevance guidelines: set [guidelines] path in curate.toml to a folder holding "
                         "relevance.en.md / relevance.zh.md", field="guidelines")
    return files


def _demoted(text: str) -> str:
    r"""Return Markdown with every heading one level deeper (outside code fences), to sit under a language.

    >>> _demoted("# A\n```\n# not a heading\n```\n## B")
    '## A\n```\n# not a heading\n```\n### B'
    """
    parts = re.split(r"(^(?:```|~~~).*?^(?:```|~~~)[^\n]*$)", text, flags=re.MULTILINE | re.DOTALL)
    return "".join(part if _FENCE.match(part) else _HEADING.sub(r"#\1 ", part) for part in parts)


_BLOCK_START = re.compile(r"^\s*(?:#|[-*+] |\d+[.)] |\||>|```|~~~)")
_CJK_END = re.compile(r"[\u2e80-\u9fff\uff00-\uffef\u3000-\u303f]$")
_CJK_START = re.compile(r"^[\u2e80-\u9fff\uff00-\uffef\u3000-\u303f]")


def _unwrapped(text: str) -> str:
    r"""Return Markdown with soft-wrapped lines joined: Argilla shows every line break of a guideline
    as a break, so a paragraph wrapped at 100 columns would break mid-sentence. A line joins the one
    before when both are text of one paragraph or list item (not a heading, table row, quote, fence
    or new item); Chinese lines join without a space.

    >>> _unwrapped("Grade **chunks**, not\ndocuments.\n\n- one\n  two\n- 三\n  四\n| a |\n| b |")
    'Grade **chunks**, not documents.\n\n- one two\n- 三四\n| a |\n| b |'
    """
    out: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            out.append(line)
            continue
        previous = out[-1] if out else ""
        joins = (not fenced and line.strip() and previous.strip() and not _BLOCK_START.match(line)
                 and not previous.lstrip().startswith(("#", "|", "```", "~~~")) and not previous.endswith("  "))
        if joins:
            tail, head = previous.rstrip(), line.strip()
            space = "" if _CJK_END.search(tail) and _CJK_START.match(head) else " "
            out[-1] = tail + space + head
        else:
            out.append(line)
    return "\n".join(out)


def _cut(text: str, room: int, note: str) -> str:
    """Return `text` if it fits in `room` characters, else its sections that fit, then `note`."""
    if len(text) <= room:
        return text
    limit = max(room - len(note) - 2, 0)
    cut = max((m.start() for m in re.finditer(r"\n#{2,4} ", text[:limit + 1])), default=limit)
    return text[:cut].rstrip() + "\n\n" + note


def _shares(lengths: list[int], room: int) -> list[int]:
    """Return the room each text gets: all it needs if it fits its fair share, the rest split evenly.

    >>> _shares([9000, 4000], 10000), _shares([3000, 4000], 10000)
    ([6000, 4000], [3000, 4000])
    """
    shares, left, open_ = [0] * len(lengths), room, sorted(range(len(lengths)), key=lambda i: lengths[i])
    while open_:
        fair = left // len(open_)
        i = open_.pop(0)
        shares[i] = min(lengths[i], fair)
        left -= shares[i]
    return shares


def guidelines_text(workspace: Workspace, items) -> str:
    """Return every relevance guideline of the workspace, each under its language's heading, the
    language most items are in first, within Argilla's 10,000 characters (each cut at a section,
    saying where the whole one is, when they do not all fit)."""
    files = _guideline_files(workspace)
    counts = Counter(i.language for i in items)
    languages = sorted(files, key=lambda lang: (-counts.get(lang, 0), lang))
    version = workspace_guideline_version(workspace)
    root = workspace.root.resolve()
    parts = []
    for language in languages:
        file = files[language].resolve()
        note, place = CUT_NOTES.get(language, CUT_NOTES["en"])
        shown = place.format(path=file.relative_to(root).as_posix()) if file.is_relative_to(root) else str(file)
        heading = f"# {LANGUAGE_HEADINGS.get(language, language)}\n\n"
        body = _unwrapped(_demoted(files[language].read_text(encoding="utf-8"))).strip()
        note = note.format(version=version, file=shown)
        parts.append((heading, body, note))
    separator = "\n\n---\n\n"
    room = ARGILLA_GUIDELINES_LIMIT - sum(len(h) for h, _, _ in parts) - len(separator) * (len(parts) - 1)
    shares = _shares([len(b) for _, b, _ in parts], room)
    return separator.join(h + _cut(b, share, note) for (h, b, note), share in zip(parts, shares))


def dataset_name(main: str, pool_size: int, pool_k: int) -> str:
    """Return the Argilla dataset of records with `pool_size` candidates: the main one for a full pool.

    >>> dataset_name("faq", 8, 8), dataset_name("faq", 2, 8), dataset_name("faq", 0, 8)
    ('faq', 'faq-k2', 'faq-k0')
    """
    return main if pool_size == pool_k else f"{main}-k{pool_size}"


@dataclass
class PushReport:
    """What a push sent, and where."""

    dataset: str
    argilla_dataset: str                 # the main Argilla dataset (records with the full pool)
    pushed: int
    created: bool                        # the main dataset was created (or rebuilt) by this push
    guideline_version: str | None
    pool_sizes: Counter = field(default_factory=Counter)
    records: dict[str, int] = field(default_factory=dict)   # Argilla dataset -> records it holds
    created_datasets: list[str] = field(default_factory=list)
    rebuilt: dict[str, str] = field(default_factory=dict)   # Argilla dataset -> why it was rebuilt
    moved: dict[str, str] = field(default_factory=dict)     # item id -> the dataset it moved to
    statuses_here: Counter = field(default_factory=Counter)  # with nothing to push: the items' statuses
    held: dict[str, str] = field(default_factory=dict)      # item id -> why it was not pushed
    kept: dict[str, str] = field(default_factory=dict)      # item id -> a dataset it left that keeps its
                                                            # answered record
    scoped: bool = False                                    # records show who asks and when, and marks
    without_scope_field: list[str] = field(default_factory=list)  # datasets made before scope, with answers:
                                                            # marks on candidates, no `scope` field
    judge: SuggestionsReport | None = None                  # the judge's grades shown (--suggest-from)
    judge_dropped: int = 0                                  # earlier judge's suggestions removed from records


def _log(target, records: list) -> None:
    """Upsert records by id, without the SDK's own progress bar on stderr."""
    with contextlib.redirect_stderr(io.StringIO()):
        target.records.log(records, batch_size=len(records))


def push(workspace: Workspace, *, dataset: str, statuses: tuple[str, ...] = DEFAULT_STATUSES, pool_k: int = 8,
         min_submitted: int = 1, api_url: str | None = None, argilla_workspace: str = "curate",
         argilla_dataset: str | None = None, only: set[str] | None = None, suggest_from: Path | None = None,
         no_suggestions: bool = False) -> PushReport:
    """Send items to Argilla (datasets created on first push, one per pool size); records are keyed by
    item id, so pushing again updates them and keeps every response; a push that was interrupted
    is completed by the next one. `only`: push just these items (those of `statuses` among them).

    `suggest_from`: a run folder whose judge grades (retrieval_grades.jsonl) are shown as suggestions
    and whose judged chunks join the pools; later pushes keep using it until `no_suggestions`."""
    if suggest_from is not None and no_suggestions:
        raise InputError("give --suggest-from RUN or --no-suggestions, not both", field="suggest-from")
    if not 1 <= pool_k <= 50:
        raise InputError(f"must be 1 to 50 candidate slots, got {pool_k}", field="pool-k")
    if min_submitted < 1:
        raise InputError(f"must be at least 1, got {min_submitted}", field="min-annotators")
    with DatasetStore(workspace).writing(dataset):
        rg = argilla_sdk()
        store = DatasetStore(workspace)
        meta, items = store.load(dataset)
        chosen = [i for i in items if i.status in statuses and (only is None or i.id in only)]
        state = load_state(workspace, dataset)
        if not chosen:   # nothing is sent, and nothing recorded as pushed (but later pushes show no judge)
            if no_suggestions and state.judge_run is not None:
                state.judge_run = None
                state.write(state_path(workspace, dataset))
            return PushReport(dataset, state.argilla.dataset if state.argilla else dataset, 0, False,
                              workspace_guideline_version(workspace), statuses_here=Counter(i.status for i in items))
        path = state_path(workspace, dataset)
        if state.pool_k not in (None, pool_k):
            raise InputError(f"dataset '{dataset}' was pushed with --pool-k {state.pool_k}; Argilla's fields are "
                             f"fixed, so push with the same pool size", field="pool-k")
        index = KBIndex(workspace, meta.kb_snapshot)
        run = None if no_suggestions else _judge_run(workspace, path, suggest_from, state.judge_run)
        suggestions = None if run is None else read_suggestions(
            run, kb_snapshot=meta.kb_snapshot, dataset=dataset, items=items, pushing={i.id for i in chosen},
            known=index.position)
        pools = candidate_pools(index, chosen, pool_k, judged=suggestions.joining if suggestions else None)
        pools = {item_id: keep_slots(pool, state.items[item_id].slots) if item_id in state.items else pool
                 for item_id, pool in pools.items()}
        texts = {c.chunk_id: (str(c.metadata.get("title") or ""), c.text) for c in index.chunks}
        scope = _record_scope(workspace, index, items)
        if scope is not None:   # a moment the settings cannot place stops the push before anything is sent
            for item in chosen:
                scope.marks(item, [c.chunk_id for c in pools[item.id]])
        version = workspace_guideline_version(workspace)
        _guideline_files(workspace)   # no guideline: say so before anything is sent
        client = connect(api_url)
        url = client.api_url
        held = _hold_answered_slots(client, url, state, chosen, pools, index)
        chosen = [i for i in chosen if i.id not in held]
        judged: dict[str, dict[str, JudgeGrade]] = {}
        if suggestions is not None:
            suggestions.leave_out(held, "item not pushed (its answered candidates left the snapshot)")
            judged = {i.id: suggestions.for_candidates(i.id, pools[i.id], index.copies) for i in chosen}
        # judge's suggestions of an earlier push may sit on slots this push suggests nothing for
        had_judge = state.judge_run is not None or any(p.judge for p in state.items.values())
        main = argilla_dataset or (state.argilla.dataset if state.argilla else None) or dataset
        groups: dict[str, list] = {}
        for item in sorted(chosen, key=lambda i: -len(pools[i.id])):
            groups.setdefault(dataset_name(main, len(pools[item.id]), pool_k), []).append(item)
        report = PushReport(dataset, main, len(chosen), False, version, Counter(len(pools[i.id]) for i in chosen),
                            held=held, scoped=scope is not None,
                            judge=_judge_report(workspace, run, suggestions, chosen, pools, judged, index.copies))

        claimed = _claimed_elsewhere(workspace, dataset, argilla_workspace)
        if clash := sorted(set(claimed).intersection(groups)):
            raise InputError(f"Argilla dataset '{clash[0]}' in workspace '{argilla_workspace}' holds the records of "
                             f"curate dataset '{claimed[clash[0]]}'; push to another --argilla-workspace",
                             field="argilla-workspace")
        state.argilla = ArgillaTarget(api_url=url, dataset=main, workspace=argilla_workspace)
        state.pool_k, state.guideline_version, state.min_submitted = pool_k, version, min_submitted
        state.judge_run = None if run is None else _in_workspace(workspace, run)
        state.push_started = now()
        state.write(path)
        sending = False   # while a batch is on its way, this file may be older than Argilla
        try:
            with argilla_errors(url, f"finding workspace '{argilla_workspace}'"), warnings.catch_warnings():
                warnings.simplefilter("ignore")   # the SDK warns that a workspace we are about to create is missing
                space = client.workspaces(argilla_workspace) or rg.Workspace(name=argilla_workspace).create()
            targets = {}
            for name, members in groups.items():
                with argilla_errors(url, f"preparing Argilla dataset '{name}'"):
                    # both guidelines, the language of most of this dataset's records first
                    guidelines = guidelines_text(workspace, members)
                    target = ensure_dataset(client, rg, space, name,
                                            settings(len(pools[members[0].id]), guidelines, min_submitted,
                                                     scoped=scope is not None),
                                            optional=(SCOPE_FIELD,) if scope is not None else ())
                shown = scope if scope is None or not target.lacking else RecordScope(
                    scope.index, scope.chunks, has_field=False)
                if target.lacking:
                    report.without_scope_field.append(name)
                targets[name] = target.dataset
                if target.created:
                    report.created_datasets.append(name)
                    report.created = report.created or name == main
                if target.rebuilt:
                    report.rebuilt[name] = target.rebuilt
                    _forget_rebuilt(state, name, members)
                    state.write(path)
                pushed_at = now()
                for start in progress(range(0, len(members), BATCH), f"pushing to Argilla '{name}'", unit="batch",
                                      total=(len(members) + BATCH - 1) // BATCH):
                    batch = members[start:start + BATCH]
                    sending = True
                    with argilla_errors(url, f"sending records to Argilla dataset '{name}'"):
                        _log(target.dataset, [record(item, pools[item.id], texts, origin="curate", scope=shown,
                                                     judged=judged.get(item.id)) for item in batch])
                    _note_pushed(state, batch, pools, judged, None if name == main else name, pushed_at, report)
                    state.write(path)
                    sending = False
                if had_judge or judged:
                    with argilla_errors(url, f"removing the judge's earlier suggestions from '{name}'"):
                        report.judge_dropped += drop_stale_suggestions(
                            client, target.dataset.id, {m.id: _suggested(pools[m.id], judged.get(m.id, {}))
                                                        for m in members})
            _remove_strays(client, space, url, state, main, set(claimed), report)
            with argilla_errors(url, "counting records"):
                for name, target in targets.items():
                    report.records[name] = int(target.progress().get("total", 0))
        finally:
            if not sending:
                state.push_started = None
                state.write(path)
        return report


def _judge_run(workspace: Workspace, state_file: Path, suggest_from: Path | None, kept: str | None) -> Path | None:
    """Return the run folder whose judge grades this push shows: `suggest_from`, else the one an earlier
    push used (kept in the state; one line if it is gone), else None."""
    if suggest_from is not None:
        return Path(suggest_from).resolve()
    if kept is None:
        return None
    run = workspace.root / kept   # an absolute path stays as it is
    if not run.is_dir():
        raise InputError(f"earlier pushes showed the judge's grades of {run}, which is gone: push with "
                         f"--suggest-from RUN to show another run's, or --no-suggestions to drop them",
                         file=str(state_file), field="judge_run")
    return run


def _in_workspace(workspace: Workspace, run: Path) -> str:
    """Return a run folder as the state keeps it: relative to the workspace when inside it."""
    root = workspace.root.resolve()
    return run.relative_to(root).as_posix() if run.is_relative_to(root) else str(run)


def _judge_report(workspace: Workspace, run: Path | None, suggestions: RunSuggestions | None, chosen: list,
                  pools: dict, judged: dict, copies: dict[str, list[str]]) -> SuggestionsReport | None:
    """Return what the push shows of the judge's grades (None without --suggest-from)."""
    if run is None or suggestions is None:
        return None
    report = SuggestionsReport(_in_workspace(workspace, run), sorted(suggestions.models),
                               skipped=Counter(suggestions.skipped))
    for item in chosen:
        shown, pool = judged.get(item.id, {}), pools[item.id]
        report.items += bool(shown)
        report.suggested += len(judge_slots(pool, shown))
        report.under_people += sum(c.grade is not None for c in pool if c.chunk_id in shown)
        report.joined += sum(c.origin == "judged" for c in pool)
        # chunks graded but not shown (a copy shown in their place counts as shown)
        covered = {c for chunk_id in shown for c in (chunk_id, *copies.get(chunk_id, []))}
        report.not_shown += sum(1 for c in suggestions.grades.get(item.id, {}) if c not in covered)
    return report


def _suggested(pool: list[Candidate], shown: dict) -> set[str]:
    """Return the questions a record's push suggests a grade for: a person's label, or the judge's."""
    return {f"relevance_{n}" for n, c in enumerate(pool, start=1) if c.grade is not None or c.chunk_id in shown}


def _record_scope(workspace: Workspace, index: KBIndex, items) -> RecordScope | None:
    """Return what the records show of scope, or None when neither the KB nor any item has scope (the
    records are then as they always were)."""
    scope = scope_index(index.chunks, read_scope_settings(workspace), index.snapshot_id)
    asked = any(names_scope(i) for i in items)
    if not scope.scoped and not asked:
        return None
    return RecordScope(scope, {c.chunk_id: c.scope for c in index.chunks if c.scope is not None})


def _hold_answered_slots(client, url: str, state, chosen: list, pools: dict, index: KBIndex) -> dict[str, str]:
    """Keep the pushed candidates of every item, unchanged here since, whose Argilla record already holds
    an answer while its new pool holds other chunks: answers are by slot number, and a slot that showed another chunk
    would give its grade to the wrong one. Such an item is pushed with its old candidates (`pools`
    is changed in place); one whose old candidates the snapshot no longer has is not pushed. Return
    {item id: why} for the items not pushed."""
    # an item edited here since (another digest) is pushed to be annotated anew: its pool goes as it is
    moving = [i for i in chosen if i.id in state.items and state.argilla is not None
              and annotation_digest(i) == state.items[i.id].digest
              and {c.chunk_id for c in pools[i.id]} != set(state.items[i.id].slots)]
    if not moving:
        return {}
    answered: set[str] = set()
    with argilla_errors(url, "reading which records hold answers"), warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the SDK warns about a dataset a killed push never made
        for name in {state.dataset_of(i.id) for i in moving}:
            found = client.datasets(name=name, workspace=state.argilla.workspace)
            if found is not None:
                answered |= {item_id for item_id, r in remote_records(client, found.id).items() if r.responses}
    held = {}
    for item in moving:
        if item.id not in answered:
            continue
        slots = state.items[item.id].slots
        if all(chunk_id in index.position for chunk_id in slots):
            grades = {c.chunk_id: c.grade for c in pools[item.id]}
            pools[item.id] = [Candidate(chunk_id, "answered", grades.get(chunk_id)) for chunk_id in slots]
        else:
            held[item.id] = ("its record holds answers about candidates this KB snapshot no longer has: pull them "
                             "first (`curate annotate pull`), then push it again")
    return held


def _forget_rebuilt(state, name: str, members: list) -> None:
    """Drop from the state the items that lived in a dataset just rebuilt and are not pushed now
    (their records went with the old dataset; none held an answer)."""
    pushed_now = {m.id for m in members}
    for item_id in [i for i in state.items if state.dataset_of(i) == name and i not in pushed_now]:
        del state.items[item_id]


def _note_pushed(state, batch: list, pools: dict, judged: dict, argilla_dataset: str | None, pushed_at: str,
                 report: PushReport) -> None:
    """Record in the state the items of a batch that reached Argilla (dataset None: the main one), with the
    slots whose suggestion was the judge's."""
    for item in batch:
        before = state.items.get(item.id)
        if before is not None and before.argilla_dataset != argilla_dataset:
            report.moved[item.id] = argilla_dataset or state.argilla.dataset
        state.items[item.id] = PushedItem(slots=[c.chunk_id for c in pools[item.id]], digest=annotation_digest(item),
                                          pushed_at=pushed_at, applied=before.applied if before else None,
                                          argilla_dataset=argilla_dataset,
                                          judge=judge_slots(pools[item.id], judged.get(item.id, {})))


def _claimed_elsewhere(workspace: Workspace, dataset: str, argilla_workspace: str) -> dict[str, str]:
    """Return the Argilla datasets of `argilla_workspace` that other curate datasets push to, with
    the curate dataset each belongs to."""
    claimed = {}
    for other in DatasetStore(workspace).names():
        try:
            state = load_state(workspace, other) if other != dataset else None
        except CurateError:   # another dataset's damaged state is that dataset's problem, said when it is used
            continue
        if state is not None and state.argilla is not None and state.argilla.workspace == argilla_workspace:
            claimed.update({state.dataset_of(i): other for i in state.items} | {state.argilla.dataset: other})
    return claimed


def _remove_strays(client, space, url: str, state, main: str, claimed: set[str], report: PushReport) -> None:
    """Delete every record left in a dataset its item no longer lives in (it moved to another pool
    size, in this push or in one that was killed), unless it holds responses: then it stays, listed
    in `report.kept`, so that no answer is lost."""
    siblings = re.compile(re.escape(main) + r"(-k\d+)?")
    with argilla_errors(url, "looking for records of items that moved"):
        models = [m for m in client.api.datasets.list(workspace_id=space.id)
                  if siblings.fullmatch(m.name) and m.name not in claimed]
    for model in models:
        with argilla_errors(url, f"removing moved records from Argilla dataset '{model.name}'"):
            found = remote_records(client, model.id)
            strays = [i for i in found if i in state.items and state.dataset_of(i) != model.name]
            answered = [i for i in strays if found[i].responses]
            unanswered = [found[i].server_id for i in strays if not found[i].responses]
            if unanswered:
                delete_records(client, model.id, unanswered)
        report.kept.update({item_id: model.name for item_id in answered})
