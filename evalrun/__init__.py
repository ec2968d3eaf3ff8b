"""evalrun: run a RAG system over one release and score every layer apart.

The Python API (`evalrun.api`): `run` (a system over a release, returning the scored `Run`),
`read_run`, `compare` (two runs, paired, and a CI gate's verdict) and `report` (the HTML file), each
the function its command calls. `compare` and `report` are functions here: import the subpackages of
the same names with `from evalrun.compare.stats import holm`, not `import evalrun.compare.stats`.

Its pieces: `evalrun.records` (every file of a run folder, and `read_run`), `evalrun.runner`
(targets, the resumable trace log, the leakage gate), `evalrun.scoring` (retrieval per layer,
generation through the judge, aggregates), `evalrun.metrics` (the retrieval metrics, one per file),
`evalrun.compare` (paired comparisons and the gate), `evalrun.report` and `evalrun.cli`.
"""

from evalrun.api import compare, compare_probes, probe, read_run, report, run
from evalrun.compare.comparison import Comparison
from evalrun.records import Run
from evalrun.runner.run import RunInterrupted
from evalrun.version import __version__

__all__ = ["Comparison", "Run", "RunInterrupted", "__version__", "compare", "compare_probes", "probe", "read_run",
           "report", "run"]
