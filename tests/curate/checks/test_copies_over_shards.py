"""Duplicate chunks over shards on either engine (issue 29, points 2 and 3): a snapshot in many shards forms
the groups and withholds the pairs one index of it does, however its documents are spread over the shards:
copies whose only other copy is in another shard, a footer that is boilerplate only counting the documents of
every shard, scopes and years that keep copies apart, a group the user undid. `check-dups --kb --engine` says
where it searched."""

from __future__ import annotations

import json
import random

from curate.checks.copies import chunk_groups
from curate.engine import EngineSettings, LocalEngine, open_engine
from curate.index.kb_index import KBIndex
from curate.kb import sha256_text
from curate.kb.store import SnapshotStore
from curate.records import Chunk, ChunkerSettings, Scope
from curate.workspace import Workspace, init_workspace

from tests.support.killed import kill_when, stage_script
from tests.support.many_chunks import many_chunks

FOOTER = "本文由客服中心整理，转载请注明出处。"
PAGE = ("退款须在购买后七天内申请，逾期不予受理。退款将原路退回，到账时间为三个工作日。发票可在订单页下载，"
        "电子发票与纸质发票具有同等法律效力。会员积分在退款后相应扣除。")


def _chunk(chunk_id: str, text: str, scope: Scope | None = None) -> Chunk:
    return Chunk(chunk_id=chunk_id, doc_id=chunk_id.split("#")[0], text=text, text_sha256=sha256_text(text),
                 scope=scope)


def _messy(count: int = 2_400, seed: int = 3) -> list[Chunk]:
    """Filler chunks of the bundled CMRC sample, with planted among them (far apart, so in different shards):
    exact copies, reformatted copies, a page with a footer three documents end with, one copy a year apart,
    one copy for another access group, and a Markdown heading that differs in its version."""
    filler, _, _ = many_chunks(count, seed=seed)
    planted = [
        _chunk("refund#0", PAGE), _chunk("refund-copy#0", PAGE),
        _chunk("refund-spaced#0", " ".join(PAGE[:30]) + PAGE[30:]),
        _chunk("footer-a#0", PAGE + FOOTER), _chunk("footer-b#3", "发票开具说明：请在订单页申请。" + FOOTER),
        _chunk("footer-c#1", "会员等级每年一月重新评定。" + FOOTER),
        _chunk("refund-2025#0", PAGE.replace("七天", "2025年起七天")),
        _chunk("refund-2026#0", PAGE.replace("七天", "2026年起七天")),
        _chunk("refund-hr#0", PAGE, Scope(groups=["hr"])),
        _chunk("refund-hr-copy#0", PAGE, Scope(groups=["hr"])),
        _chunk("head-2025#0", "# 退款办法（2025版）\n\n" + PAGE), _chunk("head-2026#0", "# 退款办法（2026版）\n\n" + PAGE),
    ]
    rng = random.Random(seed)
    chunks = list(filler)
    for chunk in planted:
        chunks.insert(rng.randrange(len(chunks) + 1), chunk)
    return chunks


def _write(workspace: Workspace, chunks, **layout) -> str:
    return SnapshotStore(workspace).write("kb", [], chunks, ChunkerSettings(kind="imported"), **layout).snapshot_id


def _dump(found) -> str:
    groups, withheld = found
    return json.dumps([[g.model_dump(mode="json") for g in groups], [w.model_dump(mode="json") for w in withheld]],
                      ensure_ascii=False)


def test_many_shards_group_what_one_index_groups(tmp_path):
    chunks = _messy()
    for name, listed in (("in order", chunks), ("scattered", sorted(chunks, key=lambda c: c.chunk_id.split("#")[1]))):
        one, many = init_workspace(tmp_path / name / "one"), init_workspace(tmp_path / name / "many")
        snapshot = _write(one, listed)
        assert _write(many, listed, parquet_from=0, shard_size=200) == snapshot
        assert len(SnapshotStore(many).shards(snapshot)) >= 12
        expected = chunk_groups(KBIndex(one, snapshot), undone=[["refund#0", "refund-spaced#0"]])
        found = chunk_groups(KBIndex(many, snapshot), undone=[["refund#0", "refund-spaced#0"]], engine=LocalEngine(2))
        assert _dump(found) == _dump(expected), name
        groups, withheld = found
        members = [set(g.chunks) for g in groups]
        shards = SnapshotStore(many).shards(snapshot)
        shard_of = {c.chunk_id: next(n for n, s in enumerate(shards) if s.first <= k < s.first + s.chunks)
                    for k, c in enumerate(listed)}
        footers = {"footer-a#0", "footer-b#3", "footer-c#1"}
        assert len({shard_of[c] for c in footers}) >= 2, name   # boilerplate only counting every shard's documents
        # the page's copies, across shards, the footer set aside; the hr copies join each other only
        assert {"refund-copy#0", "refund-spaced#0", "footer-a#0"} in members, name
        assert {"refund-hr#0", "refund-hr-copy#0"} in members
        assert not any("refund#0" in m for m in members)   # undone with the spaced copy, its first
        pairs = {(w.a, w.b): w for w in withheld} | {(w.b, w.a): w for w in withheld}
        assert pairs["refund-2025#0", "refund-2026#0"].differs == "2026 ≠ 2025"
        assert pairs["refund-2025#0", "refund-spaced#0"].why == "contained"
        assert pairs["refund-spaced#0", "head-2026#0"].differs == "(none) ≠ 2026"
        assert pairs["refund-spaced#0", "refund-hr-copy#0"].why == "scope"


