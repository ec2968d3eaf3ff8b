"""The leakage search over shards on either engine (issue 29, point 2): a snapshot in many shards finds what
one finds; 100,000 chunks give the same snapshot (imported), findings, duplicate-chunk groups, chunk vectors,
mined pairs and index files on the local engine and on a local Ray cluster of two workers; a killed index build resumes from the shards it completed; the command
says where it searched."""

from __future__ import annotations

import hashlib
import json

import pytest

from curate.checks.copies import chunk_groups
from curate.checks.leakage.core import leak_check
from curate.checks.leakage.find import LeakSettings
from curate.checks.leakage.paraphrase import paraphrase_leaks
from curate.errors import InputError
from curate.checks.leakage.over_shards import kb_leaks
from curate.engine import EngineSettings, LocalEngine, open_engine
from curate.generate.mine_shards import mine_index
from curate.index.kb_index import KBIndex
from curate.index.shard_dense import build_dense_shards
from curate.index.shard_index import build_lexical
from curate.kb import sha256_text
from curate.fileio import jsonl_bytes
from curate.kb.store import SnapshotStore, import_chunks
from curate.records import ChunkerSettings, LeakageDocs
from curate.workspace import Workspace, init_workspace

from tests.support.killed import kill_when
from tests.support.many_chunks import many_chunks
from tests.support.tiny_model import tiny_model


def _write(workspace: Workspace, chunks, **layout) -> str:
    return SnapshotStore(workspace).write("kb", [], chunks, ChunkerSettings(kind="imported"), **layout).snapshot_id


def _dump(findings) -> list[dict]:
    return [f.model_dump(mode="json") for f in findings]


def _snapshot_files(workspace: Workspace, snapshot_id: str) -> dict[str, str]:
    folder = workspace.kb_dir / "snapshots" / snapshot_id
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "manifest.json"}


def _index_files(workspace: Workspace, snapshot_id: str) -> dict[str, str]:
    folder = workspace.kb_dir / "index" / snapshot_id / "shards"
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "meta.json"}


def test_many_shards_find_what_one_finds_whatever_the_order_of_the_chunks(tmp_path):
    chunks, items, leaked = many_chunks(3_000)
    # listed document by document, and with each document's chunks scattered over every shard
    for name, listed in (("in order", chunks), ("scattered", sorted(chunks, key=lambda c: c.chunk_id.split("#")[1]))):
        one, many = init_workspace(tmp_path / name / "one"), init_workspace(tmp_path / name / "many")
        snapshot = _write(one, listed)
        assert _write(many, listed, parquet_from=0, shard_size=250) == snapshot
        shards = SnapshotStore(many).shards(snapshot)
        assert len(shards) >= 12 and (name == "scattered") == any(s.foreign for s in shards)
        expected = kb_leaks(items, KBIndex(one, snapshot), LeakSettings(), set())
        assert leaked <= {f.item_id for f in expected}
        found = kb_leaks(items, KBIndex(many, snapshot), LeakSettings(), set(), engine=LocalEngine(2))
        assert _dump(found) == _dump(expected), name


