"""Copies follow scope: chunks whose access groups, version, validity or supersedes differ are never copies
of one another, however equal their texts; `check-dups --kb` says why it withheld them."""

import json
from pathlib import Path

from curate.checks.copies import chunk_groups
from curate.index.kb_index import KBIndex
from curate.kb import SnapshotStore, import_chunks, ingest
from curate.records import ChunkGroup, ChunkGroups, EvalItem, Evidence, extend_evidence

POLICY = """# 差旅费用报销管理办法（{year}年版）

## 第一条 适用范围

本办法适用于公司全体正式员工、试用期员工及实习生因公出差所发生的交通、住宿、伙食补助等费用的报销。

## 第二条 住宿标准

一线城市（北京、上海、广州、深圳）每人每晚不超过{city}元；其他城市每人每晚不超过{other}元。超出部分由个人承担，特殊情况须经部门负责人书面批准。

## 第三条 伙食补助

出差期间伙食补助按每人每天{meal}元包干发放，不再另行报销餐费。

## 第四条 报销时限

员工应在出差结束后30日内，通过费控系统提交报销申请，并附发票原件及行程单；逾期未提交的，财务部有权不予受理。
"""
Y2025 = {"year": 2025, "city": 600, "other": 400, "meal": 100}
Y2026 = {"year": 2026, "city": 650, "other": 450, "meal": 120}
FRONT = {2025: "---\nversion: '2025'\nvalid_from: 2025-01-01\nvalid_to: 2025-12-31\n---\n",
         2026: "---\nversion: '2026'\nvalid_from: 2026-01-01\nsupersedes: [travel-2025.md]\n---\n"}


def _policies(tmp_path: Path, scoped: bool) -> Path:
    docs = tmp_path / ("scoped" if scoped else "plain")
    docs.mkdir()
    for values in (Y2025, Y2026):
        front = FRONT[values["year"]] if scoped else ""
        (docs / f"travel-{values['year']}.md").write_text(front + POLICY.format(**values), encoding="utf-8")
    return docs


def _deadline_chunks(workspace, snapshot_id: str) -> list[str]:
    return [c.chunk_id for c in SnapshotStore(workspace).chunks(snapshot_id) if "第四条" in c.text]


def test_two_versions_of_a_policy_are_never_copies(workspace, tmp_path):
    plain = ingest(workspace, [_policies(tmp_path, scoped=False)], name="plain", chunk_size=120)
    scoped = ingest(workspace, [_policies(tmp_path, scoped=True)], name="scoped", chunk_size=120)
    # the deadline section reads the same in both years: unscoped, the two chunks are exact copies
    deadline = _deadline_chunks(workspace, plain.snapshot_id)
    assert deadline == ["travel-2025.md#3", "travel-2026.md#3"]
    groups, _ = chunk_groups(KBIndex(workspace, plain.snapshot_id))
    assert [g.chunks for g in groups] == [deadline]
    # with their versions they are two versions, never interchangeable
    groups, withheld = chunk_groups(KBIndex(workspace, scoped.snapshot_id))
    assert groups == []
    pairs = {(w.a, w.b): w for w in withheld}
    same = pairs["travel-2025.md#3", "travel-2026.md#3"]
    assert (same.why, same.score) == ("scope", 100.0)
    assert same.differs == ("version 2025 ≠ 2026; valid from 2025-01-01 to 2025-12-31 ≠ from 2026-01-01; "
                            "supersedes nothing ≠ travel-2025.md")
    # the sections that differ only in the year and the amounts are withheld for their scope as well
    assert {w.why for w in withheld} == {"scope"}
    assert all(w.differs.startswith("version 2025 ≠ 2026") for w in withheld)
    # both are kept, each with its version
    versions = {c.chunk_id: c.scope.version for c in SnapshotStore(workspace).chunks(scoped.snapshot_id)}
    assert [versions[c] for c in _deadline_chunks(workspace, scoped.snapshot_id)] == ["2025", "2026"]


REFUND = "退款申请须在收货后30天内通过订单页面提交，逾期不予受理。"


