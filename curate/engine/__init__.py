"""Where the KB-wide stages run: the local engine (the default: processes on this machine, no service)
or Ray (`--engine ray`, `[engine] name = "ray"` in curate.toml; `pip install '.[ray]'`).

A stage is written once, as a function over one shard of a snapshot (`fn(task, shared)`: the task names
the shard, `shared` is what every shard needs, sent to each worker once); an engine runs it over the
shards and returns the results in shard order. Results are the same on every engine: each shard's work
depends only on its task and `shared`, and the results are combined in shard order by the caller.
A stage that writes each shard's output atomically resumes from the shards it completed
(`pending`), on either engine.

>>> engine = LocalEngine(workers=1)
>>> engine.map(abs, [-3, 4], label="measuring")
[3, 4]
"""

from curate.engine.base import Engine, EngineFailed, pending
from curate.engine.local import LocalEngine
from curate.engine.settings import ENGINES, EngineSettings, engine_settings, open_engine

__all__ = ["ENGINES", "Engine", "EngineFailed", "EngineSettings", "LocalEngine", "engine_settings", "open_engine",
           "pending"]
