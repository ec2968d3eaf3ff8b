"""`curate check-dups`: duplicate questions (exact, form, fuzzy, semantic), and with `kb` duplicate
chunks (`curate.checks.copies`).

Questions are alike when they are the same after folding (`exact`: width, case, punctuation, white
space), the same but for politeness and question particles at their start or end (`form`: 请问, 请,
呢, 吗, 呀, 啊, 吧 ...; see `form_key`), close in characters (`fuzzy`: rapidfuzz ratio on folded text)
or in meaning (`semantic`: cosine of the workspace model's embeddings, from the model's own
threshold). `--fix` rejects automatically only what differs by form: a fuzzy or semantic match can
change what is asked ("女屌丝什么意思" is not "屌丝什么意思"), so it is marked for review, never rejected.
Two items asking one question for different askers or at different moments (`asker_groups`, `as_of`)
are different samples, never duplicates: they are compared only within one asker and moment, and the
same question under another is listed apart (`scoped_edges`).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from rapidfuzz import fuzz, process

from curate.checks.clusters import Cluster, Edge, clusters
from curate.checks.copies import chunk_groups, stored_groups, write_chunk_groups
from curate.dataset import DatasetStore, items_digest
from curate.dataset.asker import asker_label, scope_key
from curate.engine import engine_settings
from curate.errors import InputError
from curate.index.embeddings import Embed, SemanticPass, no_embedding, semantic_pass
from curate.index.kb_index import KBIndex
from curate.index.shard_index import engine_for, shard_views
from curate.records import (
    UNRELEASED_STATUSES,
    ChunkGroup,
    WithheldPair,
    DuplicateCluster,
    DuplicateEdge,
    DuplicatesCheck,
    DuplicatesReport,
    EvalItem,
    extend_evidence,
)
from curate.text.normalize import fold
from curate.text.sentences import sentence_spans
from curate.workspace import Workspace

STATUS_RANK = {"verified": 0, "labelled": 1, "draft": 2, "needs_adjudication": 3, "needs_rewrite": 4,
               "needs_evidence": 5, "quarantined": 6, "rejected": 7}
SOURCE_RANK = {"human": 0, "production": 1, "synthetic": 2}
ROWS_PER_BLOCK = 2000
# Longer folded questions (a pasted document, a log) are matched exactly, by form and by meaning, not by
# characters: rapidfuzz's cost grows with the product of two texts' lengths (a 6 MB question against
# itself took minutes). `too_long_for_fuzzy` counts them, so a caller can say so.
FUZZY_MAX_CHARS = 2000
# Politeness and question particles that change nothing of what is asked, at the start or the end of a
# folded question. 请 is one only before what it asks for: 请假, 请求, 请客 ... are words of their own.
OPENERS = ("请问一下", "请问下", "请问", "请教一下", "请教", "麻烦问一下", "麻烦问下", "想问一下", "想问下", "问一下",
           "请", "please")
CLOSERS = ("呢", "吗", "呀", "啊", "吧", "嘛", "哦", "呐", "please")
_WORDS_WITH_QING = ("请假", "请求", "请客", "请柬", "请示", "请愿", "请帖", "请款", "请辞", "请命", "请缨", "请教")


@dataclass
class DupSettings:
    """Thresholds of the question duplicate check."""

    fuzzy_min: float = 90.0        # rapidfuzz ratio (0-100) on folded questions
    semantic_min: float | None = None  # cosine of embeddings (the model's own: `semantic_pass`); None: none


_PLACEHOLDER = re.compile(r"\[[A-Z][A-Z0-9_]*\]")   # what add-failures masks personal data with


def form_key(question: str) -> str:
    """Return the question as far as its form goes: folded (NFKC width, case, punctuation and white
    space removed), without politeness and question particles at its start or end.

    Two questions with one form key differ only by form: `check-dups --fix` rejects such duplicates.

    >>> form_key("请问屌丝是什么意思？") == form_key("屌丝是什么意思") == form_key("屌丝是什么意思呢")
    True
    >>> form_key("女屌丝什么意思") == form_key("屌丝什么意思")
    False
    >>> form_key("Who can run the upgrade command?!") == form_key("who can run the UPGRADE command")
    True
    >>> form_key("请假需要什么手续？")
    '请假需要什么手续'
    """
    key = fold(question)
    while True:
        opener = next((o for o in OPENERS if key.startswith(o) and len(key) > len(o)
                       and not (o == "请" and key.startswith(_WORDS_WITH_QING))), None)
        closer = next((c for c in CLOSERS if key.endswith(c) and len(key) > len(c)), None)
        if opener is None and closer is None:
            return key
        key = key[len(opener or ""):len(key) - len(closer or "")]


def asked(question: str) -> str:
    """Return what a question asks, without the personal data masked out of it: a sentence that holds
    a placeholder ([PHONE], [EMAIL], a team's [NAME] ...) is dropped while another remains, and the
    placeholders left are removed.

    >>> asked("婚假要在多久之内休完？我的手机是 [PHONE]")
    '婚假要在多久之内休完？'
    >>> asked("What is the hotel limit in Zurich? Reply to [EMAIL]")
    'What is the hotel limit in Zurich?'
    >>> asked("Can you send the invoice to [EMAIL]?")
    'Can you send the invoice to ?'
    """
    if not _PLACEHOLDER.search(question):
        return question
    sentences = [question[a:b] for a, b in sentence_spans(question)]
    kept = [s for s in sentences if not _PLACEHOLDER.search(s)]
    return _PLACEHOLDER.sub("", "".join(kept) if kept else question).strip()


def question_edges(items: Sequence[EvalItem], settings: DupSettings,
                   vectors: np.ndarray | None = None, readable: np.ndarray | None = None) -> list[Edge]:
    """Return the pairs of items whose questions are alike: exact after folding, the same form,
    fuzzy, and semantic between questions the embedding model can read (`readable`, all by default)."""
    questions = [asked(i.question) for i in items]
    folded = [fold(q) for q in questions]
    edges: list[Edge] = []
    first: dict[str, int] = {}
    for index, text in enumerate(folded):
        if text in first:
            edges.append(Edge(items[first[text]].id, items[index].id, "exact", 100.0))
        else:
            first[text] = index
    first_form: dict[str, int] = {}
    for index in first.values():   # one question per folded text: the others joined it exactly
        key = form_key(questions[index])
        if key in first_form:
            edges.append(Edge(items[first_form[key]].id, items[index].id, "form", 100.0))
        else:
            first_form[key] = index
    exact = {(e.a, e.b) for e in edges} | {(e.b, e.a) for e in edges}
    seen = set(exact)
    short = [n for n, text in enumerate(folded) if len(text) <= FUZZY_MAX_CHARS]
    compared = [folded[n] for n in short]
    for start in range(0, len(short), ROWS_PER_BLOCK):
        block = process.cdist(compared[start:start + ROWS_PER_BLOCK], compared, scorer=fuzz.ratio,
                              score_cutoff=settings.fuzzy_min, dtype=np.uint8, workers=-1)
        for row, column in zip(*np.nonzero(block)):
            i, j = short[start + int(row)], short[int(column)]
            if i < j and folded[i] != folded[j] and (items[i].id, items[j].id) not in exact:
                edges.append(Edge(items[i].id, items[j].id, "fuzzy", float(block[row, column])))
                seen.add((items[i].id, items[j].id))
    if vectors is not None and settings.semantic_min is not None and len(items) > 1:
        if readable is not None:
            vectors = vectors * readable[:, None]  # unreadable questions match nothing
        for start in range(0, len(items), ROWS_PER_BLOCK):
            similarity = vectors[start:start + ROWS_PER_BLOCK] @ vectors.T
            for row, column in zip(*np.nonzero(similarity >= settings.semantic_min)):
                i, j = start + int(row), int(column)
                pair = (items[i].id, items[j].id)
                if i < j and pair not in seen and folded[i] != folded[j]:
                    edges.append(Edge(*pair, "semantic", round(float(similarity[row, column]), 3)))
    return edges


def too_long_for_fuzzy(questions: Sequence[str]) -> int:
    """Return how many questions are too long for the fuzzy match (`FUZZY_MAX_CHARS` folded characters).

    >>> too_long_for_fuzzy(["短问题", "长" * 2001])
    1
    """
    return sum(len(fold(q)) > FUZZY_MAX_CHARS for q in questions)


def _same_evidence(a: EvalItem, b: EvalItem) -> bool:
    """Return whether every relevant evidence of each item overlaps one of the other's (same
    document and overlapping span, or the same chunks when spans are unknown)."""
    def covered(xs, ys):
        return all(any(_overlap(x, y) for y in ys) for x in xs)
    ea = [e for e in a.evidence if e.grade > 0]
    eb = [e for e in b.evidence if e.grade > 0]
    return covered(ea, eb) and covered(eb, ea)


def _overlap(x, y) -> bool:
    if None not in (x.doc_id, x.start, y.doc_id, y.start):
        return x.doc_id == y.doc_id and x.start < y.end and y.start < x.end
    return bool(set(x.chunk_ids) & set(y.chunk_ids)) or fold(x.text) == fold(y.text)


def conflicts(cluster: Cluster, by_id: dict[str, EvalItem]) -> list[str]:
    """Return what members of a cluster disagree on: evidence, reference answer, answerability."""
    members = [by_id[m] for m in cluster.members]
    found = []
    if any(not _same_evidence(members[0], other) for other in members[1:]):
        found.append("evidence")
    answers = {fold(m.reference_answer) for m in members if m.reference_answer}
    if len(answers) > 1:
        found.append("reference_answer")
    if len({m.answerable for m in members}) > 1:
        found.append("answerable")
    return found


def keeper(members: Sequence[EvalItem]) -> EvalItem:
    """Return the item a cluster keeps: furthest in curation, then human over production over
    synthetic, then the oldest."""
    return min(members, key=lambda i: (STATUS_RANK[i.status], SOURCE_RANK[i.source], i.created_at, i.id))


@dataclass
class DupReport:
    """Question clusters of a dataset (and chunk groups of a KB when asked)."""

    clusters: list[Cluster]
    conflicts: dict[int, list[str]]
    rejected: dict[str, str] = field(default_factory=dict)   # item id -> duplicate_of (form-only, --fix)
    review: dict[str, str] = field(default_factory=dict)     # item id -> the item it resembles (--fix)
    semantic: SemanticPass | None = None                     # the semantic pass, or why it was skipped
    chunk_groups: list[ChunkGroup] | None = None
    withheld: list[WithheldPair] = field(default_factory=list)   # near chunks that differ in what matters
    undone: list[str] = field(default_factory=list)              # duplicate-chunk groups a person took apart
    extended_evidence: int = 0
    fixed: bool = False                                       # --fix was asked
    questions: dict[str, str] = field(default_factory=dict)  # item id -> question, for the members
    scope_apart: list[Edge] = field(default_factory=list)    # the same question for another asker or moment
    askers: dict[str, str] = field(default_factory=dict)     # item id -> who asks (`asker_label`), for those
    moments: dict[str, str] = field(default_factory=dict)    # item id -> as_of or "latest", for those
    kb_snapshot: str | None = None                           # the KB snapshot searched (--kb)
    shards: int = 1                                          # its shards
    engine: str | None = None                                # where, when in more than one

    def write(self, path) -> None:
        """Write the clusters, what --fix rejected and the duplicate chunks (check-dups --report)."""
        DuplicatesReport(
            clusters=[DuplicateCluster(members=c.members, edges=[DuplicateEdge(**asdict(e)) for e in c.edges],
                                       conflicts=self.conflicts.get(n, [])) for n, c in enumerate(self.clusters)],
            rejected=self.rejected, review=self.review, semantic=self.semantic.settings() if self.semantic else {},
            chunk_groups=self.chunk_groups, withheld=self.withheld, undone=self.undone,
            scope_apart=[DuplicateEdge(**asdict(e)) for e in self.scope_apart]).write(path)

    @property
    def unresolved(self) -> bool:
        """Return whether anything is left for a person to look at: label conflicts, clusters not
        fixed, items marked for review, or duplicate chunks found."""
        return bool(self.conflicts or (self.clusters and not self.fixed) or self.review or self.chunk_groups)

    @property
    def incomplete(self) -> bool:
        """Return whether the semantic pass was skipped or left questions out without being asked to."""
        return bool(self.semantic and self.semantic.degraded)


# starting only where a run of letters starts: tried from inside a run too, a long run of letters
# without a digit cost its length squared (50,000 letters: 47 s)
_NUMBER = re.compile(r"(?<![a-z])(?:[a-z]+-?)?[0-9][0-9a-z.\-/:]*")


def numbers_of(question: str) -> Counter:
    """Return the numbers and codes of a question (digit runs with the letters and signs that hold
    them together, in NFKC and lower case): what tells 2025's allowance from 2026's, LG-4031 from LG-4032.

    >>> sorted(numbers_of("错误码 LG-4031 在２０２６年还有吗")) == sorted(numbers_of("2026年 lg4031 呢"))
    True
    >>> numbers_of("2025年差旅标准") == numbers_of("2026年差旅标准")
    False
    """
    text = unicodedata.normalize("NFKC", question).lower()
    return Counter(m.group().strip(".-/:").replace("-", "") for m in _NUMBER.finditer(text))


def find_question_clusters(workspace: Workspace, items: Sequence[EvalItem], *, fuzzy_min: float = 90.0,
                           semantic: bool = True, semantic_min: float | None = None,
                           apart_numbers: list[Edge] | None = None,
                           apart_scope: list[Edge] | None = None) -> tuple[list[Cluster], SemanticPass]:
    """Return `question_clusters` of `items` with the workspace's embedding model (none unless
    `semantic`); `semantic_min` None: the model's own threshold."""
    def embed(questions: Sequence[str]) -> SemanticPass:
        return semantic_pass(workspace, questions, semantic=semantic, threshold=semantic_min)
    return question_clusters(items, fuzzy_min=fuzzy_min, embed=embed, apart_numbers=apart_numbers,
                             apart_scope=apart_scope)


