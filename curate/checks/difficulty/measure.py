"""`curate grade`: the measured difficulty of every item, the mix against a target, type fit, balance.

Features measured per item (stored in `item.difficulty_features`; a feature that does not apply
is left out rather than stored as None):

- `bm25_rank`: 1-based rank of the first gold chunk when BM25 retrieves the question over the
  KB snapshot; absent when no gold chunk is among the top k with a score above zero (bm25s fills
  the list with zero-score chunks that share no word with the question: those are not retrieved).
- `dense_rank`: the same with the workspace's embedding model (cosine of L2-normalised vectors;
  ties broken by chunk order); absent beyond k, when the model cannot read the question, or when
  dense ranks were skipped (`curate.checks.difficulty.dense` says when: by default only a snapshot
  already embedded is used; the grade record's settings say `dense` used or skipped, and why).
- `lexical_overlap`: share (0-1) of the question's distinct terms found in its gold evidence texts.
  Chinese: character bigrams of the folded text (`curate.text.normalize.fold`). English: lower-cased
  content words (`STOP_WORDS` removed; exact word forms, no stemming). 0 without evidence.
- `evidence_groups`: the item's relevant evidence groups by `curate.records.evidence_groups`, with
  the snapshot's duplicate chunks as copies: the one rule the importer (single or multi_evidence),
  the exports and evalrun's scoring use: two quotes of one text (or of copies) are one group, two
  facts quoted from one chunk are two.
- `key_points`, `documents` (distinct documents of the relevant evidence), `answerable` (1/0).
- `unusable_evidence`: evidence the item's asker may not use at its moment (`curate.scope.usable_view`:
  forbidden to the asker, superseded, not yet valid, expired, a later version), left out of every other
  feature; absent when none. `declined`: 1 when that leaves an answerable item no usable evidence:
  graded as the system should decline it (hard, as unanswerable items are), never as a retrieval miss.
- `conditions`, `negations`: cue words in the question (`ZH_CONDITIONS`, `ZH_NEGATIONS`,
  `EN_CONDITIONS`, `EN_NEGATIONS` in `curate.checks.difficulty.features`, each pattern one count),
  leaving out a cue inside a span the question copies verbatim from its relevant evidence texts (a
  quoted passage): at least 4 folded characters around it for Chinese, 3 words for English
  (`COPIED_MIN`). Such cues are the evidence's wording, and a verbatim lookup stays easy.
- `cues_copied`: how many cues were left out so; absent when none.
- `confusable_above`: non-gold chunks BM25 ranks above the first gold chunk (all retrieved ones
  when no gold chunk is retrieved) that are near misses: at least `DifficultyRules.near_miss_share` of
  the chunk's distinct character 4-grams (folded text) occur in one gold chunk.

Gold chunks are the chunks of relevant evidence and their copies; finding any one counts. Where the KB
has scope, every feature is measured over the evidence the item's asker may use at its moment.

The rule (thresholds in `DifficultyRules`, in `curate.checks.difficulty.rule`):

- hard: unanswerable; or lexical overlap below `hard_overlap_below`; or conditions + negations
  >= `hard_constraints_min`; or a confusable chunk ranked above gold; or gold in neither the
  BM25 nor the dense top `hard_rank_beyond`.
- easy: one evidence group, gold ranked first by BM25 or dense, lexical overlap >=
  `easy_overlap_min`, no condition and no negation.
- medium: everything else (several evidence groups to combine, gold ranked 2-10, some overlap).
- none: an answerable item with no gold chunk in the snapshot cannot be measured; it is left
  ungraded (difficulty None) and listed with the reason, never called hard.

`balance=N` selects N measured items whose easy:medium:hard counts meet the target as closely as
the pool allows: each difficulty's candidates in sha256(item id) order, its quota taken first,
slots it cannot fill given to the others in proportion to their targets. The selection is tagged
`balanced-N` (the tag is taken off items no longer selected); nothing is deleted, no status changes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

from curate.checks.difficulty.features import (
    bm25_rank,
    confusable_above,
    cue_counts,
    grams,
    lexical_overlap,
)
from curate.checks.difficulty.dense import DenseRanks, dense_ranks
from curate.checks.difficulty.mix import Balance, Mix, mix_of, parse_target, select_balanced
from curate.checks.difficulty.rule import DifficultyRules, classify, type_misfit
from curate.dataset import DatasetStore, items_digest
from curate.dataset.asker import scope_index, view
from curate.dataset.staleness import stale_checks
from curate.engine import Engine, engine_settings
from curate.errors import InputError
from curate.index.kb_index import KBIndex
from curate.index.shard_index import engine_for
from curate.progress import progress
from curate.scope import ScopeIndex, read_scope_settings
from curate.records import (
    DIFFICULTIES,
    UNRELEASED_STATUSES,
    BalanceRecord,
    DatasetMeta,
    DifficultyCheck,
    EvalItem,
    item_groups,
    now,
)
from curate.text.normalize import fold
from curate.workspace import Workspace

if TYPE_CHECKING:
    from curate.checks.difficulty.over_shards import ShardedKB


# -- measuring a dataset ------------------------------------------------------------------------

@dataclass
class ItemDifficulty:
    """One item's measured features and the difficulty the rule gives them."""

    id: str
    qtype: str | None
    language: str
    difficulty: str | None       # None: answerable with no gold chunk, not measurable
    why: str
    features: dict[str, float]


