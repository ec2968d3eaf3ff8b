"""Mining for `curate generate` over shards on either engine (issue 29): a snapshot in many shards gives the pairs
`mine` gives over all its chunks in one process, in the same order, with the same ids, scores and counts of what
was left out, however its documents are spread over the shards: a rule's 2025 and 2026 editions, LG-4031 and
LG-4032, a code list and a code named in passing, each in other shards; a footer that is boilerplate only counting
the English documents of every shard; a sentence repeated all over the KB whose first copy stands for it. The
shards' sketches are kept: a second run makes none again, a damaged one is made again, a killed run resumes."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

from curate.engine import EngineSettings, LocalEngine, open_engine
from curate.generate.mine import NEVER_APART, Mined, mine
from curate.generate.mine_shards import mine_index
from curate.index.kb_index import KBIndex
from curate.kb import sha256_text
from curate.kb.store import SnapshotStore
from curate.records import Chunk, ChunkerSettings
from curate.workspace import Workspace, init_workspace

from tests.support.killed import kill_when, stage_script
from tests.support.many_chunks import many_chunks

WORDS = ("ledger", "invoice", "quota", "badge", "laptop", "printer", "visitor", "contract", "parcel", "vendor",
         "meeting", "budget", "office", "account", "report", "ticket", "server", "network", "policy", "refund")
VERBS = ("covers", "needs", "replaces", "lists", "checks", "opens", "closes", "moves", "holds", "sends")
BOILERPLATE = "boilerplate (its shape repeats in many passages)"
HANDBOOK = Path(__file__).resolve().parents[3] / "examples" / "handbook" / "docs"


def _chunk(chunk_id: str, text: str, title: str | None = None) -> Chunk:
    return Chunk(chunk_id=chunk_id, doc_id=chunk_id.split("#")[0], text=text, text_sha256=sha256_text(text),
                 metadata={"title": title} if title else {})


def _english(documents: int, rng: random.Random) -> list[Chunk]:
    """English documents of 2 to 5 chunks of made-up sentences, a third of them ending with a dated footer."""
    chunks = []
    for doc in range(documents):
        parts = rng.randint(2, 5)
        for k in range(parts):
            text = " ".join(f"The {rng.choice(WORDS)} of the {rng.choice(WORDS)} {rng.choice(VERBS)} "
                            f"{rng.randint(2, 90)} {rng.choice(WORDS)}s every {rng.choice(WORDS)}."
                            for _ in range(rng.randint(2, 4)))
            if k == parts - 1 and doc % 3 == 0:
                text += f"\nThis page was last updated on 2024-{doc % 12 + 1:02d}-{doc % 28 + 1:02d}; ask the desk."
            chunks.append(_chunk(f"en{doc}#{k}", text, title=f"Notes {doc}"))
    return chunks


PLANTED = [
    _chunk("travel-2025#0", "差旅补贴说明。2025年起，一线城市每日住宿补贴为 500 元，须凭发票报销。", "2025年差旅制度"),
    _chunk("travel-2026#0", "差旅补贴说明。2026 年起，一线城市每日住宿补贴为 650 元，须凭发票报销。", "2026年差旅制度"),
    _chunk("policy-2025#0", "From 2025 on, the daily hotel allowance in tier-one cities is 300 dollars, paid against "
           "receipts.", "Travel policy 2025"),
    _chunk("policy-2026#0", "From 2026 on, the daily hotel allowance in tier-one cities is 350 dollars, paid against "
           "receipts.", "Travel policy 2026"),
    _chunk("err-a#0", "# 错误码\n- LG-4031：路由权限未授予，请联系管理员处理。"),
    _chunk("err-b#1", "- LG-4032：来源地址不在白名单中，请在控制台添加。"),
    _chunk("err-list#0", "错误码 LG-4031、LG-4032 和 LG-4033 都表示权限问题，请逐一排查。"),
    _chunk("quota#0", "- LG-4291：本月配额不足，请升级套餐。"),
    _chunk("quota#2", "每月配额用完后，网关默认返回错误，拒绝新的请求，并在审计日志中记下一条错误码为 LG-4292 的记录，次日零点恢复。"),
    _chunk("errors-en#0", "- LG-4031 (route scope not granted): ask an admin to grant the scope."),
    _chunk("errors-en#3", "- LG-4032 (source address not allowed): add the address to the allow list."),
    _chunk("list-en#1", "LG-4031, LG-4032 and LG-4033 all mean a permission problem of some kind."),
    _chunk("s1#0", "安贞门站位于北京市朝阳区，是北京地铁10号线的一个车站。", "安贞门站"),
    _chunk("s2#1", "劲松站位于北京市朝阳区，是北京地铁10号线的一个车站。", "劲松站"),
]


def _messy(count: int = 2_400, seed: int = 5) -> list[Chunk]:
    """Chinese filler (sentences of the CMRC sample recombined: each stands in many chunks) and English
    documents in random order, with the planted chunks spread over them."""
    rng = random.Random(seed)
    filler, _, _ = many_chunks(count, seed=seed)
    chunks = filler + _english(60, rng)
    rng.shuffle(chunks)   # languages mixed in every shard
    spread = len(chunks) // len(PLANTED)
    for k, chunk in sorted(enumerate(PLANTED), key=lambda planted: -(planted[0] * 5 % len(PLANTED))):
        chunks.insert(k * 5 % len(PLANTED) * spread, chunk)   # the two sides of a pair far apart
    return chunks


def _scattered(chunks: list[Chunk]) -> list[Chunk]:
    """The chunks with each document's spread over the snapshot: every first chunk, then every second..."""
    return sorted(chunks, key=lambda c: c.chunk_id.split("#")[1])


