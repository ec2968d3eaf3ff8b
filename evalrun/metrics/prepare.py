"""Turn qrels and a run (Python dicts) into the arrays every retrieval metric reads.

Rules, from ../shared/DESIGN.md ("Metric definitions (retrieval)"):

- R, the relevant set of a query, is its qrels entries with grade >= 1 (grade 0 is "judged, not
  relevant"). A query whose R is empty is not scored; it gets no row.
- S, the retrieved list, is the run's ids in rank order, each mapped to the evidence groups it
  finds when `groups` maps it: one group, or several when one chunk holds several required facts
  (an unmapped id stands for itself). S_K is the first K ranks of S, as the system returned them.
  A rank finds every group its id maps to that no higher rank found: a rank that finds nothing new
  (a second copy of one evidence, one id repeated) stays a rank and counts as not relevant.
  Finding two copies of one evidence counts once, and a copy inside the first K takes a place a
  different chunk could have had; what lies below rank K never counts at K.
- Per rank: `found` is how many relevant groups it finds first (recall@K and hit@K count every
  group found in the first K ranks); the rank is relevant (precision, MRR) when it finds at least
  one, and its gain (nDCG) is the best grade among the groups it finds first. Each group gains
  once, so DCG never exceeds the ideal and nDCG stays <= 1. Where every id finds at most one group,
  these are the usual trec_eval / ranx figures exactly.
- A query is scored when it is in the run and its R is non-empty, as trec_eval does: a query the
  run leaves out, or one with no relevant evidence, is the caller's to report apart. An empty
  list in the run is scored (it retrieved nothing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from curate import InputError

# Grades live in int8 arrays: ten million of them fit in 10 MB.
MAX_GRADE = 127


class MetricInputError(InputError):
    """Qrels, run, groups or settings that the retrieval metrics cannot score."""


@dataclass(frozen=True)
class RankedGrades:
    """The arrays the retrieval metrics read; row q is query `query_ids[q]`."""

    query_ids: list[str]
    """Scored queries, in the run's order."""
    gains: np.ndarray
    """(n, max_k) int8: the best grade among the relevant groups the item at rank i + 1 of S finds
    first; 0 when it finds none (not relevant, already found, or S is shorter)."""
    ideal_gains: np.ndarray
    """(n, max_k) int8: the query's relevant grades sorted best first, padded with 0 (the ideal ranking)."""
    n_relevant: np.ndarray
    """(n,) int64: |R|, every relevant group of the query (not capped at max_k)."""
    n_returned: np.ndarray
    """(n,) int64: |S| capped at max_k, all that min(K, |S|) needs for K <= max_k."""
    found: np.ndarray
    """(n, max_k) int16: how many relevant groups the item at rank i + 1 finds first (0 or 1 unless
    one chunk holds several facts)."""

    @property
    def max_k(self) -> int:
        """Return the largest cutoff these arrays can score."""
        return self.gains.shape[1]