@dataclass
class DifficultyReport:
    """What measuring a dataset found, how the difficulty levels mix, and what does not fit."""

    dataset: str
    kb_snapshot: str
    target: dict[str, float]
    items: list[ItemDifficulty] = field(default_factory=list)
    overall: Mix | None = None
    by_qtype: dict[str, Mix] = field(default_factory=dict)
    misfits: dict[str, str] = field(default_factory=dict)     # item id -> why its qtype does not fit
    unmeasured: dict[str, str] = field(default_factory=dict)  # item id -> why it has no difficulty
    declined: dict[str, list[str]] = field(default_factory=dict)  # item id -> why its asker has no usable evidence
    balance: Balance | None = None
    record: DifficultyCheck | None = None                    # what went into meta.checks.difficulty
    notes: list[str] = field(default_factory=list)           # stages skipped or degraded, one line each

    def to_dict(self) -> dict:
        """Return the report as plain data (for --json)."""
        data = asdict(self)
        data["record"] = None if self.record is None else self.record.model_dump(mode="json")
        return data


def item_features(item: EvalItem, index: KBIndex | ShardedKB) -> tuple[dict[str, float], set[int]]:
    """Return an item's features that need no retrieval, and the positions of its gold chunks."""
    groups = item_groups(item, index.copies)
    gold = {index.position[c] for g in groups for c in g.chunk_ids if c in index.position}
    evidence = [e for e in item.evidence if e.grade >= 1]
    documents = {e.doc_id for e in evidence if e.doc_id} | {
        index.chunks[index.position[c]].doc_id for e in evidence if not e.doc_id
        for c in e.chunk_ids if c in index.position}
    texts = [e.text for e in evidence]
    conditions, negations = cue_counts(item.question, item.language, texts)
    copied = sum(cue_counts(item.question, item.language)) - conditions - negations
    overlap = lexical_overlap(item.question, texts, item.language)
    features = {"answerable": float(item.answerable), "evidence_groups": float(len(groups)),
                "key_points": float(len(item.key_points)), "documents": float(len(documents)),
                "lexical_overlap": round(overlap, 4), "conditions": float(conditions),
                "negations": float(negations)}
    if copied:
        features["cues_copied"] = float(copied)
    return features, gold


def scoped_features(item: EvalItem, index: KBIndex | ShardedKB,
                    scope: ScopeIndex) -> tuple[EvalItem, dict[str, float], set[int]]:
    """Return the item as its asker may use it at its moment, its `item_features` over that (with
    `unusable_evidence` and `declined` when scope left evidence out), and its gold chunks' positions."""
    seen = view(item, scope)
    features, gold = item_features(seen.item, index)
    if seen.unusable:
        features["unusable_evidence"] = float(len(seen.unusable))
    if seen.declined_because:
        features["declined"] = 1.0
    return seen.item, features, gold


