"""`curate generate`: questions made from a KB snapshot, filtered in one pass, the kept ones added to a
dataset as synthetic drafts (the pure parts: `core`, `filters`, `items`).

A run is fixed by the snapshot, the settings and the model (`run_id`), so the same command run again is
the same run: killed before its items were saved, it makes them again (mining is deterministic, the
model's answers come from the cache); run after, it finds its items in the dataset and adds nothing
twice. The model is asked without the dataset's lock; duplicates are decided, and items added, under
it, against the items as they are then. Everything it considered is written to
datasets/NAME/generated/RUN/: candidates.jsonl (every candidate, every filter's verdict), pairs.jsonl,
probes.jsonl and run.json.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from curate.annotate.push import push as push_items
from curate.dataset import DatasetStore
from curate.dataset.locate import Locator
from curate.engine import engine_settings
from curate.errors import InputError
from curate.fileio import atomic_write_bytes, jsonl_bytes
from curate.generate import written
from curate.generate.asking import NO_ENDPOINT, check_closed_book, make_judge, plan, write_questions
from curate.generate.mine import mine
from curate.generate.core import MINED_TYPES, MODEL_TYPES, TYPES, mined_candidates, quotas, sample, spread
from curate.generate.endpoint import generator_config
from curate.generate.estimate import Step, cost
from curate.generate.filters import apply_filters, closed_book_verdicts, decide, dropped_by, duplicates
from curate.generate.items import item_id, to_items
from curate.index.kb_index import KBIndex
from curate.index.shard_index import engine_for, shard_views
from curate.kb import SnapshotStore
from curate.scope import read_scope_settings
from curate.records import EvalItem
from curate.records.generated import CANDIDATES, Candidate, FilterVerdict, GenerateRun
from curate.workspace import Workspace



@dataclass
class GenerateReport:
    """What a run did: its record, every candidate, and the items it added."""

    record: GenerateRun
    candidates: list[Candidate]
    folder: Path
    items: list[EvalItem] = field(default_factory=list)
    pushed: object | None = None   # the Argilla push report, with --push
    plan: list[Step] | None = None   # with --dry-run: what the run would ask, step by step (nothing written)
    plan_cost: float | None = None   # and what that costs at most (None: no price known)
    shards: int = 1                  # the shards of the snapshot mining ran over
    engine: str | None = None        # where, when over more than one


def parse_types(text: str) -> list[str]:
    """Return the question types of a comma-separated list, in the order given, checked.

    >>> parse_types("confusable, unanswerable")
    ['confusable', 'unanswerable']
    """
    types = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [t for t in types if t not in TYPES]
    if unknown or not types:
        raise InputError(f"unknown type {', '.join(unknown) or '(none)'} (types: {', '.join(TYPES)})", field="types")
    return list(dict.fromkeys(types))


def run_id(snapshot_id: str, types: Sequence[str], n: int, seed: int, model: str | None = None) -> str:
    """Return the id of a run: 'g-' and 10 hex digits of the snapshot, the settings and the model."""
    key = f"{snapshot_id}|{','.join(types)}|{n}|{seed}" + (f"|{model}" if model else "")
    return "g-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:10]


def generate(workspace: Workspace, *, dataset: str, kb: str | None = None, n: int = 20,
             types: Sequence[str] = MINED_TYPES, seed: int = 0, keep_closed_book: bool = False,
             dry_run: bool = False, budget: float | None = None, budget_tokens: int | None = None,
             push: bool = False, pool_k: int = 8, api_url: str | None = None,
             argilla_workspace: str = "curate", engine: str | None = None) -> GenerateReport:
    """Make up to `n` questions of `types` from a KB snapshot and add the kept ones to `dataset` (see the
    module docstring). With a model ([generator] or [judge]), it writes single, multi_evidence and
    conditional questions and asks every question closed-book; `dry_run` says what that would ask and
    cost and writes nothing; `budget` (USD) and `budget_tokens` stop calls before they are exceeded.
    With `push`, the run's items go to Argilla, where a person confirms the evidence and near misses and
    accepts, edits or discards each question (a discarded one is rejected at the next pull). A snapshot in
    many shards is mined over its shards on the engine `engine` names (local, ray, a Ray address), else
    curate.toml's [engine], else the local engine; the rest of the run reads the whole snapshot."""
    if n < 1:
        raise InputError(f"must be at least 1, got {n}", field="n")
    types = parse_types(",".join(types))
    chosen = engine_settings(workspace, engine)
    store = DatasetStore(workspace)
    meta, items = store.load_or_new(dataset)     # read as it is now; checked again under the lock below
    snapshots = SnapshotStore(workspace)
    snapshot_id = _snapshot(snapshots, dataset, kb, meta.kb_snapshot)
    config = generator_config(workspace)
    judge = make_judge(config, workspace.root / "cache" / "judge", budget, budget_tokens) if config else None
    run = run_id(snapshot_id, types, n, seed, config.model if config else None)
    folder = store.folder(dataset) / "generated" / run
    index = KBIndex.open(workspace, snapshot_id)
    with engine_for(index, chosen) as running:
        if running is None:   # one shard: in this process, without loading what shards need
            mined = mine(index.chunks)
        else:
            from curate.generate.mine_shards import mine_index
            mined = mine_index(index, running)
    shards = shard_views(index)
    made = mined_candidates(index.chunks, [t for t in types if t in MINED_TYPES], run, mined)
    asked_types = [t for t in types if t in MODEL_TYPES]
    seeds, skipped = (written.seeds(index.chunks, asked_types, quotas(n, types), seed, index.copies)
                      if judge is not None and asked_types else ([], Counter()))
    record = _record(run, dataset, snapshot_id, types, n, seed, made, judge, budget, budget_tokens)
    record.seeds, record.seeds_skipped = len(seeds), dict(skipped)
    if dry_run:
        steps = plan(judge, seeds, made.candidates) if judge is not None else []
        price = judge.config.prices.get(judge.config.model) if judge is not None else None
        return GenerateReport(record=record, candidates=made.candidates, folder=folder, plan=steps,
                              plan_cost=cost(steps, price) if steps else None, shards=shards,
                              engine=chosen.describe() if shards > 1 else None)
    # The model is asked without the dataset's lock (minutes of calls: other commands go on); what the
    # dataset holds is read again under the lock, where duplicates are decided and items added.
    written_ones, record.not_written = write_questions(judge, seeds, run) if judge is not None else ([], {})
    candidates = _filtered(made.candidates + written_ones, items, run, index, judge, keep_closed_book)
    _spent(record, judge)
    with store.writing(dataset):
        meta, items = store.load_or_new(dataset)
        _snapshot(snapshots, dataset, kb, meta.kb_snapshot, snapshot_id)
        new = _make(workspace, store, meta, items, record, made, candidates, index, snapshots, folder,
                    keep_closed_book)
    report = GenerateReport(record=record, candidates=candidates, folder=folder, items=new, shards=shards,
                            engine=chosen.describe() if shards > 1 else None)
    if push and (record.added or record.already):   # pushing again updates the records, keeps the answers
        report.pushed = push_items(workspace, dataset=dataset, statuses=("draft",),
                                   only=set(record.added) | set(record.already),
                                   pool_k=pool_k, api_url=api_url, argilla_workspace=argilla_workspace)
    return report


