"""The comparison part of a report (`evalrun report RUN --vs BASE`), led by the same verdict as
`evalrun compare`: the verdict block, one card per primary row (BASE -> NEW, the change and its
interval, coloured by whether it is significant and which way), the primary family as a forest plot,
the primary rows in a table and the exploratory ones folded (the rows of retrieval judged by the judge,
judged/..., apart from the labelled ones), the trade-offs, and the items that flipped on a 0/1 metric,
named. Every number is formatted by `evalrun.numbers`, as in the terminal.

What is drawn here is read from the `Comparison` only; nothing is decided again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from curate import EvalItem
from evalrun import numbers
from evalrun.compare.comparison import CompareRow, Comparison, metric_order
from evalrun.compare.flips import FlipCount, ItemFlip
from evalrun.compare.scope import leak_comparison_lines
from evalrun.compare.verdict import change_line, label
from evalrun.report import charts

# Flipped items listed per metric; the others are counted and found with the item table's flip filter.
MAX_FLIPS = 25
QUESTION_SHOWN = 160   # characters of a question in the flips table (the item view shows all of it)
JUDGED = "judged/"   # retrieval graded by the judge: listed apart from the labelled rows
OUTCOME_CLASS = {"better": "better", "worse": "worse", "mixed": "mixed", "no detectable difference": "same",
                 "no verdict": "none"}


def state_of(row: CompareRow) -> str:
    """Return how a row changed, as the page colours it: better, worse (significant), or same."""
    return "better" if row.better else "worse" if row.worse else "same"


def row_name(row: CompareRow) -> str:
    """Return a row's name for people: the metric's label, and its subset unless it is "all"."""
    return label(row.metric) + ("" if row.subset == "all" else f" on {row.subset}")


def primary_rows(comparison: Comparison) -> list[CompareRow]:
    """Return the primary rows in the family's order (on "all" first, as declared)."""
    order = {name: k for k, name in enumerate(comparison.family)}
    rows = [r for r in comparison.rows if r.primary]
    return sorted(rows, key=lambda r: order.get(r.metric if r.subset == "all" else f"{r.metric} on {r.subset}",
                                                len(order)))


def verdict_block(comparison: Comparison) -> dict:
    """Return the verdict as the top of the page shows it: the outcome (and its colour's class), the
    sentence, what limits it, its costs, the subsets against it and the judge's lines."""
    verdict = comparison.verdict
    if verdict is None:
        return {"outcome": "no verdict", "class": "none", "sentence": "No verdict was computed for this comparison",
                "caveats": [], "costs": [], "against": [], "judge": [], "changes": []}
    return {"outcome": verdict.outcome, "class": OUTCOME_CLASS.get(verdict.outcome, "none"),
            "sentence": verdict.sentence, "caveats": verdict.caveats, "costs": verdict.costs,
            "against": verdict.against, "judge": verdict.judge, "changes": verdict.changes}


def cards(comparison: Comparison) -> list[dict]:
    """Return one card per primary row: BASE -> NEW, the change (relative for latency, tokens, cost) and
    its 95% interval, the corrected p-value and n, and the line `evalrun compare` prints for it."""
    family = len([r for r in comparison.rows if r.primary])
    found = []
    for row in primary_rows(comparison):
        relative = numbers.relative(row.base, row.new) if numbers.unit_of(row.metric) != numbers.RATE else ""
        state = state_of(row)
        found.append({
            "label": row_name(row), "metric": row.metric, "state": state,
            "base": numbers.value(row.metric, row.base) or "—", "new": numbers.value(row.metric, row.new) or "—",
            "change": numbers.difference(row.metric, row.difference) or "no difference computed",
            "relative": relative, "ci": numbers.interval(row.metric, row.ci95),
            "p": numbers.p_value(row.p_adjusted), "family": family, "n": numbers.count(row.n),
            "mark": {"better": "significantly better", "worse": "significantly worse"}.get(state,
                                                                                          "no detectable change"),
            "line": change_line(row, family)})
    return found


def forest_points(comparison: Comparison) -> tuple[list[charts.ForestPoint], list[str]]:
    """Return the forest plot's points (rates in percentage points; latency, tokens and cost as a change
    relative to BASE) and one line per primary row that cannot be drawn, saying why."""
    points, undrawn = [], []
    for row in primary_rows(comparison):
        name, state = row_name(row), state_of(row)
        if row.difference is None:
            undrawn.append(f"{name}: no difference (no pair compared)")
            continue
        text = numbers.difference(row.metric, row.difference)
        if numbers.unit_of(row.metric) == numbers.RATE:
            ci = (100 * row.ci95[0], 100 * row.ci95[1]) if row.ci95 else None
            points.append(charts.ForestPoint(name, "pts", 100 * row.difference, ci, state, text))
        elif row.base in (None, 0):
            undrawn.append(f"{name}: {text}, not drawn (a change relative to a BASE of "
                           f"{numbers.value(row.metric, row.base) or 'unknown'} has no meaning)")
        else:
            ci = (100 * row.ci95[0] / row.base, 100 * row.ci95[1] / row.base) if row.ci95 else None
            relative = numbers.relative(row.base, row.new)
            points.append(charts.ForestPoint(name, "relative", 100 * row.difference / row.base, ci, state,
                                             f"{relative} ({text})"))
    return points, undrawn


