"""Records of the checks a dataset has been through, kept in its dataset.json and copied into each
release's manifest, and the dataset's own record that holds them.

Every check record shares one base, `CheckRecord`: when it ran, against which KB snapshot and
which items (a hash of their content), with which settings, its outcome and its counts. The
outcome is one of three words and nothing else decides whether a check passed:

- ``clean``: the check ran on every item and found nothing;
- ``findings``: it found something a person should look at;
- ``incomplete``: part of the check could not be done (the judge gave no verdict, annotators have
  not answered, an item could not be measured), so it cannot say "clean".
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from curate.records.base import Record, VersionedRecord, now

Outcome = Literal["clean", "findings", "incomplete"]


class CheckRecord(VersionedRecord):
    """What one run of a check saw and found.

    `IGNORES` names the item fields the check does not read: a change to them alone (a later
    `curate grade` writing difficulties, a later `curate split` writing splits) leaves it current,
    so the guards that do not depend on each other may run in any order."""

    IGNORES: ClassVar[frozenset[str]] = frozenset()

    at: str = Field(default_factory=now, description="When the check ran (UTC).")
    kb_snapshot: str | None = Field(None, description="KB snapshot the check ran against.")
    items_sha256: str | None = Field(
        None, description="sha256 of the content of the items checked, in id order, leaving out the fields the "
        "check does not read (a later grade's difficulties, for all but grade a later split); the check speaks for a "
        "set of items only while it matches.")
    settings: dict[str, Any] = Field(default_factory=dict, description="The thresholds and options it ran with.")
    outcome: Outcome = Field(description="clean, findings or incomplete (see the module docstring).")
    counts: dict[str, int] = Field(default_factory=dict, description="What it counted, by kind.")
    current: bool | None = Field(
        None, description="In a release manifest: True when the check saw exactly the released items; "
        "None in a dataset's own record.")

    @property
    def clean(self) -> bool:
        """Return whether the outcome is clean."""
        return self.outcome == "clean"


LeakStatus = Literal["open", "quarantined", "accepted"]


class LeakAcceptance(Record):
    """A leakage finding a person reviewed and accepted, with the fingerprints it holds for."""

    item_id: str = Field(description="The item of the finding.")
    kind: str = Field(description="The finding's kind.")
    doc_id: str | None = Field(None, description="Its document (KB leaks).")
    chunk_ids: list[str] = Field(default_factory=list, description="Its chunk(s) (KB leaks).")
    other_item: str | None = Field(None, description="The alike item (split leaks).")
    item_sha256: str = Field(description="sha256 of the item's question and reference answer when accepted.")
    where_sha256: str = Field(description="sha256 of the matched chunks' texts (or of the alike item's question and "
                              "answer) when accepted; the acceptance holds while both fingerprints do.")
    reason: str = Field(description="Why the finding is not a leak, as the reviewer wrote it.")
    by: str = Field(description="Who accepted it.")
    at: str = Field(default_factory=now, description="When (UTC).")

    def key(self) -> tuple:
        """Return what identifies the finding it accepts: item, kind and place (a later acceptance of
        the same key replaces it)."""
        return (self.item_id, self.kind, self.doc_id, tuple(self.chunk_ids), self.other_item)


class LeakFinding(Record):
    """One leak of one item, with what became of it."""

    item_id: str = Field(description="The item that leaks.")
    kind: str = Field(description="question_in_kb, qa_pair_in_kb, answer_in_kb or split_leak.")
    method: str = Field(description="exact, near_verbatim, or the duplicate rule (fuzzy, semantic) for split leaks.")
    score: float = Field(description="Similarity 0-100 (containment for KB leaks).")
    chunk_ids: list[str] = Field(default_factory=list, description="Chunk(s) holding the copy.")
    doc_id: str | None = Field(None, description="Their document.")
    copies: list[str] = Field(default_factory=list, description="Other chunks holding the same copy (an FAQ kept "
                              "in chunk copies or at the end of many pages): one leak, one finding.")
    matched: str = Field("", description="The text that matched, as the chunk has it.")
    other_item: str | None = Field(None, description="For a split leak: the alike item on the other side.")
    standing: str = Field("", description="For a question copy the rule looked closer at (a short question, or one in "
                          "its own evidence or copied from it): how the copy stands, e.g. 'as a question: FAQ label'.")
    status: LeakStatus = Field("open", description="open; quarantined (its item is left out of every release); or "
                               "accepted (reviewed, see `acceptance`).")
    acceptance: LeakAcceptance | None = Field(None, description="Who accepted it, when and why (status accepted).")
    lapsed: str | None = Field(None, description="An acceptance that no longer holds, and what changed since.")
    item_sha256: str | None = Field(None, description="Fingerprint of the item's question and answer.")
    where_sha256: str | None = Field(None, description="Fingerprint of the matched chunks (or the alike item).")


class LeakageCheck(CheckRecord):
    """`curate check-leakage`: evaluation text in the KB, alike items across the split.

    Every finding is kept with its status. A finding is resolved when it is quarantined (its item is
    left out of every release) or accepted; the outcome is `clean` when no finding is left open."""

    SCHEMA = 2  # 2: every finding kept, with its status
    IGNORES: ClassVar[frozenset[str]] = frozenset({"difficulty", "tags"})   # the split it does read
    ref: str = Field(description="What was checked: NAME (the draft) or NAME@vN (a release).")
    checked: int = Field(description="Items checked.")
    items: list[str] = Field(default_factory=list, description="Ids of the items with open findings.")
    allowed_docs: list[str] = Field(default_factory=list, description="Documents meant to hold questions.")
    excluded_docs: list[str] = Field(default_factory=list, description="Documents evaluation leaves out.")
    findings: list[LeakFinding] = Field(default_factory=list, description="Every finding: open, quarantined (also "
                                        "those of items quarantined by an earlier check) or accepted.")

    def with_status(self, status: LeakStatus) -> list[LeakFinding]:
        """Return the findings of one status."""
        return [f for f in self.findings if f.status == status]


class JudgeUsage(Record):
    """What a check or a run asked of the judge."""

    requests: int = Field(0, description="Requests sent to the endpoint.")
    cache_hits: int = Field(0, description="Verdicts served from the disk cache.")
    prompt_tokens: int = Field(0, description="Prompt tokens the judge reported.")
    completion_tokens: int = Field(0, description="Completion tokens the judge reported.")
    cost_usd: float | None = Field(None, description="Cost from the price table; None when the model has no price.")
    usage_left_out: int = Field(0, description="Replies whose usage was no token count (negative, NaN, text): left "
                                "out of the tokens and the cost, never summed.")
    usage_problems: list[str] = Field(default_factory=list, description="The first of those, each naming its item, "
                                      "check and field.")


class ConsistencyCheck(CheckRecord):
    """`curate check-consistency`: does each item hold together, by the judge's reading."""

    IGNORES: ClassVar[frozenset[str]] = frozenset({"difficulty", "split", "tags"})

    judge: dict[str, Any] = Field(description="The judge's configuration (the key's variable name, never a key).")
    prompt_versions: dict[str, str] = Field(description="Version hash of every prompt, by 'name/language'.")
    items: int = Field(description="Items checked.")
    tasks: int = Field(description="Questions asked per repeat.")
    flagged: list[str] = Field(default_factory=list, description="Items flagged (now needs_rewrite).")
    unstable: list[str] = Field(default_factory=list, description="Items whose verdict flipped between repeats.")
    unscored: dict[str, int] = Field(default_factory=dict, description="Checks with no verdict, by reason.")
    usage: JudgeUsage = Field(default_factory=JudgeUsage, description="What was asked of the judge.")