def scoped_edges(items: Sequence[EvalItem], settings: DupSettings, vectors: np.ndarray | None = None,
                 readable: np.ndarray | None = None, apart: list[Edge] | None = None) -> list[Edge]:
    """Return `question_edges` among the items of one asker and moment (`scope_key`) at a time; with
    `apart` (a list), append to it an edge for each same question (one form key) asked under another
    scope: from the first item of each further scope to the question's first item.

    >>> def item(n, groups): return EvalItem(id=f"q{n}", question="年假几天？", language="zh", source="human",
    ...                                      asker_groups=groups)
    >>> apart = []
    >>> [(e.a, e.b) for e in scoped_edges([item(1, ["hr"]), item(2, None), item(3, ["hr"])], DupSettings(), apart=apart)]
    [('q1', 'q3')]
    >>> [(e.a, e.b, e.method) for e in apart]
    [('q1', 'q2', 'exact')]
    """
    keys = [scope_key(i) for i in items]
    if len(set(keys)) <= 1:
        return question_edges(items, settings, vectors, readable)
    by_scope: dict[tuple, list[int]] = {}
    for n, key in enumerate(keys):
        by_scope.setdefault(key, []).append(n)
    edges: list[Edge] = []
    for rows in by_scope.values():
        if len(rows) > 1:
            edges += question_edges([items[n] for n in rows], settings,
                                    None if vectors is None else vectors[rows], None if readable is None else readable[rows])
    if apart is not None:
        first: dict[str, dict[tuple, int]] = {}
        for n, item in enumerate(items):
            first.setdefault(form_key(asked(item.question)), {}).setdefault(keys[n], n)
        for scopes in first.values():
            rows = list(scopes.values())
            apart += [Edge(items[rows[0]].id, items[n].id, "exact" if fold(items[rows[0]].question) == fold(
                items[n].question) else "form", 100.0) for n in rows[1:]]
    return edges


