"""What a target returns is checked to be JSON before it is recorded; logged traces and TREC runs are
read strictly; an HTTP target's body is read up to a limit."""

import datetime
import enum
import math
import threading

import numpy as np
import pytest

from curate.errors import InputError
from evalrun.records import TraceRecord, read_traces
from evalrun.runner.targets import (
    MAX_DEPTH,
    TargetFailed,
    Unholdable,
    http_target,
    json_value,
    logged_traces,
)
from evalrun.runner.trace_log import TraceLog
from tests.evalrun.runner.conftest import send
from tests.support.processes import PATIENCE


def _nested(depth: int):
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


def _contains_itself():
    trace = {"candidates": ["c1"]}
    trace["again"] = trace
    return trace


def _list_contains_itself():
    candidates = ["c1"]
    candidates.append(candidates)
    return {"candidates": candidates}


UNHOLDABLE = [
    ({"candidates": [{"c1"}]}, "set at ['candidates'][0]"),
    ({"candidates": frozenset()}, "frozenset at ['candidates']"),
    ({"answer": "bad \ud800 text"}, "a lone surrogate \\ud800 in a string at ['answer']"),
    ({"answer": "x", "at": datetime.datetime(2024, 1, 1)}, "datetime.datetime at ['at']"),
    ({"answer": b"bytes"}, "bytes at ['answer']"),
    ({"usage": {"cost": math.nan}}, "NaN at ['usage']['cost']"),
    ({"latency_ms": {"total": math.inf}}, "Infinity at ['latency_ms']['total']"),
    ({"latency_ms": {"total": -math.inf}}, "-Infinity at ['latency_ms']['total']"),
    (_contains_itself(), "a dict that contains itself at ['again']"),
    (_list_contains_itself(), "a list that contains itself at ['candidates'][1]"),
    ({"usage": {1: 2}}, "a dict key of type int (JSON keys are strings) at ['usage']"),
    ({("a", "b"): 1}, "a dict key of type tuple (JSON keys are strings)"),
    ({"candidates": [{"chunk_id": "c1", "score": 10 ** 5000}]},
     "an integer of more than 4300 digits at ['candidates'][0]['score']"),
    ({"candidates": [{"chunk_id": "c1", "score": np.int64(3)}]}, "numpy.int64 at ['candidates'][0]['score']"),
    ({"deep": _nested(MAX_DEPTH)}, "nesting deeper than 99 levels at ['deep'][0][0][0][0][0][0][0]..."),
    ({"x": object()}, "object at ['x']"),
    ({"c1", "c2"}, "set"),
]


@pytest.mark.parametrize(("value", "problem"), UNHOLDABLE, ids=[p for _, p in UNHOLDABLE])
def test_a_value_json_cannot_hold_is_refused_saying_what_and_where(value, problem):
    with pytest.raises(Unholdable) as caught:
        json_value(value)
    assert caught.value.problem == problem
    assert str(caught.value) == f"target returned a value JSON cannot hold: {problem}"


class Grade(enum.IntEnum):
    HIGH = 2


class Label(str, enum.Enum):
    OK = "ok"


def test_what_json_holds_is_copied_plain():
    shared = ["c1"]
    value = {"candidates": shared, "context": shared, "pair": ("a", 1), "grade": Grade.HIGH, "mode": Label.OK,
             "score": np.float64(0.5), "none": None, "flag": False, "text": "emoji \U0001F600 and \u2028"}
    copy = json_value(value)
    assert copy == {"candidates": ["c1"], "context": ["c1"], "pair": ["a", 1], "grade": 2, "mode": "ok",
                    "score": 0.5, "none": None, "flag": False, "text": "emoji \U0001F600 and \u2028"}
    assert [type(copy[k]) for k in ("pair", "grade", "mode", "score")] == [list, int, str, float]
    assert copy["candidates"] is not shared                     # a copy: the target's object is left alone


def test_the_deepest_value_held_is_written_and_read_back(tmp_path):
    deepest = {"candidates": [], "deep": _nested(MAX_DEPTH - 1)}   # MAX_DEPTH levels with the trace itself
    log = TraceLog(tmp_path / "traces.jsonl")
    log.append(TraceRecord(item_id="a", trace=json_value(deepest)))
    assert read_traces(log.path)["a"].trace == deepest


