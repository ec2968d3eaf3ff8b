"""Running a system under test over a release: targets (a Python function, an HTTP endpoint, logged
traces), the trace log that makes a run resumable, and the leakage gate."""

from evalrun.runner.run import run

__all__ = ["run"]
