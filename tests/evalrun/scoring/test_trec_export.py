"""Exports reproduce the numbers: ranx and trec_eval on the BEIR export's group qrels and on a run
written by `evalrun export-run` give evalrun's own values to 1e-9, with copies of chunks, "any of"
evidence and two-fact items in the set; the chunk-level qrels alone would not."""

import hashlib
import json

import pytest
from click.testing import CliRunner

from curate.checks.duplicates import check_dups
from curate.checks.leakage import check_leakage
from curate.dataset import DatasetStore, import_items
from curate.kb import SnapshotStore, ingest
from curate.release import export, release
from evalrun.cli.main import cli as evalrun_cli
from evalrun.records import read_run
from evalrun.runner import run
from tests.support import targets

KS = (1, 3, 5, 10)
NAMES = ("hit_rate", "recall", "precision", "mrr", "ndcg")
FACTS = ["大桥于2018年10月23日正式开通。", "大桥全长55公里。", "大桥的设计使用寿命为120年。",
         "大桥连接香港、珠海和澳门三地。", "主桥为三座斜拉桥。", "桥上设有双向六车道。"]


@pytest.fixture
def exported(workspace, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bridge.zh.md").write_text("\n\n".join(FACTS), encoding="utf-8")
    (docs / "bridge-copy.zh.md").write_text("\n\n".join(FACTS[:3]), encoding="utf-8")   # copies of three facts
    (docs / "other.en.md").write_text("\n\n".join(f"Unrelated passage number {n}." for n in range(8)),
                                      encoding="utf-8")
    ingest(workspace, [docs], name="kb", chunk_size=20)
    rows = [{"id": "one", "question": "大桥何时开通？", "evidence": [FACTS[0]]},
            {"id": "any", "question": "大桥有多长或寿命多久？", "evidence": [FACTS[1], FACTS[2]], "evidence_mode": "any"},
            {"id": "all", "question": "大桥连接哪些地方，主桥是什么？", "evidence": [FACTS[3], FACTS[4]]},
            {"id": "kp", "question": "开通时间和车道数？", "evidence": [FACTS[0], FACTS[1], FACTS[5]],
             "key_points": [{"text": "2018年开通", "evidence_ids": ["e1", "e2"]}, {"text": "双向六车道", "evidence_ids": ["e3"]}]},
            {"id": "none", "question": "大桥的造价是多少？", "answerable": False}]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    import_items(workspace, path, dataset="bridge", source="human", kb="kb")
    check_dups(workspace, dataset="bridge", kb=True, semantic_min=None)      # copies join the evidence groups
    check_leakage(workspace, ref="bridge", semantic=False)
    release(workspace, dataset="bridge", message="v1")
    chunk_ids = [c.chunk_id for c in SnapshotStore(workspace).chunks(DatasetStore(workspace).meta("bridge").kb_snapshot)]
    for item in DatasetStore(workspace).items("bridge"):      # a fixed shuffle of every chunk, per question
        targets.RANKINGS[item.question] = sorted(chunk_ids, key=lambda c: hashlib.sha256(f"{item.id}{c}".encode()).hexdigest())
    folder = run(workspace, ref="bridge@v1", target="tests.support.targets:ranked", out=tmp_path / "run")
    export(workspace, ref="bridge@v1", format="beir", out=str(tmp_path / "beir"))
    for layer in ("candidates", "context"):
        result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["export-run", str(folder), "--layer", layer,
                                                                  "--out", str(tmp_path / f"{layer}.trec"),
                                                                  "--workspace", str(workspace.root)])
        assert result.exit_code == 0, result.stderr
    return folder, tmp_path


def _ours(folder, layer):
    return {r.item_id: {f"{n}@{k}": r.values[f"{layer}/{n}@{k}"] for n in NAMES for k in KS}
            for r in read_run(folder).scores if f"{layer}/recall@1" in r.values}


@pytest.mark.parametrize("layer", ["candidates", "context"])
def test_ranx_on_the_exports_equals_evalrun(exported, layer):
    ranx = pytest.importorskip("ranx")
    folder, root = exported
    ours = _ours(folder, layer)
    assert set(ours) == {"one", "any", "all", "kp"}
    qrels = ranx.Qrels.from_file(str(root / "beir" / "groups" / "test.qrels"), kind="trec")
    reference = ranx.Run.from_file(str(root / f"{layer}.trec"), kind="trec")
    metrics = [f"{n}@{k}" for n in NAMES for k in KS]
    ranx.evaluate(qrels, reference, metrics, threads=1)
    worst = max(abs(ours[q][m] - float(reference.scores[m][q])) for q in ours for m in metrics)
    assert worst <= 1e-9


