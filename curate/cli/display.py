"""Terminal output: tables that keep Chinese text aligned, in one place."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

import click
from rich.console import Console
from rich.table import Table


def console(stderr: bool = False, markup: bool = False) -> Console:
    """Return a console on the current standard output (or error); wide enough when piped. No markup
    unless asked: what curate prints is the user's text (a question "[x] 是什么", a title "[bold]"),
    printed as written; `markup` is for a caller that escapes every text it did not write (evalrun's)."""
    width = None if os.environ.get("COLUMNS") else 120
    return Console(stderr=stderr, highlight=False, soft_wrap=False, width=width, emoji=False, markup=markup)


# A cell that reads as a number, with its unit: "1,243", "-0.5", "91.7%", "+5.2 pts", "1,243 ms", "$0.0021", "<0.001".
NUMBER = re.compile(r"^[+\-<]?\$?[\d,]*\.?\d+( ?(%|pts|ms|s|min \d+ s|h))?$")


def table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> Table:
    """Return a rich table; numbers right-aligned."""
    rows = [[("" if v is None else str(v)) for v in row] for row in rows]
    grid = Table(title=title, title_justify="left", show_edge=False, pad_edge=False, box=None,
                 header_style="bold")
    for index, name in enumerate(columns):
        numeric = bool(rows) and all(NUMBER.match(r[index]) for r in rows if r[index])
        grid.add_column(name, justify="right" if numeric else "left", overflow="fold")
    for row in rows:
        grid.add_row(*row)
    return grid


def counts_table(title: str, counts: dict[str, dict[str, int]], keys: Sequence[str]) -> Table:
    """Return one table row per (category, value) of a counts mapping."""
    rows = []
    for key in keys:
        for value, n in counts.get(key, {}).items():
            rows.append((key, value, n))
    return table(title, ("by", "value", "items"), rows)


def report_skipped(skipped: Sequence) -> None:
    """Print each record an import skipped (--skip-invalid), then how many, on standard error."""
    for error in skipped:
        click.echo(f"skipped: {error.located()}", err=True)
    if skipped:
        click.echo(f"skipped {len(skipped)} invalid record(s)", err=True)


def short(text: str | None, width: int = 48) -> str:
    """Return `text` on one line, cut to `width` characters with an ellipsis."""
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"
