"""The tutorials and the README's quickstart do what they say: every command and code block runs, in
order, as a reader would run it (one shell, a fresh folder, a fresh home, offline), exits as the
page says, and prints the lines the page shows, with no warning the page does not show.

A tutorial that continues another (`<!-- docs-test: continues PAGE -->`) runs in the folder that
page left, as a reader would go on; the pages of one chain share one folder for the session, each
run once. The conventions are in tests/support/docs.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import docs
from tests.support.servers import free_port

TUTORIALS = docs.ROOT / "docs" / "tutorials"
PAGES = [TUTORIALS / name for name in ("first-release.md", "evaluate-and-compare.md", "monthly-regression.md",
                                       "argilla.md", "ci-gate.md", "scope.md")]
README = docs.ROOT / "README.md"


def test_every_tutorial_is_tested():
    assert sorted(PAGES) == sorted(p for p in TUTORIALS.glob("*.md") if p.name != "index.md")


class Chains:
    """Runs each page once per session, after the page it continues, in that page's folder."""

    def __init__(self, root: Path):
        self.root = root
        self.outcomes: dict[Path, docs.Outcome] = {}
        self.folders: dict[Path, Path] = {}

    def run(self, page: Path) -> docs.Outcome:
        if page in self.outcomes:
            return self.outcomes[page]
        before = docs.continues(page)
        if before is not None:
            earlier = self.run(before)
            if earlier.problem:
                pytest.fail(f"{page.name} continues {before.name}, which failed:\n{earlier.problem}")
            folder = self.folders[before]
        else:
            folder = self.root / page.stem
        self.folders[page] = folder
        replace = {port: str(free_port()) for port in docs.ports(page)}
        outcome = docs.run(docs.steps(page), folder, replace=replace, name=page.stem)
        self.outcomes[page] = outcome
        return outcome


@pytest.fixture(scope="session")
def chains(tmp_path_factory) -> Chains:
    return Chains(tmp_path_factory.mktemp("docs"))


@pytest.mark.tutorial
@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_the_tutorial_runs_as_written(chains, page):
    outcome = chains.run(page)
    assert outcome.problem is None, outcome.problem


# The curate functions "The same in Python" calls (the README's steps, as the library names them).
README_CURATE_API = ("init_workspace", "ingest", "import_items", "split", "grade", "check_leakage", "release")


def missing_curate_api() -> list[str]:
    """Return the functions of README_CURATE_API that curate does not export (yet)."""
    import curate
    return [name for name in README_CURATE_API if not callable(getattr(curate, name, None))]


@pytest.mark.tutorial
def test_the_readme_quickstart_runs_as_written(tmp_path):
    steps = docs.steps(README, hidden_ok=False)
    assert [s.text for s in steps if s.text.startswith("evalrun report")], "the quickstart ends without a report"
    assert [s for s in steps if s.kind == "python"], "the README shows no quickstart in Python"
    missing = missing_curate_api()
    if missing:   # the commands' quickstart still runs; only its Python twin waits for curate's functions
        steps = [s for s in steps if s.kind != "python"]
    outcome = docs.run(steps, tmp_path)
    assert outcome.problem is None, outcome.problem
    report = tmp_path / "work" / "hr-eval" / "runs" / "first" / "report.html"
    assert report.stat().st_size > 10_000
    if missing:
        pytest.skip(f"README's 'The same in Python' not run: curate does not export {', '.join(missing)} yet")
    written = sorted((tmp_path / "work" / "hr-eval" / "py-eval" / "runs").glob("hr-v1-*/report.html"))
    assert len(written) == 1 and written[0].stat().st_size > 10_000


def test_the_conventions_catch_what_a_page_gets_wrong(tmp_path):
    """A shown line the command does not print, an unshown warning, a wrong exit code: each fails."""
    page = tmp_path / "page.md"
    page.write_text("\n".join([
        "```console", "$ echo hello world", "hello ... world", "$ echo 'warning: unseen'", "```",
        "```sh", "false  # exit 1", "true", "```",
        '```text title="notes/a.txt"', "a file", "```",
        "```python", "import pathlib; assert pathlib.Path('notes/a.txt').read_text() == 'a file\\n'", "```",
    ]) + "\n", encoding="utf-8")
    steps = docs.steps(page)
    assert [s.kind for s in steps] == ["command", "command", "command", "command", "file", "python"]
    outcome = docs.run(steps, tmp_path / "run")
    assert "warning: unseen" in outcome.problem and "does not show" in outcome.problem
    assert docs.mismatch(["hello ... world"], "hello big world\n") is None
    assert docs.mismatch(["hello", "there"], "there\nhello\n") is not None  # order counts
    assert docs.mismatch(["warning: seen"], "warning: seen\n") is None
    page.write_text("```console\n$ sh -c 'exit 3'\n```\n", encoding="utf-8")
    assert "exited 3, the page expects 0" in docs.run(docs.steps(page), tmp_path / "run2").problem
    page.write_text("```yaml\na: 1\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match="neither run nor a file"):
        docs.steps(page)
