"""evalrun compare: is a change worth keeping? Two runs of the same release, compared item by item.

`evalrun.compare.stats` holds the statistics: `compare_paired` (per metric per subset, the paired
difference, its bootstrap interval and a paired test), `holm` (the default correction over the whole
table) and `bh`.
"""

from evalrun.compare.stats import (
    EXACT_UP_TO,
    RESAMPLES,
    PairedComparison,
    bh,
    compare_paired,
    holm,
    mcnemar_exact,
    sign_flip_exact,
)

__all__ = ["EXACT_UP_TO", "RESAMPLES", "PairedComparison", "bh", "compare_paired", "holm", "mcnemar_exact",
           "sign_flip_exact"]
