"""A scoped knowledge base for the scope tests (English and Chinese): salary bands only HR (and managers)
may see, a 2025 travel policy superseded by the 2026 one, two tenants sharing one index, and items that
name their asker and moment. Built directly (a snapshot written with its chunks' scopes, items as curate's
own records), then checked for leakage and released as `hr@v1`.

Two systems under test share one naive index (`RETRIEVED`: what a search finds for each question, before
any scope): `scoped` filters it by the asker's groups and the moment it is given, and declines when the
best match is one the asker may not see; `leaky` returns it all.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from curate import Chunk, EvalItem, Evidence, Scope, SnapshotStore, check_leakage, import_items, release
from curate.records import ChunkerSettings, Document

# chunk id -> (document, text, scope)
CHUNKS = {
    "bands#0": ("bands", "Salary band B3 pays 4,200 EUR a month.", Scope(groups=["hr"])),
    "bands#1": ("bands", "Salary band B4 pays 5,100 EUR a month.", Scope(groups=["hr", "manager"])),
    "travel25#0": ("travel-2025", "In 2025 the daily travel allowance is 45 EUR.", Scope(version="2025")),
    "travel26#0": ("travel-2026", "In 2026 the daily travel allowance is 52 EUR.",
                   Scope(version="2026", supersedes=["travel-2025"])),
    "faq#0": ("faq", "The office opens at 9 a.m. on weekdays.", None),
    "leave#0": ("leave", "员工每年享有 15 天带薪年假。", None),
    "bonus#0": ("bonus", "经理级别的年终奖为三个月工资。", Scope(groups=["hr"])),
    "acme#0": ("acme", "The Acme contract renews on 2026-06-30.", Scope(groups=["tenant-a"])),
    "globex#0": ("globex", "The Globex contract renews on 2026-09-30.", Scope(groups=["tenant-b"])),
}
GROUPS = {chunk_id: (scope.groups if scope else None) for chunk_id, (_, _, scope) in CHUNKS.items()}
SCOPE_TOML = ('[scope]\nversions = ["2025", "2026"]\n'
              'groups = ["hr", "manager", "staff", "tenant-a", "tenant-b"]\n')

# id -> (question, language, asker_groups, as_of, evidence chunks (one evidence each), accepted answer)
ITEMS = {
    "band-hr": ("What does salary band B3 pay?", "en", ["hr"], None, "bands#0", "4,200 EUR a month"),
    "band-staff": ("How much does salary band B3 pay a month?", "en", ["staff"], None, "bands#0", "4,200 EUR a month"),
    "travel": ("What is the daily travel allowance?", "en", ["staff"], None, "travel26#0", "52 EUR"),
    "travel-2025": ("What was the daily travel allowance in 2025?", "en", ["staff"], "2025", "travel25#0", "45 EUR"),
    # both policies labelled as evidence: at the latest moment only the 2026 one is usable
    "travel-both": ("How much is the travel allowance per day?", "en", ["staff"], None, "travel25#0 travel26#0",
                    "52 EUR"),
    "office": ("When does the office open?", "en", None, None, "faq#0", "9 a.m."),
    "leave": ("员工每年有多少天年假？", "zh", [], None, "leave#0", "15 天"),
    "bonus": ("经理的年终奖是多少？", "zh", ["staff"], None, "bonus#0", "三个月工资"),
    "acme": ("When does the Acme contract renew?", "en", ["tenant-a"], None, "acme#0", "2026-06-30"),
    "globex": ("When does the Globex contract renew?", "en", ["tenant-b"], None, "globex#0", "2026-09-30"),
}
QUESTIONS = {question: item_id for item_id, (question, *_rest) in ITEMS.items()}

# what a naive index finds for each item's question, best first, before any scope is applied
RETRIEVED = {
    "band-hr": ["bands#0", "bands#1", "faq#0"],
    "band-staff": ["bands#0", "bands#1", "faq#0"],
    "travel": ["travel25#0", "travel26#0", "faq#0"],      # last year's policy ranked first
    "travel-2025": ["travel25#0", "travel26#0"],
    "travel-both": ["travel25#0", "faq#0"],
    "office": ["faq#0", "bands#0"],
    "leave": ["leave#0", "bonus#0"],
    "bonus": ["bonus#0", "leave#0"],
    "acme": ["acme#0", "globex#0"],
    "globex": ["globex#0", "acme#0"],
}
CALLS: list[dict] = []


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build(workspace, tmp_path: Path, *, scope_toml: str = SCOPE_TOML, items: dict | None = None,
          chunks: dict | None = None) -> str:
    """Write the scoped snapshot 'hr' (of `chunks`, default CHUNKS), import the items (default ITEMS) as
    dataset 'hr' and release hr@v1 (with `scope_toml` appended to curate.toml first); return the snapshot id."""
    table = CHUNKS if chunks is None else chunks
    if scope_toml:
        with workspace.config_path.open("a", encoding="utf-8") as config:
            config.write("\n" + scope_toml)
    texts: dict[str, list[tuple[str, Scope | None]]] = {}
    for chunk_id, (doc, text, scope) in table.items():
        texts.setdefault(doc, []).append((text, scope))
    documents, written = [], []
    for doc, parts in texts.items():
        full = "\n\n".join(text for text, _ in parts)
        documents.append(Document(doc_id=doc, text=full, text_sha256=_sha(full), scope=parts[0][1]))
    for chunk_id, (doc, text, scope) in table.items():
        start = next(d.text for d in documents if d.doc_id == doc).index(text)
        written.append(Chunk(chunk_id=chunk_id, doc_id=doc, text=text, start=start, end=start + len(text),
                             text_sha256=_sha(text), scope=scope))
    snapshot = SnapshotStore(workspace).write("hr", documents, written, ChunkerSettings(kind="imported")).snapshot_id
    rows = []
    for item_id, (question, language, askers, as_of, chunk_ids, answer) in (items or ITEMS).items():
        evidence = []
        for number, chunk_id in enumerate(chunk_ids.split(), start=1):
            doc, text, _ = table[chunk_id]
            start = next(c.start for c in written if c.chunk_id == chunk_id)
            evidence.append(Evidence(evidence_id=f"e{number}", doc_id=doc, start=start, end=start + len(text),
                                     text=text, grade=2, chunk_ids=[chunk_id]))
        rows.append(EvalItem(id=item_id, question=question, language=language, source="human", status="verified",
                             asker_groups=askers, as_of=as_of, reference_answer=answer, kb_snapshot=snapshot,
                             evidence=evidence, key_points=[{"text": answer, "evidence_ids": [evidence[-1].evidence_id]}]))
    path = tmp_path / "hr-items.jsonl"
    path.write_text("".join(json.dumps(r.model_dump(mode="json"), ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    import_items(workspace, path, dataset="hr", source="human", kb="hr")
    check_leakage(workspace, ref="hr", semantic=False)
    release(workspace, dataset="hr", message="v1")
    CALLS.clear()
    return snapshot


def may_see(chunk_id: str, asker_groups: list[str] | None) -> bool:
    """The test's own access rule: no groups, or one shared with the asker (an unknown asker: not checked)."""
    groups = GROUPS[chunk_id]
    return groups is None or asker_groups is None or bool(set(groups) & set(asker_groups))