def _measure(items: Sequence[EvalItem], index: KBIndex, workspace: Workspace, *, dense: bool | None, k: int,
             rules: DifficultyRules, notify: Callable[[str], None] | None, scope: ScopeIndex,
             engine: Engine | None = None, kb: KBIndex | ShardedKB | None = None,
             ) -> tuple[list[tuple[dict[str, float], str | None]], DenseRanks]:
    """Return (features, why it could not be measured, or None) of every item, measured over the
    evidence its asker may use at its moment, and the dense ranks. `kb` is what the items' chunks, BM25 and
    texts are read from: the index itself, or for a snapshot in shards its `ShardedKB`."""
    kb = kb or index
    measured = []
    gold_of: dict[int, set[int]] = {}
    for n, original in enumerate(items):
        item, features, gold = scoped_features(original, kb, scope)
        unmeasured = None
        if gold:
            gold_of[n] = gold
        elif item.answerable:
            unmeasured = ("no relevant evidence" if not features["evidence_groups"] else
                          f"no evidence chunk in KB snapshot {index.snapshot_id} (run curate remap)")
        measured.append((features, unmeasured))
    rows = sorted(gold_of)
    questions = [items[n].question for n in rows]
    if not rows:
        return measured, DenseRanks(None, [], [], "no item has a gold chunk to rank")
    positions, scores = kb.bm25.search(questions, k)
    # the texts confusable_above reads: the gold chunks and those retrieved above the first of them
    wanted = set().union(*gold_of.values())
    for row, n in enumerate(rows):
        for position, score in zip(positions[row].tolist(), scores[row].tolist()):
            if score <= 0 or position in gold_of[n]:
                break
            wanted.add(position)
    texts = kb.texts(sorted(wanted))
    gram_cache: dict[int, set[str]] = {}

    def gram_sets(position: int) -> set[str]:
        if position not in gram_cache:
            gram_cache[position] = grams(fold(texts[position]))
        return gram_cache[position]

    for row, n in enumerate(progress(rows, "ranking items")):
        features = measured[n][0]
        rank = bm25_rank(positions[row], scores[row], gold_of[n])
        if rank is not None:
            features["bm25_rank"] = float(rank)
        features["confusable_above"] = float(confusable_above(positions[row], scores[row], gold_of[n],
                                                              gram_sets, rules.near_miss_share))
    ranks = dense_ranks(index, workspace, questions, [gold_of[n] for n in rows], dense=dense, k=k, notify=notify,
                        engine=engine, texts=texts)
    for n, rank in zip(rows, ranks.ranks):
        if rank is not None:
            measured[n][0]["dense_rank"] = float(rank)
    return measured, ranks


