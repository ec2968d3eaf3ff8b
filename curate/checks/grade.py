"""`curate grade`: measured difficulty of every item, the mix against a target, type fit, balance.

Features measured per item (stored in `item.difficulty_features`; a feature that does not apply
is left out rather than stored as None):

- `bm25_rank`: 1-based rank of the first gold chunk when BM25 retrieves the question over the
  KB snapshot; absent when no gold chunk is among the top k with a score above zero (bm25s fills
  the list with zero-score chunks that share no word with the question: those are not retrieved).
- `dense_rank`: the same with the workspace's embedding model (cosine of L2-normalised vectors;
  ties broken by chunk order); absent beyond k, or when grading without embeddings.
- `lexical_overlap`: share (0-1) of the question's distinct terms found in its gold evidence texts.
  Chinese: character bigrams of the folded text (`curate.textnorm.fold`). English: lower-cased
  content words (`STOP_WORDS` removed; exact word forms, no stemming). 0 without evidence.
- `evidence_groups`: relevant evidence (grade >= 1), where evidence sharing a chunk, or a copy
  of one (the snapshot's duplicate groups), counts once: the rule the importer uses to tell
  `single` from `multi_evidence`, so two quotes from one chunk stay one group.
- `key_points`, `documents` (distinct documents of the relevant evidence), `answerable` (1/0).
- `conditions`, `negations`: cue words in the question (`ZH_CONDITIONS`, `ZH_NEGATIONS`,
  `EN_CONDITIONS`, `EN_NEGATIONS` below, each pattern one count).
- `confusable_above`: non-gold chunks BM25 ranks above the first gold chunk (all retrieved ones
  when no gold chunk is retrieved) that are near misses: at least `GradeRules.near_miss_share` of
  the chunk's distinct character 4-grams (folded text) occur in one gold chunk.

Gold chunks are the chunks of relevant evidence and their copies; finding any one counts.

The rule (thresholds in `GradeRules`):

- hard: unanswerable; or lexical overlap below `hard_overlap_below`; or conditions + negations
  >= `hard_constraints_min`; or a confusable chunk ranked above gold; or gold in neither the
  BM25 nor the dense top `hard_rank_beyond`.
- easy: one evidence group, gold ranked first by BM25 or dense, lexical overlap >=
  `easy_overlap_min`, no condition and no negation.
- medium: everything else (several evidence groups to combine, gold ranked 2-10, some overlap).
- none: an answerable item with no gold chunk in the snapshot cannot be measured; it is left
  ungraded (difficulty None) and listed with the reason, never called hard.

`balance=N` selects N graded items whose easy:medium:hard counts meet the target as closely as
the pool allows: each difficulty's candidates in sha256(item id) order, its quota taken first,
slots it cannot fill given to the others in proportion to their targets. The selection is tagged
`balanced-N` (the tag is taken off items no longer selected); nothing is deleted, no status changes.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction

from ..dataset import DatasetStore, items_digest
from ..embedding import workspace_embeddings
from ..errors import InputError
from ..index.kb_index import KBIndex
from ..progress import progress
from ..schema import UNRELEASED_STATUSES, EvalItem, now
from ..workspace import Workspace
from .difficulty import (
    DIFFICULTIES,
    GradeRules,
    bm25_rank,
    classify,
    confusable_above,
    cue_counts,
    dense_rank,
    evidence_groups,
    grams,
    lexical_overlap,
    relevant,
    type_misfit,
)

DENSE_BLOCK = 256  # questions scored against every chunk at once: bounds memory on a large KB


def parse_target(text: str) -> dict[str, Fraction]:
    """Return the easy, medium and hard shares of a mix written 'EASY:MEDIUM:HARD'.

    >>> {k: float(v) for k, v in parse_target("2:5:3").items()}
    {'easy': 0.2, 'medium': 0.5, 'hard': 0.3}
    """
    parts = text.split(":")
    try:
        weights = [Fraction(p.strip()) for p in parts]
    except (ValueError, ZeroDivisionError):
        weights = []
    if len(parts) != 3 or len(weights) != 3 or any(w < 0 for w in weights) or sum(weights) == 0:
        raise InputError(f"target {text!r} must be three non-negative numbers EASY:MEDIUM:HARD, e.g. 2:5:3",
                         field="target")
    return {d: w / sum(weights) for d, w in zip(DIFFICULTIES, weights)}


def apportion(n: int, shares: Mapping[str, Fraction]) -> dict[str, int]:
    """Return whole counts summing to n in proportion to `shares` (largest remainder, ties in order).

    >>> apportion(4, parse_target("2:5:3"))
    {'easy': 1, 'medium': 2, 'hard': 1}
    """
    total = sum(shares.values())
    exact = {d: n * Fraction(s) / total for d, s in shares.items()}
    counts = {d: int(v) for d, v in exact.items()}
    by_remainder = sorted(shares, key=lambda d: -(exact[d] - counts[d]))
    for d in by_remainder[:n - sum(counts.values())]:
        counts[d] += 1
    return counts


@dataclass
class Mix:
    """Graded items of one group per difficulty, beside the counts the target asks of that many."""

    items: int
    counts: dict[str, int]
    target: dict[str, int]


def mix_of(difficulties: Sequence[str], shares: Mapping[str, Fraction]) -> Mix:
    """Return the mix of some graded items against the target shares."""
    counted = Counter(difficulties)
    return Mix(len(difficulties), {d: counted[d] for d in DIFFICULTIES}, apportion(len(difficulties), shares))


@dataclass
class Balance:
    """A subset of graded items chosen to meet the target mix."""

    size: int                    # items asked for
    tag: str                     # tag the selected items carry
    selected: list[str]          # item ids, in dataset order
    counts: dict[str, int]       # selected items per difficulty
    target: dict[str, int]       # what the target mix asks of `size` items
    missing: list[str]           # what the pool lacks, e.g. "short of 12 hard items"


def _order(item_id: str) -> str:
    return hashlib.sha256(item_id.encode("utf-8")).hexdigest()


def select_balanced(pool: Sequence[tuple[str, str]], size: int,
                    shares: Mapping[str, Fraction]) -> tuple[set[str], dict[str, int], list[str]]:
    """Return (selected ids, target counts, what is missing) for `size` of the (id, difficulty)
    pool: each difficulty's candidates in sha256(id) order, its target count first; slots a
    difficulty cannot fill go to the others in proportion to their shares (equally if all zero).

    >>> pool = [("a", "easy"), ("b", "easy"), ("c", "medium"), ("d", "medium"), ("e", "hard")]
    >>> chosen, target, missing = select_balanced(pool, 4, parse_target("0:1:1"))
    >>> sorted(chosen), target, missing  # the free slot goes to an easy item: b precedes a by sha256
    (['b', 'c', 'd', 'e'], {'easy': 0, 'medium': 2, 'hard': 2}, ['short of 1 hard item'])
    """
    left = {d: sorted((i for i, g in pool if g == d), key=_order) for d in DIFFICULTIES}
    target = apportion(size, shares)
    chosen: list[str] = []
    missing = []
    for d in DIFFICULTIES:
        taken = left[d][:target[d]]
        chosen += taken
        left[d] = left[d][target[d]:]
        short = target[d] - len(taken)
        if short:
            missing.append(f"short of {short} {d} item{'s' if short > 1 else ''}")
    while len(chosen) < size and any(left.values()):
        open_ = {d: shares[d] for d in DIFFICULTIES if left[d]}
        weights = open_ if sum(open_.values()) else {d: Fraction(1) for d in open_}
        for d, extra in apportion(size - len(chosen), weights).items():
            chosen += left[d][:extra]
            left[d] = left[d][extra:]
    if len(chosen) < size:
        missing.append(f"the pool holds {len(pool)} graded items, {size} asked")
    return set(chosen), target, missing


# -- grading a dataset --------------------------------------------------------------------------

@dataclass
class ItemGrade:
    """One item's measured features and the difficulty the rule gives them."""

    id: str
    qtype: str | None
    language: str
    difficulty: str | None       # None: answerable with no gold chunk, not measurable
    why: str
    features: dict[str, float]


