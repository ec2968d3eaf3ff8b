"""The Ray engine: each shard a Ray task, on a local Ray started for the command or on a cluster it joins
(`address`: "auto", "HOST:PORT" of a head node, or "ray://HOST:10001"). Ray is an optional extra:
`pip install '.[ray]'`; nothing here is imported without it."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import Any

from curate.engine.base import THREAD_VARIABLES, EngineFailed, Stage, call, in_order
from curate.engine.local import default_workers
from curate.errors import CurateError, InputError

# what one task may hold, per chunk of its shard: the shard read (about 2 KB a chunk), its folded texts and
# n-gram keys (about 2.5 KB) and the stage's work; Ray schedules a task only where that much memory is free
TASK_BYTES_PER_CHUNK = 12_000


def _ray():
    try:
        import ray
    except ImportError:
        raise InputError("the Ray engine needs Ray, an optional extra: pip install 'curate-evalrun[ray]' "
                         "(or '.[ray]' in a clone)", field="engine") from None
    return ray


def _reachable(address: str, seconds: float = 5.0) -> None:
    """Raise EngineFailed in one line when nothing answers at a cluster's address (Ray itself retries for
    minutes, printing a warning every few seconds); "auto" is left to Ray."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        if address != "auto":
            raise InputError(f"not a Ray address: '{address}' (HOST:PORT, ray://HOST:PORT or auto)", field="engine")
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=seconds).close()
    except OSError as exc:
        raise EngineFailed(f"could not join the Ray cluster at {address}: nothing answers there "
                           f"({exc.strerror or exc})") from None


_SHARED: dict[str, Any] = {}   # in a Ray worker process: the shared data of the map it last ran a task of


def _task(fn: Stage, task: Any, holder: list) -> Any:
    """Run one task with the map's shared data, read from the object store once per worker process: a
    reference passed inside a list is not resolved by Ray for each task (unpickling 80,000 chunks took about
    a second a task)."""
    key = holder[0].hex()
    if key not in _SHARED:
        _SHARED.clear()   # one map's data held at a time
        _SHARED[key] = _ray().get(holder[0])
    return call(fn, task, _SHARED[key])


class RayEngine:
    """Ray tasks, one per shard, each with one CPU and its shard's memory."""

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None, shard_chunks: int = 50_000):
        ray = _ray()
        self.address = address
        self.started = not ray.is_initialized()
        if self.started:
            env = {name: "false" if name == "TOKENIZERS_PARALLELISM" else "1" for name in THREAD_VARIABLES}
            options: dict[str, Any] = dict(include_dashboard=False, log_to_driver=False, logging_level="ERROR",
                                           runtime_env={"env_vars": env})
            if address:
                _reachable(address)
                options["address"] = address
            else:   # a Ray of this machine for this command
                options["num_cpus"] = workers or default_workers()
            try:
                ray.init(**options)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise EngineFailed(f"could not join the Ray cluster at {address or 'this machine'}: "
                                   f"{str(exc).splitlines()[0]}") from None
        self.workers = int(ray.cluster_resources().get("CPU", 1))
        self.memory = TASK_BYTES_PER_CHUNK * shard_chunks

    def map(self, fn: Stage, tasks: Sequence[Any], *, shared: Any = None, label: str = "working",
            unit: str = "shard") -> list[Any]:
        ray = _ray()
        remote = ray.remote(_task).options(num_cpus=1, memory=self.memory, max_retries=2)
        shared_ref = ray.put(shared)   # sent to the object store once, read by every task
        refs = [remote.remote(fn, task, [shared_ref]) for task in tasks]
        return in_order(_completed(ray, refs, label), len(refs), label, unit)

    def close(self) -> None:
        if self.started:
            _ray().shutdown()


def _completed(ray, refs: list, label: str):
    """Yield (task number, result) as tasks complete; a task's own error is raised as it was."""
    number = {ref: n for n, ref in enumerate(refs)}
    waiting = list(refs)
    try:
        while waiting:
            done, waiting = ray.wait(waiting, num_returns=1)
            for ref in done:
                try:
                    yield number[ref], ray.get(ref)
                except ray.exceptions.RayTaskError as exc:
                    cause = exc.cause if isinstance(exc.cause, CurateError) else None
                    if cause is not None:
                        raise cause from None
                    raise EngineFailed(f"{label}: a Ray task failed: {str(exc.cause or exc).splitlines()[0]}") from None
                except ray.exceptions.RayError as exc:   # a worker, a node or the raylet lost (killed, out of memory)
                    raise EngineFailed(f"{label}: a Ray worker was lost ({type(exc).__name__}); the shards it "
                                       "completed are kept: run the command again to resume") from None
    finally:
        for ref in waiting:
            ray.cancel(ref)
