"""`curate check-leakage`: evaluation text leaked into the knowledge base, and alike items on both
sides of the tuning/test split (`find` finds them, `core` is the whole check on items in memory,
`run` checks a dataset or release in a workspace and records it)."""

from curate.checks.leakage.core import leak_check
from curate.checks.leakage.find import KINDS, LeakFinding, LeakReport, LeakSettings
from curate.checks.leakage.run import check_leakage, load_docs

__all__ = ["KINDS", "LeakFinding", "LeakReport", "LeakSettings", "check_leakage", "leak_check", "load_docs"]
