"""Systems under test: a Python function, an HTTP endpoint, or traces a system already logged (a
JSONL file of traces, or a TREC run file); and `json_value`, the check every returned value passes
before it is recorded.

Each call gives the system the item's asker and moment (`SCOPE_KEYS`: asker_groups, asker_role,
as_of), so that it can filter what it retrieves by scope: a Python target as keyword arguments, those
its signature accepts (every one with `**kwargs`; a function that accepts none is called as before);
an HTTP target as fields of the request body, those the item sets.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import importlib.util
import json
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from curate import InputError, check_base_url, iter_json_objects, loads_json, read_text
from evalrun.scope_records import SCOPE_KEYS, TargetScope

# A call takes (item id, question, oracle context or None, the item's scope fields) and returns a
# trace: any value, checked by json_value.
Call = Callable[[str, str, "list[dict] | None", "dict[str, Any]"], Any]


@dataclass(frozen=True)
class Target:
    """A system under test: how it is called, and what it is given of each item's asker and moment."""

    call: Call
    scope: TargetScope

    def __call__(self, item_id: str, question: str, context: list[dict] | None,
                 scope: dict[str, Any] | None = None) -> Any:
        """Return what the system returns for one question; `scope`: the item's SCOPE_KEYS fields."""
        return self.call(item_id, question, context, scope or {})


def scope_keywords(function: Callable[..., Any]) -> tuple[str, ...]:
    """Return the scope fields (`SCOPE_KEYS`) a Python function accepts as keyword arguments: those its
    signature names, or all of them when it takes **kwargs; none when its signature cannot be read.

    >>> def answer(question, as_of=None): ...
    >>> def anything(question, **options): ...
    >>> scope_keywords(answer), scope_keywords(anything), scope_keywords(len)
    (('as_of',), ('asker_groups', 'asker_role', 'as_of'), ())
    """
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):   # a builtin without a signature: called as before
        return ()
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return SCOPE_KEYS
    named = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return tuple(key for key in SCOPE_KEYS if key in named)


def _python_call(function: Callable[..., Any], oracle: bool) -> Target:
    """Return the target calling `function(question)` (with `oracle`, `function(question, context)`), with
    the scope keyword arguments its signature accepts."""
    accepted = scope_keywords(function)

    def call(item_id: str, question: str, context: list[dict] | None, scope: dict[str, Any]) -> Any:
        keywords = {key: scope.get(key) for key in accepted}
        return function(question, context, **keywords) if oracle else function(question, **keywords)
    return Target(call, TargetScope(receives=list(accepted), how="keyword arguments"))

# TREC columns are split on ASCII blanks only, as trec_eval does: str.split() would also split a doc id
# at U+00A0, U+2028 or U+0085.
_TREC_BLANKS = re.compile(r"[ \t\r\f\v]+")
_SURROGATE = re.compile("[\ud800-\udfff]")

# loads_json reads 100 levels of [ and {; a line of traces.jsonl puts the trace one level down.
MAX_DEPTH = 99
_PATH_SHOWN = 8  # path parts shown in a message; a deeper path ends in "..."


class TargetFailed(Exception):
    """A failure of the target recorded in its own words (not as "target raised ...")."""


class Unholdable(TargetFailed):
    """The target returned a value JSON cannot hold; `problem` says what and where."""

    def __init__(self, what: str, path: tuple):
        shown = "".join(f"[{part!r}]" for part in path[:_PATH_SHOWN]) + ("..." if len(path) > _PATH_SHOWN else "")
        self.problem = what + (f" at {shown}" if path else "")
        super().__init__(f"target returned a value JSON cannot hold: {self.problem}")


def _type_name(value: Any) -> str:
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


_LEAVE = object()


