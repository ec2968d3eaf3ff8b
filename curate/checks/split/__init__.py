"""`curate split`: dev (tuning) and test, alike questions kept on one side: the rule on items in
memory (`core.assign`) and the split of a dataset in a workspace (`run.split`)."""

from curate.checks.split.core import SplitReport, assign, to_place
from curate.checks.split.run import split

__all__ = ["SplitReport", "assign", "split", "to_place"]