def holds(chunk_id: str, as_of: str | None) -> bool:
    """The test's own validity rule for this KB: the 2025 policy holds in 2025 only, the 2026 one from 2026."""
    if chunk_id == "travel25#0":
        return as_of == "2025"
    if chunk_id == "travel26#0":
        return as_of != "2025"
    return True


def _answered(item_id: str, context: list[str]) -> dict:
    first = context[0]
    return {"answer": CHUNKS[first][1], "citations": [first]}


def leaky(question: str) -> dict:
    """Everything the index found, whoever asks: candidates, the first two as context, the first cited."""
    item_id = QUESTIONS[question]
    found = RETRIEVED[item_id]
    return {"candidates": found, "context": found[:2], **_answered(item_id, found[:2])}


def scoped(question: str, asker_groups: list[str] | None = None, asker_role: str | None = None,
           as_of: str | None = None) -> dict:
    """The index's finds filtered by the asker's groups and the moment; declines, in the question's language,
    when the best match is one the asker may not see."""
    item_id = QUESTIONS[question]
    CALLS.append({"item": item_id, "asker_groups": asker_groups, "asker_role": asker_role, "as_of": as_of})
    found = RETRIEVED[item_id]
    kept = [c for c in found if may_see(c, asker_groups) and holds(c, as_of)]
    if not may_see(found[0], asker_groups):
        declined = "抱歉，您无权查看该文档。" if ITEMS[item_id][1] == "zh" else "You do not have access to that document."
        return {"candidates": kept, "context": kept[:2], "answer": declined}
    return {"candidates": kept, "context": kept[:2], **_answered(item_id, kept[:2])}


def expected_leaks(trace: dict, asker_groups: list[str] | None) -> dict[str, list[str]]:
    """Return the leaks of one trace by the test's own rule: per layer, the chunks the asker may not see
    (none for an asker not named)."""
    if asker_groups is None:
        return {}
    found = {}
    for layer in ("candidates", "context", "citations"):
        leaked = [c for c in dict.fromkeys(trace.get(layer, [])) if not may_see(c, asker_groups)]
        if leaked:
            found[layer] = leaked
    return found