def _snapshot(snapshots: SnapshotStore, dataset: str, kb: str | None, dataset_snapshot: str | None,
              expected: str | None = None) -> str:
    """Return the snapshot the run is made from (--kb, else the dataset's); refuse one the dataset does not
    refer to, or, under the lock, one that moved since the run began."""
    snapshot_id = snapshots.resolve(kb or dataset_snapshot)
    if dataset_snapshot and dataset_snapshot != snapshot_id:
        raise InputError(f"dataset '{dataset}' refers to KB snapshot {dataset_snapshot}, not {snapshot_id}; "
                         f"run `curate remap --dataset {dataset} --kb {snapshot_id}` first", field="kb")
    if expected is not None and snapshot_id != expected:
        raise InputError(f"KB '{kb}' moved to snapshot {snapshot_id} while this run made questions from {expected}: "
                         f"run the command again", field="kb")
    return snapshot_id


def _filtered(candidates: list[Candidate], items: list[EvalItem], run: str, index: KBIndex, judge,
              keep_closed_book: bool) -> list[Candidate]:
    """Return the candidates with every filter's verdict (duplicates against `items` as read before the
    lock: decided again under it) and, with a model, the closed-book check."""
    ours = {item.id for item in items if item.generation is not None and item.generation.run == run}
    candidates = apply_filters(candidates, existing=[i for i in items if i.id not in ours],
                               bm25=index.bm25, chunk_ids=[c.chunk_id for c in index.chunks])
    if judge is not None:
        return check_closed_book(judge, candidates, keep_closed_book)
    return closed_book_verdicts(candidates, {}, keep=keep_closed_book,
                                why={c.candidate_id: f"not checked: {NO_ENDPOINT}" for c in candidates})


def _record(run: str, dataset: str, snapshot_id: str, types: list[str], n: int, seed: int, made, judge,
            budget: float | None, budget_tokens: int | None) -> GenerateRun:
    """Return the run's record as it starts: what mining found, what cannot be made and why."""
    model_types = [t for t in types if t in MODEL_TYPES]
    return GenerateRun(
        run=run, dataset=dataset, kb_snapshot=snapshot_id, types=types, n=n, seed=seed, state="running",
        closed_book=(f"asked {judge.config.model} without context" if judge is not None
                     else f"not checked: {NO_ENDPOINT}"),
        model=judge.config.model if judge is not None else None,
        mined=dict(Counter(p.kind for p in made.mined.pairs) + Counter(f"probe:{p.kind}" for p in made.probes)),
        left_out=dict(made.mined.left_out), not_asked=dict(made.not_asked),
        not_made={t: NO_ENDPOINT for t in model_types} if judge is None else {},
        budget=judge.budget.describe() if judge is not None and judge.budget is not None else None)


