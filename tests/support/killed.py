"""Run a stage in a process of its own and SIGKILL it half way: once `ready()` says enough of its work is on
disk (the tests of resuming stages on either engine); then wait until no work of it runs on: its local
workers gone, no Ray worker still in a task (Ray stops a dead driver's tasks, a moment later)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

def stage_script(call: str, imports: str, engine: str) -> str:
    """Return a script that runs `call` (with ENGINE in it) on `engine` (an expression over curate.engine)."""
    return f"from curate.engine import *\nfrom pathlib import Path\n{imports}\n{call.replace('ENGINE', engine)}\n"


def kill_when(script: str, ready: Callable[[], bool], what: str, limit: float = 300) -> None:
    """Start `script`, wait until `ready()`, then SIGKILL it; fail if it ends first (or after `limit` seconds,
    a safety net: the wait is for the work, not for the clock)."""
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + limit
    while not ready():
        assert process.poll() is None, process.stderr.read().decode()[-2000:]
        assert time.monotonic() < deadline, f"no {what} within {limit:.0f} s"
        time.sleep(0.05)
    workers = _descendants(process.pid)
    process.send_signal(signal.SIGKILL)
    process.wait()
    while any(_running(pid) for pid in workers) or _ray_tasks():   # events polled, not a guess of how long
        assert time.monotonic() < deadline + 60, f"the killed command's workers still run after {limit + 60:.0f} s"
        time.sleep(0.05)


def _descendants(pid: int) -> list[int]:
    """Return the processes `pid` started and theirs."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                children = [int(c) for c in open(f"/proc/{parent}/task/{task}/children").read().split()]
            except OSError:
                continue
            found += children
            todo += children
    return found


def _running(pid: int) -> bool:
    """Return whether `pid` is alive and not a zombie."""
    try:
        return open(f"/proc/{pid}/stat").read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def _ray_tasks() -> bool:
    """Return whether a Ray worker of this machine is running one of curate's tasks (it names itself ray::_task)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if open(f"/proc/{pid}/cmdline", "rb").read().startswith(b"ray::_task"):
                return True
        except OSError:
            continue
    return False
