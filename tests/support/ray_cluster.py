"""A local Ray cluster for the tests: a head node with two worker CPUs, started with `ray start` as a team
starts one, joined by address, stopped at the end."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
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
        subprocess.run([str(ray), "stop", "--force"], capture_output=True, timeout=180, env=env)
        shutil.rmtree(folder, ignore_errors=True)
