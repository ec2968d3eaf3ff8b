"""The target is given each item's asker and moment: a Python target as the keyword arguments its signature
accepts (module:function, file.py:function, a callable, --oracle-context's generate), an HTTP target as
fields of its request body (a real local server); the manifest records what it received, and a target
that cannot receive them is said to be unable to filter by scope."""

from __future__ import annotations

import json
import textwrap
import threading

from click.testing import CliRunner

from evalrun.cli.main import cli as evalrun_cli
from evalrun.records import RunSettings, read_run
from evalrun.runner import run
from evalrun.runner.targets import callable_target, python_target, request_body, scope_keywords
from tests.evalrun.runner.conftest import send
from tests.support import scope as kb

SCOPE = {"asker_groups": ["staff"], "asker_role": "clerk", "as_of": "2025"}


def test_a_python_target_gets_the_scope_keywords_its_signature_accepts():
    seen = []

    def only_moment(question, as_of=None):
        seen.append(("only_moment", as_of))
        return {}

    def everything(question, **options):
        seen.append(("everything", options))
        return {}

    def nothing(question):
        seen.append(("nothing", question))
        return {}

    def generate(question, context, *, asker_groups=None):
        seen.append(("generate", context, asker_groups))
        return {}

    for function in (only_moment, everything, nothing):
        callable_target(function)("q1", "Q?", None, SCOPE)
    callable_target(generate, oracle=True)("q1", "Q?", [{"chunk_id": "c"}], SCOPE)
    assert seen == [("only_moment", "2025"), ("everything", SCOPE), ("nothing", "Q?"),
                    ("generate", [{"chunk_id": "c"}], ["staff"])]
    assert [callable_target(f).scope.receives for f in (only_moment, everything, nothing)] == [
        ["as_of"], ["asker_groups", "asker_role", "as_of"], []]
    assert scope_keywords(print) == ()     # a builtin whose signature cannot be read: called as before


def test_module_and_file_targets_get_them_too(target_module, tmp_path):
    name = target_module("""
        def answer(question, asker_groups=None, as_of=None):
            return {"answer": f"{question}|{asker_groups}|{as_of}"}

        def generate(question, context, **kwargs):
            return {"answer": f"{context}|{sorted(kwargs)}"}
    """)
    assert python_target(f"{name}:answer")("q1", "Q?", None, SCOPE) == {"answer": "Q?|['staff']|2025"}
    assert python_target(f"{name}:answer", oracle=True)("q1", "Q?", [], SCOPE) == {
        "answer": "[]|['as_of', 'asker_groups', 'asker_role']"}
    path = tmp_path / "rag.py"
    path.write_text(textwrap.dedent("""
        def answer(question, *, asker_role=None):
            return {"answer": asker_role}
    """), encoding="utf-8")
    target = python_target(f"{path}:answer")
    assert target("q1", "Q?", None, SCOPE) == {"answer": "clerk"} and target.scope.receives == ["asker_role"]


def test_the_request_body_holds_the_scope_fields_the_item_sets():
    assert request_body("q1", "Q?", {"asker_groups": None, "asker_role": None, "as_of": None}) == {
        "item_id": "q1", "question": "Q?"}      # a release without askers sends the body it always did
    assert request_body("q1", "Q?", {"asker_groups": [], "asker_role": None, "as_of": "2026-03-01"}) == {
        "item_id": "q1", "question": "Q?", "asker_groups": [], "as_of": "2026-03-01"}


def test_a_run_gives_a_module_target_every_items_asker_and_moment(hr, tmp_path):
    folder = run(hr, ref="hr@v1", target="tests.support.scope:scoped", out=tmp_path / "run",
                 settings=RunSettings(no_judge=True))
    given = {call["item"]: (call["asker_groups"], call["as_of"]) for call in kb.CALLS}
    assert given == {item_id: (askers, as_of) for item_id, (_, _, askers, as_of, *_rest) in kb.ITEMS.items()}
    manifest = read_run(folder).manifest
    assert (manifest.target_scope.how, manifest.target_scope.receives) == (
        "keyword arguments", ["asker_groups", "asker_role", "as_of"])
    assert read_run(folder).summary.scope.not_received == []


def test_an_http_target_gets_them_in_its_body_and_can_filter_by_them(hr, http_server, tmp_path):
    bodies, lock = {}, threading.Lock()

    def answer(handler, body):
        with lock:
            bodies[kb.QUESTIONS[body["question"]]] = body
        trace = kb.scoped(body["question"], asker_groups=body.get("asker_groups"), as_of=body.get("as_of"))
        send(handler, json.dumps(trace).encode("utf-8"))

    server = http_server(answer)
    folder = run(hr, ref="hr@v1", target=server.url, out=tmp_path / "run", settings=RunSettings(no_judge=True))
    assert bodies["band-staff"] == {"item_id": "band-staff", "question": kb.ITEMS["band-staff"][0],
                                    "asker_groups": ["staff"]}
    assert bodies["leave"]["asker_groups"] == [] and "as_of" not in bodies["leave"]
    assert "asker_groups" not in bodies["office"]                  # no asker named: the key left out, not null
    assert bodies["travel-2025"]["as_of"] == "2025"
    result = read_run(folder)
    assert (result.manifest.target_scope.how, result.manifest.target_scope.receives) == (
        "request body", ["asker_groups", "asker_role", "as_of"])
    assert result.summary.scope.permission_leak_items == []


def test_a_target_that_cannot_receive_them_is_said_to_be_unable_to_filter(hr, tmp_path):
    args = ["run", "--dataset", "hr@v1", "--target", "tests.support.scope:leaky", "--out", str(tmp_path / "run"),
            "--no-judge", "--workspace", str(hr.root)]
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, args)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    line = ("the target cannot receive asker_groups or as_of (its signature takes no such keyword argument, nor "
            "**kwargs): it cannot filter by scope (9 items name an asker, 1 a moment)")
    assert f"evalrun: warning: {line}" in result.stderr.splitlines()
    assert result.stdout.count(line) == 1           # in the summary run prints, once
    shown = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["show", str(tmp_path / "run")])
    assert line in shown.stdout.splitlines()
    assert read_run(tmp_path / "run").summary.scope.not_received == ["asker_groups", "as_of"]


def test_an_oracle_context_holds_only_the_evidence_the_asker_may_use(hr, target_module, tmp_path):
    name = target_module("""
        def generate(question, context, asker_groups=None):
            ids = [passage["chunk_id"] for passage in context]
            return {"candidates": ids, "context": ids, "answer": "from the evidence"}
    """)
    folder = run(hr, ref="hr@v1", target=f"{name}:generate", out=tmp_path / "oracle",
                 settings=RunSettings(no_judge=True, oracle_context=True))
    result = read_run(folder)
    contexts = {item_id: record.trace["context"] for item_id, record in result.traces.items()}
    # HR's band is band-hr's evidence and no evidence band-staff's asker may see; the 2025 policy is stale now
    assert (contexts["band-hr"], contexts["band-staff"], contexts["travel-both"]) == (["bands#0"], [], ["travel26#0"])
    assert result.summary.scope.permission_leak_items == [] and result.manifest.diagnostic
