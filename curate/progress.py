"""Progress bars on standard error, shown only when it is a terminal."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sized
from typing import TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

T = TypeVar("T")
_stderr = Console(stderr=True)


def progress(items: Iterable[T], description: str, unit: str = "item", total: int | None = None,
             status: Callable[[], str] | None = None, at_least: int = 200) -> Iterator[T]:
    """Yield `items`, drawing a progress bar on a terminal when there are enough of them to wait for
    (`at_least`: 1 for slow steps, such as a model's answers); `status()`, if given, is shown after the
    description and refreshed at every step (e.g. errors, the running cost)."""
    if total is None and isinstance(items, Sized):
        total = len(items)
    if not _stderr.is_terminal or (total is not None and total < at_least):
        yield from items
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn(unit + "s"), TimeRemainingColumn())
    with Progress(*columns, console=_stderr, transient=True) as bar:
        task = bar.add_task(description, total=total)
        for item in items:
            yield item
            bar.advance(task)
            if status is not None:
                bar.update(task, description=f"{description} ({status()})")
