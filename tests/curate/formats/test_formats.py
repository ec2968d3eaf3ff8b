import json

from curate.dataset import DatasetStore
from curate.dataset import import_items
from curate.release import export
from curate.formats.hf import EVIDENCE, ITEM_FEATURES
from curate.kb import SnapshotStore
from curate.records import EvalItem, Evidence

from tests.support import EXAMPLES

COMPARED = ("id", "question", "reference_answer", "key_points", "answerable", "qtype", "split", "tags", "source",
            "language")
EVIDENCE_COMPARED = ("evidence_id", "doc_id", "start", "end", "text", "grade", "chunk_ids", "partial")


def _items(workspace, name):
    return DatasetStore(workspace).items(name)


def _same(items):
    return [({k: getattr(i, k) for k in COMPARED},
             [{k: getattr(e, k) for k in EVIDENCE_COMPARED} for e in i.evidence]) for i in sorted(items, key=lambda i: i.id)]


def test_release_features_cover_the_item_schema():
    assert [name for name, _ in ITEM_FEATURES] == list(EvalItem.model_fields)
    assert [name for name, _ in EVIDENCE] == list(Evidence.model_fields)


def test_beir_export_then_import_gives_the_same_items(handbook, tmp_path):
    workspace = handbook.workspace
    store = DatasetStore(workspace)
    meta, items = store.meta("faq"), store.items("faq")
    items[0].split, items[1].split, items[3].source = "test", "dev", "production"
    items[0].key_points[0].evidence_ids = ["e1"]
    store.save(meta, items)
    handbook("release", "--dataset", "faq", "-m", "v1")
    out = tmp_path / "beir"
    handbook("export", "faq@v1", "--format", "beir", "--out", out)
    qrels = sorted(p.name for p in (out / "qrels").iterdir())
    assert qrels == ["dev.tsv", "test.tsv"]
    # a chunk's qrels grade is the best grade of the evidence it holds (t-3 has grades 2 and 1 in one chunk)
    assert (out / "qrels" / "dev.tsv").read_text().splitlines()[1:] == ["t-2\tupgrade.en.md#4\t2"]
    handbook("import", out, "--format", "beir", "--dataset", "back", "--source", "human")
    assert _same(_items(workspace, "back")) == _same(_items(workspace, "faq"))
    # exporting over an earlier export replaces it whole, when asked to
    handbook("export", "back", "--format", "beir", "--out", out, code=2)
    handbook("export", "back", "--format", "beir", "--out", out, "--force")
    assert len((out / "queries.jsonl").read_text().splitlines()) == 5


def test_plain_beir_folder_binary_qrels_are_fully_relevant(curate):
    curate("import", EXAMPLES / "scifact", "--format", "beir", "--dataset", "scifact", "--source", "human")
    items = _items(curate.workspace, "scifact")
    qrels = (EXAMPLES / "scifact" / "qrels" / "test.tsv").read_text().splitlines()[1:]
    assert len(items) == len({row.split("\t")[0] for row in qrels}) == 100
    assert sum(len(i.evidence) for i in items) == len(qrels)
    assert {(e.grade, e.located_by) for i in items for e in i.evidence} == {(2, "chunk_id")}
    assert {i.split for i in items} == {"test"}
    snapshot = DatasetStore(curate.workspace).meta("scifact").kb_snapshot
    chunk = SnapshotStore(curate.workspace).chunks(snapshot)[0]
    first = json.loads((EXAMPLES / "scifact" / "corpus.jsonl").read_text().splitlines()[0])
    assert (chunk.chunk_id, chunk.text, chunk.metadata["title"]) == (first["_id"], first["text"], first["title"])