def json_value(value: Any) -> Any:
    """Return a plain copy of `value` (dict, list, str, int, float, bool, None all the way down), or
    raise Unholdable naming the first part JSON cannot hold, in document order, and where it is.

    JSON cannot hold: a set, bytes, a datetime or any other object; NaN and Infinity; a string with a
    lone surrogate; a dict key that is not a string; a dict or list that contains itself; an integer
    of more digits than Python converts (4300); nesting deeper than MAX_DEPTH. A tuple is an array,
    and subclasses of str, int and float (an enum, numpy.float64) are their plain values, as
    `json.dumps` writes them. Iterative, so any depth is refused without running out of stack.

    >>> json_value({"candidates": ["c1", ("c2",)], "score": 0.5})
    {'candidates': ['c1', ['c2']], 'score': 0.5}
    >>> json_value({"candidates": [{"c1"}]})
    Traceback (most recent call last):
    ...
    evalrun.runner.targets.Unholdable: target returned a value JSON cannot hold: set at ['candidates'][0]
    """
    top: list = [None]
    on_path: set[int] = set()  # containers being copied: meeting one again is a cycle
    stack: list = [(value, (), top, 0)]
    while stack:
        entry = stack.pop()
        if entry[0] is _LEAVE:
            on_path.discard(entry[1])
            continue
        node, path, parent, slot = entry
        if node is None or isinstance(node, bool):
            parent[slot] = node
        elif isinstance(node, str):
            found = _SURROGATE.search(node)
            if found:
                raise Unholdable(f"a lone surrogate \\u{ord(found.group()):04x} in a string", path)
            parent[slot] = str.__str__(node)  # an enum's value, as json.dumps writes it
        elif isinstance(node, int):
            try:
                str(node)
            except ValueError:
                raise Unholdable(f"an integer of more than {sys.get_int_max_str_digits()} digits", path) from None
            parent[slot] = int.__int__(node)
        elif isinstance(node, float):
            if not math.isfinite(node):
                raise Unholdable("NaN" if math.isnan(node) else "Infinity" if node > 0 else "-Infinity", path)
            parent[slot] = float.__float__(node)
        elif isinstance(node, (dict, list, tuple)):
            kind = "dict" if isinstance(node, dict) else "list"
            if id(node) in on_path:
                raise Unholdable(f"a {kind} that contains itself", path)
            if len(path) >= MAX_DEPTH:
                raise Unholdable(f"nesting deeper than {MAX_DEPTH} levels", path)
            on_path.add(id(node))
            stack.append((_LEAVE, id(node)))
            if isinstance(node, dict):
                copy: dict | list = {}
                children = []
                for key, child in node.items():
                    if not isinstance(key, str):
                        raise Unholdable(f"a dict key of type {_type_name(key)} (JSON keys are strings)", path)
                    if _SURROGATE.search(key):
                        raise Unholdable("a lone surrogate in a dict key", path)
                    copy[str(key)] = None
                    children.append((child, (*path, str(key)), copy, str(key)))
            else:
                copy = [None] * len(node)
                children = [(child, (*path, index), copy, index) for index, child in enumerate(node)]
            parent[slot] = copy
            stack.extend(reversed(children))
        else:
            raise Unholdable(_type_name(node), path)
    return top[0]


def is_file_target(spec: str) -> bool:
    """Return whether a --target names a file (path/to/rag.py:answer) rather than a module (rag:answer).

    >>> is_file_target("systems/rag.py:answer"), is_file_target("rag.py:answer"), is_file_target("rag:answer")
    (True, True, False)
    >>> is_file_target("http://127.0.0.1:8000/rag")
    False
    """
    if spec.startswith(("http://", "https://")):
        return False
    where = spec.rpartition(":")[0]
    return where.endswith(".py") or "/" in where or "\\" in where


def _looked_in() -> str:
    """Return the folders of Python's path, in the order import searches them (hooks left out)."""
    return ", ".join(entry or "." for entry in sys.path if Path(entry or ".").exists())


def _import_file(path: Path, spec: str):
    """Return the module of a Python file, loaded by its path; its folder goes first on Python's path,
    so that it imports its neighbours as it would when run from there."""
    if not path.is_file() and path.suffix != ".py" and path.with_suffix(".py").is_file():
        path = path.with_suffix(".py")
    if not path.is_file():
        raise InputError(f"no file {path}", field="target")
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    name = f"evalrun_target_{re.sub(r'[^0-9A-Za-z_]', '_', path.stem)}_{hashlib.sha256(str(path).encode()).hexdigest()[:8]}"
    found = importlib.util.spec_from_file_location(name, path)
    if found is None or found.loader is None:
        raise InputError(f"--target {spec!r}: {path} cannot be loaded as Python", field="target")
    module = importlib.util.module_from_spec(found)
    sys.modules[name] = module   # registered first, as import does: dataclasses and pickling look it up
    try:
        found.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _import_module(module_name: str):
    """Return the module `module_name`, imported with the current folder first on Python's path; one
    that is nowhere on the path is an InputError saying where it was looked for."""
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise InputError(f"cannot import {module_name}: no module {exc.name!r} on Python's path (looked in "
                             f"{_looked_in()}); run from the folder that holds it, or give its file: "
                             f"--target path/to/{module_name.replace('.', '/')}.py:FUNCTION",
                             field="target") from None
        raise