@dataclass
class GradeReport:
    """What grading a dataset measured, how the grades mix, and what does not fit."""

    dataset: str
    kb_snapshot: str
    target: dict[str, float]
    items: list[ItemGrade] = field(default_factory=list)
    overall: Mix | None = None
    by_qtype: dict[str, Mix] = field(default_factory=dict)
    misfits: dict[str, str] = field(default_factory=dict)     # item id -> why its qtype does not fit
    ungraded: dict[str, str] = field(default_factory=dict)    # item id -> why it has no grade
    balance: Balance | None = None
    record: dict = field(default_factory=dict)                # what went into meta.checks["difficulty"]

    def to_dict(self) -> dict:
        """Return the report as plain data (for --json)."""
        return asdict(self)


def item_features(item: EvalItem, index: KBIndex) -> tuple[dict[str, float], set[int]]:
    """Return an item's features that need no retrieval, and the positions of its gold chunks."""
    groups = evidence_groups(item.evidence, index.copies)
    gold = {index.position[c] for g in groups for c in g if c in index.position}
    evidence = relevant(item.evidence)
    documents = {e.doc_id for e in evidence if e.doc_id} | {
        index.chunks[index.position[c]].doc_id for e in evidence if not e.doc_id
        for c in e.chunk_ids if c in index.position}
    conditions, negations = cue_counts(item.question, item.language)
    overlap = lexical_overlap(item.question, [e.text for e in evidence], item.language)
    return {"answerable": float(item.answerable), "evidence_groups": float(len(groups)),
            "key_points": float(len(item.key_points)), "documents": float(len(documents)),
            "lexical_overlap": round(overlap, 4), "conditions": float(conditions),
            "negations": float(negations)}, gold


