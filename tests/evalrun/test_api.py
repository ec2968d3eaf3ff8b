"""The Python API (`evalrun.run`, `read_run`, `compare`, `report`): what the commands call, called from
Python; a callable as the target; and the examples in the functions' docstrings, run as written in
the README's workspace."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys

import pytest

import evalrun
from curate import CurateError, InputError, NotFound, init_workspace
from evalrun.compare.core import compare_scored
from evalrun.compare.gate import parse_gate
from evalrun.records import RunSettings
from evalrun.runner.run import _resume_command
from evalrun.runner.targets import callable_name, importable
from tests.evalrun.compare.test_compare import make_run
from tests.support import docs, targets


def test_the_package_exports_the_four_functions_and_they_stay_functions():
    """`evalrun.compare` and `evalrun.report` are also subpackages: importing every module of them (and the
    command line) leaves the names bound to the functions."""
    code = ("import evalrun, evalrun.cli.main, evalrun.compare.stats, evalrun.report.render; "
            "from evalrun.report import items; "
            "print([inspect.isfunction(getattr(evalrun, n)) for n in ('run', 'read_run', 'compare', 'report', 'probe')])")
    shown = subprocess.run([sys.executable, "-c", "import inspect; " + code], capture_output=True, text=True,
                           check=True).stdout.strip()
    assert shown == "[True, True, True, True, True]"
    assert set(evalrun.__all__) >= {"run", "read_run", "compare", "report", "probe", "Run", "Comparison",
                                    "RunInterrupted"}


def test_the_api_loads_no_command_line():
    """`import evalrun` gives the API (which imports the runner, the comparison and the report) without
    click or any module of evalrun.cli (tests/test_layout.py checks the same of `import curate, evalrun`)."""
    code = ("import sys, evalrun; assert callable(evalrun.run) and callable(evalrun.report); "
            "print(sorted(m for m in sys.modules if m == 'click' or m.startswith(('curate.cli', 'evalrun.cli'))))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "[]"


def test_python_m_evalrun_runs_the_command_line():
    done = subprocess.run([sys.executable, "-m", "evalrun", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith(f"evalrun, version {evalrun.__version__}")
    done = subprocess.run([sys.executable, "-m", "evalrun", "compare", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "Compare run NEW against run BASE" in done.stdout


def test_the_run_functions_defaults_are_the_run_settings_defaults():
    parameters = inspect.signature(evalrun.run).parameters
    defaults = RunSettings()
    for name in RunSettings.model_fields:
        default = parameters[name].default
        if name == "judge_retrieval":   # None: as curate.toml's [judge] retrieval says, off when it says nothing
            assert default is None and defaults.judge_retrieval is False
            continue
        assert (list(default) if name == "ks" else default) == getattr(defaults, name), name


def test_a_callable_target_is_called_as_module_function_is(released, tmp_path):
    done = evalrun.run("faq@v1", target=targets.perfect, workspace=released.workspace, out=tmp_path / "run",
                       ks=[5, 1, 5])
    assert isinstance(done, evalrun.Run) and done.folder == tmp_path / "run"
    assert done.manifest.target == "tests.support.targets:perfect" and done.manifest.settings.ks == [1, 5]
    assert done.summary.metrics["all"]["candidates/recall@5"].mean == 1.0 and len(done.scores) == 5
    by_name = evalrun.run("faq@v1", target="tests.support.targets:perfect", workspace=released.workspace.root,
                          out=tmp_path / "by-name", ks=[1, 5])
    assert by_name.summary.metrics == done.summary.metrics
    assert evalrun.read_run(tmp_path / "run").summary == done.summary


def test_a_callable_gets_the_context_with_oracle_context(released, tmp_path):
    seen = []

    def answer(question, context=None):
        seen.append(context)
        return {"candidates": [c["chunk_id"] for c in context or []], "context": [c["chunk_id"] for c in context or []],
                "answer": "from the evidence"}
    done = evalrun.run("faq@v1", target=answer, workspace=released.workspace, out=tmp_path / "oracle",
                       oracle_context=True)
    assert len(seen) == 5 and all(isinstance(c, list) for c in seen) and any(seen)
    assert done.manifest.diagnostic
    assert done.manifest.target.endswith(":test_a_callable_gets_the_context_with_oracle_context.<locals>.answer "
                                         "(oracle context: diagnostic)")


def test_a_target_that_is_neither_is_refused_before_the_run_folder_exists(released, tmp_path):
    with pytest.raises(InputError, match="a target is a Python callable, 'module:function' or an http"):
        evalrun.run("faq@v1", target=42, workspace=released.workspace, out=tmp_path / "no")
    with pytest.raises(InputError, match="concurrency"):
        evalrun.run("faq@v1", target=targets.perfect, workspace=released.workspace, out=tmp_path / "no",
                    concurrency=0)
    assert not (tmp_path / "no").exists()


def test_a_callable_the_command_line_cannot_name_is_resumed_from_python(workspace, tmp_path):
    def local(question):
        return {}
    name = callable_name(local)
    assert not importable(name) and importable("tests.support.targets:perfect")
    assert not importable("__main__:answer")
    hint = _resume_command(workspace, "hr@v1", name, None, tmp_path / "run", RunSettings(), python=True)
    assert hint.startswith("evalrun.run('hr@v1', target=")
    assert f"out={str(tmp_path / 'run')!r}, resume=True" in hint
    assert _resume_command(workspace, "hr@v1", "rag:answer", None, tmp_path / "run", RunSettings()).startswith(
        "evalrun run --dataset hr@v1 --target rag:answer")


GATE = '[gate]\nguard = ["context/hit_rate@1"]\nguard_subsets = ["all"]\n'


def _values(hit_from: int) -> dict[str, dict[str, float]]:
    return {f"i{k:02d}": {"context/hit_rate@1": float(k >= hit_from)} for k in range(30)}


def test_compare_takes_runs_or_folders_and_carries_every_row_and_the_gates_verdict(tmp_path):
    base = make_run(tmp_path / "base", _values(0))
    new = make_run(tmp_path / "new", _values(20), kb="kb-2")
    (tmp_path / "gate.toml").write_text(GATE)
    comparison = evalrun.compare(base, evalrun.read_run(new), gate=tmp_path / "gate.toml",
                                 workspace=tmp_path / "nowhere")
    row = comparison.row("context/hit_rate@1")
    assert (row.base, row.new, row.n) == (1.0, pytest.approx(1 / 3), 30) and row.worse
    assert comparison.uncontrolled and not comparison.subsets
    assert comparison.gate.passed is False and comparison.gate.source == str(tmp_path / "gate.toml")
    assert comparison.gate.failed[0] == "require_controlled: not a controlled comparison: KB snapshot kb-1 vs kb-2"
    assert comparison.gate.failed[1].startswith("guard context/hit_rate@1 on all: 100.0% -> 33.3%")
    assert comparison.verdict.outcome == "worse" and comparison.family == ["context/hit_rate@1"]   # the gate joins it
    assert json.loads(comparison.model_dump_json())["gate"]["passed"] is False
    assert evalrun.compare(base, new, workspace=tmp_path / "nowhere").gate is None


def test_the_pure_core_compares_two_scored_runs_without_a_workspace(tmp_path):
    base = evalrun.read_run(make_run(tmp_path / "base", _values(0)))
    new = evalrun.read_run(make_run(tmp_path / "new", _values(0)))
    rules = parse_gate(GATE, "gate.toml")
    comparison = compare_scored(base, new, rules=rules, gate_source="gate.toml", allow_weak_rules=True)
    assert comparison.gate.passed and comparison.gate.source == "gate.toml"
    assert comparison.row("context/hit_rate@1").difference == 0.0
    assert compare_scored(base, new).gate is None
    oracle = evalrun.read_run(make_run(tmp_path / "oracle", _values(0), oracle=True))
    with pytest.raises(CurateError, match="diagnostic --oracle-context run"):
        compare_scored(base, oracle, rules=rules)
    assert compare_scored(base, oracle).new_diagnostic


def test_compare_refuses_what_the_command_refuses(tmp_path):
    base = make_run(tmp_path / "base", _values(0))
    with pytest.raises(InputError, match="--allow-weak-rules loosens --gate"):
        evalrun.compare(base, base, allow_weak_rules=True)
    unscored = evalrun.read_run(base)
    unscored.summary = None
    with pytest.raises(NotFound, match="has not been scored yet"):
        evalrun.compare(unscored, base, workspace=tmp_path / "nowhere")
    ws = init_workspace(tmp_path / "ws")
    with pytest.raises(InputError, match=r"\[gate\]"):   # the workspace's curate.toml has no [gate] table
        evalrun.compare(base, base, gate=True, workspace=ws)


def test_report_writes_beside_the_run_by_default(released, tmp_path):
    done = evalrun.run("faq@v1", target=targets.cut, workspace=released.workspace, out=tmp_path / "run")
    path = evalrun.report(done, workspace=released.workspace)
    assert path == tmp_path / "run" / "report.html" and path.stat().st_size > 10_000
    against = evalrun.report(tmp_path / "run", vs=done, out=tmp_path / "vs.html", workspace=released.workspace)
    assert against == tmp_path / "vs.html" and "paired" in against.read_text(encoding="utf-8")


# The examples of the docstrings, in the order they build on each other.
EXAMPLES = (evalrun.run, evalrun.compare, evalrun.report, evalrun.probe)
FENCED = re.compile(r"```python\n(.*?)```", re.S)


def test_every_public_function_shows_an_example():
    for function in EXAMPLES:
        assert FENCED.findall(inspect.getdoc(function)), function.__name__


@pytest.fixture(scope="module")
def readme_workspace(tmp_path_factory):
    """The README quickstart's workspace, made by its commands up to the first run (runs/first)."""
    steps = docs.steps(docs.ROOT / "README.md", hidden_ok=False)
    last = next(k for k, s in enumerate(steps) if s.text.startswith("evalrun run "))
    folder = tmp_path_factory.mktemp("readme")
    outcome = docs.run(steps[:last + 1], folder, name="readme-api")
    assert outcome.problem is None, outcome.problem
    return folder / "work" / "hr-eval"


def test_the_docstring_examples_run_as_written(readme_workspace, monkeypatch, capsys):
    monkeypatch.chdir(readme_workspace)
    monkeypatch.syspath_prepend(str(readme_workspace))
    monkeypatch.delitem(sys.modules, "rag", raising=False)
    for function in EXAMPLES:
        for code in FENCED.findall(inspect.getdoc(function)):
            exec(compile(code, f"<{function.__name__} example>", "exec"), {})
    monkeypatch.delitem(sys.modules, "rag", raising=False)
    shown = capsys.readouterr().out.splitlines()
    assert shown[0] == f"{readme_workspace / 'runs' / 'python'} 1.0"    # the stand-in finds every quote by K = 5
    assert shown[1].startswith("No detectable difference on the ")   # the same function as runs/first
    assert shown[2].startswith("True 0.0 ")          # ... by name there
    assert shown[3] == "runs/python/report.html"
    # what a question-only target cannot run (and no absent code, year or name could be mined from this KB)
    assert shown[4] == "end_to_end ['counterfactual', 'injection', 'negative', 'noise']"
    assert (readme_workspace / "runs" / "python" / "report.html").stat().st_size > 10_000
