"""Item flips: for each 0/1 metric, the items that went from pass to fail (lost) or from fail to pass
(gained) between two runs, each with its failure attribution before and after (retrieval_miss ->
context_cut says the retriever now finds the evidence and truncation drops it)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np
from pydantic import Field

from curate import Record


class ItemFlip(Record):
    """One item whose 0/1 metric changed between BASE and NEW."""

    metric: str = Field(description="The 0/1 metric.")
    item_id: str = Field(description="The item.")
    change: str = Field(description="lost (1 -> 0) or gained (0 -> 1).")
    base_attribution: list[str] = Field(default_factory=list, description="Where the item failed in BASE.")
    new_attribution: list[str] = Field(default_factory=list, description="Where the item failed in NEW.")


def item_flips(ids: Sequence[str], metrics: Sequence[str], base: np.ndarray, new: np.ndarray,
               binary: Collection[str], base_attribution: Mapping[str, list[str]],
               new_attribution: Mapping[str, list[str]]) -> list[ItemFlip]:
    """Return the flips of the `binary` (0/1) metrics among `metrics`, the columns of `base` and `new`
    (items x metrics, the items `ids`, NaN = no value), by metric, lost before gained, then in the
    order of `ids`; each with the item's attribution in either run.

    >>> base, new = np.array([[1.0], [0.0], [1.0]]), np.array([[0.0], [1.0], [np.nan]])
    >>> [(f.item_id, f.change) for f in item_flips(["a", "b", "c"], ["hit"], base, new, {"hit"}, {}, {})]
    [('a', 'lost'), ('b', 'gained')]
    """
    flips = []
    for j, metric in enumerate(metrics):
        if metric not in binary:
            continue
        for change, before, after in (("lost", 1.0, 0.0), ("gained", 0.0, 1.0)):
            for k in np.flatnonzero((base[:, j] == before) & (new[:, j] == after)).tolist():
                item_id = ids[k]
                # built without validation: tens of thousands on a large release, from checked records
                flips.append(ItemFlip.model_construct(metric=metric, item_id=item_id, change=change,
                                                      base_attribution=list(base_attribution.get(item_id, [])),
                                                      new_attribution=list(new_attribution.get(item_id, []))))
    return flips