def test_trec_eval_on_the_exports_equals_evalrun(exported):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    folder, root = exported
    ours = _ours(folder, "candidates")
    qrels: dict = {}
    for line in (root / "beir" / "groups" / "test.qrels").read_text(encoding="utf-8").splitlines():
        q, _, doc, grade = line.split()
        qrels.setdefault(q, {})[doc] = int(grade)
    ranking: dict = {}
    for line in (root / "candidates.trec").read_text(encoding="utf-8").splitlines():
        q, _, doc, _, score, _ = line.split()
        ranking.setdefault(q, {})[doc] = float(score)
    measured = pytrec_eval.RelevanceEvaluator(qrels, {"recall.1,3,5,10", "P.1,3,5,10", "ndcg_cut.1,3,5,10"}).evaluate(ranking)
    for q in ours:
        for k in KS:
            assert abs(ours[q][f"recall@{k}"] - measured[q][f"recall_{k}"]) <= 1e-9
            assert abs(ours[q][f"precision@{k}"] - measured[q][f"P_{k}"]) <= 1e-9
            assert abs(ours[q][f"ndcg@{k}"] - measured[q][f"ndcg_cut_{k}"]) <= 1e-9


def test_the_chunk_level_qrels_alone_would_give_other_numbers(exported):
    """Why the group qrels exist: on chunk qrels, a copy counts twice and alternatives all count."""
    ranx = pytest.importorskip("ranx")
    folder, root = exported
    ours = _ours(folder, "candidates")
    qrels = ranx.Qrels({q: {d: int(g) for d, g in rows.items()}
                        for q, rows in _tsv(root / "beir" / "qrels" / "test.tsv").items()})
    raw = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["export-run", str(folder), "--chunks", "--out",
                                                           str(root / "chunks.trec"), "--workspace", str(root / "ws")])
    assert raw.exit_code == 0, raw.stderr
    reference = ranx.Run.from_file(str(root / "chunks.trec"), kind="trec")
    ranx.evaluate(qrels, reference, ["recall@10"], threads=1, make_comparable=True)
    assert any(abs(ours[q]["recall@10"] - float(reference.scores["recall@10"][q])) > 1e-6 for q in ours)


def _tsv(path):
    rows: dict = {}
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        q, doc, grade = line.split("\t")
        rows.setdefault(q, {})[doc] = grade
    return {q: {d: g for d, g in r.items() if int(g) > 0} for q, r in rows.items()}


def test_a_chunk_holding_two_facts_is_counted_where_trec_eval_cannot_follow(workspace, tmp_path):
    """One chunk holding two required facts finds both at its rank (evalrun's recall counts two); a
    TREC rank holds one id, so the exports count that item, and every other figure still agrees."""
    ranx = pytest.importorskip("ranx")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bridge.zh.md").write_text(FACTS[0] + FACTS[1] + "\n\n" + FACTS[2] + "\n\n" + FACTS[5], encoding="utf-8")
    ingest(workspace, [docs], name="kb", chunk_size=40)
    chunks = SnapshotStore(workspace).chunks(SnapshotStore(workspace).resolve("kb"))
    both = next(c.chunk_id for c in chunks if FACTS[0] in c.text and FACTS[1] in c.text)
    rows = [{"id": "two", "question": "大桥何时开通，有多长，寿命多久？", "evidence": FACTS[:3]},
            {"id": "one", "question": "车道数？", "evidence": [FACTS[5]]}]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    import_items(workspace, path, dataset="bridge", source="human", kb="kb")
    check_leakage(workspace, ref="bridge", semantic=False)
    release(workspace, dataset="bridge", message="v1")
    ids = [c.chunk_id for c in chunks]
    for item in DatasetStore(workspace).items("bridge"):
        targets.RANKINGS[item.question] = [both] + [c for c in ids if c != both]
    folder = run(workspace, ref="bridge@v1", target="tests.support.targets:ranked", out=tmp_path / "run")
    written = export(workspace, ref="bridge@v1", format="beir", out=str(tmp_path / "beir"))
    assert [n for key, n in written.items() if "several evidence groups" in key] == [1]
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["export-run", str(folder), "--out", str(tmp_path / "c.trec"),
                                                              "--workspace", str(workspace.root)])
    assert result.exit_code == 0, result.stderr
    assert "1 items where one rank finds several groups" in result.stderr
    ours = _ours(folder, "candidates")
    assert ours["two"]["recall@1"] == 2 / 3 and ours["two"]["precision@1"] == 1.0
    qrels = ranx.Qrels.from_file(str(tmp_path / "beir" / "groups" / "test.qrels"), kind="trec")
    reference = ranx.Run.from_file(str(tmp_path / "c.trec"), kind="trec")
    metrics = [f"{n}@{k}" for n in NAMES for k in KS]
    ranx.evaluate(qrels, reference, metrics, threads=1)
    differ = {(q, m) for q in ours for m in metrics if abs(ours[q][m] - float(reference.scores[m][q])) > 1e-9}
    assert differ and all(q == "two" and m.startswith("recall@") for q, m in differ)