def _import(workspace, tmp_path: Path, rows: list[dict]) -> str:
    path = tmp_path / "chunks.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    manifest, _ = import_chunks(workspace, path, name="shop")
    return manifest.snapshot_id


def test_copies_join_within_a_scope_and_never_across(workspace, tmp_path):
    rows = [{"chunk_id": "vip#0", "doc_id": "vip", "text": REFUND, "metadata": {"groups": ["vip"]}},
            {"chunk_id": "faq#0", "doc_id": "faq", "text": REFUND},
            {"chunk_id": "help#0", "doc_id": "help", "text": "  " + REFUND.replace("，", ", ")},   # a formatting copy
            {"chunk_id": "vip-old#0", "doc_id": "vip-old", "text": REFUND, "metadata": {"groups": ["vip"]}},
            {"chunk_id": "faq-near#0", "doc_id": "faq-near", "text": REFUND.replace("订单页面", "订单详情页面")}]
    snapshot = _import(workspace, tmp_path, rows)
    groups, withheld = chunk_groups(KBIndex(workspace, snapshot))
    assert sorted(sorted(g.chunks) for g in groups) == [["faq#0", "faq-near#0", "help#0"], ["vip#0", "vip-old#0"]]
    # each scope's first copy is said apart once from the other scope's, exact or near
    assert [(w.a, w.b, w.why, w.differs) for w in withheld] == [
        ("vip#0", "faq#0", "scope", "groups vip ≠ everyone"), ("vip#0", "faq-near#0", "scope", "groups vip ≠ everyone")]


def test_the_cli_says_which_pairs_scope_keeps_apart(curate, tmp_path):
    docs = _policies(tmp_path, scoped=True)
    curate("kb", "ingest", docs, "--name", "travel", "--chunk-size", "120")
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "q1", "question": "2026年出差住宿标准是多少？", "answerable": False},
                                ensure_ascii=False) + "\n", encoding="utf-8")
    curate("import", items, "--dataset", "d", "--source", "human", "--kb", "travel")
    out = curate("check-dups", "--dataset", "d", "--kb", "--no-semantic").stdout
    assert "KB: 0 groups of duplicate chunks" in out
    assert ("not joined, though alike: 4 pairs of chunks whose scopes differ (access groups, version, validity or "
            "supersedes): versions and audiences are not interchangeable") in " ".join(out.split())
    assert "version 2025 ≠ 2026" in out


def test_copies_from_anywhere_are_cut_to_their_scope(workspace, tmp_path):
    """A groups file joining chunks across scopes (written by hand, or by an older curate) extends no
    evidence across them: KBIndex.copies holds each chunk's copies in its own scope only."""
    rows = [{"chunk_id": "vip#0", "doc_id": "vip", "text": REFUND, "metadata": {"groups": ["vip"]}},
            {"chunk_id": "faq#0", "doc_id": "faq", "text": REFUND},
            {"chunk_id": "help#0", "doc_id": "help", "text": REFUND}]
    snapshot = _import(workspace, tmp_path, rows)
    index = KBIndex(workspace, snapshot)
    index.folder.mkdir(parents=True, exist_ok=True)
    ChunkGroups(snapshot=snapshot, at="2026-01-01T00:00:00+00:00", near_min=90.0,
                groups=[ChunkGroup(chunks=["vip#0", "faq#0", "help#0"], method="exact", min_score=100.0)],
                ).write(index.groups_path)
    assert index.copies == {"vip#0": ["vip#0"], "faq#0": ["faq#0", "help#0"], "help#0": ["faq#0", "help#0"]}
    items = [EvalItem(id=f"q{n}", question="退款期限？", language="zh", source="human",
                      evidence=[Evidence(evidence_id="e1", text=REFUND, chunk_ids=[chunk])])
             for n, chunk in enumerate(["vip#0", "faq#0"])]
    assert extend_evidence(items, index.copies) == 1
    assert [i.evidence[0].chunk_ids for i in items] == [["vip#0"], ["faq#0", "help#0"]]
