"""Records: a pydantic model, with a docstring on every field, for every file curate writes.

- `kb`: snapshot manifest, documents, chunks, KB names, duplicate-chunk groups;
- `item`: evaluation items with their evidence, key points and status history;
- `evidence`: the one rule of what counts as one piece of evidence (evidence groups);
- `checks`: one `CheckRecord` base for every check, and the dataset's own record;
- `release`: the release manifest;
- `scope`: a chunk's access groups and validity, the [scope] settings, evidence scope makes unusable;
- `judge`: the judge's cached answers;
- `generated`: questions made from the KB (`curate generate`): mined pairs, probes, candidates and their
  filters, an item's generation record;
- `judged`: the judge's grades of retrieved chunks (written by evalrun, read by `annotate push --suggest-from`);
- `annotation`: what was pushed to Argilla, and what annotators did with the judge's suggestions;
- `reports`: what `--report FILE` writes;
- `failures`: each batch of production failures `curate add-failures` added.

Each versioned record is read back through `VersionedRecord.read` / `parse` (one reader per kind);
a newer schema version stops with one line.
"""

from curate.records.annotation import (
    AnnotationState,
    ArgillaTarget,
    JudgeCheck,
    JudgeSuggestion,
    JudgeSuggestionsPulled,
    PushedItem,
)
from curate.records.base import Record, VersionedRecord, now, read_jsonl, validate_lines
from curate.records.evidence import (
    EvidenceGroup,
    evidence_groups,
    extend_evidence,
    extend_with_copies,
    item_groups,
    retrieval_qrels,
)
from curate.records.checks import (
    AnnotationCheck,
    BalanceRecord,
    CheckRecord,
    ConsistencyCheck,
    DatasetChecks,
    DatasetMeta,
    DifficultyCheck,
    DuplicatesCheck,
    JudgeUsage,
    LeakAcceptance,
    LeakageAcceptances,
    LeakageCheck,
    LeakageDocs,
    LeakFinding,
    LeakStatus,
    Outcome,
    SplitCheck,
)
from curate.records.item import (
    DIFFICULTIES,
    QTYPES,
    SOURCES,
    SPLITS,
    STATUSES,
    UNRELEASED_STATUSES,
    Difficulty,
    EvalItem,
    reviewed_by_person,
    Evidence,
    KeyPoint,
    Language,
    Production,
    ProductionAsked,
    Provenance,
    QType,
    RelevanceGrade,
    Source,
    Split,
    Status,
    StatusChange,
)
from curate.records.failures import FailureBatch, FailureSource, PromotedDuplicate
from curate.records.judge import JudgeCacheEntry, TokenUsage
from curate.records.generated import (
    Candidate,
    CandidateEvidence,
    CandidateKeyPoint,
    FilterVerdict,
    Generation,
    MinedPair,
    Passage,
    Probe,
)
from curate.records.judged import RETRIEVAL_GRADES, ChunkGrade, JudgedGrades, read_judged_grades
from curate.records.kb import (
    Chunk,
    ChunkerSettings,
    ChunkGroup,
    ChunkGroups,
    CopySketchMeta,
    MineSketchMeta,
    Document,
    EmbeddingKeys,
    KBNames,
    LexicalIndexMeta,
    MetadataValue,
    ScopeCount,
    ScopeCounts,
    SnapshotManifest,
    WithheldPair,
)
from curate.records.release import ReleaseManifest, ReleaseScope
from curate.records.scope import Scope, ScopeRule, ScopeSettings, UnusableEvidence
from curate.records.reports import (
    ConsistencyOutcome,
    ConsistencyReportFile,
    DuplicateCluster,
    DuplicateEdge,
    DuplicatesReport,
    LeakageReport,
)

__all__ = [
    "AnnotationCheck", "AnnotationState", "ArgillaTarget", "BalanceRecord", "CheckRecord", "Chunk", "ChunkGroup",
    "ChunkGrade", "ChunkGroups", "ChunkerSettings", "ConsistencyCheck", "ConsistencyOutcome", "ConsistencyReportFile", "DIFFICULTIES", "DatasetChecks", "DatasetMeta",
    "Difficulty", "DifficultyCheck", "Document", "DuplicateCluster", "EmbeddingKeys", "DuplicateEdge", "DuplicatesCheck",
    "DuplicatesReport", "EvalItem", "Evidence", "EvidenceGroup", "FailureBatch", "FailureSource", "JudgeCacheEntry", "JudgeCheck", "JudgeSuggestion", "JudgeSuggestionsPulled",
    "JudgeUsage", "JudgedGrades",
    "KBNames", "KeyPoint", "Language", "LeakAcceptance", "LeakFinding", "LeakStatus", "LeakageAcceptances", "LeakageCheck", "LeakageDocs", "LeakageReport", "LexicalIndexMeta", "CopySketchMeta", "MineSketchMeta", "MetadataValue", "Outcome", "Production", "ProductionAsked", "Provenance",
    "PromotedDuplicate", "PushedItem", "QTYPES", "QType", "RETRIEVAL_GRADES", "Record", "RelevanceGrade", "ReleaseManifest", "ReleaseScope", "SOURCES", "SPLITS",
    "STATUSES", "Scope", "ScopeCount", "ScopeCounts", "ScopeRule", "ScopeSettings", "SnapshotManifest", "Source", "Split", "SplitCheck", "Status", "StatusChange", "TokenUsage",
    "UNRELEASED_STATUSES", "Candidate", "CandidateEvidence", "CandidateKeyPoint", "FilterVerdict", "Generation",
    "MinedPair", "Passage", "Probe", "UnusableEvidence", "VersionedRecord", "WithheldPair", "evidence_groups", "extend_evidence", "extend_with_copies", "item_groups", "now", "read_judged_grades", "reviewed_by_person", "read_jsonl", "retrieval_qrels", "validate_lines",
]