class DuplicatesCheck(CheckRecord):
    """`curate check-dups`: clusters of alike questions, label conflicts, duplicate chunks."""

    IGNORES: ClassVar[frozenset[str]] = frozenset({"difficulty", "split", "tags"})


class SplitCheck(CheckRecord):
    """`curate split`: the dev/test assignment (counts per side). A later grade leaves it current: the
    assignment stands, though it was stratified by the difficulties of its time."""

    IGNORES: ClassVar[frozenset[str]] = frozenset({"difficulty", "tags"})

    units: int = Field(description="Units assigned: clusters of alike questions and single items.")


class BalanceRecord(Record):
    """A balanced subset tagged by `curate grade --balance`."""

    size: int = Field(description="Items asked for.")
    tag: str = Field(description="Tag the selected items carry.")
    selected: int = Field(description="Items selected.")
    counts: dict[str, int] = Field(description="Selected items per difficulty.")
    missing: list[str] = Field(default_factory=list, description="What the pool lacked.")


class DifficultyCheck(CheckRecord):
    """`curate grade`: measured difficulty, the mix against the target, qtype fit (none of which reads the
    split)."""

    IGNORES: ClassVar[frozenset[str]] = frozenset({"split"})

    assessed: int = Field(description="Items given a difficulty.")
    unmeasured: int = Field(description="Answerable items with no gold chunk to measure.")
    misfits: int = Field(description="Items whose qtype does not fit their evidence.")
    by_qtype: dict[str, dict[str, int]] = Field(default_factory=dict, description="Difficulty counts per qtype.")
    target: str = Field(description="The easy:medium:hard target, as given.")
    target_counts: dict[str, int] = Field(default_factory=dict, description="What the target asks of the assessed items.")
    balance: BalanceRecord | None = Field(None, description="The balanced subset, when one was asked for.")


