"""Markdown front matter: the YAML mapping between a first line `---` and the next `---` (or `...`) line,
where static-site generators and documentation tools keep a page's title, dates, groups and version."""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field

import yaml

from curate.errors import InputError

_FENCE = "---"
_CLOSERS = ("---", "...")
_KEY = re.compile(r"""^(["']?)([^\s"':#][^"':]*?)\1\s*:(\s|$)""")
_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)   # libyaml's when PyYAML was built with it


class _Loader(_BASE):
    """YAML's safe loader that reads numbers and dates as the text they are written as: YAML 1.1 reads
    `version: 3.10` as 3.1, `version: 012` as 10 and `valid_to: 2026-02-30` as an error without a line;
    as text, each is checked where it is used, with its field and line."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers
            if tag not in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp")]
    for first, resolvers in _BASE.yaml_implicit_resolvers.items()}


@dataclass
class FrontMatter:
    """A Markdown file split at its front matter."""

    values: dict
    """The YAML mapping; numbers and dates are the text they are written as ("2025", "2026-01-01")."""
    body: str
    """The text after the closing line: the document's text, which chunk offsets index into."""
    lines: dict[str, int] = field(default_factory=dict)
    """Line number in the file of each top-level key, for errors."""


def split_front_matter(text: str, *, file: str) -> FrontMatter | None:
    """Return the front matter of a Markdown text and the text after it, or None when the text has none:
    its first line is not `---`, no `---` or `...` line closes it, or what lies between is not a YAML
    mapping (a thematic break over a paragraph is ordinary text). Invalid YAML is an InputError naming
    the file and the line.

    >>> page = "---\\ntitle: 差旅报销标准\\ngroups: [人事部]\\n---\\n# 差旅\\n"
    >>> found = split_front_matter(page, file="travel.md")
    >>> found.values, found.body, found.lines
    ({'title': '差旅报销标准', 'groups': ['人事部']}, '# 差旅\\n', {'title': 2, 'groups': 3})
    >>> split_front_matter("---\\nJust a paragraph.\\n---\\nText", file="a.md") is None
    True
    """
    if text.startswith("\ufeff"):   # a byte order mark, as Windows editors write one, opens no text
        text = text[1:]
    if not text.startswith(_FENCE):
        return None
    lines = text.split("\n")
    if lines[0].rstrip() != _FENCE:
        return None
    close = next((n for n in range(1, len(lines)) if lines[n].rstrip() in _CLOSERS), None)
    if close is None:
        return None
    block = "\n".join(lines[1:close])
    try:
        values = yaml.load(block, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        # the YAML's first line is the file's second
        line = exc.problem_mark.line + 2 if exc.problem_mark is not None else 1
        opened = (f", {exc.context} on line {exc.context_mark.line + 2}"
                  if exc.context and exc.context_mark is not None and exc.context_mark.line + 2 != line else "")
        raise InputError(f"front matter is not valid YAML: {exc.problem or exc.context}{opened} (a Markdown file "
                         "opening with --- holds YAML up to the next --- line)", file=file, line=line,
                         field="front matter") from None
    except (yaml.YAMLError, ValueError) as exc:   # an explicit tag that does not fit its value (!!int x)
        raise InputError(f"front matter is not valid YAML: {str(exc).splitlines()[0]}", file=file, line=1,
                         field="front matter") from None
    if values is None:
        values = {}   # an empty block is an empty mapping, as every site generator reads it
    if not isinstance(values, dict):
        return None
    if "*" in block:
        _refuse_aliases(block, file)
    keys: dict[str, int] = {}
    for number, line in enumerate(lines[1:close], start=2):
        found = _KEY.match(line)
        if not found:
            continue
        key = found.group(2).strip()
        if key in keys:   # YAML keeps the last silently; which one was meant cannot be told
            raise InputError(f"given twice in the front matter (first on line {keys[key]})", file=file, line=number,
                             field=key)
        keys[key] = number
    body = "\n".join(lines[close + 1:])
    return FrontMatter({str(k): v for k, v in values.items()}, body, keys)


def _refuse_aliases(block: str, file: str) -> None:
    """Raise an InputError at the first YAML alias (`*name`): front matter writes its values out, and
    aliases of aliases grow exponentially when the metadata is written as JSON."""
    for event in yaml.parse(block, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent):
            raise InputError(f"front matter uses the YAML alias *{event.anchor}: write the value out",
                             file=file, line=event.start_mark.line + 2, field="front matter")


def scalar(value: object) -> object:
    """Return a date or time an explicit YAML tag made (`!!timestamp`) as ISO text, as metadata holds
    JSON values; anything else as it is."""
    return value.isoformat() if isinstance(value, (datetime.date, datetime.datetime)) else value