def test_squad_file_builds_kb_and_items_with_answer_sentences(workspace, tmp_path):
    context = "长城是古代的防御工程。它始建于春秋战国时期，总长约两万公里。现在是著名景点。"
    squad = {"version": "v2", "data": [{"title": "长城", "paragraphs": [{"id": "P1", "context": context, "qas": [
        {"id": "Q1", "question": "长城始建于什么时候？", "answers": [
            {"text": "春秋战国时期", "answer_start": 99}, {"text": "春秋战国时期", "answer_start": 15},
            {"text": "春秋战国", "answer_start": 15}]},
        {"id": "Q2", "question": "长城有多少座城门？", "answers": [], "is_impossible": True}]}]}]}
    path = tmp_path / "squad.json"
    path.write_text(json.dumps(squad, ensure_ascii=False), encoding="utf-8")
    report = import_items(workspace, path, dataset="wall", source="human", format="squad")
    assert report.imported == ["Q1", "Q2"]
    q1, q2 = _items(workspace, "wall")
    (evidence,) = q1.evidence
    assert (q1.reference_answer, [k.text for k in q1.key_points]) == ("春秋战国时期", ["春秋战国时期"])
    assert evidence.text == "它始建于春秋战国时期，总长约两万公里。" and evidence.chunk_ids == ["P1"]
    assert context[evidence.start:evidence.end] == evidence.text
    assert json.loads(q1.provenance.extra) == {"title": "长城"}
    assert q1.answers == ["春秋战国时期", "春秋战国"]      # every accepted answer, most frequent first
    assert (q2.answerable, q2.qtype, q2.evidence) == (False, "unanswerable", [])


def test_squad_example_imports_every_question(workspace):
    report = import_items(workspace, EXAMPLES / "cmrc2018" / "cmrc2018_sample.json", dataset="cmrc",
                          source="human", format="squad", chunker="structure", chunk_size=200)
    items = _items(workspace, "cmrc")
    assert len(report.imported) == len(items) == 1042
    documents = {d.doc_id: d.text for d in SnapshotStore(workspace).documents(report.kb_snapshot)}
    for item in items:
        (evidence,) = item.evidence
        assert documents[evidence.doc_id][evidence.start:evidence.end] == evidence.text and evidence.chunk_ids


def test_jsonl_to_stdout_and_ragas_rows(handbook, tmp_path):
    out = handbook("export", "faq", "--out", "-").stdout
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in rows] == ["t-1", "t-2", "t-3", "t-4", "t-5"]
    assert EvalItem.model_validate(rows[0]).question == "LG-4031 是什么意思？"
    path = tmp_path / "ragas.jsonl"
    counts = export(handbook.workspace, ref="faq", format="ragas", out=str(path))
    ragas = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert counts == {"items": 5}
    assert set(ragas[0]) == {"id", "user_input", "reference", "reference_contexts", "reference_context_ids"}
    chunks = {c.chunk_id: c.text for c in SnapshotStore(handbook.workspace).chunks(
        DatasetStore(handbook.workspace).meta("faq").kb_snapshot)}
    for row in ragas:
        assert [chunks[i] for i in row["reference_context_ids"]] == row["reference_contexts"]
    assert "LG-4031 表示访问令牌已过期。" in ragas[0]["reference_contexts"][0]
    assert ragas[4]["reference_context_ids"] == [] and ragas[4]["reference"] is None


def test_hf_export_is_a_parquet_dataset_that_datasets_loads(handbook, tmp_path):
    import datasets

    from curate.formats.hf import item_from_row
    from curate.release import release, resolve_items
    workspace = handbook.workspace
    release(workspace, dataset="faq", message="v1")
    out = tmp_path / "faq-hf"
    written = export(workspace, ref="faq@v1", format="hf", out=str(out))
    items = resolve_items(workspace, "faq@v1")[0]
    assert written["items"] == len(items) and sorted(p.name for p in (out / "data").iterdir()) == ["unassigned.parquet"]
    loaded = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))
    rows = list(loaded["unassigned"])
    assert [item_from_row(r) for r in rows] == items     # every field survives, evidence spans included
    handbook("export", "faq", "--format", "hf", "--out", tmp_path / "draft-hf")
    assert (tmp_path / "draft-hf" / "README.md").read_text(encoding="utf-8").startswith("---\nconfigs:")
