"""Stage functions the engine tests run in worker processes (importable by reference, as stages must be)."""

from __future__ import annotations

import os
import signal

from curate.errors import InputError


def times(task: int, shared: int) -> int:
    return task * shared


def refuse(task: int) -> int:
    if task == 2:
        raise InputError("not a number", file="items.jsonl", line=task, field="question")
    return task


def die(task: int) -> int:
    if task == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    return task


def threads(task: int) -> tuple[str | None, int]:
    from threadpoolctl import threadpool_info

    return os.environ.get("OMP_NUM_THREADS"), max((i["num_threads"] for i in threadpool_info()), default=1)


def wait(task: int, folder: str) -> int:
    """Say this worker's pid in `folder`, then work for a long while."""
    import time
    from pathlib import Path

    Path(folder, f"{os.getpid()}.pid").write_text("")
    time.sleep(120)
    return task
