"""Systems under test: a Python function, an HTTP endpoint, or traces a system already logged."""

from __future__ import annotations

import importlib
import math
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

from curate import InputError, iter_json_objects, read_text

# A target takes (item id, question, oracle context or None) and returns a trace dict.
Target = Callable[[str, str, list[dict] | None], dict]

# TREC columns are split on ASCII blanks only, as trec_eval does: str.split() would also split a doc id
# at U+00A0, U+2028 or U+0085.
_TREC_BLANKS = re.compile(r"[ \t\r\f\v]+")


def python_target(spec: str, oracle: bool = False) -> Target:
    """Return a target calling `module:function(question)`; with `oracle`, `module.generate(question, context)`."""
    module_name, _, function_name = spec.partition(":")
    if not module_name or not function_name:
        raise InputError(f"--target {spec!r}: expected module:function or http(s)://...", field="target")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise InputError(f"cannot import {module_name}: {type(exc).__name__}: {exc}", field="target") from None
    name = "generate" if oracle else function_name
    function = getattr(module, name, None)
    if not callable(function):
        why = " (--oracle-context needs generate(question, context))" if oracle else ""
        raise InputError(f"{module_name} has no function {name}{why}", field="target")

    def call(item_id: str, question: str, context: list[dict] | None) -> dict:
        started = time.perf_counter()
        trace = function(question, context) if oracle else function(question)
        if isinstance(trace, dict):
            trace.setdefault("latency_ms", {}).setdefault("total", (time.perf_counter() - started) * 1000)
        return trace
    return call


def http_target(url: str, timeout: float) -> Target:
    """Return a target that POSTs {"item_id", "question"} to `url` and reads a JSON trace back."""
    import httpx

    def call(item_id: str, question: str, context: list[dict] | None) -> dict:
        started = time.perf_counter()
        response = httpx.post(url, json={"item_id": item_id, "question": question}, timeout=timeout)
        response.raise_for_status()
        try:
            trace = response.json()
        except ValueError:
            raise ValueError(f"the target answered HTTP {response.status_code} with no JSON: "
                             f"{response.text[:80]!r}") from None
        if isinstance(trace, dict):
            trace.setdefault("latency_ms", {}).setdefault("total", (time.perf_counter() - started) * 1000)
        return trace
    return call


def logged_traces(path: Path) -> dict[str, dict | Exception]:
    """Return traces by item id from a JSONL file of traces, or a TREC run file (candidates only)."""
    path = Path(path)
    text = read_text(path)
    if text.lstrip()[:1] == "{":
        traces: dict[str, dict | Exception] = {}
        for line, record in iter_json_objects(path, text=text):
            if isinstance(record, InputError):
                raise record
            if not record.get("item_id"):
                raise InputError("missing", file=str(path), line=line, field="item_id")
            traces[str(record["item_id"])] = record
        return traces
    runs: dict[str, list[tuple[float, int, str]]] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        parts = _TREC_BLANKS.split(line.strip(" \t\r\f\v"))
        if parts == [""]:
            continue
        if len(parts) != 6:
            raise InputError(f"a TREC run line has 6 columns (qid Q0 docid rank score tag), this has {len(parts)}",
                             file=str(path), line=number)
        try:
            score, rank = float(parts[4]), int(parts[3])
        except ValueError:
            raise InputError("rank or score is not a number", file=str(path), line=number) from None
        if not math.isfinite(score):
            raise InputError(f"score {parts[4]} is not a finite number", file=str(path), line=number, field="score")
        runs.setdefault(parts[0], []).append((-score, rank, parts[2]))
    return {qid: {"candidates": [doc for _, _, doc in sorted(rows)], "mode": "normal", "trec": True}
            for qid, rows in runs.items()}


def describe(target: str | None, traces: Path | None, oracle: bool) -> str:
    """Return a one-line description of the system under test, for the manifest."""
    if traces is not None:
        return f"traces from {traces}"
    return f"{target}{' (oracle context: diagnostic)' if oracle else ''}"