def _write(workspace: Workspace, chunks, **layout) -> str:
    return SnapshotStore(workspace).write("kb", [], chunks, ChunkerSettings(kind="imported"), **layout).snapshot_id


def _dump(mined: Mined) -> str:
    return json.dumps([[p.model_dump(mode="json") for p in mined.pairs], list(mined.left_out.items())],
                      ensure_ascii=False)


def _shard_of(workspace: Workspace, snapshot: str, chunks: list[Chunk]) -> dict[str, int]:
    shards = SnapshotStore(workspace).shards(snapshot)
    return {c.chunk_id: next(n for n, s in enumerate(shards) if s.first <= k < s.first + s.chunks)
            for k, c in enumerate(chunks)}


def test_many_shards_mine_what_one_process_mines(tmp_path):
    for name, listed in (("mixed", _messy()), ("scattered", _scattered(_messy()))):
        workspace = init_workspace(tmp_path / name)
        snapshot = _write(workspace, listed, parquet_from=0, shard_size=200)
        assert len(SnapshotStore(workspace).shards(snapshot)) >= 12
        expected = mine(listed)
        assert _dump(mine_index(KBIndex(workspace, snapshot), LocalEngine(2))) == _dump(expected), name
        # what the KB was built to hold is found, across shards
        shard_of = _shard_of(workspace, snapshot, listed)
        found = {(p.kind, p.difference, p.token_a, p.token_b, p.a.chunk_id, p.b.chunk_id) for p in expected.pairs}
        for a, b, kind, difference, tokens in (
                ("travel-2025#0", "travel-2026#0", "near_copy", "date", ("2025", "2026")),
                ("policy-2025#0", "policy-2026#0", "near_copy", "date", ("2025", "2026")),
                ("s1#0", "s2#1", "near_copy", "name", ("安贞门站", "劲松站")),
                ("err-a#0", "err-b#1", "near_code", "code", ("LG-4031", "LG-4032")),
                ("errors-en#0", "errors-en#3", "near_code", "code", ("LG-4031", "LG-4032"))):
            assert shard_of[a] != shard_of[b] or name == "scattered", (name, a, b)
            assert any({x[4], x[5]} == {a, b} and x[:2] == (kind, difference) and {x[2], x[3]} == set(tokens)
                       for x in found), (name, a, b)
        assert not any("LG-4033" in (p.token_a, p.token_b) for p in expected.pairs)   # only ever in a list
        assert expected.left_out[NEVER_APART] >= 3   # LG-4292 in passing; LG-4033 in lists, in both languages
        footers = {c.doc_id for c in listed if "last updated on" in c.text}
        assert expected.left_out[BOILERPLATE] > 0 and len({shard_of[c.chunk_id] for c in listed
                                                           if c.doc_id in footers}) >= 6


def _sketches(workspace: Workspace, snapshot: str) -> dict[str, int]:
    """Each shard's stored mining sketch -> the inode of its folder (a sketch made again is a new folder)."""
    folder = workspace.kb_dir / "index" / snapshot / "shards"
    return {p.parent.parent.name: p.parent.stat().st_ino for p in sorted(folder.glob("*/mining/meta.json"))}


