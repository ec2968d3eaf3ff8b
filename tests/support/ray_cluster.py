"""A local Ray cluster for the tests: a head node with two worker CPUs, started with `ray start` as a team
starts one, joined by address, stopped at the end: its own processes only (`ray stop` ends every Ray on the
machine, a developer's own cluster or a benchmark's among them)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def ray_cluster(cpus: int = 2) -> Iterator[str]:
    """Start a Ray head of `cpus` CPUs on this machine and yield its address (HOST:PORT)."""
    ray = Path(sys.executable).parent / "ray"
    folder = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))   # short: Ray's socket paths must be
    port = _free_port()
    # no token: the test's own cluster on this machine (a team's cluster with token authentication needs its
    # token where Ray looks for it, RAY_AUTH_TOKEN or ~/.ray/auth_token)
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    started = subprocess.run([str(ray), "start", "--head", f"--num-cpus={cpus}", f"--port={port}",
                              "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={folder}"],
                             capture_output=True, text=True, timeout=180, env=env)
    if started.returncode != 0:
        raise RuntimeError(f"ray start failed: {started.stderr[-2000:]}")
    try:
        yield f"127.0.0.1:{port}"
    finally:
        _stop(folder)
        shutil.rmtree(folder, ignore_errors=True)


def _stop(folder: Path, grace: float = 10.0) -> None:
    """End the processes of the cluster whose files are in `folder` (each names it on its command line; its
    workers end with their raylet)."""
    def mine() -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and str(folder).encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
        return found

    def with_children(pids: list[int]) -> list[int]:
        """The processes and their descendants (Ray's agents rename themselves: only their parent names the
        folder)."""
        found, todo = set(), list(pids)
        while todo:
            pid = todo.pop()
            found.add(pid)
            with contextlib.suppress(OSError):
                for task in Path(f"/proc/{pid}/task").iterdir():
                    todo += [int(c) for c in (task / "children").read_text().split() if int(c) not in found]
        return sorted(found)

    family = with_children(mine())
    for pid in family:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while any(Path(f"/proc/{pid}").exists() for pid in family) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in family:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
