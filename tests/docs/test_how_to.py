"""How-to sections that show a whole example, from `curate init` on, run as written: every command and
file in order, in a fresh folder, by the conventions of tests/support/docs.py (the rest of a how-to page
shows excerpts of the bundled examples, which the tutorials run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import docs

HOW_TO = docs.ROOT / "docs" / "how-to"
SECTIONS = [("kb.md", "Access groups and versions"), ("generate.md", "Try it"), ("probe.md", "Try it")]


def section(page: Path, title: str) -> str:
    """Return the `## title` section of a page, up to the next `## ` heading outside a code block."""
    kept, inside, fenced = [], False, False
    for line in page.read_text(encoding="utf-8").split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            inside = line == f"## {title}"
        if inside:
            kept.append(line)
    assert kept, f"{page.name} has no section '## {title}'"
    return "\n".join(kept) + "\n"


@pytest.mark.tutorial
@pytest.mark.parametrize(("page", "title"), SECTIONS, ids=[f"{p}#{t}" for p, t in SECTIONS])
def test_the_section_runs_as_written(tmp_path, page, title):
    extract = tmp_path / "section.md"
    extract.write_text(section(HOW_TO / page, title), encoding="utf-8")
    steps = docs.steps(extract)
    assert [s for s in steps if s.compare], "the section shows no command with its output"
    outcome = docs.run(steps, tmp_path / "run", name=Path(page).stem)
    assert outcome.problem is None, outcome.problem
