"""curate: build and guard versioned evaluation sets for RAG systems.

The public API, for users and for evalrun (which imports curate through this module only):

- the workspace: `Workspace`, `find_workspace`, `init_workspace`;
- the records on disk (`curate.records`): `EvalItem`, `Evidence`, `Chunk`, `ReleaseManifest`,
  the check records, ... and `evidence_groups`, the one rule of what counts as one piece of evidence;
- the stores: `SnapshotStore` (KB snapshots), `DatasetStore` (drafts), `Releases` and `load_release`;
- the judge: `Judge`, `JudgeConfig`, `resolve_judge`, `PromptSet`, `verdict_model`;
- atomic writers, JSONL readers and `progress` bars;
- keeping keys out of files: `check_base_url` (a URL that carries credentials is refused);
- the errors: `CurateError` and its kinds.
"""

from curate.credentials import check_base_url
from curate.dataset import DatasetStore, items_digest, parse_ref
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
    dumps_json,
    iter_json_objects,
    jsonl_bytes,
    loads_json,
    read_text,
)
from curate.judge.client import Judge, Verdict
from curate.judge.config import JudgeConfig
from curate.judge.config import resolve as resolve_judge
from curate.judge.prompts import Prompt, PromptSet, VerdictOutput, cut, verdict_model
from curate.kb import SnapshotStore
from curate.locks import Busy, writing
from curate.progress import progress
from curate.records import (
    Chunk,
    DatasetChecks,
    EvalItem,
    Evidence,
    EvidenceGroup,
    JudgeUsage,
    LeakageCheck,
    Record,
    ReleaseManifest,
    VersionedRecord,
    evidence_groups,
    item_groups,
    retrieval_qrels,
    now,
    read_jsonl,
)
from curate.release import Releases, load_release
from curate.text.sentences import sentence_spans
from curate.toml_file import loads_toml, read_toml
from curate.usage import checked_cost, checked_tokens
from curate.version import __version__
from curate.workspace import Workspace, find_workspace, init_workspace

__all__ = [
    "Busy", "Chunk", "CurateError", "DatasetChecks", "DatasetStore", 
    "EvalItem", "Evidence", "EvidenceGroup", "InputError", "IntegrityError", "InvalidRecords", "Judge",
    "JudgeConfig", "JudgeUsage", "LeakageCheck", "NotFound", "Prompt", "PromptSet", "Record", "ReleaseManifest",
    "Releases", "SchemaVersionError", "SnapshotStore", "Verdict", "VerdictOutput", "VersionedRecord",
    "Workspace", "WorkspaceError", "__version__", "atomic_directory", "atomic_write_bytes", "atomic_write_json",
    "check_base_url", "cut", "dumps_json", "evidence_groups", "find_workspace", "init_workspace", "item_groups", "items_digest",
    "iter_json_objects", "jsonl_bytes", "load_release", "loads_json", "now", "parse_ref", "progress", "read_jsonl",
    "read_text", "resolve_judge", "retrieval_qrels", "sentence_spans", "verdict_model",
    "writing",
    "checked_cost", "checked_tokens", "loads_toml", "read_toml",
]
