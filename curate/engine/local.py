"""The local engine: the stage's shards in worker processes on this machine, or in this process when
there is one worker or one shard (a small KB starts no process)."""

from __future__ import annotations

import contextlib
import ctypes
import gc
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from curate.engine.base import THREAD_VARIABLES, EngineFailed, Stage, call, in_order

_shared: Any = None   # in a worker: what every task of the stage shares, received once
PR_SET_PDEATHSIG = 1   # prctl: the signal a process receives when its parent dies


def _run(fn: Stage, task: Any) -> Any:
    return call(fn, task, _shared)


def default_workers() -> int:
    """Return the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:   # not on Linux
        return max(1, os.cpu_count() or 1)


class LocalEngine:
    """Processes on this machine: `workers` of them (default: one per core), each with one thread of
    numeric work."""

    name = "local"

    def __init__(self, workers: int | None = None):
        self.workers = workers or default_workers()

    def map(self, fn: Stage, tasks: Sequence[Any], *, shared: Any = None, label: str = "working",
            unit: str = "shard") -> list[Any]:
        tasks = list(tasks)
        workers = min(self.workers, len(tasks))
        if workers <= 1:
            with _frozen():
                done = ((n, call(fn, task, shared)) for n, task in enumerate(tasks))
                return in_order(done, len(tasks), label, unit)
        # fork: workers are copies of this process, which has curate loaded (no second import per worker, and
        # the caller's script is not run again, as spawn would); every task is submitted before the progress
        # bar starts its thread. Each worker is set to one thread per numeric library.
        context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
        try:
            with _frozen(), ProcessPoolExecutor(workers, mp_context=context, initializer=_start,
                                                initargs=(shared, os.getpid())) as pool:
                futures = {pool.submit(_run, fn, task): n for n, task in enumerate(tasks)}
                return in_order(_completed(futures), len(tasks), label, unit)
        except BrokenProcessPool:
            raise EngineFailed(f"{label}: a worker process died (killed, or out of memory); the shards it "
                               "completed are kept: run the command again to resume") from None

    def close(self) -> None:
        pass


@contextlib.contextmanager
def _frozen() -> Iterator[None]:
    """Keep the objects the command holds out of the garbage collector's sweeps while a stage runs: a stage
    that makes many objects (judging millions of pairs) otherwise has every full sweep walk the command's whole
    heap (10 s of 59 s for mining 1,000,000 chunks in one worker), and a forked worker's sweeps would copy
    the pages it shares with the command."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _start(shared: Any, parent: int) -> None:
    global _shared
    _shared = shared
    _die_with(parent)
    os.environ.update({name: "false" if name == "TOKENIZERS_PARALLELISM" else "1" for name in THREAD_VARIABLES})
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)   # numpy's BLAS was loaded by the parent with its own thread count


def _die_with(parent: int) -> None:
    """Have the operating system kill this worker when the command that started it dies (Linux): a command
    killed half way (SIGKILL) would otherwise leave its workers waiting for tasks for ever, holding its memory
    and the write locks it had when it forked them. Elsewhere a thread watches for the command to be gone."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):   # not on Linux
        threading.Thread(target=_exit_with, args=(parent,), daemon=True).start()
        return
    if os.getppid() != parent:   # it died before this worker asked
        os._exit(1)


def _exit_with(command: int) -> None:
    while os.getppid() == command:
        time.sleep(0.5)
    os._exit(1)


def _completed(futures: dict[Future, int]):
    """Yield (task number, result) as tasks complete; the first failure cancels the rest and is raised."""
    waiting = set(futures)
    try:
        while waiting:
            done, waiting = wait(waiting, return_when=FIRST_COMPLETED)
            for future in done:
                yield futures[future], future.result()
    finally:
        for future in waiting:
            future.cancel()
