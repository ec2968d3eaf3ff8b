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
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction

import numpy as np

from ..dataset import DatasetStore, items_digest
from ..embedding import workspace_embeddings
from ..errors import InputError
from ..index.kb_index import KBIndex
from ..progress import progress
from ..schema import UNRELEASED_STATUSES, EvalItem, Evidence, now
from ..textnorm import fold
from ..workspace import Workspace

DIFFICULTIES = ("easy", "medium", "hard")
DENSE_BLOCK = 256  # questions scored against every chunk at once: bounds memory on a large KB


@dataclass(frozen=True)
class GradeRules:
    """Thresholds of the difficulty rule (see the module docstring)."""

    easy_overlap_min: float = 0.5     # easy needs at least half the question's terms in its evidence
    hard_overlap_below: float = 0.2   # under a fifth of them: the question paraphrases its evidence
    hard_constraints_min: int = 2     # conditions + negations that make an item hard
    hard_rank_beyond: int = 10        # gold outside this top in both retrievers: hard
    near_miss_share: float = 0.5      # share of a chunk's 4-grams found in a gold chunk: a near miss


# -- cue words ----------------------------------------------------------------------------------

# Chinese cues are patterns over the NFKC text; lookarounds keep out common words that merely
# contain the character (当前 "current", 若干 "several", 非常 "very", 区别 "difference", ...).
ZH_CONDITIONS = (
    "如果", "假如", "假设", "要是", "倘若", "若(?!干)", "万一", "除非", "无论", "除了",
    r"在[^，。？！；,.?!;]{1,15}?(?:时候|时(?!间))",   # 在…时: "在升级时"
    "(?<![适相应恰妥正])当(?![前然地天中])", "情况下", "前提",
    "之前", "之后", "以前", "以后", "版本", "仅", "只有", "只能", "同时", "并且", "而且",
)
ZH_NEGATIONS = (
    "不能", "无法", "没有", "没", "未(?!来)", "不(?![同少过断仅久错])", "无(?!论)", "非(?!常)",
    "(?<![区类分特级识差个性告])别(?![的人名处])",
)
# A-not-A questions (能不能, 是不是, 有没有) ask yes or no; they negate nothing.
_ZH_A_NOT_A = re.compile(r"([\u4e00-\u9fff])[不没]\1")

EN_CONDITIONS = (
    "if", "unless", "when", "whenever", "before", "after", "since", "until", "only", "except",
    "while", "during", "versions?", "both", "also", "provided", "assuming",
)
EN_NEGATIONS = ("not", "no", "never", "without", "cannot", "none", "nor", "nothing", r"\w+n['’]t")

_ZH_CONDITION = re.compile("|".join(ZH_CONDITIONS))
_ZH_NEGATION = re.compile("|".join(ZH_NEGATIONS))
_EN_CONDITION = re.compile(r"\b(?:" + "|".join(EN_CONDITIONS) + r")\b")
_EN_NEGATION = re.compile(r"\b(?:" + "|".join(EN_NEGATIONS) + r")\b")

STOP_WORDS = frozenset("""
a an the and or but of to in on at by for from with about as into than then so
is are was were be been being am do does did done have has had having
can could will would shall should may might must
i me my we our you your he she it its they them their this that these those there here
what which who whom whose how why where
get gets got any some all each every more most much many other such own same very just
""".split())

_WORD = re.compile(r"[^\W_]+(?:[.'’][^\W_]+)*")


def cue_counts(question: str, language: str) -> tuple[int, int]:
    """Return (conditions, negations): cue words of the question's language found in it.

    "when" opening an English question asks for a time and is not counted.

    >>> cue_counts("如果令牌没有过期，LG-4032 表示什么？", "zh")
    (1, 1)
    >>> cue_counts("能不能在升级时保留配置？", "zh")
    (1, 0)
    >>> cue_counts("When does the token expire if it isn't refreshed before 3.2?", "en")
    (2, 1)
    """
    text = unicodedata.normalize("NFKC", question).casefold()
    if language == "zh":
        return len(_ZH_CONDITION.findall(text)), len(_ZH_NEGATION.findall(_ZH_A_NOT_A.sub("", text)))
    conditions = len(_EN_CONDITION.findall(text))
    if re.match(r"\W*when\b", text):
        conditions -= 1
    return conditions, len(_EN_NEGATION.findall(text))


# -- lexical overlap ----------------------------------------------------------------------------

