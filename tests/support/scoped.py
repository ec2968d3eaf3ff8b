"""A small scoped KB, Chinese and English, written straight into a workspace (the KB side reads scope from
documents; these tests need only scoped snapshots): two yearly travel policies, the 2026 one superseding
the 2025 one; salary bands for hr and managers; a bonus rule for hr only; a public leave rule; a remote
work rule valid from July 2026. And curate.toml's [scope] with versions, groups and four roles."""

from __future__ import annotations

import hashlib

from curate.kb import SnapshotStore
from curate.records import Chunk, ChunkerSettings, Document, Scope

TRAVEL_2025 = "2025 年差旅标准：出差到一线城市，每晚住宿费上限为 600 元，餐补每天 100 元。"
TRAVEL_2026 = "2026 年差旅标准：出差到一线城市，每晚住宿费上限为 800 元，餐补每天 120 元。"
BANDS = "Salary bands: level L5 pays 42,000 to 58,000 EUR a year; level L6 pays 55,000 to 75,000 EUR a year."
BONUS = "年终奖发放规则：绩效为 A 的员工，年终奖为三个月工资。"
LEAVE = "Every employee has 25 days of paid annual leave a year; unused days lapse on 31 March."
REMOTE = "From July 2026, staff may work remotely up to three days a week."

# doc id -> (text, title, scope)
DOCUMENTS = {
    "travel-2025": (TRAVEL_2025, "差旅标准 2025", Scope(version="2025", valid_from="2025-01-01", valid_to="2025-12-31")),
    "travel-2026": (TRAVEL_2026, "差旅标准 2026", Scope(version="2026", valid_from="2026-01-01",
                                                      supersedes=["travel-2025"])),
    "salary-bands": (BANDS, "Salary bands", Scope(groups=["hr", "manager"])),
    "bonus": (BONUS, "年终奖", Scope(groups=["hr"])),
    "leave": (LEAVE, "Annual leave", None),
    "remote": (REMOTE, "Remote work", Scope(version="2026", valid_from="2026-07-01")),
}

SCOPE_TOML = """
[scope]
versions = ["2025", "2026"]
groups = ["hr", "manager", "staff"]

[scope.roles]
intern = []
staff = ["staff"]
manager = ["manager", "staff"]
hr = ["hr", "staff"]
"""


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def scoped_kb(workspace, name: str = "policies", settings: bool = True) -> str:
    """Write the scoped KB as snapshot `name` (one chunk per document, `DOC#0`) and, with `settings`,
    the [scope] table into curate.toml; return the snapshot id."""
    documents, chunks = [], []
    for doc_id, (text, title, scope) in DOCUMENTS.items():
        documents.append(Document(doc_id=doc_id, text=text, title=title, text_sha256=_sha(text), scope=scope))
        chunks.append(Chunk(chunk_id=f"{doc_id}#0", doc_id=doc_id, text=text, start=0, end=len(text),
                            text_sha256=_sha(text), metadata={"title": title}, scope=scope))
    if settings:
        with workspace.config_path.open("a", encoding="utf-8") as config:
            config.write(SCOPE_TOML)
    return SnapshotStore(workspace).write(name, documents, chunks, ChunkerSettings(kind="imported")).snapshot_id