def python_module(spec: str) -> tuple[Any, str, str]:
    """Return (the module, its name or path, the function name) of `module:function` or
    `path/to/file.py:function` (the file loaded by its path, from any folder)."""
    module_name, _, function_name = spec.rpartition(":")
    if not module_name or not function_name:
        raise InputError(f"--target {spec!r}: expected module:function, path/to/file.py:function or "
                         f"http(s)://...", field="target")
    by_path = is_file_target(spec)
    if by_path:
        module_name = str(Path(module_name).absolute())
    try:
        module = _import_file(Path(module_name), spec) if by_path else _import_module(module_name)
    except InputError:
        raise
    except BaseException as exc:  # a module calling sys.exit on import is a bad --target too
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise InputError(f"cannot import {module_name}: {type(exc).__name__}: {exc}", field="target") from None
    return module, module_name, function_name


def module_target(module: Any, module_name: str, function_name: str, oracle: bool = False) -> Target:
    """Return the target calling `function_name(question)` of an imported module; with `oracle`, its
    `generate(question, context)`."""
    name = "generate" if oracle else function_name
    function = getattr(module, name, None)
    if not callable(function):
        why = " (--oracle-context needs generate(question, context))" if oracle else ""
        raise InputError(f"{module_name} has no function {name}{why}", field="target")
    return _python_call(function, oracle)


def python_target(spec: str, oracle: bool = False) -> Target:
    """Return a target calling `module:function(question)` or `path/to/file.py:function(question)`
    (the file loaded by its path, from any folder); with `oracle`, `generate(question, context)` of
    that module."""
    return module_target(*python_module(spec), oracle)


def callable_target(function: Callable[..., Any], oracle: bool = False) -> Target:
    """Return a target calling the Python callable `function(question)`, as `module:function` is called;
    with `oracle`, `function(question, context)` (a `def answer(question, context=None)` serves both). Both
    get the scope keyword arguments their signature accepts (`scope_keywords`)."""
    return _python_call(function, oracle)


def callable_name(function: Callable[..., Any]) -> str:
    """Return `module:name` of a Python callable, as a run's manifest names its target.

    >>> import os.path
    >>> callable_name(os.path.basename)
    'posixpath:basename'
    """
    module = getattr(function, "__module__", None) or type(function).__module__
    name = getattr(function, "__qualname__", None) or type(function).__qualname__
    return f"{module}:{name}"


def importable(name: str) -> bool:
    """Return whether `module:name` (from `callable_name`) can be given back as --target: a function defined
    at the top of a module, not in a script run as __main__ or inside another function."""
    module, _, qualname = name.partition(":")
    return module != "__main__" and qualname.isidentifier()


def request_body(item_id: str, question: str, scope: dict[str, Any]) -> dict[str, Any]:
    """Return the body an HTTP target is sent: the item's id and question, and each scope field the item
    sets (asker_groups [] is set: the asker may see only what everyone may). A field the item leaves
    unset is left out rather than sent as null, so a release without askers or moments sends the body
    it always did, and an HTTP target written before scope keeps working.

    >>> request_body("q1", "Band B3?", {"asker_groups": [], "asker_role": None, "as_of": "2026"})
    {'item_id': 'q1', 'question': 'Band B3?', 'asker_groups': [], 'as_of': '2026'}
    """
    return {"item_id": item_id, "question": question,
            **{key: scope[key] for key in SCOPE_KEYS if scope.get(key) is not None}}


def http_target(url: str, timeout: float, max_bytes: int) -> Target:
    """Return a target that POSTs `request_body` ({"item_id", "question"} and the item's scope fields) to
    `url` and reads a JSON trace back, of at most `max_bytes` bytes (decoded); a larger body is not read
    further. `timeout` bounds each read only: the run's deadline bounds the whole call. A URL that
    carries credentials is refused: evalrun would write it into the run's manifest and the command that
    resumes the run."""
    import httpx

    check_base_url(url, field="target", hint="evalrun writes the target's URL into the run's manifest: call "
                   "a system that needs a key through a Python --target that reads it from the environment")

    def call(item_id: str, question: str, context: list[dict] | None, scope: dict[str, Any]) -> Any:
        with httpx.stream("POST", url, json=request_body(item_id, question, scope), timeout=timeout) as response:
            if response.is_error:
                raise TargetFailed(f"target answered HTTP {response.status_code} {response.reason_phrase}".rstrip())
            declared = response.headers.get("content-length", "")
            too_large = declared.isdigit() and int(declared) > max_bytes
            body = bytearray()
            for chunk in () if too_large else response.iter_bytes():  # counted decoded: a gzip bomb is refused too
                body += chunk
                if len(body) > max_bytes:
                    too_large = True
                    break
            if too_large:
                raise TargetFailed(f"target response larger than {max_bytes} bytes")
        try:
            return loads_json(bytes(body))
        except ValueError as exc:  # not JSON; or JSON holding NaN, a lone surrogate, nesting too deep
            why = "with no JSON" if isinstance(exc, json.JSONDecodeError) else f"with JSON that cannot be held ({exc})"
            raise ValueError(f"the target answered HTTP {response.status_code} {why}: "
                             f"{bytes(body[:80]).decode('utf-8', 'replace')!r}") from None
    return Target(call, TargetScope(receives=list(SCOPE_KEYS), how="request body"))