def terms(text: str, language: str) -> set[str]:
    """Return the terms overlap is measured in: bigrams of the folded text (zh), content words (en).

    >>> sorted(terms("令牌过期", "zh")), sorted(terms("What does version 3.2 change?", "en"))
    (['令牌', '牌过', '过期'], ['3.2', 'change', 'version'])
    """
    if language == "zh":
        folded = fold(text)
        return {folded[i:i + 2] for i in range(len(folded) - 1)}
    words = _WORD.findall(unicodedata.normalize("NFKC", text).casefold())
    return {w for w in words if w not in STOP_WORDS}


def lexical_overlap(question: str, evidence_texts: Sequence[str], language: str) -> float:
    """Return the share of the question's distinct terms found in its evidence texts (0 without).

    >>> lexical_overlap("LG-4031 是什么意思？", ["LG-4031 表示访问令牌已过期。"], "zh")  # lg g4 40 03 31 of 10
    0.5
    >>> lexical_overlap("Who can run the upgrade command?", ["Only administrators can run the upgrade command;"], "en")
    1.0
    """
    wanted = terms(question, language)
    if not wanted or not evidence_texts:
        return 0.0
    found = set().union(*(terms(t, language) for t in evidence_texts))
    return len(wanted & found) / len(wanted)


# -- evidence groups, ranks, near misses --------------------------------------------------------

def relevant(evidence: Iterable[Evidence]) -> list[Evidence]:
    """Return the evidence graded relevant (grade >= 1)."""
    return [e for e in evidence if e.grade >= 1]


def evidence_groups(evidence: Iterable[Evidence], copies: Mapping[str, list[str]]) -> list[set[str]]:
    """Return the chunk ids of each relevant evidence group: evidence sharing a chunk, or a copy of
    one, joins one group; an evidence anchored to no chunk is a group of its own (an empty set)."""
    groups: list[set[str]] = []
    for entry in relevant(evidence):
        chunks = {c for chunk_id in entry.chunk_ids for c in copies.get(chunk_id, [chunk_id])}
        if not chunks:
            groups.append(set())
            continue
        for group in [g for g in groups if g & chunks]:
            chunks |= group
        groups = [g for g in groups if not g & chunks] + [chunks]
    return groups


def bm25_rank(positions: Sequence[int], scores: Sequence[float], gold: set[int]) -> int | None:
    """Return the 1-based rank of the first gold chunk among those retrieved (score > 0), or None.

    >>> bm25_rank([4, 2, 7], [3.1, 1.2, 0.0], {2, 7})
    2
    >>> bm25_rank([4, 2, 7], [3.1, 1.2, 0.0], {7}) is None
    True
    """
    for rank, (position, score) in enumerate(zip(positions, scores), start=1):
        if score <= 0:
            break  # scores come best first: the rest share no word with the question
        if int(position) in gold:
            return rank
    return None


def dense_rank(scores: np.ndarray, gold: Iterable[int], k: int) -> int | None:
    """Return the 1-based rank of the best gold chunk by score (ties: earlier chunk first), or
    None beyond k: 1 + chunks scoring higher + chunks scoring the same that come before it.

    >>> dense_rank(np.array([0.1, 0.9, 0.5, 0.9]), {3, 2}, k=10)
    2
    >>> dense_rank(np.array([0.1, 0.9, 0.5, 0.9]), {0}, k=3) is None
    True
    """
    gold = np.fromiter(sorted(gold), dtype=np.int64)
    best = scores[gold].max()
    first = int(gold[scores[gold] == best].min())
    rank = 1 + int((scores > best).sum()) + int((scores[:first] == best).sum())
    return rank if rank <= k else None


def grams(folded: str, n: int = 4) -> set[str]:
    """Return the distinct character n-grams of a folded text.

    >>> sorted(grams("abcde"))
    ['abcd', 'bcde']
    """
    return {folded[i:i + n] for i in range(len(folded) - n + 1)}


def near_miss(candidate: set[str], gold: Iterable[set[str]], share: float) -> bool:
    """Return whether at least `share` of a chunk's 4-grams occur in one of the gold chunks.

    >>> near_miss(grams("timeout15seconds"), [grams("timeout30seconds")], 0.5)  # 8 of 13 grams
    True
    """
    return bool(candidate) and any(len(candidate & g) >= share * len(candidate) for g in gold)


def confusable_above(positions: Sequence[int], scores: Sequence[float], gold: set[int],
                     gram_sets, share: float) -> int:
    """Return how many non-gold chunks retrieved above the first gold chunk are near misses;
    `gram_sets(position)` gives a chunk's 4-grams."""
    gold_grams = [gram_sets(p) for p in sorted(gold)]
    count = 0
    for position, score in zip(positions, scores):
        position = int(position)
        if score <= 0 or position in gold:
            break
        count += near_miss(gram_sets(position), gold_grams, share)
    return count


# -- the rule -----------------------------------------------------------------------------------

