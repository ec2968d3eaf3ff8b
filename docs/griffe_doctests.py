"""A griffe extension for the docs site: the doctest examples in the docstrings (`>>> ...` and the
output after them, up to a blank line) are shown as Python console code, not read as Markdown
(where `[a][b]` would be a link and `>>>` a quote)."""

from __future__ import annotations

import griffe


def fence_doctests(text: str) -> str:
    """Return `text` with each doctest block in a ```pycon fence at the block's own indentation.

    >>> print(fence_doctests("An example:\\n\\n>>> 1 + 1\\n2\\n\\nThe end."))
    An example:
    <BLANKLINE>
    ```pycon
    >>> 1 + 1
    2
    ```
    <BLANKLINE>
    The end.
    """
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}```pycon")
            while i < len(lines) and lines[i].strip():
                out.append(lines[i])
                i += 1
            out.append(f"{indent}```")
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


class FenceDoctests(griffe.Extension):
    """Fence the doctest blocks of every docstring griffe reads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)