def test_100000_chunks_give_the_same_findings_and_index_on_the_local_engine_and_on_ray(tmp_path, ray_address):
    chunks, items, leaked = many_chunks(100_000)
    export = tmp_path / "chunks.jsonl"   # imported on each engine: the same snapshot, file for file
    export.write_bytes(jsonl_bytes(c.model_dump(mode="json", include={"chunk_id", "doc_id", "text", "start", "end"})
                                   for c in chunks))
    here, there = init_workspace(tmp_path / "local"), init_workspace(tmp_path / "ray")
    snapshot = import_chunks(here, export, name="kb", shard_size=10_000, engine="local")[0].snapshot_id
    assert import_chunks(there, export, name="kb", shard_size=10_000, engine=ray_address)[0].snapshot_id == snapshot
    assert snapshot == _write(init_workspace(tmp_path / "one"), chunks, shard_size=10_000)   # as one process writes it
    assert _snapshot_files(there, snapshot) == _snapshot_files(here, snapshot)
    del chunks
    local = kb_leaks(items, KBIndex(here, snapshot), LeakSettings(), set(), engine=LocalEngine(2))
    local_copies = chunk_groups(KBIndex(here, snapshot), engine=LocalEngine(2))
    local_mined = mine_index(KBIndex(here, snapshot), LocalEngine(2))
    model = str(tiny_model(tmp_path / "model"))
    assert build_dense_shards(KBIndex(here, snapshot), model, LocalEngine(2)) == (10, 0)
    engine = open_engine(EngineSettings("ray", ray_address))
    try:
        assert engine.workers == 2
        on_ray = kb_leaks(items, KBIndex(there, snapshot), LeakSettings(), set(), engine=engine)
        copies_on_ray = chunk_groups(KBIndex(there, snapshot), engine=engine)
        mined_on_ray = mine_index(KBIndex(there, snapshot), engine)
        assert build_dense_shards(KBIndex(there, snapshot), model, engine) == (10, 0)
    finally:
        engine.close()
    assert leaked <= {f.item_id for f in local} and len(local) >= len(leaked)
    assert _dump(on_ray) == _dump(local)
    # copy detection: the same groups and withheld pairs (thousands of each: sentences recombined)
    assert len(local_copies[0]) > 1_000 and len(local_copies[1]) > 100
    assert [_dump(part) for part in copies_on_ray] == [_dump(part) for part in local_copies]
    # mining for generate: the same pairs and counts of what was left out (sentences recombined: near copies)
    assert len(local_mined.pairs) > 10 and _dump(mined_on_ray.pairs) == _dump(local_mined.pairs)
    assert list(mined_on_ray.left_out.items()) == list(local_mined.left_out.items())
    files = _index_files(here, snapshot)
    # folded texts, n-gram keys, copy sketches, mining sketches and chunk vectors of every shard
    assert len(files) == 15 * 10 and _index_files(there, snapshot) == files
    assert sum(name.endswith("vectors.npy") for name in files) == 10


def test_a_killed_index_build_resumes_from_its_completed_shards_on_either_engine(tmp_path, ray_address):
    chunks, items, _ = many_chunks(24_000)
    fresh = init_workspace(tmp_path / "fresh")
    snapshot = _write(fresh, chunks, shard_size=2_000)
    expected = kb_leaks(items, KBIndex(fresh, snapshot), LeakSettings(), set(), engine=LocalEngine(2))
    for name, engine in (("local", "LocalEngine(1)"), ("ray", f"open_engine(EngineSettings('ray', {ray_address!r}))")):
        workspace = init_workspace(tmp_path / name)
        _write(workspace, chunks, shard_size=2_000)
        script = ("from curate.engine import *\nfrom curate.index.kb_index import KBIndex\n"
                  "from curate.index.shard_index import build_lexical\nfrom curate.workspace import Workspace\n"
                  f"from pathlib import Path\nbuild_lexical(KBIndex(Workspace(Path({str(workspace.root)!r})), "
                  f"{snapshot!r}), {engine})\n")
        kill_when(script, lambda: len(list((workspace.kb_dir / "index" / snapshot / "shards").glob(
            "*/lexical/meta.json"))) >= 3, "shard indexed")
        left = 12 - len(list((workspace.kb_dir / "index" / snapshot / "shards").glob("*/lexical/meta.json")))
        built, done = build_lexical(KBIndex(workspace, snapshot), open_engine(EngineSettings("local", workers=2)))
        assert done >= 3 and built == left and built + done == 12, name
        assert _index_files(workspace, snapshot) == _index_files(fresh, snapshot), name
        found = kb_leaks(items, KBIndex(workspace, snapshot), LeakSettings(), set(), engine=LocalEngine(2))
        assert _dump(found) == _dump(expected), name


def test_the_command_searches_a_kb_in_shards_on_the_engine_it_names(curate, tmp_path, ray_address):
    chunks, items, leaked = many_chunks(12_000)
    _write(curate.workspace, chunks, shard_size=2_000)
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps({"id": i.id, "question": i.question, "reference_answer": i.reference_answer,
                                        "language": "zh", "split": "test"}, ensure_ascii=False) + "\n"
                            for i in items), encoding="utf-8")
    curate("import", path, "--dataset", "big", "--source", "human", "--kb", "kb")
    report = tmp_path / "leaks.json"
    result = curate("check-leakage", "--dataset", "big", "--no-semantic", "--engine", ray_address, "--report", report,
                    code=1)
    assert "note: searched 6 shards of kb-" in result.stderr and f"on ray at {ray_address}" in result.stderr
    assert leaked <= set(json.loads(report.read_text(encoding="utf-8"))["items"])
    local = curate("check-leakage", "--dataset", "big", "--no-semantic", "--engine", "local", code=1)
    assert "shards of kb-" in local.stderr and " on local" in local.stderr and local.stdout == result.stdout


