"""The Python API page is the API as it is: every function the `curate` commands are a layer over is
exported, has a docstring, a block on docs/reference/python.md and an example there, and the examples
run, in order, as one session."""

from __future__ import annotations

import re
import tempfile

import pytest

import curate
from tests.support.docs import ROOT

PAGE = ROOT / "docs" / "reference" / "python.md"
OPEN, CLOSE = "<!-- curate-api-examples", "<!-- /curate-api-examples -->"
# what the contract of the library names: a workspace, ingest and import, each check, release, load
API = ("init_workspace", "open_workspace", "ingest", "import_chunks", "import_items", "remap", "add_failures", "generate",
       "check_dups", "split", "grade", "check_leakage", "release", "load_release")


def _examples() -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    part = text[text.index(OPEN):text.index(CLOSE)]
    return re.findall(r"^```python\n(.*?)^```$", part, flags=re.S | re.M)


def test_every_function_of_the_api_is_exported_documented_and_shown():
    text = PAGE.read_text(encoding="utf-8")
    examples = "\n".join(_examples())
    for name in API:
        function = getattr(curate, name)
        assert name in curate.__all__ and name in curate.__doc__, name
        assert (function.__doc__ or "").strip(), f"{name} has no docstring"
        assert f"::: {function.__module__}.{name}\n" in text, f"no block for curate.{name} on the page"
        assert f"curate.{name}(" in examples, f"no example calls curate.{name}"


def _run(blocks: list[str]) -> None:
    """Run the blocks in order in one namespace; fail naming the first that raises."""
    namespace: dict = {"__name__": "python_api_page"}
    for number, block in enumerate(blocks, start=1):
        try:
            exec(compile(block, f"{PAGE.name} example {number}", "exec"), namespace)
        except Exception as exc:
            pytest.fail(f"example {number} of {PAGE.name} fails: {type(exc).__name__}: {exc}\n{block}")


def test_the_examples_run_in_order_as_one_session(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    blocks = _examples()
    assert len(blocks) >= len(API) - 2
    _run(blocks)


def test_a_broken_example_fails_the_session():
    """The runner names the example that breaks (an assertion of the page no longer true)."""
    with pytest.raises(pytest.fail.Exception, match="example 2 of python.md fails: AssertionError"):
        _run(["x = 1", "assert x == 2"])