class AnnotationCheck(CheckRecord):
    """`curate annotate pull`: labels applied from Argilla and how far annotators agree."""

    argilla: dict[str, Any] = Field(default_factory=dict, description="The Argilla URL, dataset and workspace.")
    guideline_version: str | None = Field(None, description="Guideline version the labels follow.")
    conflict_items: list[str] = Field(default_factory=list, description="Items changed here after their push.")
    agreement: dict[str, Any] = Field(default_factory=dict, description="Krippendorff's alpha and Cohen's kappa.")


class DatasetChecks(Record):
    """The latest record of each check a dataset has been through."""

    leakage: LeakageCheck | None = Field(None, description="check-leakage of the draft.")
    consistency: ConsistencyCheck | None = Field(None, description="check-consistency.")
    duplicates: DuplicatesCheck | None = Field(None, description="check-dups.")
    split: SplitCheck | None = Field(None, description="split.")
    difficulty: DifficultyCheck | None = Field(None, description="grade.")
    annotation: AnnotationCheck | None = Field(None, description="annotate pull.")

    def present(self) -> dict[str, CheckRecord]:
        """Return the checks that have run, by name."""
        return {name: getattr(self, name) for name in type(self).model_fields if getattr(self, name) is not None}


class DatasetMeta(VersionedRecord):
    """datasets/NAME/dataset.json: a draft dataset's KB snapshot and the checks it has been through."""

    SCHEMA = 2
    name: str = Field(description="Dataset name.")
    kb_snapshot: str | None = Field(None, description="KB snapshot the items' evidence refers to.")
    items_sha256: str | None = Field(None, description="sha256 of items.jsonl as last saved with this record.")
    created_at: str = Field(default_factory=now, description="When the dataset was created (UTC).")
    checks: DatasetChecks = Field(default_factory=DatasetChecks, description="The latest result of each check.")
    releases: dict[str, str] = Field(
        default_factory=dict, description="Content sha256 of each release, by version (v1, v2, ...), recorded when "
        "`curate release` wrote it: loading a release compares its manifest with it, and a version named here is "
        "never used again, even if its folder is gone.")

    @classmethod
    def upgrade(cls, data: dict) -> dict:
        """Schema 1 kept each check as a free dict with a `clean` flag."""
        return {**data, "checks": upgrade_checks(data.get("checks") or {})}