def test_duplicate_item_ids_in_logged_traces_name_both_lines(tmp_path):
    path = tmp_path / "traces.jsonl"
    ids = ["t-1", "t-3", "t-2", "t-4", "t-5", "t-6", "t-7", "t-8", "t-3"]
    path.write_text("".join(f'{{"item_id": "{i}", "candidates": []}}\n' for i in ids))
    with pytest.raises(InputError) as caught:
        logged_traces(path)
    assert str(caught.value) == f"{path}:9: item_id 't-3' appears on lines 2 and 9"


def test_a_document_ranked_twice_for_a_query_in_a_trec_run_names_both_lines(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text("t-1 Q0 c1 1 3.0 bm25\nt-1 Q0 c2 2 2.0 bm25\nt-2 Q0 c1 1 3.0 bm25\nt-1 Q0 c1 3 1.0 bm25\n")
    with pytest.raises(InputError) as caught:
        logged_traces(path)
    assert str(caught.value) == (f"{path}:4: document 'c1' is ranked twice for query 't-1', on lines 1 and 4 "
                                 f"(trec_eval refuses that too)")


def test_a_trec_run_is_candidates_only_and_told_by_its_content(tmp_path):
    trec = tmp_path / "traces.jsonl"                       # the name does not decide: the content does
    trec.write_text("t-1 Q0 c2 2 1.5 bm25\nt-1 Q0 c1 1 2.5 bm25\n\nt-2\tQ0\tc3\t1\t0.1\tbm25\n")
    logged = logged_traces(trec)
    assert logged.kind == "trec"
    assert logged.traces == {"t-1": {"candidates": ["c1", "c2"]}, "t-2": {"candidates": ["c3"]}}
    jsonl = tmp_path / "run.trec"
    jsonl.write_text('\n  {"item_id": "t-1", "candidates": ["c1"]}\n')
    assert logged_traces(jsonl).kind == "trace" and logged_traces(jsonl).traces["t-1"]["candidates"] == ["c1"]


ENDLESS_CHUNKS = 100_000      # of 500 bytes: 50 MB, unless the client stops reading


def _endless(sent: list[int], ended: threading.Event):
    def answer(handler, body):
        try:
            handler.send_response(200)
            handler.send_header("Transfer-Encoding", "chunked")
            handler.end_headers()
            chunk = b"[" * 500
            for _ in range(ENDLESS_CHUNKS):
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent[0] += 1
        finally:
            ended.set()
    return answer


def _declared(handler, body):
    handler.send_response(200)
    handler.send_header("Content-Length", str(10 ** 9))
    handler.end_headers()
    handler.wfile.write(b"[")


def test_an_http_body_is_read_up_to_the_limit_and_no_further(http_server):
    """The client stops reading past the limit: the server could not send the rest of its 50 MB (it
    is told so by a broken connection), which is known from what it sent, not from how long it took.
    A declared length past the limit is refused before the body is read (reading the one byte there
    is would end in a broken connection, not in this message)."""
    sent, ended = [0], threading.Event()
    call = http_target(http_server(_endless(sent, ended)).url, timeout=5, max_bytes=1000)
    with pytest.raises(TargetFailed, match="^target response larger than 1000 bytes$"):
        call("t-1", "q", None)
    assert ended.wait(PATIENCE) and 0 < sent[0] < ENDLESS_CHUNKS
    with pytest.raises(TargetFailed, match="^target response larger than 1000 bytes$"):
        http_target(http_server(_declared).url, timeout=5, max_bytes=1000)("t-1", "q", None)
    small = http_server(lambda handler, body: send(handler, b'{"candidates": ["c1"]}'))
    assert http_target(small.url, timeout=5, max_bytes=22)("t-1", "q", None)["candidates"] == ["c1"]


def test_http_json_that_cannot_be_held_or_an_error_status_is_the_items_failure(http_server):
    nan = http_server(lambda handler, body: send(handler, b'{"candidates": [], "usage": {"cost": NaN}}'))
    with pytest.raises(ValueError, match=r"answered HTTP 200 with JSON that cannot be held \(NaN is not a number"):
        http_target(nan.url, timeout=5, max_bytes=1000)("t-1", "q", None)
    surrogate = http_server(lambda handler, body: send(handler, b'{"answer": "\\udc00"}'))
    with pytest.raises(ValueError, match="cannot be held .lone surrogate"):
        http_target(surrogate.url, timeout=5, max_bytes=1000)("t-1", "q", None)
    failing = http_server(lambda handler, body: send(handler, b"overloaded", status=503))
    with pytest.raises(TargetFailed, match="^target answered HTTP 503 Service Unavailable$"):
        http_target(failing.url, timeout=5, max_bytes=1000)("t-1", "q", None)
