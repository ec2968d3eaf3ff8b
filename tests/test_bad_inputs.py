"""Every bad input is one line: a table of bad inputs, each run through the command line a user would
type, each asserting exit 2, exactly one line on standard error that names the file, the line and
the field where there are such, and a workspace whose every file is byte for byte what it was."""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from curate.checks.leakage import check_leakage
from curate.cli.main import cli as curate_cli
from curate.dataset import import_items
from curate.kb import ingest
from curate.release import release
from curate.workspace import init_workspace
from evalrun.cli.main import cli as evalrun_cli
from tests.support import DATA

GOOD = '{"id": "n-1", "question": "How long does a token last?", "answerable": false}'
QUOTE = "Version 3.2 raises the default upstream timeout from 15 seconds to 30 seconds."


@dataclass
class Case:
    """One bad input: files to write (name -> text or bytes), the command, and what its one line says."""

    name: str
    args: list[str]                        # {dir} stands for the case's folder of input files
    files: dict[str, str | bytes] = field(default_factory=dict)
    says: list[str] = field(default_factory=list)    # substrings of the one error line ({dir} expanded)
    program: str = "curate"
    damage: dict[str, str | bytes | None] = field(default_factory=dict)   # workspace file -> new text (None: delete)


def _import(name: str, line: str, says: list[str], extra: list[str] = ()) -> Case:
    return Case(name, ["import", "{dir}/items.jsonl", "--dataset", "faq", "--source", "human", *extra],
                {"items.jsonl": line + "\n"}, ["{dir}/items.jsonl:1: ", *says])


def _csv(name: str, text: str, says: list[str]) -> Case:
    return Case(name, ["import", "{dir}/items.csv", "--dataset", "faq", "--source", "human"],
                {"items.csv": text}, ["{dir}/items.csv:", *says])


def _item(**fields) -> str:
    return json.dumps({"question": "What changes in version 3.2?", **fields}, ensure_ascii=False)


def _span(**evidence) -> str:
    return _item(evidence=[{"doc_id": "upgrade.en.md", **evidence}])


def _beir(name: str, says: list[str], corpus=None, queries=None, qrels=None) -> Case:
    files = {"beir/corpus.jsonl": corpus if corpus is not None else '{"_id": "c1", "text": "A passage."}\n',
             "beir/queries.jsonl": queries if queries is not None else '{"_id": "q1", "text": "A question?"}\n'}
    if qrels is not False:
        files["beir/qrels/test.tsv"] = qrels if qrels is not None else "query-id\tcorpus-id\tscore\nq1\tc1\t1\n"
    return Case(name, ["import", "{dir}/beir", "--format", "beir", "--dataset", "beir", "--source", "human"],
                files, says)


def _squad(name: str, data, says: list[str]) -> Case:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return Case(name, ["import", "{dir}/squad.json", "--format", "squad", "--dataset", "sq", "--source", "human"],
                {"squad.json": text}, ["{dir}/squad.json", *says])


def _doc(name: str, line: str, says: list[str]) -> Case:
    return Case(name, ["kb", "ingest", "{dir}/docs.jsonl", "--name", "other"], {"docs.jsonl": line + "\n"},
                ["{dir}/docs.jsonl:1: ", *says])


def _chunks(name: str, line: str, says: list[str], extra: list[str] = ()) -> Case:
    return Case(name, ["kb", "import", "{dir}/chunks.jsonl", "--name", "prod", *extra], {"chunks.jsonl": line + "\n"},
                ["{dir}/chunks.jsonl:1: ", *says])


def _front(name: str, text: str, says: list[str]) -> Case:
    return Case(name, ["kb", "ingest", "{dir}/docs", "--name", "other"], {"docs/page.md": text},
                ["{dir}/docs/page.md", *says])


def _run(name: str, args: list[str], says: list[str], files=None) -> Case:
    return Case(name, ["run", "--dataset", "faq@v1", *args], files or {}, says, program="evalrun")


def _gate(name: str, text: str | bytes, says: list[str]) -> Case:
    return Case(name, ["compare", "{dir}/base", "{dir}/new", "--gate", "{dir}/gate.toml"], {"gate.toml": text},
                ["{dir}/gate.toml", *says], program="evalrun")


def _option(name: str, args: list[str], says: list[str], program: str = "curate") -> Case:
    return Case(name, args, {}, says, program=program)


