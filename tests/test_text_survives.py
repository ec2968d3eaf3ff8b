"""Text survives: U+2028, U+2029 and U+0085 inside a question, answer, evidence quote or document come
back exactly from every command, and input JSON or CSV cannot hold (deep nesting, overlong numbers,
lone surrogates, NaN, a quote left open, a repeated header) is one line naming file, line and field,
exit 2, with nothing written."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from curate.dataset import DatasetStore
from curate.errors import InputError
from curate.kb import SnapshotStore
from curate.release import Releases, load_release
from evalrun.runner.targets import logged_traces

ODD = "\u2028\u2029\u0085"  # line separator, paragraph separator, next line: text to JSON, line ends to str.splitlines
QUESTION = f"When does{ODD}a token expire?"
ANSWER = f"After{ODD}one hour."
QUOTE = f"Tokens expire{ODD}after one hour."
DOCUMENT = f"# Tokens\n\n{QUOTE} Renew them{ODD}before then.\n"


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def _tree(root: Path) -> dict[str, str]:
    """Return {relative path: sha256} of every file under `root`, folders as "folder"."""
    return {p.relative_to(root).as_posix(): "folder" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*"))}


def test_line_separators_in_text_round_trip(workspace, curate, data_dir, tmp_path):
    document = _jsonl(tmp_path / "odd.jsonl", [{"doc_id": "odd", "title": "Tokens", "text": DOCUMENT}])
    curate("kb", "ingest", data_dir / "docs", document, "--name", "docs")
    items = _jsonl(tmp_path / "items.jsonl", [
        {"id": "odd-1", "question": QUESTION, "answer": ANSWER, "evidence": [QUOTE]},
        {"id": "plain", "question": "Who can run the upgrade command?", "answer": "Only administrators.",
         "evidence": ["Only  administrators can run the upgrade command;"]},
    ])
    curate("import", items, "--dataset", "faq", "--source", "human", "--kb", "docs")

    item = {i.id: i for i in DatasetStore(workspace).items("faq")}["odd-1"]
    assert (item.question, item.reference_answer, item.evidence[0].text) == (QUESTION, ANSWER, QUOTE)
    assert item.evidence[0].located_by == "exact"
    texts = {d.doc_id: d.text for d in SnapshotStore(workspace).documents(item.kb_snapshot)}
    assert texts["odd"] == DOCUMENT
    assert texts["odd"][item.evidence[0].start:item.evidence[0].end] == QUOTE

    assert "faq: 2 items" in curate("show", "faq").stdout
    curate("release", "--dataset", "faq", "-m", "odd text")
    _, released = load_release(Releases(workspace, "faq").path("v1"))
    odd = next(i for i in released if i.id == "odd-1")
    assert (odd.question, odd.reference_answer, odd.evidence[0].text) == (QUESTION, ANSWER, QUOTE)
    assert "faq@v1: 2 items" in curate("show", "faq@v1").stdout

    exported = curate("export", "faq@v1", "--format", "jsonl", "--out", "-").stdout
    rows = {row["id"]: row for row in map(json.loads, filter(None, exported.split("\n")))}
    assert len(rows) == 2
    assert (rows["odd-1"]["question"], rows["odd-1"]["reference_answer"], rows["odd-1"]["evidence"][0]["text"]) == (
        QUESTION, ANSWER, QUOTE)

    assert "documents       3" in curate("kb", "show", "docs").stdout
    curate("check-leakage", "--dataset", "faq@v1", "--no-semantic")


def _refused(curate, args: list, file: Path, line: int, field: str | None, message: str):
    """Run a command that must refuse `file`: exit 2, one error line naming file:line (and field), nothing written."""
    before = _tree(curate.workspace.root)
    result = curate(*args, code=2)
    errors = [text for text in result.stderr.splitlines() if text.startswith("error:")]
    located = [text for text in errors if f"{file}:" in text]
    where = f"error: {file}:{line}: " + (f"field '{field}': " if field else "")
    assert len(located) == 1 and located[0].startswith(where) and message in located[0], result.stderr
    assert errors == located                  # one bad record, one line
    assert _tree(curate.workspace.root) == before


GOOD_ITEM = '{"id": "n-1", "question": "How long does a token last?", "answerable": false}'
BAD_ITEMS = {
    "deep nesting": ('{"id": "n-2", "question": "q?", "notes": ' + "[" * 100_000 + "]" * 100_000 + "}",
                     "notes", "nested too deeply"),
    "a 5,000-digit number": ('{"id": "n-2", "question": "q?", "score": ' + "9" * 5000 + "}",
                             "score", "a number with more than 4300 digits"),
    "a lone high surrogate": ('{"id": "n-2", "question": "bad \\ud800 text"}',
                              "question", "lone surrogate \\ud800 in a string (not valid Unicode)"),
    "a lone low surrogate": ('{"id": "n-2", "question": "q?", "answer": "\\uDC00\\uD83D"}',
                             "answer", "lone surrogate \\udc00 in a string"),
    "NaN": ('{"id": "n-2", "question": "q?", "score": NaN}', "score", "NaN is not a number JSON can hold"),
    "Infinity": ('{"id": "n-2", "question": "q?", "score": -Infinity}', "score", "-Infinity is not a number"),
    "a float beyond range": ('{"id": "n-2", "question": "q?", "score": 1e400}', "score", "out of range"),
}


@pytest.mark.parametrize("case", BAD_ITEMS)
def test_bad_jsonl_item_is_one_line_and_writes_nothing(handbook, tmp_path, case):
    text, field, message = BAD_ITEMS[case]
    path = tmp_path / "items.jsonl"
    path.write_text(f"{GOOD_ITEM}\n{text}\n", encoding="utf-8")
    _refused(handbook, ["import", path, "--dataset", "faq", "--source", "human"], path, 2, field, message)


BAD_CSV = {
    "a quote left open to the end": ('id,question,answer\nn-1,"How long?,an hour\nn-2,why?,because\n',
                                     2, "question", "unterminated quote: this quoted field runs to the end"),
    "a quote that swallows a line": ('id,question,answer\nn-1,"How long?,an hour\nn-2,"why?",because\n',
                                     2, "question", "runs on to line 3"),
    "a repeated header": ("id,question,answer,question\nn-1,q?,a,q2?\n", 1, "question", "named twice in the header"),
    "an empty header cell": ("id,,answer\nn-1,q?,a\n", 1, None, "column 2 has no name in the header"),
}


@pytest.mark.parametrize("case", BAD_CSV)
def test_bad_csv_is_one_line_and_writes_nothing(handbook, tmp_path, case):
    text, line, field, message = BAD_CSV[case]
    path = tmp_path / "items.csv"
    path.write_text(text, encoding="utf-8")
    _refused(handbook, ["import", path, "--dataset", "faq", "--source", "human"], path, line, field, message)


def test_quoted_csv_cells_may_hold_line_breaks(handbook, tmp_path):
    path = tmp_path / "items.csv"
    path.write_text(f'id,question,answerable\nn-1,"How long\ndoes{ODD}a token last?",false\nn-2,q?,false\n',
                    encoding="utf-8")
    handbook("import", path, "--dataset", "faq", "--source", "human")
    items = {i.id: i for i in DatasetStore(handbook.workspace).items("faq")}
    assert items["n-1"].question == f"How long\ndoes{ODD}a token last?"
    assert (items["n-1"].provenance.line, items["n-2"].provenance.line) == (2, 4)


GOOD_DOCUMENT = '{"doc_id": "d-1", "text": "Tokens last one hour."}'
BAD_DOCUMENTS = {
    "deep nesting": ('{"doc_id": "d-2", "text": "t", "metadata": {"a": ' + "{\"a\": " * 100_000 + "1"
                     + "}" * 100_001 + "}", "metadata", "nested too deeply"),
    "a 5,000-digit number": ('{"doc_id": "d-2", "text": "t", "metadata": {"n": ' + "1" * 5000 + "}}",
                             "metadata.n", "a number with more than 4300 digits"),
    "a lone surrogate": ('{"doc_id": "d-2", "text": "half \\udbff of a pair"}', "text", "lone surrogate \\udbff"),
    "NaN": ('{"doc_id": "d-2", "text": "t", "metadata": {"score": NaN}}', "metadata.score", "NaN is not a number"),
}


@pytest.mark.parametrize("case", BAD_DOCUMENTS)
def test_bad_jsonl_document_is_one_line_and_writes_nothing(handbook, tmp_path, case):
    text, field, message = BAD_DOCUMENTS[case]
    path = tmp_path / "docs.jsonl"
    path.write_text(f"{GOOD_DOCUMENT}\n{text}\n", encoding="utf-8")
    _refused(handbook, ["kb", "ingest", path, "--name", "docs"], path, 2, field, message)


def test_trec_doc_ids_keep_unicode_blanks_and_scores_must_be_finite(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text(f"q1 Q0 doc{ODD}\u00a0a 1 2.5 bm25\nq1 Q0 b 2 1.5 bm25\n", encoding="utf-8")
    assert logged_traces(path).traces["q1"]["candidates"] == [f"doc{ODD}\u00a0a", "b"]
    path.write_text("q1 Q0 a 1 2.5 bm25\nq1 Q0 b 2 nan bm25\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"run.trec:2: field 'score': score nan is not a finite number"):
        logged_traces(path)
