"""Text shown as written in Argilla's Markdown fields: titles, chunk ids, group names, annotators' words."""

from __future__ import annotations

import re

_MARKDOWN_INLINE = re.compile(r"[\\`*_\[\]<>#|~]")


def markdown_escape(text: str) -> str:
    r"""Return `text` with Markdown's inline syntax (and HTML's angle brackets) escaped, so that it shows as
    written, on one line.

    >>> markdown_escape("a*b* [x](y) `z`")
    'a\\*b\\* \\[x\\](y) \\`z\\`'
    """
    return _MARKDOWN_INLINE.sub(r"\\\g<0>", " ".join(text.split()))