def question_clusters(items: Sequence[EvalItem], *, fuzzy_min: float = 90.0, embed: Embed = no_embedding,
                      apart_numbers: list[Edge] | None = None,
                      apart_scope: list[Edge] | None = None) -> tuple[list[Cluster], SemanticPass]:
    """Return the clusters of alike questions among `items` (rejected items left out) and the
    semantic pass behind them (`embed` of their questions: none by default).

    Two items asking alike questions for different askers or at different moments (`scope_key`: the
    asker's groups, `as_of`) are different samples, never duplicates: their match joins nothing and is
    appended to `apart_scope` when it is a list. With `apart_numbers` (a list), a fuzzy or semantic
    match of two questions whose numbers or codes differ (`numbers_of`: 2025 against 2026, LG-4031
    against LG-4032) joins nothing and is appended there instead: one character apart, they still ask
    different things."""
    live = [i for i in items if i.status != "rejected"]
    found = embed([asked(i.question) for i in live])
    edges = scoped_edges(live, DupSettings(fuzzy_min, found.semantic_min), found.vectors, found.readable,
                         apart_scope)
    if apart_numbers is not None:
        by_id = {i.id: i for i in live}
        kept = []
        for edge in edges:
            if edge.method in ("fuzzy", "semantic") and (numbers_of(by_id[edge.a].question)
                                                         != numbers_of(by_id[edge.b].question)):
                apart_numbers.append(edge)
            else:
                kept.append(edge)
        edges = kept
    return clusters(edges, {item.id: n for n, item in enumerate(items)}), found


