"""The version of the relevance guidelines in force: a hash of their content."""

from __future__ import annotations

import hashlib
from pathlib import Path

from curate.errors import InputError
from curate.workspace import Workspace


def guideline_version(folder: Path) -> str:
    """Return 'g-' + 12 hex digits of the sha256 over the folder's Markdown files (names and bytes)."""
    folder = Path(folder)
    files = sorted(p for p in folder.glob("*.md") if p.is_file())
    if not files:
        raise InputError("no guideline files (*.md)", file=str(folder))
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode("utf-8") + b"\0" + path.read_bytes() + b"\0")
    return "g-" + digest.hexdigest()[:12]


def workspace_guideline_version(workspace: Workspace) -> str | None:
    """Return the version of the guidelines curate.toml points to, or None if it names none."""
    path = workspace.setting("guidelines", "path")
    if not path:
        return None
    folder = Path(path) if Path(path).is_absolute() else workspace.root / path
    return guideline_version(folder)


GRADING_SECTIONS = ("2", "3", "4")
"""The numbered sections of a relevance guideline a judge grading chunks is given (in the bundled ones: the unit
of relevance, the grades, the special cases)."""
WHOLE_LIMIT = 6000   # characters of a guideline without those sections given whole


def guideline_folder(workspace: Workspace) -> Path:
    """Return the folder curate.toml's [guidelines] path names, or the bundled guidelines when it names none."""
    from curate.workspace import BUNDLED_GUIDELINES
    path = workspace.setting("guidelines", "path")
    if not path:
        return BUNDLED_GUIDELINES
    return Path(path) if Path(path).is_absolute() else workspace.root / path


def relevance_grading(workspace: Workspace, language: str) -> tuple[str, str]:
    """Return (the grading part of the relevance guideline in `language`, 'g-' + 12 hex digits of its sha256):
    relevance.LANG.md (English for a language without its own file), its sections numbered 2 to 4 ("## 2."
    ...), or the whole text cut at WHOLE_LIMIT characters when it has no such sections. What annotators
    grade by is what a judge grading chunks is given."""
    folder = guideline_folder(workspace)
    path = folder / f"relevance.{language}.md"
    if not path.is_file():
        path = folder / "relevance.en.md"
    if not path.is_file():
        raise InputError("no relevance guideline to grade chunks by: put relevance.en.md (and relevance.zh.md) in "
                         "the folder [guidelines] path names", file=str(folder), field="guidelines")
    text = path.read_text(encoding="utf-8")
    text = grading_sections(text) or text[:WHOLE_LIMIT]
    return text, "g-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def grading_sections(text: str) -> str:
    r"""Return the sections of a Markdown guideline numbered 2 to 4 (level-2 headings "## 2." to the heading
    after "## 4."), or "" when it has none.

    >>> grading_sections("# G\n## 1. See\na\n## 2. Unit\nb\n## 3. Grades\nc\n## 4. Cases\nd\n## 5. Other\ne")
    '## 2. Unit\nb\n## 3. Grades\nc\n## 4. Cases\nd'
    """
    kept, keeping = [], False
    for line in text.split("\n"):
        if line.startswith("## "):
            number = line[3:].split(".")[0].strip()
            keeping = number in GRADING_SECTIONS
        if keeping:
            kept.append(line)
    return "\n".join(kept).strip()
