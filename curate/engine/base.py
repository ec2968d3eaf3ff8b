"""What every engine does: map a function over tasks, results in task order, with a progress bar."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, TypeVar

from curate.errors import CurateError
from curate.progress import progress

T = TypeVar("T")
R = TypeVar("R")
# one call of a stage: fn(task) when nothing is shared, fn(task, shared) otherwise
Stage = Callable[..., R]
# threads of numeric libraries per worker: a worker is one core's work (numpy's BLAS otherwise starts a
# thread per core in every worker: 5x slower matrix code on a loaded machine)
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                    "RAYON_NUM_THREADS", "TOKENIZERS_PARALLELISM")


class EngineFailed(CurateError):
    """A worker died (killed, out of memory) or the cluster was lost; the shards it completed are kept."""


class Engine(Protocol):
    """Runs one stage over many tasks."""

    name: str
    workers: int

    def map(self, fn: Stage, tasks: Sequence[T], *, shared: Any = None, label: str = "working",
            unit: str = "shard") -> list[R]:
        """Return fn(task[, shared]) of every task, in task order."""

    def close(self) -> None:
        """Release the workers (and a Ray cluster this engine started)."""


def call(fn: Stage, task: Any, shared: Any) -> Any:
    """Run one task: `fn(task)` when nothing is shared, else `fn(task, shared)`."""
    return fn(task) if shared is None else fn(task, shared)


def in_order(done: Iterable[tuple[int, R]], count: int, label: str, unit: str) -> list[R]:
    """Return the results of `done` ((task number, result) as each completes) in task order, drawing a bar."""
    results: list[Any] = [None] * count
    for number, result in progress(done, label, unit=unit, total=count, at_least=2):
        results[number] = result
    return results


def pending(tasks: Sequence[T], done: Callable[[T], bool]) -> tuple[list[T], int]:
    """Return the tasks still to run and how many were done already (a killed stage resumes from them).

    >>> pending([1, 2, 3, 4], lambda n: n % 2 == 0)
    ([1, 3], 2)
    """
    left = [task for task in tasks if not done(task)]
    return left, len(tasks) - len(left)
