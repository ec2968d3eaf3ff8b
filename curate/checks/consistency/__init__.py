"""`curate check-consistency`: does each item hold together, by the judge's reading (`check`), and
the questions asked (`prompts`)."""

from curate.checks.consistency.check import ConsistencyReport, Outcome, Task, check_consistency, plan
from curate.checks.consistency.prompts import CONSISTENCY

__all__ = ["CONSISTENCY", "ConsistencyReport", "Outcome", "Task", "check_consistency", "plan"]