def grade(workspace: Workspace, *, dataset: str, target: str = "2:5:3", balance: int | None = None,
          dense: bool | None = None, k: int = 100, rules: DifficultyRules | None = None,
          notify: Callable[[str], None] | None = None, engine: str | None = None) -> DifficultyReport:
    """Return the measured difficulty of a draft dataset's items (rejected and quarantined ones left
    out); store each item's features and difficulty, tag a balanced subset when asked, and record
    the summary in the dataset's checks (`difficulty`).

    `dense`: None uses dense ranks when the snapshot's chunks are already embedded, True embeds them
    first, False skips them (`curate.checks.difficulty.dense`). `notify` hears, as they happen, the
    lines that say a stage was skipped or will take long; they are kept in `report.notes` too. The chunks of
    a snapshot in shards are embedded on the engine `engine` names (local, ray, a Ray address), else
    curate.toml's [engine], else the local engine."""
    notes: list[str] = []

    def say(line: str) -> None:
        notes.append(line)
        if notify:
            notify(line)

    chosen = engine_settings(workspace, engine)
    with DatasetStore(workspace).writing(dataset):
        rules = rules or DifficultyRules()
        shares = parse_target(target)
        if k < 1:
            raise InputError(f"k must be at least 1, got {k}", field="k")
        if balance is not None and balance < 1:
            raise InputError(f"balance must be at least 1 item, got {balance}", field="balance")
        store = DatasetStore(workspace)
        meta, items = store.load(dataset)
        if not meta.kb_snapshot:
            raise InputError(f"dataset '{dataset}' has no KB snapshot to grade against", field="dataset")
        live = [i for i in items if i.status not in UNRELEASED_STATUSES]
        index = KBIndex(workspace, meta.kb_snapshot)
        report = DifficultyReport(dataset=dataset, kb_snapshot=index.snapshot_id,
                                  target={d: float(s) for d, s in shares.items()}, notes=notes)
        with engine_for(index, chosen) as running:
            # a snapshot in shards: the items' chunks, BM25 and texts read over the shards on the engine
            if running is None:
                kb = index
            else:   # many shards: what shards need is loaded only then
                from curate.checks.difficulty.over_shards import ShardedKB
                kb = ShardedKB(index, running, live, read_scope_settings(workspace))
            scope = (scope_index(index.chunks, read_scope_settings(workspace), index.snapshot_id)
                     if running is None else kb.scope)
            measured, ranks = _measure(live, index, workspace, dense=dense, k=k, rules=rules, notify=say, scope=scope,
                                       engine=running, kb=kb)
        if ranks.note:
            say(ranks.note)
        for item, (features, unmeasured) in zip(live, measured):
            difficulty, why = (None, unmeasured) if unmeasured else classify(features, rules)
            report.items.append(ItemDifficulty(item.id, item.qtype, item.language, difficulty, why, features))
            if unmeasured:
                report.unmeasured[item.id] = unmeasured
            if features.get("declined"):
                report.declined[item.id] = view(item, scope).declined_because
            # the qtype says what the question needs from the KB, whoever asks: its fit is judged on all evidence
            groups = features["evidence_groups"] if "unusable_evidence" not in features else len(
                item_groups(item, kb.copies))
            misfit = type_misfit(item.qtype, item.answerable, int(groups))
            if misfit:
                report.misfits[item.id] = misfit
            if item.difficulty != difficulty or item.difficulty_features != features:
                item.difficulty, item.difficulty_features = difficulty, features
                item.updated_at = now()
        assessed = [g for g in report.items if g.difficulty]
        report.overall = mix_of([g.difficulty for g in assessed], shares)
        for qtype in sorted({g.qtype or "none" for g in assessed}):
            report.by_qtype[qtype] = mix_of([g.difficulty for g in assessed if (g.qtype or "none") == qtype], shares)
        if balance is not None:
            report.balance = _balance(items, [(g.id, g.difficulty) for g in assessed], balance, shares)
        outcome = "findings" if report.misfits else "incomplete" if report.unmeasured else "clean"
        report.record = DifficultyCheck(
            kb_snapshot=index.snapshot_id, items_sha256=items_digest(live, ignore=DifficultyCheck.IGNORES),
            outcome=outcome,
            assessed=len(assessed), unmeasured=len(report.unmeasured), counts=report.overall.counts,
            by_qtype={q: m.counts for q, m in report.by_qtype.items()}, target=target,
            target_counts=report.overall.target, misfits=len(report.misfits),
            settings={**ranks.settings(), "k": k, **asdict(rules)},
            balance=None if report.balance is None else BalanceRecord(
                size=report.balance.size, tag=report.balance.tag, selected=len(report.balance.selected),
                counts=report.balance.counts, missing=report.balance.missing))
        meta.checks.difficulty = report.record
        store.save(meta, items)
        return report


def stale_grade(meta: DatasetMeta, items: Sequence[EvalItem]) -> str | None:
    """Return the one-line warning that a dataset's grade record no longer matches its items, or None
    while it matches (or there is none): a grade mix must never be read without it."""
    stale = [s for s in stale_checks(meta, items) if s.check == "difficulty"]
    return f"warning: {stale[0].line()} (a release records it as not current)" if stale else None


def _balance(items: Sequence[EvalItem], pool: Sequence[tuple[str, str]], size: int,
             shares: Mapping[str, Fraction]) -> Balance:
    """Return the balanced selection, tagging it on the items (and untagging the rest)."""
    chosen, target, missing = select_balanced(pool, size, shares)
    tag = f"balanced-{size}"
    difficulty_of = dict(pool)
    for item in items:
        has = tag in item.tags
        if (item.id in chosen) != has:
            item.tags = item.tags + [tag] if not has else [t for t in item.tags if t != tag]
            item.updated_at = now()
    selected = [i.id for i in items if i.id in chosen]
    counted = Counter(difficulty_of[i] for i in selected)
    return Balance(size, tag, selected, {d: counted[d] for d in DIFFICULTIES}, target, missing)
