"""`curate check-leakage`: evaluation text leaked into the knowledge base, and alike items on both
sides of the tuning/test split (`find` finds them, `run` checks a dataset or release and records it)."""

from curate.checks.leakage.find import KINDS, LeakFinding, LeakReport, LeakSettings
from curate.checks.leakage.run import check_leakage, load_docs

__all__ = ["KINDS", "LeakFinding", "LeakReport", "LeakSettings", "check_leakage", "load_docs"]