CASES = [
    # -- JSONL items: values JSON cannot hold, or that make no sense ------------------------------------------
    _import("deep nesting", _item(notes=None).replace("null", "[" * 500 + "]" * 500), ["field 'notes'", "nested too deeply"]),
    _import("a 5,000-digit integer", _item(id=None).replace("null", "9" * 5000), ["field 'id'", "4300 digits"]),
    _import("a lone high surrogate", '{"question": "\\ud800 what?"}', ["field 'question'", "lone surrogate"]),
    _import("a lone low surrogate", '{"question": "why \\udfff?"}', ["field 'question'", "lone surrogate"]),
    _import("NaN as a start offset", _span(start=None, end=5).replace('"start": null', '"start": NaN'), ["NaN"]),
    _import("Infinity as an end offset", _span(start=0, end=None).replace('"end": null', '"end": Infinity'), ["Infinity"]),
    _import("-Infinity as a grade", _item(evidence=[{"text": QUOTE, "grade": None}]).replace("null", "-Infinity"),
            ["Infinity"]),
    _import("a float too large", _item(score=None).replace("null", "1e400"), ["out of range"]),
    _import("an inverted span", _span(start=50, end=10), ["field 'evidence[0].end'", "inverted"]),
    _import("an empty span", _span(start=10, end=10), ["field 'evidence[0].end'", "empty"]),
    _import("a negative start", _span(start=-3, end=10), ["field 'evidence[0].start'", ">= 0"]),
    _import("a fractional start", _span(start=1.5, end=10), ["field 'evidence[0].start'", "whole number"]),
    _import("a start given as text", _span(start="3", end=10), ["field 'evidence[0].start'", "whole number"]),
    _import("a start without an end", _span(start=3), ["field 'evidence[0]'", "both start and end"]),
    _import("a span without its document", _item(evidence=[{"start": 0, "end": 10}]),
            ["field 'evidence[0].doc_id'", "needs its doc_id"]),
    _import("a fractional grade", _item(evidence=[{"text": QUOTE, "grade": 1.5}]), ["field 'evidence[0].grade'", "1.5"]),
    _import("a grade of 3", _item(evidence=[{"text": QUOTE, "grade": 3}]), ["field 'evidence[0].grade'", "0, 1 or 2"]),
    _import("a grade given as text", _item(evidence=[{"text": QUOTE, "grade": "2"}]), ["field 'evidence[0].grade'"]),
    _import("a grade given as true", _item(evidence=[{"text": QUOTE, "grade": True}]), ["field 'evidence[0].grade'"]),
    _import("a negative grade", _item(evidence=[{"text": QUOTE, "grade": -1}]), ["field 'evidence[0].grade'"]),
    _import("a float grade 2.0", _item(evidence=[{"text": QUOTE, "grade": 2.0}]), ["field 'evidence[0].grade'"]),
    _import("a number as a question", '{"question": 42}', ["field 'question'", "must be text"]),
    _import("a list as a question", '{"question": ["a", "b"]}', ["field 'question'", "must be text"]),
    _import("an object as a question", '{"question": {"text": "q"}}', ["field 'question'", "must be text"]),
    _import("an empty question", '{"question": "   "}', ["field 'question'", "missing or empty"]),
    _import("no question", '{"id": "x-1", "answer": "an answer"}', ["field 'question'", "missing"]),
    _import("an id with a tab", _item(id="a\tb"), ["field 'id'", "U+0009"]),
    _import("an id with a line break", _item(id="a\nb"), ["field 'id'", "U+000A"]),
    _import("an id with a NUL", _item(id="a\u0000b"), ["field 'id'", "U+0000"]),
    _import("an over-long id", _item(id="x" * 300), ["field 'id'", "at most 200"]),
    _import("an id already in the dataset", _item(id="t-1"), ["field 'id'", "already in the dataset"]),
    Case("an id twice in one file", ["import", "{dir}/items.jsonl", "--dataset", "faq", "--source", "human"],
         {"items.jsonl": _item(id="dup") + "\n" + _item(id="dup") + "\n"}, ["{dir}/items.jsonl:2: ", "duplicate id"]),
    _import("a list for a line", "[1, 2, 3]", ["JSON object"]),
    _import("a string for a line", '"just text"', ["JSON object"]),
    _import("a number for a line", "42", ["JSON object"]),
    _import("null for a line", "null", ["null"]),
    _import("broken JSON", '{"question": "q", bad}', ["not valid JSON"]),
    _import("a line cut short", '{"question": "q"', ["not valid JSON"]),
    _import("evidence given as an object", _item(evidence={"text": QUOTE}), ["field 'evidence'", "must be a list"]),
    _import("evidence null inside the list", _item(evidence=[None]), ["field 'evidence[0]'", "chunk id, a quoted text"]),
    _import("an unknown key in evidence", _item(evidence=[{"text": QUOTE, "page": 3}]), ["field 'evidence[0]'", "unknown keys"]),
    _import("a chunk id the KB does not have", _item(reference_context_ids=["no-such-chunk"]),
            ["field 'reference_context_ids[0]'", "not in the KB snapshot"]),
    _import("a quote the KB does not have", _item(evidence=["This sentence is nowhere in the knowledge base at all."]),
            ["field 'evidence[0]'", "not found"]),
    _import("a quote of white space", _item(evidence=[{"text": "    "}]), ["field 'evidence[0]'", "not found"]),
    _import("key points as a number", _item(key_points=5), ["field 'key_points'", "must be a list"]),
    _import("a key point without text", _item(key_points=[{"evidence_ids": []}]), ["field 'key_points[0]'"]),
    _import("a key point citing missing evidence", _item(key_points=[{"text": "x", "evidence_ids": ["e9"]}]),
            ["field 'key_points[0].evidence_ids'"]),
    _import("key point evidence ids as text", _item(key_points=[{"text": "x", "evidence_ids": "e1"}]),
            ["field 'key_points[0].evidence_ids'"]),
    _import("answerable 'maybe'", _item(answerable="maybe"), ["field 'answerable'", "true or false"]),
    _import("answerable 2", _item(answerable=2), ["field 'answerable'", "true or false"]),
    _import("unanswerable with relevant evidence", _item(answerable=False, evidence=[QUOTE]), ["field 'answerable'"]),
    _import("an unknown qtype", _item(qtype="trivia"), ["field 'qtype'", "unknown qtype"]),
    _import("an unknown split", _item(split="train"), ["field 'split'", "unknown split"]),
    _import("tags as an object", _item(tags={"a": 1}), ["field 'tags'", "must be a list"]),
    _import("answers as a number", _item(answers=5), ["field 'answers'", "must be a list"]),
    _import("an empty accepted answer", _item(answers=["30 seconds", " "]), ["field 'answers[1]'", "empty"]),
    _import("an accepted answer as an object", _item(answers=[{"text": "x"}]), ["field 'answers'", "must be text"]),
    _import("an unknown evidence mode", _item(evidence_mode="some"), ["field 'evidence_mode'", "unknown evidence mode"]),
    _import("a reference answer as an object", _item(answer={"text": "x"}), ["field 'answer'", "must be text"]),
    _import("two fields for the question", '{"question": "q?", "query": "q2?"}', ["both give question"]),
    _import("an empty object", "{}", ["field 'question'"]),
    Case("GBK text", ["import", "{dir}/items.jsonl", "--dataset", "faq", "--source", "human"],
         {"items.jsonl": '{"question": "令牌过期怎么办？"}\n'.encode("gbk")}, ["{dir}/items.jsonl:1: ", "--encoding gbk"]),
    Case("a folder for the file", ["import", "{dir}", "--dataset", "faq", "--source", "human"], {"x.txt": "x"},
         ["expected a .jsonl or .csv file"]),
    Case("a missing file", ["import", "{dir}/nothing.jsonl", "--dataset", "faq", "--source", "human"], {},
         ["{dir}/nothing.jsonl", "no such file"]),
    Case("a file of another kind", ["import", "{dir}/items.txt", "--dataset", "faq", "--source", "human"],
         {"items.txt": "x"}, ["{dir}/items.txt", "expected a .jsonl or .csv file"]),
    # -- CSV items ---------------------------------------------------------------------------------------------
    _csv("an unterminated quote", 'id,question\nc-1,"What changes\nc-2,Another question?\n', [":2: ", "unterminated quote"]),
    _csv("a header named twice", "id,question,question\nc-1,a?,b?\n", [":1: ", "field 'question'", "named twice"]),
    _csv("an empty header cell", "id,,question\nc-1,x,a?\n", [":1: ", "no name"]),
    _csv("more cells than the header", "id,question\nc-1,a?,extra\n", [":2: ", "more cells"]),
    _csv("no question column", "id,answer\nc-1,an answer\n", [":2: ", "field 'question'"]),
    _csv("NaN in a list cell", 'id,question,tags\nc-1,a?,"[""x"", NaN]"\n', [":2: ", "NaN"]),
    _csv("answerable 'perhaps'", "id,question,answerable\nc-1,a?,perhaps\n", [":2: ", "field 'answerable'"]),
    _csv("a fractional grade in a cell", 'id,question,evidence\nc-1,a?,"[{""text"": ""x"", ""grade"": 1.5}]"\n',
         [":2: ", "grade"]),
    _csv("a blank header line", "\nid,question\n", [":1: ", "header"]),
    # -- BEIR folders --------------------------------------------------------------------------------------------
    _beir("a corpus line that is a list", ["{dir}/beir/corpus.jsonl:1: ", "JSON object"], corpus="[1]\n"),
    _beir("a corpus line without _id", ["{dir}/beir/corpus.jsonl:1: ", "field '_id'"], corpus='{"text": "x"}\n'),
    _beir("a corpus _id twice", ["{dir}/beir/corpus.jsonl:2: ", "duplicate _id"],
          corpus='{"_id": "c1", "text": "a"}\n{"_id": "c1", "text": "b"}\n'),
    _beir("corpus text that is a number", ["{dir}/beir/corpus.jsonl:1: ", "field 'text'"], corpus='{"_id": "c1", "text": 5}\n'),
    _beir("a query line that is a string", ["{dir}/beir/queries.jsonl:1: ", "JSON object"], queries='"q"\n'),
    _beir("a qrels line of two columns", ["{dir}/beir/qrels/test.tsv:2: ", "3 tab-separated columns"],
          qrels="query-id\tcorpus-id\tscore\nq1\tc1\n"),
    _beir("a qrels score that is not a number", ["{dir}/beir/qrels/test.tsv:2: ", "field 'score'"],
          qrels="query-id\tcorpus-id\tscore\nq1\tc1\thigh\n"),
    _beir("a qrels score of NaN", ["{dir}/beir/qrels/test.tsv:2: ", "field 'score'"],
          qrels="query-id\tcorpus-id\tscore\nq1\tc1\tnan\n"),
    _beir("no qrels", ["{dir}/beir/qrels", "no qrels"], qrels=False),
    Case("no queries file", ["import", "{dir}/beir", "--format", "beir", "--dataset", "beir", "--source", "human"],
         {"beir/corpus.jsonl": '{"_id": "c1", "text": "a"}\n'}, ["{dir}/beir/queries.jsonl", "needs queries.jsonl"]),
    # -- SQuAD / CMRC2018 files -------------------------------------------------------------------------------------
    _squad("data that is not a list", {"data": {"title": "x"}}, ["field 'data'"]),
    _squad("an article that is a string", {"data": ["an article"]}, ["field 'data[0]'", "paragraphs"]),
    _squad("a paragraph that is a number", {"data": [{"paragraphs": [5]}]}, ["field 'data[0].paragraphs[0]'"]),
    _squad("a question that is a list", {"data": [{"paragraphs": [{"context": "ctx", "qas": [[1]]}]}]},
           ["field 'data[0].paragraphs[0].qas[0]'"]),
    _squad("a paragraph without context", {"data": [{"paragraphs": [{"qas": []}]}]}, ["context"]),
    _squad("answers that are not a list", {"data": [{"paragraphs": [{"context": "ctx", "qas": [{"question": "q?", "answers": 5}]}]}]},
           ["field 'data[0].paragraphs[0].qas[0]'"]),
    _squad("an answer not in its paragraph", {"data": [{"paragraphs": [{"context": "长城很长。", "qas": [
        {"id": "q1", "question": "长城多高？", "answers": [{"text": "八米", "answer_start": 0}]}]}]}]}, ["does not occur"]),
    _squad("no answers and not impossible", {"data": [{"paragraphs": [{"context": "ctx", "qas": [
        {"id": "q1", "question": "q?", "answers": []}]}]}]}, ["no answers"]),
    _squad("broken SQuAD JSON", '{"data": [', ["not valid JSON"]),
    _squad("NaN in the file", '{"data": [], "version": NaN}', ["NaN"]),
    # -- documents for kb ingest ------------------------------------------------------------------------------------
    _doc("a document without doc_id", '{"text": "Some text."}', ["field 'doc_id'"]),
    _doc("document text that is a number", '{"doc_id": "d1", "text": 5}', ["field 'text'"]),
    _doc("metadata that is a list", '{"doc_id": "d1", "text": "x", "metadata": [1]}', ["field 'metadata'"]),
    _doc("deep nesting in metadata", '{"doc_id": "d1", "text": "x", "metadata": ' + "[" * 300 + "]" * 300 + "}",
         ["nested too deeply"]),
    _doc("NaN in metadata", '{"doc_id": "d1", "text": "x", "metadata": {"n": NaN}}', ["NaN"]),
    _doc("a document line that is a list", "[1, 2]", ["JSON object"]),
    Case("a doc_id twice", ["kb", "ingest", "{dir}/docs.jsonl", "--name", "other"],
         {"docs.jsonl": '{"doc_id": "d1", "text": "a"}\n{"doc_id": "d1", "text": "b"}\n'},
         ["{dir}/docs.jsonl:2: ", "duplicate doc_id"]),
    Case("a PDF to ingest", ["kb", "ingest", "{dir}/doc.pdf", "--name", "other"], {"doc.pdf": "%PDF"},
         ["{dir}/doc.pdf", "unsupported document type"]),
    Case("nothing to ingest", ["kb", "ingest", "{dir}/missing", "--name", "other"], {}, ["no such file or folder"]),
    Case("an empty folder to ingest", ["kb", "ingest", "{dir}", "--name", "other"], {"notes.csv": "a,b\n"},
         ["no .txt, .md or .jsonl documents"]),
    # -- scope of documents: metadata and Markdown front matter ------------------------------------------------------
    _doc("an empty groups list", '{"doc_id": "d1", "text": "x", "metadata": {"groups": []}}',
         ["field 'metadata.groups'", "empty list of groups"]),
    _doc("a valid_to before valid_from", '{"doc_id": "d1", "text": "x", "valid_from": "2026-03-01", "valid_to": "2026-02-01"}',
         ["field 'valid_to'", "before valid_from 2026-03-01"]),
    _doc("groups given twice, differently", '{"doc_id": "d1", "text": "x", "groups": "hr", "metadata": {"groups": "it"}}',
         ["field 'groups'", "differently"]),
    _front("front matter that is not YAML", "---\ntitle: 差旅\ngroups: [hr, it\n---\n正文\n", [":4: ", "not valid YAML"]),
    _front("front matter with a Python tag", "---\ntitle: !!python/object/apply:os.system ['true']\n---\n正文\n",
           [":2: ", "not valid YAML"]),
    _front("front matter of aliases of aliases", "---\na: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n---\nx\n",
           [":3: ", "YAML alias *a"]),
    _front("front matter nested too deeply", "---\na: " + "[" * 5000 + "]" * 5000 + "\n---\nx\n", [":2: ", "nesting depth"]),
    _front("a front matter key given twice", "---\ngroups: [hr]\ntitle: 薪酬\ngroups: [staff]\n---\nx\n",
           [":4: ", "field 'groups'", "given twice in the front matter (first on line 2)"]),
    _front("a front matter date that is no date", "---\nvalid_from: 2026-02-30\n---\nx\n",
           [":2: ", "field 'valid_from'", "day is out of range"]),
    _front("a front matter title that is a list", "---\ntitle: [a, b]\n---\nx\n", [":2: ", "field 'title'"]),
    # -- production chunks for kb import ------------------------------------------------------------------------------
    _chunks("a chunk date that does not parse", '{"chunk_id": "c1", "doc_id": "d", "text": "abc", "valid_to": "soon"}',
            ["field 'valid_to'", "'soon' is not a date"]),
    _chunks("supersedes that is a number", '{"chunk_id": "c1", "doc_id": "d", "text": "abc", "metadata": {"supersedes": 7}}',
            ["field 'metadata.supersedes'", "list of document or chunk ids"]),
    _chunks("a version written as a decimal", '{"chunk_id": "c1", "doc_id": "d", "text": "abc", "version": 3.10}',
            ["field 'version'", "write it in quotes"]),
    _chunks("a mapped field with a bad value", '{"chunk_id": "c1", "doc_id": "d", "text": "abc", "acl": ""}',
            ["field 'acl'", "(read as groups)"], extra=["--map", "acl=groups"]),
    _chunks("offsets that disagree with the text", '{"chunk_id": "c1", "doc_id": "d", "text": "abc", "start": 0, "end": 9}',
            ["field 'end'"]),
    _chunks("a negative chunk start", '{"chunk_id": "c1", "doc_id": "d", "text": "abc", "start": -3, "end": 0}', ["field 'start'"]),
    _chunks("a chunk start without an end", '{"chunk_id": "c1", "doc_id": "d", "text": "abc", "start": 0}', ["field 'end'"]),
    _chunks("a chunk without text", '{"chunk_id": "c1", "doc_id": "d"}', ["field 'text'"]),
    _chunks("a chunk id that is a list", '{"chunk_id": [1], "doc_id": "d", "text": "abc"}', ["field 'chunk_id'"]),
    Case("a chunk id twice", ["kb", "import", "{dir}/chunks.jsonl", "--name", "prod"],
         {"chunks.jsonl": '{"chunk_id": "c", "doc_id": "d", "text": "a"}\n{"chunk_id": "c", "doc_id": "d", "text": "b"}\n'},
         ["{dir}/chunks.jsonl:2: ", "duplicate chunk_id"]),
    # -- names ------------------------------------------------------------------------------------------------------
    Case("a KB name like a snapshot id", ["kb", "ingest", "{dir}/a.md", "--name", "kb-1a2b3c4d"], {"a.md": "# A\n\ntext"},
         ["field 'name'", "looks like a snapshot id"]),
    Case("an over-long KB name", ["kb", "ingest", "{dir}/a.md", "--name", "k" * 150], {"a.md": "# A\n\ntext"},
         ["field 'name'", "at most 100"]),
    Case("a KB name with a slash", ["kb", "ingest", "{dir}/a.md", "--name", "a/b"], {"a.md": "# A\n\ntext"}, ["field 'name'"]),
    Case("a KB name with an at sign", ["kb", "ingest", "{dir}/a.md", "--name", "a@b"], {"a.md": "# A\n\ntext"}, ["field 'name'"]),
    Case("a KB name with a tab", ["kb", "ingest", "{dir}/a.md", "--name", "a\tb"], {"a.md": "# A\n\ntext"}, ["field 'name'"]),
    _option("a dataset name with a slash", ["show", "a/b"], ["field 'dataset'"]),
    _option("an over-long dataset name", ["show", "d" * 150], ["field 'dataset'", "at most 100"]),
    _option("a bad version", ["show", "faq@v0"], ["field 'dataset'", "v1, v2"]),
    _option("a diff of a release that does not exist", ["diff", "faq@v1", "faq@v9"], ["no release faq@v9"]),
    # -- option values ------------------------------------------------------------------------------------------------
    _option("a chunk size of 0", ["kb", "ingest", str(DATA / "docs"), "--name", "x", "--chunk-size", "0"], ["--chunk-size"]),
    _option("a negative chunk size", ["kb", "ingest", str(DATA / "docs"), "--name", "x", "--chunk-size", "-5"], ["--chunk-size"]),
    _option("a negative overlap", ["kb", "ingest", str(DATA / "docs"), "--name", "x", "--overlap", "-1"], ["--overlap"]),
    _option("an overlap as long as the chunk", ["kb", "ingest", str(DATA / "docs"), "--name", "x", "--chunker", "fixed",
                                                "--chunk-size", "10", "--overlap", "10"], ["overlap < size"]),
    _option("a minimum score below 0", ["import", str(DATA / "items.jsonl"), "--dataset", "faq", "--source", "human",
                                        "--min-score", "-1"], ["--min-score"]),
    _option("a minimum score above 100", ["import", str(DATA / "items.jsonl"), "--dataset", "faq", "--source", "human",
                                          "--min-score", "101"], ["--min-score"]),
    _option("a chunk size of 0 for SQuAD", ["import", str(DATA / "items.jsonl"), "--dataset", "x", "--source", "human",
                                            "--format", "squad", "--chunk-size", "0"], ["--chunk-size"]),
    _option("an unknown source", ["import", str(DATA / "items.jsonl"), "--dataset", "faq", "--source", "web"], ["--source"]),
    _option("remap with a score of 150", ["remap", "--dataset", "faq", "--kb", "docs", "--min-score", "150"], ["--min-score"]),
    _option("a fuzzy threshold of 200", ["check-dups", "--dataset", "faq", "--fuzzy-min", "200"], ["--fuzzy-min"]),
    _option("a cosine of 2", ["check-dups", "--dataset", "faq", "--semantic-min", "2"], ["--semantic-min"]),
    _option("a --map to no scope field", ["kb", "import", str(DATA / "docs"), "--name", "x", "--map", "acl=group"],
            ["field 'map'", "'group' is not a known field"]),
    _option("undo without --kb", ["check-dups", "--dataset", "faq", "--undo", "g-1"], ["field 'undo'"]),
    _option("a zero answer length", ["check-leakage", "--dataset", "faq", "--answer-min-chars-zh", "0"],
            ["--answer-min-chars-zh"]),
    _option("an unknown leakage fix", ["check-leakage", "--dataset", "faq", "--fix", "delete"], ["--fix"]),
    _option("quarantine in a release", ["check-leakage", "--dataset", "faq@v1", "--fix", "quarantine"], ["immutable"]),
    _option("a test fraction of 1.5", ["split", "--dataset", "faq", "--test-fraction", "1.5"], ["--test-fraction"]),
    _option("a k of 0 for grading", ["grade", "--dataset", "faq", "--k", "0"], ["--k"]),
    _option("a balance of 0", ["grade", "--dataset", "faq", "--balance", "0"], ["--balance"]),
    _option("a target written with dashes", ["grade", "--dataset", "faq", "--target", "2-5-3", "--no-dense"],
            ["field 'target'", "EASY:MEDIUM:HARD"]),
    _option("a repeat of 0", ["check-consistency", "--dataset", "faq", "--repeat", "0"], ["--repeat"]),
    _option("a judge timeout of 0", ["check-consistency", "--dataset", "faq", "--judge-timeout", "0"], ["--judge-timeout"]),
    _option("a judge concurrency of 0", ["check-consistency", "--dataset", "faq", "--concurrency", "0"], ["--concurrency"]),
    _option("a pool of 0 candidates", ["annotate", "push", "--dataset", "faq", "--pool-k", "0"], ["--pool-k"]),
    _option("a port of 70000", ["annotate", "serve", "--port", "70000"], ["--port"]),
    _option("an empty release message", ["release", "--dataset", "faq", "-m", "   "], ["message"]),
    _option("an unknown export format", ["export", "faq@v1", "--format", "xml", "--out", "-"], ["--format"]),
    _option("a BEIR export to standard output", ["export", "faq@v1", "--format", "beir", "--out", "-"], ["folder"]),
    _run("a target timeout of 0", ["--target", "x:y", "--timeout", "0"], ["--timeout"]),
    _run("a negative target timeout", ["--target", "x:y", "--timeout", "-1"], ["--timeout"]),
    _run("a concurrency of 0", ["--target", "x:y", "--concurrency", "0"], ["--concurrency"]),
    _run("a k of 0", ["--target", "x:y", "--k", "0,5"], ["--k"]),
    _run("a k that is not a number", ["--target", "x:y", "--k", "a,b"], ["--k"]),
    _run("a negative price", ["--target", "x:y", "--price-input", "-1"], ["--price-input"]),
    _run("both a target and traces", ["--target", "x:y", "--traces", "{dir}/t.jsonl"], ["exactly one"], {"t.jsonl": "{}\n"}),
    _run("a target that is not module:function", ["--target", "nonsense"], ["module:function"]),
    _run("a target module that does not import", ["--target", "no_such_module_here:f"], ["cannot import"]),
    _run("a traces file of broken JSON", ["--traces", "{dir}/t.jsonl"], ["{dir}/t.jsonl:1: ", "not valid JSON"],
         {"t.jsonl": '{"item_id": "t-1", \n'}),
    _run("a trace without item_id", ["--traces", "{dir}/t.jsonl"], ["{dir}/t.jsonl:1: ", "field 'item_id'"],
         {"t.jsonl": '{"answer": "x"}\n'}),
    _run("a TREC line of five columns", ["--traces", "{dir}/run.trec"], ["{dir}/run.trec:1: ", "6 columns"],
         {"run.trec": "t-1 Q0 c1 1 bm25\n"}),
    _run("a TREC rank that is not a number", ["--traces", "{dir}/run.trec"], ["{dir}/run.trec:1: ", "not a number"],
         {"run.trec": "t-1 Q0 c1 first 3.2 bm25\n"}),
    Case("a run of a draft", ["run", "--dataset", "faq", "--target", "x:y"], {}, ["field 'dataset'", "NAME@vN"],
         program="evalrun"),
    Case("show of a folder that is no run", ["show", "{dir}"], {"x.txt": "x"}, ["is not a run folder"], program="evalrun"),
    Case("verify of a draft", ["verify", "faq"], {}, ["names no version"], program="evalrun"),
    # -- gate files (read before the runs: these run folders need not exist) ----------------------------------------
    _gate("a gate file that is not UTF-8", b'[gate]\nguard = ["caf\xe9/*"]\n', [":2: ", "not valid utf-8"]),
    _gate("a gate file in GBK", '[gate]\n# 门禁\nguard = ["context/*"]\n'.encode("gbk"), [":2: ", "not valid utf-8"]),
    _gate("a gate file with a BOM and a bad line", "\ufeff[gate]\nalpha = 2\nguard = ['x']\n",
          [":2: ", "field 'gate.alpha'", "less than 1"]),
    _gate("a gate file nested too deeply", "[gate]\nguard = ['x']\nnote = " + "[" * 5000 + "]" * 5000 + "\n",
          [":3: ", "nested too deeply"]),
    _gate("a gate file of nested inline tables", "[gate]\nguard = ['x']\nnote = " + "{a = " * 3000 + "1" + "}" * 3000
          + "\n", [":3: ", "nested too deeply"]),
    _gate("a gate alpha too small to fail", "[gate]\nguard = ['x']\nalpha = 1e-12\n",
          [":3: ", "field 'gate.alpha'", "could never fail"]),
    _gate("an infinite rise limit", "[gate]\nmax_latency_p95_rise = inf\n", [":2: ", "can never fail"]),
    _gate("a rise limit of nan", "[gate]\nmax_cost_per_item_rise = nan\n", [":2: ", "can never fail"]),
    Case("a gate in a curate.toml nested too deeply", ["compare", "{dir}/base", "{dir}/new", "--gate"], {},
         ["curate.toml:", "nested too deeply"], program="evalrun",
         damage={"curate.toml": "[gate]\nguard = ['x']\nnote = " + "[" * 5000 + "]" * 5000 + "\n"}),
    Case("a curate.toml that is not UTF-8", ["kb", "list"], {}, ["curate.toml:2: ", "not valid utf-8"],
         damage={"curate.toml": b'[kb]\ndefault = "d\xf6cs"\n'}),
    Case("a curate.toml nested by dotted keys", ["kb", "list"], {}, ["curate.toml:3: ", "nested too deeply"],
         damage={"curate.toml": '[kb]\ndefault = "docs"\n[' + ".".join(["a"] * 3000) + ']\nx = 1\n'}),
    Case("verify of a release that does not exist", ["verify", "faq@v7"], {}, ["no release faq@v7"], program="evalrun"),
    # -- keys given twice, empty or unmatched traces, keys in URLs (issue 21) ------------------------------------
    _import("a key given twice", '{"question": "q?", "question": "r?"}', ["field 'question'", "key 'question' given twice"]),
    _import("a key given twice in evidence", _item(evidence=[{"text": QUOTE, "grade": 1}]).replace(
        '"grade": 1', '"grade": 1, "grade": 2'), ["field 'evidence[0].grade'", "given twice"]),
    _csv("a key given twice in a list cell", 'id,question,evidence\nc-1,a?,"[{""text"": ""x"", ""text"": ""y""}]"\n',
         [":2: ", "field 'evidence[0].text'", "given twice"]),
    _doc("a document key given twice", '{"doc_id": "d1", "text": "a", "doc_id": "d2"}', ["field 'doc_id'", "given twice"]),
    _chunks("a chunk key given twice", '{"chunk_id": "c1", "doc_id": "d", "text": "abc", "text": "abd"}',
            ["field 'text'", "given twice"]),
    _squad("a SQuAD key given twice", '{"data": [], "data": []}', ["field 'data'", "given twice"]),
    _run("a trace key given twice", ["--traces", "{dir}/t.jsonl"], ["{dir}/t.jsonl:1: ", "field 'answer'", "given twice"],
         {"t.jsonl": '{"item_id": "t-1", "answer": "yes", "answer": "no"}\n'}),
    _run("an empty traces file", ["--traces", "{dir}/t.jsonl"], ["{dir}/t.jsonl: ", "empty: no traces"], {"t.jsonl": "\n \n"}),
    _run("traces that name no item", ["--traces", "{dir}/t.jsonl"],
         ["{dir}/t.jsonl: ", "field 'item_id'", "none of its 1 traces names an item of faq@v1 (first: 'q-9'"],
         {"t.jsonl": '{"item_id": "q-9", "answer": "x"}\n'}),
    _run("a TREC run that names no item", ["--traces", "{dir}/run.trec"], ["{dir}/run.trec: ", "none of its 1 traces"],
         {"run.trec": "q-9 Q0 c1 1 3.2 bm25\n"}),
    _run("a target URL with a key in its fragment", ["--target", "https://rag.example/ask#sk-live-4fQ9zX2pL7mN3vB8"],
         ["field 'target'", "carries credentials (a #fragment"]),
    _run("a target URL with a key in its query", ["--target", "https://rag.example/ask?api_key=Zq7secret"],
         ["field 'target'", "(query parameter api_key)"]),
    _option("a judge URL with a key in its fragment", ["check-consistency", "--dataset", "faq", "--judge-base-url",
                                                       "https://judge.example/v1#sk-live-4fQ9zX2pL7mN3vB8"],
            ["field '--judge-base-url'", "carries credentials (a #fragment"]),
    Case("a dataset.json with a key given twice", ["show", "faq"], {}, ["dataset.json", "given twice"],
         damage={"datasets/faq/dataset.json": '{"name": "faq", "name": "other"}'}),
    # -- damaged state files -------------------------------------------------------------------------------------------
    Case("a damaged dataset.json", ["show", "faq"], {}, ["dataset.json", "damaged"],
         damage={"datasets/faq/dataset.json": '{"name": "faq", "checks": '}),
    Case("a dataset.json of a newer version", ["show", "faq"], {}, ["dataset.json", "written by a newer version"],
         damage={"datasets/faq/dataset.json": '{"schema_version": 99, "name": "faq"}'}),
    Case("a dataset.json that is a list", ["show", "faq"], {}, ["dataset.json"],
         damage={"datasets/faq/dataset.json": "[1, 2]"}),
    Case("a damaged line of items.jsonl", ["show", "faq"], {}, ["items.jsonl:1: ", "not valid JSON"],
         damage={"datasets/faq/items.jsonl": '{"id": "t-1", \n'}),
    Case("an items.jsonl line with a bad field", ["show", "faq"], {}, ["items.jsonl:1: ", "field 'language'"],
         damage={"datasets/faq/items.jsonl": '{"id": "t-1", "question": "q", "language": "fr", "source": "human"}\n'}),
    Case("a damaged names.json", ["kb", "list"], {}, ["names.json", "damaged"], damage={"kb/names.json": "{oops"}),
    Case("a names.json of the wrong shape", ["kb", "list"], {}, ["names.json"], damage={"kb/names.json": '{"docs": 5}'}),
    Case("a damaged curate.toml", ["kb", "list"], {}, ["curate.toml", "not valid TOML"], damage={"curate.toml": "[kb\n"}),
    Case("a damaged annotation.json", ["annotate", "status", "--dataset", "faq"], {}, ["annotation.json", "damaged"],
         damage={"datasets/faq/annotation.json": "{"}),
    Case("a damaged leakage_docs.json", ["check-leakage", "--dataset", "faq", "--no-semantic"], {},
         ["leakage_docs.json", "damaged"], damage={"datasets/faq/leakage_docs.json": "not json"}),
    Case("a release without its manifest", ["verify", "faq@v1"], {}, ["faq@v1", "manifest.json"],
         program="evalrun", damage={"datasets/faq/releases/v1/manifest.json": None}),
    Case("a damaged release manifest", ["verify", "faq@v1"], {}, ["faq@v1", "not valid JSON"],
         program="evalrun", damage={"datasets/faq/releases/v1/manifest.json": "{"}),
]


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A workspace: KB 'docs' from tests/data, dataset 'faq', checked for leakage and released as v1."""
    root = tmp_path_factory.mktemp("bad-inputs") / "ws"
    workspace = init_workspace(root)
    ingest(workspace, [DATA / "docs"], name="docs", chunk_size=120)
    import_items(workspace, DATA / "items.jsonl", dataset="faq", source="human", kb="docs")
    check_leakage(workspace, ref="faq", semantic=False)
    release(workspace, dataset="faq", message="v1")
    return root


def test_the_table_is_large():
    assert len(CASES) >= 100 and len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_bad_input_is_one_line_and_changes_nothing(case, base, tmp_path, monkeypatch):
    root = tmp_path / "ws"
    shutil.copytree(base, root)
    for name, text in case.damage.items():
        target = root / name
        target.chmod(0o644) if target.exists() else None
        if text is None:
            target.unlink()
        else:
            target.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    inputs = tmp_path / "in"
    inputs.mkdir()
    for name, content in case.files.items():
        path = inputs / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", "http://127.0.0.1:9/v1")   # no judge is ever reached
    before = _tree(root)
    args = [a.replace("{dir}", str(inputs)) for a in case.args]
    program = curate_cli if case.program == "curate" else evalrun_cli
    result = CliRunner(mix_stderr=False).invoke(program, ["--workspace", str(root), *args])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, (result.exit_code, result.stderr, result.exception)
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for part in case.says:
        assert part.replace("{dir}", str(inputs)) in lines[0], (part, lines[0])
    assert "Traceback" not in result.stderr + result.stdout
    assert _tree(root) == before


def test_damaged_index_caches_are_built_again_not_trusted(base, tmp_path):
    """A cache (folded texts, 4-grams, BM25, embeddings) is no state: damaged, it is rebuilt, and the
    check gives the same result as with a sound one."""
    root = tmp_path / "ws"
    shutil.copytree(base, root)
    runner = CliRunner(mix_stderr=False)
    first = runner.invoke(curate_cli, ["--workspace", str(root), "check-leakage", "--dataset", "faq", "--no-semantic"])
    index = next((root / "kb" / "index").iterdir())
    folded = index / "lexical" / "folded.txt"
    sound = folded.read_bytes()
    for damage in ("meta", "one byte of the folded texts"):
        if damage == "meta":
            (index / "lexical" / "meta.json").write_text("{damaged", encoding="utf-8")
        else:   # still UTF-8, the same number of lines: only its CRC-32 tells
            data = bytearray(folded.read_bytes())
            data[data.index(b"a")] = ord("b")
            folded.write_bytes(bytes(data))
        again = runner.invoke(curate_cli, ["--workspace", str(root), "check-leakage", "--dataset", "faq", "--no-semantic"])
        assert again.exit_code == first.exit_code == 0 and again.stdout == first.stdout, damage
        assert json.loads((index / "lexical" / "meta.json").read_text(encoding="utf-8"))["chunks"] > 0
        assert folded.read_bytes() == sound, damage   # built again