def test_sketches_are_kept_and_a_damaged_one_is_made_again(tmp_path):
    chunks = _scattered(_messy())
    workspace = init_workspace(tmp_path / "ws")
    snapshot = _write(workspace, chunks, parquet_from=0, shard_size=400)
    expected = _dump(mine(chunks))
    assert _dump(mine_index(KBIndex(workspace, snapshot), LocalEngine(1))) == expected
    kept = _sketches(workspace, snapshot)
    assert len(kept) == len(SnapshotStore(workspace).shards(snapshot))
    stored = sorted((workspace.kb_dir / "index" / snapshot / "shards").glob("*/mining/bands.npy"))
    stored[0].write_bytes(b"not an npy")
    (stored[1].parent / "meta.json").write_text("{", encoding="utf-8")
    (stored[2].parent / "stated.npy").unlink()
    assert _dump(mine_index(KBIndex(workspace, snapshot), LocalEngine(1))) == expected
    again = _sketches(workspace, snapshot)
    remade = {shard for shard, inode in again.items() if kept[shard] != inode}
    assert remade == {p.parent.parent.name for p in stored[:3]}


def test_a_killed_mining_resumes_from_the_shards_it_sketched(tmp_path):
    chunks, _, _ = many_chunks(12_000)
    chunks = _scattered(chunks + PLANTED)
    workspace = init_workspace(tmp_path / "ws")
    snapshot = _write(workspace, chunks, shard_size=1_000)
    shards = len(SnapshotStore(workspace).shards(snapshot))
    script = stage_script(f"mine_index(KBIndex(Workspace(Path({str(workspace.root)!r})), {snapshot!r}), ENGINE)",
                          "from curate.index.kb_index import KBIndex\nfrom curate.generate.mine_shards import "
                          "mine_index\nfrom curate.workspace import Workspace", "LocalEngine(1)")
    kill_when(script, lambda: len(_sketches(workspace, snapshot)) >= 3, "shard sketched")
    kept = _sketches(workspace, snapshot)
    assert 3 <= len(kept) < shards
    assert _dump(mine_index(KBIndex(workspace, snapshot), LocalEngine(2))) == _dump(mine(chunks))
    after = _sketches(workspace, snapshot)
    assert len(after) == shards and all(after[shard] == inode for shard, inode in kept.items())


def test_ray_mines_what_one_process_mines(tmp_path, ray_address):
    chunks = _scattered(_messy())
    workspace = init_workspace(tmp_path / "ws")
    snapshot = _write(workspace, chunks, parquet_from=0, shard_size=200)
    engine = open_engine(EngineSettings("ray", ray_address))
    try:
        found = mine_index(KBIndex(workspace, snapshot), engine)
    finally:
        engine.close()
    assert _dump(found) == _dump(mine(chunks))


def test_generate_mines_a_kb_in_shards_on_the_engine_it_names(curate, ray_address):
    chunks = _scattered(_messy())
    snapshot = _write(curate.workspace, chunks, parquet_from=0, shard_size=200)
    shards = len(SnapshotStore(curate.workspace).shards(snapshot))
    expected = [p.model_dump(mode="json") for p in mine(chunks).pairs]
    outputs = {}
    for dataset, engine, where in (("gen-l", "local", " on local"),
                                   ("gen-r", ray_address, f" on ray at {ray_address}")):
        result = curate("generate", "--dataset", dataset, "--kb", "kb", "--n", "6", "--engine", engine)
        assert f"note: mined {shards} shards of {snapshot}{where}" in result.stderr
        folder = next((curate.workspace.datasets_dir / dataset / "generated").iterdir())
        pairs = (folder / "pairs.jsonl").read_text(encoding="utf-8").splitlines()
        assert [json.loads(line) for line in pairs] == expected
        outputs[dataset] = result.stdout.replace(dataset, "DATASET")
    assert "mined 3 near code, 14 near copy" in outputs["gen-l"] and outputs["gen-l"] == outputs["gen-r"]


def test_a_small_kb_is_mined_as_before_in_the_commands_own_process(tmp_path):
    # one shard (chunks.jsonl): mine() over index.chunks, no engine, no note, and pyarrow never imported
    script = f"""
import sys
from pathlib import Path
from click.testing import CliRunner
from curate.cli.main import cli
from curate.workspace import init_workspace
root = str(init_workspace(Path({str(tmp_path / "ws")!r})).root)
runner = CliRunner(mix_stderr=False)
runner.invoke(cli, ["--workspace", root, "kb", "ingest", {str(HANDBOOK)!r}, "--name", "handbook"])
result = runner.invoke(cli, ["--workspace", root, "generate", "--dataset", "gen", "--kb", "handbook", "--n", "4"])
print(result.exit_code, "pyarrow" in sys.modules, "note:" in result.stderr)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0", "False", "False"], done.stderr[-2000:]
    folder = next((tmp_path / "ws" / "datasets" / "gen" / "generated").iterdir())
    assert not list((tmp_path / "ws" / "kb" / "index").glob("*/shards"))
    assert len((folder / "pairs.jsonl").read_text(encoding="utf-8").splitlines()) == 23