def _measure(items: Sequence[EvalItem], index: KBIndex, workspace: Workspace, *, dense: bool, k: int,
             rules: GradeRules) -> list[tuple[dict[str, float], str | None]]:
    """Return (features, why ungraded or None) of every item."""
    measured = []
    gold_of: dict[int, set[int]] = {}
    for n, item in enumerate(progress(items, "measuring items")):
        features, gold = item_features(item, index)
        ungraded = None
        if gold:
            gold_of[n] = gold
        elif item.answerable:
            ungraded = ("no relevant evidence" if not features["evidence_groups"] else
                        f"no evidence chunk in KB snapshot {index.snapshot_id} (run curate remap)")
        measured.append((features, ungraded))
    if not gold_of:
        return measured
    rows = sorted(gold_of)
    positions, scores = index.bm25.search([items[n].question for n in rows], k)
    gram_cache: dict[int, set[str]] = {}

    def gram_sets(position: int) -> set[str]:
        if position not in gram_cache:
            gram_cache[position] = grams(index.folded[position])
        return gram_cache[position]

    for row, n in enumerate(rows):
        features = measured[n][0]
        rank = bm25_rank(positions[row], scores[row], gold_of[n])
        if rank is not None:
            features["bm25_rank"] = float(rank)
        features["confusable_above"] = float(confusable_above(positions[row], scores[row], gold_of[n],
                                                              gram_sets, rules.near_miss_share))
    if dense:
        questions = workspace_embeddings(workspace)  # raises when no model is configured
        chunk_vectors = index.embeddings(questions.model)
        question_vectors = questions.embed([items[n].question for n in rows], "embedding questions")
        for start in range(0, len(rows), DENSE_BLOCK):
            block = question_vectors[start:start + DENSE_BLOCK] @ chunk_vectors.T
            for offset, similarities in enumerate(block):
                n = rows[start + offset]
                rank = dense_rank(similarities, gold_of[n], k)
                if rank is not None:
                    measured[n][0]["dense_rank"] = float(rank)
    return measured


def grade(workspace: Workspace, *, dataset: str, target: str = "2:5:3", balance: int | None = None,
          dense: bool = True, k: int = 100, rules: GradeRules | None = None) -> GradeReport:
    """Return the grading of a draft dataset's items (rejected and quarantined ones left out);
    store each item's features and difficulty, tag a balanced subset when asked, and record the
    summary in the dataset's checks under "difficulty"."""
    rules = rules or GradeRules()
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
    report = GradeReport(dataset=dataset, kb_snapshot=index.snapshot_id,
                         target={d: float(s) for d, s in shares.items()})
    for item, (features, ungraded) in zip(live, _measure(live, index, workspace, dense=dense, k=k, rules=rules)):
        difficulty, why = (None, ungraded) if ungraded else classify(features, rules)
        report.items.append(ItemGrade(item.id, item.qtype, item.language, difficulty, why, features))
        if ungraded:
            report.ungraded[item.id] = ungraded
        misfit = type_misfit(item.qtype, item.answerable, int(features["evidence_groups"]))
        if misfit:
            report.misfits[item.id] = misfit
        if item.difficulty != difficulty or item.difficulty_features != features:
            item.difficulty, item.difficulty_features = difficulty, features
            item.updated_at = now()
    graded = [g for g in report.items if g.difficulty]
    report.overall = mix_of([g.difficulty for g in graded], shares)
    for qtype in sorted({g.qtype or "none" for g in graded}):
        report.by_qtype[qtype] = mix_of([g.difficulty for g in graded if (g.qtype or "none") == qtype], shares)
    if balance is not None:
        report.balance = _balance(items, [(g.id, g.difficulty) for g in graded], balance, shares)
    report.record = {
        "at": now(), "kb_snapshot": index.snapshot_id, "items_sha256": items_digest(live),
        "graded": len(graded), "ungraded": len(report.ungraded), "counts": report.overall.counts,
        "by_qtype": {q: m.counts for q, m in report.by_qtype.items()}, "target": target,
        "target_counts": report.overall.target, "misfits": len(report.misfits),
        "settings": {"dense": dense, "k": k, "embedding_model": workspace.setting("embedding", "model")
                     if dense else None, **asdict(rules)},
        "balance": None if report.balance is None else {
            "size": report.balance.size, "tag": report.balance.tag, "selected": len(report.balance.selected),
            "counts": report.balance.counts, "missing": report.balance.missing}}
    meta.checks["difficulty"] = report.record
    store.save(meta, items)
    return report


def _balance(items: Sequence[EvalItem], pool: Sequence[tuple[str, str]], size: int,
             shares: Mapping[str, Fraction]) -> Balance:
    """Return the balanced selection, tagging it on the items (and untagging the rest)."""
    chosen, target, missing = select_balanced(pool, size, shares)
    tag = f"balanced-{size}"
    grade_of = dict(pool)
    for item in items:
        has = tag in item.tags
        if (item.id in chosen) != has:
            item.tags = item.tags + [tag] if not has else [t for t in item.tags if t != tag]
            item.updated_at = now()
    selected = [i.id for i in items if i.id in chosen]
    counted = Counter(grade_of[i] for i in selected)
    return Balance(size, tag, selected, {d: counted[d] for d in DIFFICULTIES}, target, missing)