def test_the_command_groups_copies_of_a_kb_in_shards_on_the_engine_it_names(curate, tmp_path, ray_address):
    chunks = _messy(12_000)
    _write(curate.workspace, chunks, shard_size=2_000)
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps({"id": "q1", "question": "退款多久到账？", "reference_answer": "三个工作日", "language": "zh",
                                "split": "test"}, ensure_ascii=False) + "\n", encoding="utf-8")
    curate("import", path, "--dataset", "big", "--source", "human", "--kb", "kb")
    on_ray = curate("check-dups", "--dataset", "big", "--kb", "--no-semantic", "--engine", ray_address, code=1)
    assert "note: searched 7 shards of kb-" in on_ray.stderr and f"on ray at {ray_address}" in on_ray.stderr
    stored = curate.workspace.kb_dir.glob("index/*/groups.json")
    groups = json.loads(next(stored).read_text(encoding="utf-8"))["groups"]
    assert {"refund#0", "refund-copy#0", "refund-spaced#0", "footer-a#0"} in [set(g["chunks"]) for g in groups]
    local = curate("check-dups", "--dataset", "big", "--kb", "--no-semantic", "--engine", "local", code=1)
    assert " on local" in local.stderr and local.stdout == on_ray.stdout
    assert f"KB: {len(groups)} groups of duplicate chunks" in local.stdout


def test_copies_are_joined_whatever_chunk_of_their_text_comes_first():
    # the page under a "2026" heading comes first: its body is the page's text, and its heading differs
    footers = [_chunk("footer-b#3", "发票开具说明：请在订单页申请。" + FOOTER), _chunk("footer-c#1", "会员等级每年一月重新评定。" + FOOTER)]
    chunks = [_chunk("head-2026#0", "# 退款办法（2026版）\n\n" + PAGE), _chunk("refund#0", PAGE), _chunk("refund-copy#0", PAGE),
              _chunk("footer-a#0", PAGE + FOOTER), *footers]
    groups, withheld = chunk_groups(KBIndex.of_chunks(chunks))
    assert [g.chunks for g in groups] == [["refund#0", "refund-copy#0", "footer-a#0"]]
    assert [(w.a, w.b, w.differs) for w in withheld if w.a == "head-2026#0"] == [
        ("head-2026#0", "refund#0", "2026 ≠ (none)"), ("head-2026#0", "refund-copy#0", "2026 ≠ (none)"),
        ("head-2026#0", "footer-a#0", "2026 ≠ (none)")]


def _sketches(workspace: Workspace, snapshot: str) -> dict[str, int]:
    """Each shard's stored sketch -> the inode of its folder (a sketch made again is a new folder)."""
    folder = workspace.kb_dir / "index" / snapshot / "shards"
    return {p.parent.parent.name: p.parent.stat().st_ino for p in sorted(folder.glob("*/sketch/meta.json"))}


def test_a_killed_search_resumes_from_the_shards_it_sketched_on_either_engine(tmp_path, ray_address):
    chunks = _messy(24_000)
    fresh = init_workspace(tmp_path / "fresh")
    snapshot = _write(fresh, chunks, shard_size=2_000)
    expected = _dump(chunk_groups(KBIndex(fresh, snapshot), engine=LocalEngine(2)))
    shards = len(SnapshotStore(fresh).shards(snapshot))
    assert len(_sketches(fresh, snapshot)) == shards >= 12
    for name, engine in (("local", "LocalEngine(2)"), ("ray", f"open_engine(EngineSettings('ray', {ray_address!r}))")):
        workspace = init_workspace(tmp_path / name)
        _write(workspace, chunks, shard_size=2_000)
        script = stage_script(f"chunk_groups(KBIndex(Workspace(Path({str(workspace.root)!r})), {snapshot!r}), "
                              "engine=ENGINE)", "from curate.index.kb_index import KBIndex\n"
                              "from curate.checks.copies import chunk_groups\nfrom curate.workspace import Workspace",
                              engine)
        kill_when(script, lambda: len(_sketches(workspace, snapshot)) >= 3, "shard sketched")
        kept = _sketches(workspace, snapshot)
        assert 3 <= len(kept) < shards, name
        found = chunk_groups(KBIndex(workspace, snapshot), engine=LocalEngine(2))
        assert _dump(found) == expected, name
        after = _sketches(workspace, snapshot)
        assert len(after) == shards and all(after[shard] == inode for shard, inode in kept.items()), name


def test_a_damaged_sketch_is_made_again(tmp_path):
    workspace = init_workspace(tmp_path / "ws")
    snapshot = _write(workspace, _messy(), parquet_from=0, shard_size=400)
    expected = _dump(chunk_groups(KBIndex(workspace, snapshot), engine=LocalEngine(1)))
    stored = sorted((workspace.kb_dir / "index" / snapshot / "shards").glob("*/sketch/bands.npy"))
    stored[0].write_bytes(b"not an npy")
    (stored[1].parent / "meta.json").write_text("{", encoding="utf-8")
    (stored[2].parent / "codes.npy").unlink()
    assert _dump(chunk_groups(KBIndex(workspace, snapshot), engine=LocalEngine(1))) == expected
    assert stored[0].read_bytes()[:6] == b"\x93NUMPY" and (stored[2].parent / "codes.npy").exists()   # made again
