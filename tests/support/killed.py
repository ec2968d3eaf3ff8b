"""Run a stage in a process of its own and SIGKILL it half way: once `ready()` says enough of its work is on
disk (the tests of resuming stages on either engine)."""

from __future__ import annotations

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
    process.send_signal(signal.SIGKILL)
    process.wait()