def table_cells(row: CompareRow) -> list[str]:
    """Return a row of the comparison's tables as the page writes it: metric, subset, n, left out, base,
    new, difference, 95% interval (N: Newcombe's), p, p Holm (primary) or q (exploratory), and its mark."""
    adjusted = row.p_adjusted if row.primary else row.q_value
    return [row.metric, row.subset, str(row.n), str(row.left_out or ""), numbers.value(row.metric, row.base),
            numbers.value(row.metric, row.new), numbers.difference(row.metric, row.difference),
            numbers.marked_interval(row.metric, row.ci95, row.ci_method), numbers.p_value(row.p_value),
            numbers.p_value(adjusted), "better" if row.better else "worse" if row.worse else ""]


def judged(row: CompareRow) -> bool:
    """Return whether a row is of retrieval judged by the judge (judged/...): its grades, not the labels."""
    return row.metric.startswith(JUDGED)


def exploratory(comparison: Comparison, graded: bool = False) -> tuple[list[CompareRow], list[CompareRow]]:
    """Return the exploratory rows the folded table shows at once (every "all" row, every significant
    subset) and the others (drawn by the page's script when asked: thousands of rows on a release with
    many tags); those of retrieval judged by the judge with `graded`, every other row without."""
    rows = [r for r in comparison.rows if not r.primary and judged(r) == graded]
    return [r for r in rows if r.subset == "all" or r.significant], [r for r in rows if r.subset != "all" and
                                                                     not r.significant]


def trade_offs(comparison: Comparison) -> list[dict]:
    """Return the trade-offs with their values in their units."""
    return [{"measure": t.measure, "base": numbers.measure(t.measure, t.base), "new": numbers.measure(t.measure, t.new),
             "change": numbers.percent(t.change, signed=True)}
            for t in comparison.trade_offs if t.base is not None or t.new is not None]


@dataclass
class FlipRow:
    """One item that flipped, as the flips table lists it."""

    item_id: str
    question: str
    language: str
    change: str
    before: str
    after: str
    judge: str


@dataclass
class FlipGroup:
    """The flips of one 0/1 metric: its counts, the first MAX_FLIPS items, and how many are not listed."""

    metric: str
    primary: bool
    count: FlipCount | None
    rows: list[FlipRow] = field(default_factory=list)
    lost: int = 0
    gained: int = 0
    unlisted: int = 0
    unlisted_lost: int = 0


def _judge_said(flip: ItemFlip) -> str:
    if flip.judge_unstable is None:
        if flip.metric.startswith(JUDGED):
            return "not measured (the judge grades each chunk once)"
        return "not measured (--judge-repeats)" if flip.metric.startswith("generation/") else "no judge"
    return "yes: the judge flipped it too when asked again" if flip.judge_unstable else "no"


def flip_groups(comparison: Comparison, items: Mapping[str, EvalItem]) -> list[FlipGroup]:
    """Return the flips per 0/1 metric, the primary metrics first (in the family's order), then the
    others; each lists its first MAX_FLIPS items (lost before gained) and counts the rest."""
    primary = [r.metric for r in primary_rows(comparison) if r.subset == "all"]
    counts = {c.metric: c for c in comparison.flip_counts}
    by_metric: dict[str, list[ItemFlip]] = {}
    for flip in comparison.flips:
        by_metric.setdefault(flip.metric, []).append(flip)
    order = sorted(by_metric, key=lambda m: (m not in primary, primary.index(m) if m in primary else 0,
                                             metric_order(m)))
    groups = []
    for metric in order:
        flips = by_metric[metric]
        lost = sum(f.change == "lost" for f in flips)
        group = FlipGroup(metric=metric, primary=metric in primary, count=counts.get(metric), lost=lost,
                          gained=len(flips) - lost, unlisted=max(0, len(flips) - MAX_FLIPS),
                          unlisted_lost=max(0, lost - MAX_FLIPS))
        for flip in flips[:MAX_FLIPS]:
            item = items.get(flip.item_id)
            question = item.question if item is not None else ""
            if len(question) > QUESTION_SHOWN:
                question = question[:QUESTION_SHOWN] + "…"
            group.rows.append(FlipRow(item_id=flip.item_id, question=question,
                                      language=item.language if item is not None else "en", change=flip.change,
                                      before=", ".join(flip.base_attribution) or "none",
                                      after=", ".join(flip.new_attribution) or "none", judge=_judge_said(flip)))
        groups.append(group)
    return groups


def comparison_context(comparison: Comparison | None, items: list[EvalItem]) -> dict | None:
    """Return what the template's comparison part reads, None without a BASE."""
    if comparison is None:
        return None
    points, undrawn = forest_points(comparison)
    shown, extra = exploratory(comparison)
    judged_shown, judged_extra = exploratory(comparison, graded=True)
    return {"c": comparison, "verdict": verdict_block(comparison), "cards": cards(comparison),
            "forest": charts.forest_chart(points), "undrawn": undrawn,
            "primary": [(r, table_cells(r), state_of(r)) for r in primary_rows(comparison)],
            "exploratory": [(r, table_cells(r), state_of(r)) for r in shown], "extra": len(extra),
            "extra_cells": [table_cells(r) for r in extra],
            "judged": [(r, table_cells(r), state_of(r)) for r in judged_shown], "judged_extra": len(judged_extra),
            "judged_extra_cells": [table_cells(r) for r in judged_extra],
            "trade_offs": trade_offs(comparison),
            "flips": flip_groups(comparison, {item.id: item for item in items}),
            "leaks": [line.strip() for line in leak_comparison_lines(comparison.scope)]}
