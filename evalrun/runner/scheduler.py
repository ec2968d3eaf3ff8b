"""Calls to the system under test: at most `concurrency` at once, each in its own daemon thread and
with its own deadline, counted from the moment that call starts.

A call past its deadline is given up on: its thread is abandoned (a daemon, so it holds up neither
the run nor the interpreter's exit), whatever it returns later is ignored, and the next call starts
in its place. The main thread only waits, on one queue, for the nearest deadline or the next result.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from curate import CurateError

T = TypeVar("T")

# The longest the main thread waits in one go: where a Ctrl-C can be delivered to another thread
# (Linux gives it to the main thread, not every system does), KeyboardInterrupt is raised only once
# the main thread wakes.
WAKE = 0.5


class TooManyHung(CurateError):
    """So many abandoned calls are still running that starting more would exhaust the threads."""


@dataclass
class Finished(Generic[T]):
    """One call's outcome: what it returned, what it raised, or that it ran past its deadline."""

    item: T
    seconds: float
    value: Any = None
    error: BaseException | None = None
    timed_out: bool = False


@dataclass
class _Running:
    item: Any
    started: float
    deadline: float
    thread: threading.Thread


class Calls:
    """Runs `function(item)` for every item, `concurrency` at a time, each within `timeout` seconds.

    `abandoned` counts the calls given up on; `hung` those of them still running. When `max_hung`
    abandoned calls are still running, no new call starts: `TooManyHung` is raised instead.
    """

    def __init__(self, function: Callable[[T], Any], *, concurrency: int, timeout: float,
                 max_hung: int | None = None):
        self.function = function
        self.concurrency = max(1, concurrency)
        self.timeout = timeout
        self.max_hung = max_hung if max_hung is not None else max(100, 4 * self.concurrency)
        self.abandoned = 0
        self._abandoned: list[threading.Thread] = []
        self._done: queue.SimpleQueue = queue.SimpleQueue()
        self._tickets = itertools.count()

    @property
    def hung(self) -> int:
        """Return how many abandoned calls have not returned yet."""
        self._abandoned = [thread for thread in self._abandoned if thread.is_alive()]
        return len(self._abandoned)

    def run(self, items: Iterable[T]) -> Iterator[Finished[T]]:
        """Yield each item's outcome as it is known (in the order the calls end, not the items')."""
        pending = deque(items)
        running: dict[int, _Running] = {}
        while pending or running:
            while pending and len(running) < self.concurrency:
                self._start(pending.popleft(), running)
            nearest = min(call.deadline for call in running.values())
            try:
                results = [self._done.get(timeout=min(max(0.0, nearest - time.monotonic()), WAKE))]
            except queue.Empty:
                results = []
            while True:  # everything that has ended, before any deadline is judged
                try:
                    results.append(self._done.get_nowait())
                except queue.Empty:
                    break
            for ticket, value, error, ended in results:
                if ticket not in running:  # a late result of an abandoned call: ignored
                    continue
                call = running.pop(ticket)
                if ended > call.deadline:  # it ended in time to be seen, but after its deadline
                    yield Finished(call.item, ended - call.started, timed_out=True)
                else:
                    yield Finished(call.item, ended - call.started, value=value, error=error)
            now = time.monotonic()
            for ticket, call in list(running.items()):
                if call.deadline <= now:
                    del running[ticket]
                    self._abandoned.append(call.thread)
                    self.abandoned += 1
                    yield Finished(call.item, now - call.started, timed_out=True)

    def _start(self, item: T, running: dict[int, _Running]) -> None:
        if self.hung >= self.max_hung:
            raise TooManyHung(f"{self.hung} calls to the target are still running after their "
                              f"{self.timeout:g} s timeout (it hangs)")
        ticket = next(self._tickets)
        started = time.monotonic()
        thread = threading.Thread(target=self._call, args=(ticket, item), name=f"evalrun call {ticket}", daemon=True)
        try:
            thread.start()
        except RuntimeError as exc:  # the system allows no more threads
            raise TooManyHung(f"cannot start another call to the target ({exc}); {self.hung} calls are "
                              f"still running after their {self.timeout:g} s timeout") from None
        running[ticket] = _Running(item, started, started + self.timeout, thread)

    def _call(self, ticket: int, item: T) -> None:
        try:
            value, error = self.function(item), None
        except BaseException as exc:  # noqa: BLE001 - sys.exit or KeyboardInterrupt in a target is that item's failure
            value, error = None, exc
        self._done.put((ticket, value, error, time.monotonic()))
