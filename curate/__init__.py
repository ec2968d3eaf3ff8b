"""curate: build and guard versioned evaluation sets for RAG systems.

The public API, for users and for evalrun (which imports curate through this module only). Each
`curate` command is a thin layer over one of these functions, whose keyword arguments carry the
command's option names (docs/reference/python.md):

- the workspace: `open_workspace`, `init_workspace` (and `Workspace`, `find_workspace`);
- knowledge-base snapshots: `ingest` (documents chunked), `import_chunks` (production chunks as they are);
- datasets: `import_items`, `remap` (evidence onto another snapshot);
- the checks: `check_dups`, `check_leakage`, `split`, `grade`, and `add_failures` (the monthly
  regression flow); `generate` (questions mined from the KB, each kept for a stated reason); their pure cores (items in, findings out) are `curate.checks.leakage.core.leak_check`,
  `curate.checks.split.core.assign` and `curate.failures.core.failures_from`;
- releases: `release`, `load_release`;
- the records on disk (`curate.records`): `EvalItem`, `Evidence`, `Chunk`, `ReleaseManifest`,
  the check records, ... and `evidence_groups`, the one rule of what counts as one piece of evidence;
- the stores: `SnapshotStore` (KB snapshots), `DatasetStore` (drafts), `Releases` and `load_release`;
- the judge: `Judge`, `JudgeConfig`, `resolve_judge`, `PromptSet`, `verdict_model`;
- atomic writers, JSONL readers and `progress` bars;
- keeping keys out of files: `check_base_url` (a URL that carries credentials is refused);
- the errors: `CurateError` and its kinds;
- Argilla, as evalrun's judge review uses it: `connect_argilla`, `ensure_argilla_dataset`, `log_records`, ...;
- scope: `ScopeIndex`, `usable_view`, `check_layer`, `moment_of`, `version_order` (the usability rule
  evalrun checks runs with), and `salient`, the numbers, dates and codes a text states.
"""

from curate.annotate.shared import (
    argilla_errors,
    argilla_markdown,
    argilla_members,
    argilla_records,
    argilla_sdk,
    connect_argilla,
    ensure_argilla_dataset,
    find_argilla_dataset,
    log_records,
)
from curate.checks.difficulty import grade
from curate.checks.duplicates import check_dups
from curate.checks.leakage import check_leakage
from curate.checks.split import split
from curate.credentials import check_base_url
from curate.dataset import DatasetStore, import_items, items_digest, parse_ref, remap
from curate.errors import (
    CurateError,
    InputError,
    IntegrityError,
    InvalidRecords,
    NotFound,
    SchemaVersionError,
    WorkspaceError,
)
from curate.fileio import (
    atomic_directory,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_jsonl,
    dumps_json,
    iter_json_objects,
    jsonl_bytes,
    loads_json,
    read_text,
)
from curate.guidelines import relevance_grading
from curate.judge.budget import Budget, messages_tokens
from curate.judge.client import Judge, Verdict
from curate.judge.config import JudgeConfig
from curate.judge.config import resolve as resolve_judge
from curate.judge.prompts import Prompt, PromptSet, VerdictOutput, cut, verdict_model
from curate.failures.add import add_failures
from curate.generate.mine import CODE as CODE_PATTERN
from curate.generate.core import mined_candidates
from curate.generate.endpoint import generator_config
from curate.generate.run import generate
from curate.index.kb_index import KBIndex
from curate.kb import SnapshotStore, import_chunks, ingest
from curate.locks import Busy, writing
from curate.progress import progress
from curate.records import (
    ArgillaTarget,
    Chunk,
    DatasetChecks,
    EvalItem,
    Evidence,
    EvidenceGroup,
    JudgedGrades,
    JudgeUsage,
    LeakageCheck,
    RETRIEVAL_GRADES,
    ChunkGrade,
    Record,
    ReleaseManifest,
    Scope,
    ScopeSettings,
    VersionedRecord,
    evidence_groups,
    item_groups,
    retrieval_qrels,
    now,
    read_jsonl,
    read_judged_grades,
)
from curate.release import Releases, load_release, release
from curate.scope import (
    STALE_REASONS,
    MomentError,
    ScopeIndex,
    UnusableEvidence,
    UsableView,
    check_layer,
    moment_of,
    usable_view,
    version_order,
)
from curate.text.normalize import fold, language_of
from curate.text.salient import salient
from curate.text.sentences import sentence_spans
from curate.toml_file import loads_toml, read_toml
from curate.usage import checked_cost, checked_tokens
from curate.version import __version__
from curate.workspace import BUNDLED_GUIDELINES, WORKSPACE_ENV, Workspace, find_workspace, init_workspace, open_workspace

__all__ = [
    "Busy", "Chunk", "CurateError", "DatasetChecks", "DatasetStore", "EvalItem", "Evidence", "EvidenceGroup",
    "InputError", "IntegrityError", "InvalidRecords", "Judge", "JudgeConfig", "JudgeUsage", "LeakageCheck",
    "NotFound", "Prompt", "PromptSet", "Record", "ReleaseManifest", "Releases", "SchemaVersionError", "Scope", "ScopeSettings",
    "SnapshotStore", "Verdict", "VerdictOutput", "VersionedRecord", "WORKSPACE_ENV", "Workspace", "WorkspaceError", "__version__",
    "CODE_PATTERN", "add_failures", "fold", "generate", "language_of", "atomic_directory", "atomic_write_bytes", "atomic_write_json", "check_base_url", "check_dups",
    "check_leakage", "checked_cost", "checked_tokens", "cut", "dumps_json", "evidence_groups", "find_workspace",
    "grade", "import_chunks", "import_items", "ingest", "init_workspace", "item_groups", "items_digest",
    "iter_json_objects", "jsonl_bytes", "load_release", "loads_json", "loads_toml", "now", "open_workspace",
    "parse_ref", "progress", "read_jsonl", "read_text", "read_toml", "release", "remap", "resolve_judge",
    "retrieval_qrels", "sentence_spans", "split", "verdict_model", "writing",
    # scope (evalrun checks every layer of a run with these)
    "STALE_REASONS", "MomentError", "ScopeIndex", "UnusableEvidence", "UsableView", "check_layer", "moment_of",
    "salient", "usable_view", "version_order",
    # Argilla, for evalrun's judge review (the SDK is imported only when called: the argilla extra)
    "ArgillaTarget", "BUNDLED_GUIDELINES", "argilla_errors", "argilla_markdown", "argilla_members", "argilla_records",
    "argilla_sdk", "atomic_write_jsonl", "connect_argilla", "ensure_argilla_dataset", "find_argilla_dataset",
    "log_records",
    # the judge's grades of retrieved chunks: evalrun writes them, annotate push --suggest-from reads them
    "ChunkGrade", "JudgedGrades", "RETRIEVAL_GRADES", "read_judged_grades",
    # the judge's budget, and the guideline text a judge grading chunks is given
    "Budget", "messages_tokens", "relevance_grading",
    # a snapshot's index (BM25, stored embeddings) and mined questions about absent content: evalrun's probes
    "KBIndex", "mined_candidates", "generator_config",
]