class LeakageDocs(VersionedRecord):
    """datasets/NAME/leakage_docs.json: documents check-leakage accepts or evaluation leaves out."""

    SCHEMA = 2
    allow: dict[str, str] = Field(default_factory=dict, description="Document id -> note: meant to hold questions.")
    exclude: dict[str, str] = Field(default_factory=dict, description="Document id -> why evaluation leaves it out.")


class LeakageAcceptances(VersionedRecord):
    """datasets/NAME/leakage_accepted.json: leakage findings reviewed and accepted (check-leakage --allow)."""

    accepted: list[LeakAcceptance] = Field(default_factory=list, description="Every acceptance, oldest first; a "
                                           "later one for the same finding replaces it.")


# -- schema 1 ------------------------------------------------------------------------------------

def upgrade_checks(old: dict[str, dict]) -> dict[str, dict]:
    """Return schema-1 check dicts as schema-2 check records (outcome from the old `clean` flag)."""
    new: dict[str, dict] = {}
    for name, record in old.items():
        if not isinstance(record, dict) or name not in DatasetChecks.model_fields:
            continue
        r = dict(record)
        base = {"at": r.get("at") or now(), "kb_snapshot": r.get("kb_snapshot"), "items_sha256": r.get("items_sha256"),
                "settings": r.get("settings") or {}, "current": r.get("current"),
                "outcome": "clean" if r.get("clean", True) else "findings"}
        if name == "leakage":
            new[name] = {**base, "ref": r.get("ref", ""), "checked": r.get("checked", 0), "items": r.get("items", []),
                         "allowed_docs": r.get("allowed_docs", []), "excluded_docs": r.get("excluded_docs", []),
                         "counts": r.get("counts", {})}
        elif name == "consistency":
            new[name] = {**base, "judge": r.get("judge", {}), "prompt_versions": r.get("prompt_versions", {}),
                         "items": r.get("items", 0), "tasks": r.get("tasks", 0), "flagged": r.get("flagged", []),
                         "unstable": r.get("unstable", []), "unscored": r.get("unscored", {}),
                         "settings": {"repeat": r.get("repeat"), "k": r.get("k")},
                         "usage": {"requests": r.get("requests", 0), "cache_hits": r.get("cache_hits", 0),
                                   "prompt_tokens": r.get("prompt_tokens", 0),
                                   "completion_tokens": r.get("completion_tokens", 0), "cost_usd": r.get("cost_usd")}}
        elif name == "duplicates":
            counts = {k: r[k] for k in ("clusters", "items_in_clusters", "label_conflicts", "rejected", "chunk_groups")
                      if isinstance(r.get(k), int)}
            new[name] = {**base, "counts": counts}
        elif name == "split":
            new[name] = {**base, "units": r.get("units", 0), "counts": r.get("counts", {}),
                         "settings": {k: r.get(k) for k in ("seed", "test_fraction", "reassign", "synthetic_in_test")}}
        elif name == "difficulty":
            new[name] = {**base, "assessed": r.get("graded", 0), "unmeasured": r.get("ungraded", 0),
                         "misfits": r.get("misfits", 0), "by_qtype": r.get("by_qtype", {}),
                         "target": r.get("target", ""), "target_counts": r.get("target_counts", {}),
                         "balance": r.get("balance"), "counts": r.get("counts", {})}
        elif name == "annotation":
            new[name] = {**base, "argilla": r.get("argilla", {}), "guideline_version": r.get("guideline_version"),
                         "conflict_items": r.get("conflicts", []), "agreement": r.get("agreement", {}),
                         "counts": {k: r[k] for k in ("labelled", "needs_adjudication", "pending") if isinstance(r.get(k), int)}}
    return new