def prepare(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Sequence[str]], max_k: int,
            groups: Mapping[str, Mapping[str, str | Sequence[str]]] | None = None) -> RankedGrades:
    """Return the ranked grades of every scored query of `run`, cut at `max_k`.

    `qrels`: {query id: {group id: grade}}; `run`: {query id: [retrieved ids, best first]};
    `groups`: {query id: {retrieved id: group id, or a tuple of the group ids it finds}}. Nothing
    passed in is changed.

    >>> arrays = prepare({"q1": {"e1": 2, "e2": 1, "e9": 0}, "q2": {"e5": 0}},
    ...                  {"q1": ["c7", "e1-copy", "e1", "e2"], "q2": ["e5"]}, max_k=3,
    ...                  groups={"q1": {"e1-copy": "e1"}})
    >>> arrays.query_ids  # q2 has no relevant evidence: not scored
    ['q1']
    >>> arrays.gains.tolist(), arrays.ideal_gains.tolist()  # S_3 = c7 e1 (e1): the copy at rank 3 counts 0
    ([[0, 2, 0]], [[2, 1, 0]])
    >>> arrays.n_relevant.tolist(), arrays.n_returned.tolist(), arrays.found.tolist()
    ([2], [3], [[0, 1, 0]])

    One chunk holding two facts finds both groups at its rank; the next chunk finds only what is new:

    >>> arrays = prepare({"q": {"e1": 1, "e2": 2, "e3": 1}}, {"q": ["c1", "c2", "x"]}, max_k=3,
    ...                  groups={"q": {"c1": ("e1", "e2"), "c2": ("e2", "e3")}})
    >>> arrays.found.tolist(), arrays.gains.tolist()  # rank 1: e1 and e2 (best grade 2); rank 2: e3
    ([[2, 1, 0]], [[2, 1, 0]])
    """
    if not isinstance(max_k, int) or isinstance(max_k, bool) or max_k < 1:
        raise MetricInputError(f"must be a whole number >= 1, not {max_k!r}", field="max_k")
    query_ids: list[str] = []
    returned: list[int] = []
    # Relevant groups as flat (row, grade) pairs; those found in S_max_k also as (row, rank, grade).
    relevant_rows: list[int] = []
    relevant_grades: list[int] = []
    hit_rows: list[int] = []
    hit_ranks: list[int] = []
    hit_grades: list[int] = []
    shared = False  # some rank finds two groups at once: its cells must take the best grade and add up
    for query_id, retrieved in run.items():
        judged = qrels.get(query_id)
        if judged is None:
            continue
        if not isinstance(judged, Mapping):
            raise MetricInputError(f"expected {{group id: grade}}, got {type(judged).__name__}",
                                   field=f"qrels[{query_id!r}]")
        if not isinstance(retrieved, (list, tuple)):
            raise MetricInputError(f"expected a list of ids in rank order, got {type(retrieved).__name__}",
                                   field=f"run[{query_id!r}]")
        mapping = groups.get(query_id) if groups else None
        first, returned_here = _first_ranks(retrieved, mapping, max_k, query_id)
        row = len(query_ids)
        ranks_here: set[int] = set()
        for group_id, grade in judged.items():
            if grade.__class__ is not int:  # bool and float are refused too
                if not isinstance(grade, (int, np.integer)) or isinstance(grade, bool):
                    raise MetricInputError(f"a grade is a whole number (0, 1, 2), not {grade!r}",
                                           field=f"qrels[{query_id!r}][{group_id!r}]")
                grade = int(grade)
            if grade < 1:
                continue
            if grade > MAX_GRADE:
                raise MetricInputError(f"grade {grade} is above {MAX_GRADE}",
                                       field=f"qrels[{query_id!r}][{group_id!r}]")
            relevant_rows.append(row)
            relevant_grades.append(grade)
            rank = first.get(group_id)
            if rank is None:
                continue
            shared = shared or rank in ranks_here
            ranks_here.add(rank)
            hit_rows.append(row)
            hit_ranks.append(rank)
            hit_grades.append(grade)
        if relevant_rows and relevant_rows[-1] == row:
            query_ids.append(query_id)
            returned.append(returned_here)
    n = len(query_ids)
    gains = np.zeros((n, max_k), dtype=np.int8)
    found = np.zeros((n, max_k), dtype=np.int16)
    if shared:
        np.maximum.at(gains, (hit_rows, hit_ranks), np.asarray(hit_grades, dtype=np.int8))
        np.add.at(found, (hit_rows, hit_ranks), 1)
    else:  # every (row, rank) once: plain assignment, as fast as before groups could share a rank
        gains[hit_rows, hit_ranks] = hit_grades
        found[hit_rows, hit_ranks] = 1
    rows = np.asarray(relevant_rows, dtype=np.int64)
    grades = np.asarray(relevant_grades, dtype=np.int8)
    return RankedGrades(query_ids=query_ids, gains=gains, ideal_gains=_ideal_gains(rows, grades, n, max_k),
                        n_relevant=np.bincount(rows, minlength=n).astype(np.int64),
                        n_returned=np.asarray(returned, dtype=np.int64), found=found)


def _first_ranks(retrieved: Sequence[str], mapping: Mapping[str, str | Sequence[str]] | None, max_k: int,
                 query_id: str) -> tuple[dict[str, int], int]:
    """Return ({group: the first of the first `max_k` ranks (0-based) that finds it}, how many ranks
    that is); an id `mapping` leaves out stands for itself, a tuple or list maps an id to several groups.

    >>> _first_ranks(["a#1", "x", "a#2", "b", "c"], {"a#1": "a", "a#2": "a"}, 4, "q")
    ({'a': 0, 'x': 1, 'b': 3}, 4)
    >>> _first_ranks(["c1", "c2"], {"c1": ("e1", "e2"), "c2": ("e2", "e3")}, 4, "q")
    ({'e1': 0, 'e2': 0, 'e3': 1}, 2)
    """
    if mapping is not None and not isinstance(mapping, Mapping):
        raise MetricInputError(f"expected {{retrieved id: group id}}, got {type(mapping).__name__}",
                               field=f"groups[{query_id!r}]")
    head = retrieved[:max_k]
    first: dict[str, int] = {}
    try:
        if not mapping:
            for rank, chunk_id in enumerate(head):
                first.setdefault(chunk_id, rank)
            return first, len(head)
        for rank, chunk_id in enumerate(head):
            group = mapping.get(chunk_id, chunk_id)
            if group.__class__ is str:
                first.setdefault(group, rank)
            elif isinstance(group, (tuple, list)):
                for one in group:
                    first.setdefault(one, rank)
            else:
                first.setdefault(group, rank)
    except TypeError:
        raise MetricInputError("retrieved ids must be strings", field=f"run[{query_id!r}]") from None
    return first, len(head)


def _ideal_gains(rows: np.ndarray, grades: np.ndarray, n: int, max_k: int) -> np.ndarray:
    """Return (n, max_k) int8: each row's grades sorted best first, cut at max_k, padded with 0."""
    ideal = np.zeros((n, max_k), dtype=np.int8)
    order = np.lexsort((-grades.astype(np.int16), rows))  # by row, then best grade first
    rows, grades = rows[order], grades[order]
    ranks = np.arange(len(rows)) - np.searchsorted(rows, rows, side="left")
    keep = ranks < max_k
    ideal[rows[keep], ranks[keep]] = grades[keep]
    return ideal


def check_cutoff(gains: np.ndarray, k: int) -> None:
    """Raise MetricInputError unless 1 <= k <= the number of ranks `gains` holds."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= gains.shape[1]:
        raise MetricInputError(f"must be a whole number from 1 to {gains.shape[1]} (the prepared max_k), "
                               f"not {k!r}", field="k")
