"""Items and chunks of the bundled real corpora for the probe tests: CMRC2018 paragraphs (Chinese) and the
handbook (Chinese and English), each item's evidence mapped onto the chunks that hold it, and a BM25
index of each KB."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from curate.cli.main import cli as curate_cli
from curate.formats.squad import read_squad
from curate.index.bm25 import BM25
from curate.kb import chunk_documents, read_documents
from curate.records import Chunk, ChunkerSettings, EvalItem, Evidence, KeyPoint
from curate.text.normalize import language_of
from curate.workspace import init_workspace

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@dataclass
class Corpus:
    """A KB's chunks, its items (evidence mapped to chunk ids) and its BM25 index."""

    chunks: list[Chunk]
    items: list[EvalItem]
    bm25: BM25

    def gold(self, item: EvalItem) -> list[Chunk]:
        ids = evidence_ids(item)
        return [c for c in self.chunks if c.chunk_id in ids]


def evidence_ids(item: EvalItem) -> set[str]:
    return {i for e in item.evidence if e.grade > 0 for i in e.chunk_ids}


@pytest.fixture(scope="session")
def cmrc() -> Corpus:
    """The first 60 CMRC2018 paragraphs in chunks of about 200 characters; each question whose answer span
    lies inside one chunk is an item whose evidence is that chunk."""
    documents, raws = read_squad(EXAMPLES / "cmrc2018" / "cmrc2018_sample.json")
    chunks = chunk_documents(documents[:60], ChunkerSettings(kind="structure", size=200))
    items = []
    for raw in raws:
        fields = getattr(raw, "fields", None)
        if not fields or not fields.get("evidence"):
            continue
        (span,) = fields["evidence"]
        holders = [c.chunk_id for c in chunks if c.doc_id == span["doc_id"] and c.start <= span["start"]
                   and span["end"] <= c.end]
        if holders:
            items.append(EvalItem(id=fields["id"], question=fields["question"], language="zh", source="human",
                                  reference_answer=fields["reference_answer"], answers=fields["answers"],
                                  key_points=[KeyPoint(**k) for k in fields["key_points"]],
                                  evidence=[Evidence(evidence_id="e1", chunk_ids=holders, **span)]))
    return Corpus(chunks, items, BM25.build([c.text for c in chunks]))


@pytest.fixture(scope="session")
def handbook() -> Corpus:
    """The handbook's pages (zh and en) in chunks of about 500 characters; its questions whose every
    evidence quote one chunk holds."""
    documents = read_documents(sorted((EXAMPLES / "handbook" / "docs").glob("*.md")))
    chunks = chunk_documents(documents, ChunkerSettings(kind="structure", size=500))
    items = []
    for line in (EXAMPLES / "handbook" / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        evidence = []
        for n, quote in enumerate(row.get("evidence", []), start=1):
            holders = [c.chunk_id for c in chunks if quote in c.text]
            if holders:
                evidence.append(Evidence(evidence_id=f"e{n}", text=quote, chunk_ids=holders))
        if not row.get("answerable", True) or not evidence or len(evidence) < len(row["evidence"]):
            continue
        items.append(EvalItem(id=row["id"], question=row["question"], language=language_of(row["question"]),
                              source="human", reference_answer=row["reference_answer"],
                              answers=[row["reference_answer"]],
                              key_points=[KeyPoint(text=k) for k in row["key_points"]], evidence=evidence))
    return Corpus(chunks, items, BM25.build([c.text for c in chunks]))


def _curate(workspace, *args):
    result = CliRunner(mix_stderr=False).invoke(curate_cli, ["--workspace", str(workspace.root), *map(str, args)])
    assert result.exit_code == 0, (args, result.stdout, result.stderr, result.exception)


@pytest.fixture(scope="session")
def cmrc_release(tmp_path_factory):
    """A workspace holding cmrc@v1, the first articles of the CMRC2018 sample (one chunk per paragraph),
    checked for leakage."""
    folder = tmp_path_factory.mktemp("probe")
    sample = json.loads((EXAMPLES / "cmrc2018" / "cmrc2018_sample.json").read_text(encoding="utf-8"))
    sample["data"] = sample["data"][:40]     # 40 articles: their paragraphs are the KB, their questions the items
    (folder / "cmrc.json").write_text(json.dumps(sample, ensure_ascii=False), encoding="utf-8")
    workspace = init_workspace(folder / "ws")
    _curate(workspace, "import", folder / "cmrc.json", "--format", "squad", "--dataset", "cmrc", "--source", "human")
    _curate(workspace, "check-leakage", "--dataset", "cmrc")
    _curate(workspace, "release", "--dataset", "cmrc", "-m", "v1")
    return workspace