def classify(features: Mapping[str, float], rules: GradeRules = GradeRules()) -> tuple[str, str]:
    """Return (difficulty, why) of an item's features under the rule of the module docstring.

    >>> classify({"answerable": 1, "evidence_groups": 1, "lexical_overlap": 0.8, "conditions": 0,
    ...           "negations": 0, "bm25_rank": 1, "confusable_above": 0})
    ('easy', 'one evidence group, ranked 1, overlap 0.80')
    >>> classify({"answerable": 1, "evidence_groups": 2, "lexical_overlap": 0.8, "conditions": 1,
    ...           "negations": 0, "bm25_rank": 3, "dense_rank": 1, "confusable_above": 0})[0]
    'medium'
    """
    if not features["answerable"]:
        return "hard", "unanswerable"
    overlap = features["lexical_overlap"]
    constraints = int(features["conditions"] + features["negations"])
    confusable = int(features.get("confusable_above", 0))
    ranks = [features[r] for r in ("bm25_rank", "dense_rank") if r in features]
    best = min(ranks) if ranks else None
    hard = []
    if overlap < rules.hard_overlap_below:
        hard.append(f"overlap {overlap:.2f} < {rules.hard_overlap_below:g}")
    if constraints >= rules.hard_constraints_min:
        hard.append(f"{constraints} conditions/negations")
    if confusable:
        hard.append(f"{confusable} confusable chunk{'s' if confusable > 1 else ''} above gold")
    if best is None or best > rules.hard_rank_beyond:
        hard.append(f"gold not in the top {rules.hard_rank_beyond}")
    if hard:
        return "hard", "; ".join(hard)
    groups = int(features["evidence_groups"])
    short = []
    if groups != 1:
        short.append(f"{groups} evidence groups")
    if best != 1:
        short.append(f"best rank {best:g}")
    if overlap < rules.easy_overlap_min:
        short.append(f"overlap {overlap:.2f} < {rules.easy_overlap_min:g}")
    if constraints:
        short.append(f"{constraints} condition{'s' if constraints > 1 else ''}/negation")
    if short:
        return "medium", "; ".join(short)
    return "easy", f"one evidence group, ranked 1, overlap {overlap:.2f}"


def type_misfit(qtype: str | None, answerable: bool, groups: int) -> str | None:
    """Return why an item's qtype does not fit its evidence, or None when it fits (or has no rule).

    >>> type_misfit("single", True, 2)
    'single needs exactly 1 evidence group, has 2'
    >>> type_misfit("unanswerable", True, 0)
    'unanswerable needs 0 evidence groups and answerable false, has 0 and answerable true'
    """
    if qtype == "multi_evidence" and groups < 2:
        return f"multi_evidence needs at least 2 evidence groups, has {groups}"
    if qtype == "single" and groups != 1:
        return f"single needs exactly 1 evidence group, has {groups}"
    if qtype == "unanswerable" and (groups or answerable):
        return (f"unanswerable needs 0 evidence groups and answerable false, "
                f"has {groups} and answerable {str(answerable).lower()}")
    return None


# -- target mix and balance ---------------------------------------------------------------------

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
        return asdict(self)


def _measure(items: Sequence[EvalItem], index: KBIndex, workspace: Workspace, *, dense: bool, k: int,
             rules: GradeRules) -> list[tuple[dict[str, float], str | None]]:
    """Return (features, why ungraded or None) of every item."""
    copies = index.copies
    measured = []
    gold_of: dict[int, set[int]] = {}
    for n, item in enumerate(progress(items, "measuring items")):
        groups = evidence_groups(item.evidence, copies)
        gold = {index.position[c] for g in groups for c in g if c in index.position}
        evidence = relevant(item.evidence)
        documents = {e.doc_id for e in evidence if e.doc_id} | {
            index.chunks[index.position[c]].doc_id for e in evidence if not e.doc_id
            for c in e.chunk_ids if c in index.position}
        conditions, negations = cue_counts(item.question, item.language)
        features = {"answerable": float(item.answerable), "evidence_groups": float(len(groups)),
                    "key_points": float(len(item.key_points)), "documents": float(len(documents)),
                    "lexical_overlap": round(lexical_overlap(item.question, [e.text for e in evidence],
                                                             item.language), 4),
                    "conditions": float(conditions), "negations": float(negations)}
        ungraded = None
        if gold:
            gold_of[n] = gold
        elif item.answerable:
            ungraded = ("no relevant evidence" if not groups else
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
        model = workspace.setting("embedding", "model")
        chunk_vectors = index.embeddings(model)
        question_vectors = workspace_embeddings(workspace).embed([items[n].question for n in rows],
                                                                 "embedding questions")
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
