"""Which engine a command uses: its `--engine` option, else `[engine]` in curate.toml, else local.

    [engine]
    name = "ray"                  # "local" (the default) or "ray"
    address = "ray://head:10001"  # Ray only: join this cluster ("auto", "HOST:PORT", "ray://HOST:PORT");
                                  # without it, a Ray of this machine is started for the command
    workers = 2                   # local: processes (default: one per core); a Ray started here: its CPUs
"""

from __future__ import annotations

from dataclasses import dataclass

from curate.engine.base import Engine
from curate.engine.local import LocalEngine
from curate.errors import InputError
from curate.workspace import Workspace

ENGINES = ("local", "ray")


@dataclass(frozen=True)
class EngineSettings:
    """An engine's name, the Ray cluster to join (None: start one here) and the workers to run."""

    name: str = "local"
    address: str | None = None
    workers: int | None = None

    def describe(self) -> str:
        """Return the engine as the output names it.

        >>> EngineSettings("ray", "ray://head:10001").describe(), EngineSettings(workers=2).describe()
        ('ray at ray://head:10001', 'local, 2 workers')
        """
        if self.name == "ray":
            return f"ray at {self.address}" if self.address else "ray on this machine"
        return f"local, {self.workers} workers" if self.workers else "local"


def parse_choice(choice: str) -> EngineSettings:
    """Return the settings an `--engine` value names: local, ray, or the address of a Ray cluster.

    >>> parse_choice("ray://head:10001"), parse_choice("local")
    (EngineSettings(name='ray', address='ray://head:10001', workers=None), EngineSettings(name='local', address=None, workers=None))
    """
    if choice in ENGINES:
        return EngineSettings(choice)
    if choice == "auto" or choice.startswith("ray://") or ":" in choice:
        return EngineSettings("ray", choice)
    raise InputError(f"unknown engine '{choice}': local, ray, or a Ray address (ray://HOST:PORT, HOST:PORT, auto)",
                     field="engine")


def engine_settings(workspace: Workspace | None, choice: str | None = None) -> EngineSettings:
    """Return the engine `choice` names (an `--engine` value), else the workspace's [engine], else local."""
    if choice:
        chosen = parse_choice(choice)
    else:
        chosen = EngineSettings()
        if workspace is not None:
            name = workspace.setting("engine", "name", "local")
            if name not in ENGINES:
                raise workspace.setting_error(f"unknown engine '{name}': {' or '.join(ENGINES)}", "engine", "name")
            chosen = EngineSettings(name, workspace.setting("engine", "address"))
    workers = workspace.setting("engine", "workers") if workspace is not None else None
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool) or workers < 1):
        raise workspace.setting_error(f"workers must be a whole number of at least 1, not {workers!r}",
                                      "engine", "workers")
    if chosen.name == "local" and chosen.address:
        raise workspace.setting_error("an address is for the Ray engine: set name = \"ray\"", "engine", "address")
    return EngineSettings(chosen.name, chosen.address, workers)


def open_engine(settings: EngineSettings, shard_chunks: int = 50_000) -> Engine:
    """Return the engine the settings name (close it when done: a Ray started here is stopped)."""
    if settings.name == "ray":
        from curate.engine.on_ray import RayEngine

        return RayEngine(settings.address, settings.workers, shard_chunks)
    return LocalEngine(settings.workers)
