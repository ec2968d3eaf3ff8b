"""The primary family of a comparison: the few metrics that decide whether NEW is better, declared
before anything is computed and corrected together (Holm); every other row is exploratory.

By default, one short list per layer, each metric taken when both runs scored it on "all":

- retrieval: context/recall@5 (the K both runs used nearest to 5; candidates/ when no run reports a
  context);
- generation: generation/correctness and generation/faithfulness when the judge scored both runs,
  else lexical/f1 (token F1);
- refusal: unanswerable/correct_refusal;
- end to end: e2e/latency_p95 and e2e/cost_per_item (e2e/tokens_per_item when no cost is known).

`[compare] primary` in curate.toml, or `--primary`, replaces the list (globs). The gate's guard and
improve rules join the family on their subsets, so that the gate decides on the same corrected
p-values the verdict reads.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from curate import InputError
from evalrun.numbers import COST_PER_ITEM, LATENCY_P95, TOKENS_PER_ITEM

DEFAULT_K = 5
JUDGED = ("generation/correctness", "generation/faithfulness")
LEXICAL = ("lexical/f1",)
REFUSAL = ("unanswerable/correct_refusal",)


@dataclass
class Family:
    """The rows (metric, subset) that are corrected together, where the list came from, and the declared
    metrics that could not be compared (each one line)."""

    rows: list[tuple[str, str]] = field(default_factory=list)
    source: str = "default"
    missing: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __contains__(self, key: tuple[str, str]) -> bool:
        return key in self.rows

    @property
    def metrics(self) -> list[str]:
        """Return the family's metrics on "all", in order."""
        return [m for m, s in self.rows if s == "all"]


def nearest_k(ks: Sequence[int], wanted: int = DEFAULT_K) -> int | None:
    """Return the cutoff of `ks` nearest to `wanted` (the larger one on a tie), None when there is none.

    >>> nearest_k([1, 3, 5, 10]), nearest_k([1, 3, 10]), nearest_k([4, 6]), nearest_k([])
    (5, 3, 6, None)
    """
    return min(ks, key=lambda k: (abs(k - wanted), -k)) if ks else None


def default_metrics(compared: Iterable[str], ks: Sequence[int]) -> tuple[list[str], list[str]]:
    """Return the default primary metrics among `compared` (the metrics with a p-value on "all"), and a
    note for each layer that falls back (lexical generation without a judge, candidates without a context)."""
    have, chosen, notes = set(compared), [], []
    k = nearest_k(ks)
    if k is not None:
        for layer in ("context", "candidates"):
            if f"{layer}/recall@{k}" in have:
                chosen.append(f"{layer}/recall@{k}")
                if layer == "candidates":
                    notes.append("retrieval is decided on the candidates: neither run's context recall was compared")
                break
    judged = [m for m in JUDGED if m in have]
    if judged:
        chosen += judged
    else:
        chosen += [m for m in LEXICAL if m in have]
        if any(m in have for m in LEXICAL):
            notes.append("generation is decided on lexical/f1 (token F1): the judged metrics were not scored in "
                         "both runs")
    chosen += [m for m in REFUSAL if m in have]
    if LATENCY_P95 in have:
        chosen.append(LATENCY_P95)
    if COST_PER_ITEM in have:
        chosen.append(COST_PER_ITEM)
    elif TOKENS_PER_ITEM in have:
        chosen.append(TOKENS_PER_ITEM)
    return chosen, notes


def declared_metrics(patterns: Sequence[str], names: Iterable[str], compared: Iterable[str],
                     source: str) -> tuple[list[str], list[str]]:
    """Return the metrics the globs `patterns` name among the runs' metrics `names`, and one line per
    metric (or glob) that was declared but has no row to decide on. A glob matching no metric of either
    run at all is a typo: InputError."""
    names, compared = sorted(set(names)), set(compared)
    chosen, missing = [], []
    for pattern in patterns:
        matched = [n for n in names if fnmatch.fnmatchcase(n, pattern)]
        if not matched:
            close = [n for n in names if n.split("@")[0] == pattern.split("@")[0]][:3]
            hint = f" (the runs have {', '.join(close)})" if close else " (e.g. 'context/recall@5', 'lexical/f1')"
            raise InputError(f"primary metric {pattern!r} ({source}) matches no metric of the runs{hint}",
                             field="primary")
        for name in matched:
            if name in chosen:
                continue
            if name in compared:
                chosen.append(name)
            else:
                missing.append(f"{name}: not compared (no item scored in both runs)")
    return chosen, missing


def family_of(names: Iterable[str], tested: Iterable[tuple[str, str]], ks: Sequence[int], *,
              declared: Sequence[str] = (), source: str = "default",
              gate: Sequence[tuple[Sequence[str], str]] = ()) -> Family:
    """Return the primary family: the `declared` metric globs (from `source`: '--primary' or curate.toml)
    or the default list, on "all", joined by the gate's rules (`gate`: (metric globs, subset) pairs),
    among the rows `tested` ((metric, subset) with a p-value); `names`: every metric of the runs. What a
    gate rule names that has no row is the gate's to report, not the family's."""
    tested = list(tested)
    on_all = [m for m, s in tested if s == "all"]
    if declared:
        metrics, missing = declared_metrics(declared, names, on_all, source)
        notes = []
    else:
        (metrics, notes), missing = default_metrics(on_all, ks), []
    rows = [(m, "all") for m in metrics]
    for patterns, subset in gate:
        for pattern in patterns:
            rows += [(m, s) for m, s in tested if s == subset and fnmatch.fnmatchcase(m, pattern) and (m, s) not in rows]
    return Family(rows=rows, source=source if declared else "default", missing=missing, notes=notes)