def resolve(cluster: Cluster, by_id: dict[str, EvalItem]) -> tuple[dict[str, str], dict[str, str]]:
    """Return what `--fix` does to a cluster: ({rejected item: the item it duplicates}, {item marked
    for review: the item the cluster keeps}).

    Members with one `form_key` are form-only duplicates: unless their labels disagree, one is kept
    (`keeper`) and the others rejected. Every other member that is not the cluster's keeper was joined
    by a fuzzy or semantic match, which can change what is asked, or disagrees on its labels: it is
    marked for review."""
    members = [by_id[m] for m in cluster.members]
    kept = keeper(members)
    forms: dict[str, list[EvalItem]] = {}
    for member in members:
        forms.setdefault(form_key(member.question), []).append(member)
    rejected = {}
    for group in forms.values():
        if len(group) > 1 and not conflicts(Cluster([g.id for g in group]), by_id):
            twin = keeper(group)
            rejected.update({g.id: twin.id for g in group if g is not twin})
    review = {m.id: kept.id for m in members if m is not kept and m.id not in rejected}
    return rejected, review


def check_dups(workspace: Workspace, *, dataset: str, kb: bool = False, fix: bool = False,
               fuzzy_min: float = 90.0, semantic: bool = True, semantic_min: float | None = None,
               near_min: float = 90.0, undo: Sequence[str] = (), report: Path | None = None,
               engine: str | None = None) -> DupReport:
    """Cluster alike questions of `dataset` (and, with `kb`, duplicate chunks of its snapshot);
    with `fix`, reject form-only duplicates and mark every other alike item for review (`resolve`);
    `semantic_min` None: the embedding model's own threshold; `undo` names duplicate-chunk groups (by
    group id) that are not copies: they are taken apart, taken out of every evidence, and never
    formed again. With `report`, write the clusters and groups there as JSON. A snapshot in many shards is
    searched on the engine `engine` names (local, ray, a Ray address), else curate.toml's [engine], else the
    local engine."""
    if report is not None:
        workspace.refuse_state(report, field="report")
    chosen = engine_settings(workspace, engine)
    if undo and not kb:
        raise InputError("--undo takes apart duplicate-chunk groups: give --kb too", field="undo")
    for name, value, low, high in (("fuzzy-min", fuzzy_min, 0, 100), ("near-min", near_min, 0, 100),
                                   ("semantic-min", semantic_min, -1, 1)):
        if value is not None and not low <= value <= high:
            raise InputError(f"must be between {low} and {high}, got {value:g}", field=name)
    with DatasetStore(workspace).writing(dataset):
        store = DatasetStore(workspace)
        meta, items = store.load(dataset)
        by_id = {i.id: i for i in items}
        apart: list[Edge] = []
        found, used = find_question_clusters(workspace, items, fuzzy_min=fuzzy_min, semantic=semantic,
                                             semantic_min=semantic_min, apart_scope=apart)
        result = DupReport(clusters=found, conflicts={}, fixed=fix, semantic=used, scope_apart=apart,
                           questions={m: by_id[m].question for c in found for m in c.members})
        apart_ids = {i for e in apart for i in (e.a, e.b)}
        result.askers = {i: asker_label(by_id[i]) for i in apart_ids}
        result.moments = {i: by_id[i].as_of or "latest" for i in apart_ids}
        for n, cluster in enumerate(found):
            disagreement = conflicts(cluster, by_id)
            if disagreement:
                result.conflicts[n] = disagreement
            if fix:
                rejected, review = resolve(cluster, by_id)
                for member, kept in rejected.items():
                    method = "exact" if fold(by_id[member].question) == fold(by_id[kept].question) else "form"
                    by_id[member].duplicate_of = kept
                    by_id[member].set_status("rejected", f"duplicate of {kept} ({method} 100)",
                                             by="curate check-dups --fix")
                result.rejected.update(rejected)
                result.review.update(review)
        if kb and meta.kb_snapshot:
            index = KBIndex(workspace, meta.kb_snapshot)
            before = stored_groups(index)
            undone = list(before.undone) if before else []
            known = {g.group_id: g for g in (before.groups if before else [])}
            for gid in undo:
                if gid not in known:
                    raise InputError(f"no duplicate-chunk group {gid} in KB snapshot {index.snapshot_id} "
                                     f"(groups: {', '.join(sorted(known)) or 'none'})", field="undo")
                undone.append(known[gid])
            with engine_for(index, chosen) as running:
                result.chunk_groups, result.withheld = chunk_groups(index, near_min, [g.chunks for g in undone],
                                                                    engine=running)
            result.undone = [g.group_id for g in undone]
            result.kb_snapshot, result.shards = index.snapshot_id, shard_views(index)
            result.engine = chosen.describe() if result.shards > 1 else None
            write_chunk_groups(index, result.chunk_groups, result.withheld, near_min, undone)
            # groups never join chunks of two scopes: over many shards they are the copies as they are (one
            # view cuts stored groups to each chunk's scope, for groups written before scopes were)
            copies = (index.copies if result.shards == 1 else
                      {c: group.chunks for group in result.chunk_groups for c in group.chunks})
            result.extended_evidence = extend_evidence(items, copies)
        counts = {"clusters": len(found), "items_in_clusters": sum(len(c.members) for c in found),
                  "label_conflicts": len(result.conflicts), "rejected": len(result.rejected),
                  "review": len(result.review), "unreadable_questions": used.unreadable}
        if apart:   # said only where scope is in play: an unscoped dataset's record stays as it was
            counts["kept_apart_by_scope"] = len(apart)
        if too_long := too_long_for_fuzzy([i.question for i in items if i.status != "rejected"]):
            counts["too_long_for_fuzzy"] = too_long
        if result.chunk_groups is not None:
            counts["chunk_groups"] = len(result.chunk_groups)
        meta.checks.duplicates = DuplicatesCheck(
            kb_snapshot=meta.kb_snapshot,
            items_sha256=items_digest([i for i in items if i.status not in UNRELEASED_STATUSES],
                                      ignore=DuplicatesCheck.IGNORES),
            outcome="findings" if result.unresolved else "incomplete" if result.incomplete else "clean",
            counts=counts, settings={"fuzzy_min": fuzzy_min, "near_min": near_min, **used.settings()})
        store.save(meta, items)
    if report is not None:
        result.write(report)
    return result