@dataclass
class LoggedTraces:
    """Traces a system already logged, by item id: from a JSONL file of traces, or a TREC run."""

    kind: Literal["trace", "trec"]
    traces: dict[str, Any]


def logged_traces(path: Path) -> LoggedTraces:
    """Return the traces of a JSONL file of traces, or of a TREC run file (candidates only).

    Which one is told by the content, not the name (TREC run files have no settled extension): a
    file whose first non-blank character is `{` is JSONL. A repeated item id, or a document ranked
    twice for one query, is an InputError naming both lines; an empty file (or one of blank lines) is
    an InputError too."""
    path = Path(path)
    text = read_text(path)
    if not text.strip():   # a run of nothing but "no trace for this item" would look like a system that failed
        raise InputError("empty: no traces (a JSONL file of traces, one per item, or a TREC run file)", file=str(path))
    if text.lstrip()[:1] == "{":
        return LoggedTraces("trace", _jsonl_traces(path, text))
    return LoggedTraces("trec", _trec_traces(path, text))


def _jsonl_traces(path: Path, text: str) -> dict[str, Any]:
    traces: dict[str, Any] = {}
    lines: dict[str, int] = {}
    for line, record in iter_json_objects(path, text=text):
        if isinstance(record, InputError):
            raise record
        item_id = record.get("item_id")
        if item_id is None or item_id == "":
            raise InputError("missing", file=str(path), line=line, field="item_id")
        if isinstance(item_id, bool) or not isinstance(item_id, (str, int)):
            raise InputError(f"must be a string, got {type(item_id).__name__}", file=str(path), line=line,
                             field="item_id")
        item_id = str(item_id)
        if item_id in lines:
            raise InputError(f"item_id {item_id!r} appears on lines {lines[item_id]} and {line}", file=str(path),
                             line=line)
        lines[item_id] = line
        traces[item_id] = record
    return traces


def _trec_traces(path: Path, text: str) -> dict[str, Any]:
    runs: dict[str, list[tuple[float, int, str]]] = {}
    seen: dict[tuple[str, str], int] = {}
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
        pair = (parts[0], parts[2])
        if pair in seen:
            raise InputError(f"document {parts[2]!r} is ranked twice for query {parts[0]!r}, on lines {seen[pair]} "
                             f"and {number} (trec_eval refuses that too)", file=str(path), line=number)
        seen[pair] = number
        runs.setdefault(parts[0], []).append((-score, rank, parts[2]))
    return {qid: {"candidates": [doc for _, _, doc in sorted(rows)]} for qid, rows in runs.items()}


def check_logged(logged: LoggedTraces, path: Path, item_ids: list[str], ref: str) -> str | None:
    """Raise an InputError when no trace of `logged` names an item of the release (every item would fail
    with "no trace", a run that measures nothing); return a warning when some traces name no item
    (they are not scored), else None."""
    known = set(item_ids)
    strangers = [item_id for item_id in logged.traces if item_id not in known]
    if strangers and len(strangers) == len(logged.traces):
        raise InputError(f"none of its {len(strangers)} traces names an item of {ref} (first: {strangers[0]!r}; the "
                         f"release's first item is {item_ids[0]!r})" if item_ids else f"{ref} has no items",
                         file=str(path), field="item_id" if logged.kind == "trace" else None)
    if strangers:
        return (f"{len(strangers)} of the {len(logged.traces)} traces in {path} name no item of {ref} (first: "
                f"{strangers[0]!r}): they are not scored")
    return None


def describe(target: str | None, traces: Path | None, oracle: bool, kind: str = "trace") -> str:
    """Return a one-line description of the system under test, for the manifest."""
    if traces is not None:
        return f"TREC run {traces} (candidates only)" if kind == "trec" else f"traces from {traces}"
    return f"{target}{' (oracle context: diagnostic)' if oracle else ''}"
