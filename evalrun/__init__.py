"""evalrun: run a RAG system over one release and score every layer apart.

Its pieces: `evalrun.records` (every file of a run folder, and `read_run`), `evalrun.runner`
(targets, the resumable trace log, the leakage gate), `evalrun.scoring` (retrieval per layer,
generation through the judge, aggregates), `evalrun.metrics` (the retrieval metrics, one per file)
and `evalrun.cli`.
"""

from evalrun.version import __version__

__all__ = ["__version__"]