def _make(workspace, store, meta, items, record: GenerateRun, made, candidates: list[Candidate], index, snapshots,
          folder: Path, keep_closed_book: bool) -> list[EvalItem]:
    """Under the dataset's lock: decide duplicates against the items as they are now, sample, add the kept
    ones; return the items added."""
    run, snapshot_id = record.run, record.kb_snapshot
    ours = {item.id for item in items if item.generation is not None and item.generation.run == run}
    for candidate, verdict in zip(candidates, duplicates(candidates, [i for i in items if i.id not in ours])):
        candidate.filters["duplicate"] = verdict
    kept = _choose(candidates, quotas(record.n, record.types), record.seed, keep_closed_book)
    locator = Locator(index.chunks, snapshots.documents(snapshot_id))
    new, failed = to_items([c for c in kept if item_id(c, snapshot_id) not in ours], locator=locator,
                           snapshot_id=snapshot_id, file=str(folder / CANDIDATES), copies=index.copies,
                           settings=read_scope_settings(workspace))
    chosen = {c.candidate_id for c in kept}
    for candidate in candidates:
        if candidate.candidate_id in failed:
            candidate.filters["located"] = FilterVerdict(passed=False, reason=failed[candidate.candidate_id])
        candidate.kept = candidate.candidate_id in chosen and candidate.candidate_id not in failed
        candidate.item_id = item_id(candidate, snapshot_id) if candidate.kept else None
    kept = [c for c in candidates if c.kept]
    _tally(record, candidates, kept, new, ours, index)
    _write(folder, record, candidates, made)
    if new:
        meta.kb_snapshot = snapshot_id
        store.save(meta, [*items, *new])
    record.state = "complete"
    record.write(folder / "run.json")
    return new


def _spent(record: GenerateRun, judge) -> None:
    """Put what the model was asked and cost into the run's record."""
    if judge is not None:
        stats = judge.stats
        record.calls = {"requests": stats.requests, "from the cache": stats.cache_hits}
        record.tokens = {"prompt": stats.prompt_tokens, "completion": stats.completion_tokens}
        record.cost = stats.cost


def _tally(record: GenerateRun, candidates, kept, new, ours, index) -> None:
    """Put what the run made, kept and added into its record."""
    record.candidates, record.kept = len(candidates), len(kept)
    record.by_type = _by_type(candidates)
    for candidate_id in record.not_written:   # a seed the model gave no usable question for
        row = record.by_type.setdefault(candidate_id.split("-")[0], {})
        row["not written"] = row.get("not written", 0) + 1
    record.added = [item.id for item in new]
    record.already = sorted(c.item_id for c in kept if c.item_id in ours)
    record.spread = spread(kept, len({c.doc_id for c in index.chunks}))


def _choose(candidates: list[Candidate], quota: dict[str, int], seed: int, keep_closed_book: bool) -> list[Candidate]:
    """Return the sample of the candidates every filter passed; mark the others that passed as over --n."""
    passing = [c for c in candidates if decide(c, keep_closed_book)]
    chosen = sample(passing, quota, seed)
    taken = {c.candidate_id for c in chosen}
    for candidate in passing:
        if candidate.candidate_id not in taken:
            candidate.filters["sample"] = FilterVerdict(
                passed=False, reason=f"passed every filter; the sample of {quota.get(candidate.qtype, 0)} "
                f"{candidate.qtype} questions (--n) was full")
    return [c for c in candidates if c.candidate_id in taken]


def _by_type(candidates: Sequence[Candidate]) -> dict[str, dict[str, int]]:
    """Return per type: candidates, kept, and dropped per failing filter (a candidate counted under the
    first filter it failed)."""
    table: dict[str, Counter] = {}
    for candidate in candidates:
        row = table.setdefault(candidate.qtype, Counter())
        row["candidates"] += 1
        if candidate.kept:
            row["kept"] += 1
        else:
            failed = dropped_by(candidate)
            row[f"dropped: {failed[0] if failed else 'unknown'}"] += 1
    return {kind: dict(row) for kind, row in sorted(table.items())}


def _write(folder: Path, record: GenerateRun, candidates: Sequence[Candidate], made) -> None:
    """Write the run's files, each atomically, run.json last (still `running`)."""
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(folder / CANDIDATES, jsonl_bytes(c.model_dump(mode="json") for c in candidates))
    atomic_write_bytes(folder / "pairs.jsonl", jsonl_bytes(p.model_dump(mode="json") for p in made.mined.pairs))
    atomic_write_bytes(folder / "probes.jsonl", jsonl_bytes(p.model_dump(mode="json") for p in made.probes))
    record.write(folder / "run.json")