def test_shards_written_before_they_named_neighbours_are_searched_the_same(tmp_path):
    import pyarrow.parquet as pq

    chunks, items, _ = many_chunks(1_500)
    one, old = init_workspace(tmp_path / "one"), init_workspace(tmp_path / "old")
    snapshot = _write(one, chunks)
    _write(old, chunks, parquet_from=0, shard_size=200)
    folder = old.kb_dir / "snapshots" / snapshot
    for path in sorted((folder / "chunks").glob("*.parquet")):   # as the first shards were written
        pq.write_table(pq.read_table(path).drop_columns(["prev", "next"]), path, compression="zstd")
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    for shard in manifest["shards"]:
        shard.pop("foreign")
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    expected = kb_leaks(items, KBIndex(one, snapshot), LeakSettings(), set())
    assert _dump(kb_leaks(items, KBIndex(old, snapshot), LeakSettings(), set(), engine=LocalEngine(1))) == _dump(expected)


def _paraphrased(chunks, items, rng) -> list:
    """Plant KB questions that ask 20 items' questions in other words (for a bag-of-characters model: the same
    characters shuffled, so no lexical rule finds them), half of them with the item's answer after them."""
    chunks = list(chunks)
    for k, item in enumerate(items[::50][:20]):
        shuffled = "".join(rng.sample(item.question.rstrip("？?"), len(item.question.rstrip("？?"))))
        for at in (1_000 + 97 * k, 2_500 + 17 * k)[:1 + (k % 3 == 0)]:   # some asked in two documents
            text = chunks[at].text + f"\n问：{shuffled}？" + (f"\n答：{item.reference_answer}。" if k % 2 else "")
            chunks[at] = chunks[at].model_copy(update={"text": text, "text_sha256": sha256_text(text),
                                                       "end": chunks[at].start + len(text)})
    return chunks


def test_paraphrases_and_documents_allowed_or_excluded_are_those_of_one_index(tmp_path):
    import random

    chunks, items, _ = many_chunks(3_000)
    chunks = sorted(_paraphrased(chunks, items, random.Random(7)), key=lambda c: c.chunk_id.split("#")[1])
    model = str(tiny_model(tmp_path / "model"))
    reports = []
    for name, layout in (("one", {}), ("many", dict(parquet_from=0, shard_size=250))):
        workspace = init_workspace(tmp_path / name, embedding_model=model)
        snapshot = _write(workspace, chunks, **layout)
        index = KBIndex(workspace, snapshot)
        assert (name == "many") == (len(SnapshotStore(workspace).shards(snapshot)) >= 12)

        def paraphrases(checked, index, skip_docs, found):
            return paraphrase_leaks(workspace, checked, index, skip_docs=skip_docs, found=found, threshold=0.999,
                                    engine=LocalEngine(2) if name == "many" else None)

        found = leak_check(items, index, ref="faq", paraphrases=paraphrases, engine=LocalEngine(2))
        docs = LeakageDocs()
        fixed = leak_check(items, index, ref="faq", docs=docs, allow_docs=["f5", "p7"], fix="exclude-docs",
                           paraphrases=paraphrases, engine=LocalEngine(2))
        reports.append((found, fixed, docs))
    (one, one_fixed, one_docs), (many, many_fixed, many_docs) = reports
    semantic = [f for f in one.findings if f.method == "semantic"]
    assert len(semantic) >= 10 and {f.kind for f in semantic} == {"question_in_kb", "qa_pair_in_kb"}
    assert one.paraphrase.kb_questions == many.paraphrase.kb_questions >= 20
    assert _dump(many.findings) == _dump(one.findings)
    # the documents of every open finding and of its copies excluded, as one index excludes them
    assert sorted(many_docs.exclude) == sorted(one_docs.exclude) and len(one_docs.exclude) >= 40
    assert any(f.copies for f in semantic)   # documents found by their copies' chunk ids
    assert many_fixed.newly_excluded == one_fixed.newly_excluded and sorted(many_docs.allow) == ["f5", "p7"]
    with pytest.raises(InputError, match="document 'nowhere' is not in KB snapshot"):
        leak_check(items, index, ref="faq", allow_docs=["f5", "nowhere"], engine=LocalEngine(2))
