"""The report's charts as inline SVG, drawn by matplotlib: text stays text (svg.fonttype 'none'), so
Chinese labels render with the page's own fonts and can be searched and copied; nothing is fetched.

Each function returns one <svg> element as a string, or "" when there is nothing to draw.
"""

from __future__ import annotations

import io
import logging
import unicodedata
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib
from matplotlib import font_manager
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

from evalrun.probes.folder import CurvePoint
from evalrun.report.gather import Funnel

# The page sets the font of the charts' text; these only measure it (the first face of Debian's
# Noto Sans CJK collection is the JP one: the same widths for Chinese).
FONTS = ["Noto Sans CJK SC", "Noto Sans CJK JP", "DejaVu Sans"]
STYLE = {"svg.fonttype": "none", "svg.hashsalt": "evalrun-report", "font.family": "sans-serif",
         "font.sans-serif": FONTS, "font.size": 9, "axes.spines.top": False, "axes.spines.right": False,
         "axes.edgecolor": "#888", "axes.titlesize": 10, "axes.titleweight": "bold"}
COLOURS = ["#3b6fb6", "#e08a2e", "#4a9c5d", "#b8473d", "#7a5aa6", "#7f7f7f"]
WIDTH = 7.5   # inches at 96 dpi: the width of the page's text column
TOP, BOTTOM = 0.35, 0.5   # inches kept above the axes (a title) and below them (the x labels)
MIN_HEIGHT = TOP + BOTTOM + 0.4   # a chart of one bar still has room for its axes


def label_inches(labels: Sequence[str], size: float = 9.0) -> float:
    """Return about how wide the widest of `labels` is drawn, in inches: a wide (CJK) character is one
    em, any other character 0.6 em. An estimate instead of matplotlib's "tight" bounding box, which
    draws every figure twice (half the report's chart time).

    >>> round(label_inches(["难度", "ab"], size=72), 2)
    2.0
    """
    ems = max((sum(1.0 if unicodedata.east_asian_width(c) in "WF" else 0.6 for c in label) for label in labels),
              default=0.0)
    return ems * size / 72


def _margins(figure: Figure, labels: Sequence[str], legend: Sequence[str] = ()) -> None:
    """Leave room on the left for the y labels and, when given, on the right for a legend outside the axes."""
    width, height = figure.get_size_inches()
    left = min(0.6, (label_inches(labels) + 0.25) / width)
    right = 1 - min(0.35, (label_inches(legend, 8.0) + 0.6) / width) if legend else 0.97
    figure.subplots_adjust(left=left, right=right, top=1 - TOP / height, bottom=BOTTOM / height)


def _svg(figure: Figure) -> str:
    """Return the figure as an <svg> element (no XML prolog), sized by its viewBox to fit the page."""
    buffer = io.StringIO()
    with matplotlib.rc_context(STYLE), warnings.catch_warnings():
        # without a CJK font here, labels are measured a little short; the browser still draws them
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        figure.savefig(buffer, format="svg")
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    # width/height in pt would fix the size; the viewBox keeps the proportions and CSS sets the width
    head, rest = text.split(">", 1)
    head = " ".join(part for part in head.split(" ") if not part.startswith(("width=", "height=")))
    return f'{head} class="chart" role="img">{rest}'


def _figure(height: float) -> Figure:
    """Return a figure of the page's width, at least MIN_HEIGHT high: below it, the margins for the
    title and the x labels would leave the axes no room (one bar, one stage)."""
    with matplotlib.rc_context(STYLE):
        return Figure(figsize=(WIDTH, max(height, MIN_HEIGHT)), dpi=96)


def _measure_cjk() -> None:
    """Let matplotlib measure Chinese labels with Noto Sans CJK when its font cache predates the font."""
    if not any(f.name.startswith("Noto Sans CJK") for f in font_manager.fontManager.ttflist):
        for path in sorted(Path("/usr/share/fonts").glob("**/NotoSansCJK-Regular.tt[cf]"))[:1]:
            font_manager.fontManager.addfont(str(path))


logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)   # a missing CJK font is not news here
_measure_cjk()


def funnel_chart(funnels: Sequence[Funnel]) -> str:
    """Return horizontal bars, per step of the funnel, of the share of items at each K (measured steps only)."""
    if not funnels or not any(f.items for f in funnels):
        return ""
    return _svg(funnel_figure(funnels))


def funnel_figure(funnels: Sequence[Funnel]) -> Figure:
    """Return the funnel chart's figure (`funnel_chart` draws it as SVG); `funnels` holds items."""
    labels = [stage.label for stage in funnels[0].stages if stage.count is not None]
    with matplotlib.rc_context(STYLE):
        figure = _figure(0.5 + 0.45 * len(labels) * max(1, len(funnels)) / 2)
        axes = figure.add_subplot()
        height = 0.8 / len(funnels)
        for n, funnel in enumerate(funnels):
            counts = [stage.count for stage in funnel.stages if stage.count is not None]
            shares = [c / funnel.items if funnel.items else 0 for c in counts]
            ys = [row + n * height for row in range(len(labels))]
            bars = axes.barh(ys, shares, height=height * 0.9, color=COLOURS[n % len(COLOURS)], label=f"K = {funnel.k}")
            axes.bar_label(bars, labels=[f"{c} ({s:.0%})" for c, s in zip(counts, shares)], padding=3, fontsize=8)
        axes.set_yticks([row + height * (len(funnels) - 1) / 2 for row in range(len(labels))], labels)
        axes.invert_yaxis()
        axes.set_xlim(0, 1.18)
        axes.set_xlabel(f"share of the {funnels[0].items} answerable items whose retrieval is scored")
        # outside the axes: inside, a legend covers the labels of bars that reach 100%
        keys = [f"K = {funnel.k}" for funnel in funnels]
        axes.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False, fontsize=8)
        _margins(figure, labels, keys)
        return figure


def subset_chart(title: str, labels: Sequence[str], series: Mapping[str, Sequence[tuple]]) -> str:
    """Return horizontal bars of each metric of `series` per subset label, with 95% intervals as
    whiskers; `series`: metric -> [(mean or None, (low, high) or None)] aligned with `labels`."""
    if not labels or not series:
        return ""
    with matplotlib.rc_context(STYLE):
        figure = _figure(0.6 + 0.22 * len(labels) * len(series))
        axes = figure.add_subplot()
        height = 0.8 / len(series)
        for n, (metric, points) in enumerate(series.items()):
            ys = [row + n * height for row in range(len(labels))]
            means = [p[0] if p[0] is not None else 0 for p in points]
            lows = [max(0.0, m - p[1][0]) if p[1] else 0 for m, p in zip(means, points)]
            highs = [max(0.0, p[1][1] - m) if p[1] else 0 for m, p in zip(means, points)]
            axes.barh(ys, means, height=height * 0.9, color=COLOURS[n % len(COLOURS)], label=metric,
                      xerr=[lows, highs], error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "#333"})
        axes.set_yticks([row + height * (len(series) - 1) / 2 for row in range(len(labels))], labels)
        axes.invert_yaxis()
        axes.set_xlim(0, 1.05)
        axes.set_title(title, loc="left")
        axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=8)
        _margins(figure, labels, legend=list(series))
        return _svg(figure)


def latency_chart(stages: Mapping[str, Sequence[float]]) -> str:
    """Return a box plot per stage (log scale, milliseconds): median, quartiles, 5th and 95th percentiles."""
    stages = {stage: values for stage, values in stages.items() if values}
    if not stages:
        return ""
    with matplotlib.rc_context(STYLE):
        figure = _figure(0.6 + 0.35 * len(stages))
        axes = figure.add_subplot()
        axes.boxplot([[max(v, 0.01) for v in values] for values in stages.values()], orientation="horizontal",
                     whis=(5, 95), showfliers=False, widths=0.6, medianprops={"color": COLOURS[1]})
        axes.set_yticks(range(1, len(stages) + 1), [f"{stage} (n={len(v)})" for stage, v in stages.items()])
        axes.invert_yaxis()
        axes.set_xscale("log")
        axes.set_xlabel("milliseconds (log scale); box: quartiles, whiskers: 5th to 95th percentile")
        _margins(figure, [f"{stage} (n={len(v)})" for stage, v in stages.items()])
        return _svg(figure)


def count_chart(counts: Mapping[str, int], xlabel: str) -> str:
    """Return horizontal bars of `counts`, largest first, each labelled with its count."""
    if not counts:
        return ""
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    with matplotlib.rc_context(STYLE):
        figure = _figure(0.5 + 0.28 * len(ordered))
        axes = figure.add_subplot()
        bars = axes.barh([k for k, _ in ordered], [v for _, v in ordered], color=COLOURS[3], height=0.6)
        axes.bar_label(bars, padding=3, fontsize=8)
        axes.invert_yaxis()
        axes.set_xlabel(xlabel)
        _margins(figure, [k for k, _ in ordered])
        return _svg(figure)


def curve_chart(title: str, xlabel: str, points: Sequence[CurvePoint], reference: float | None = None) -> str:
    """Return an accuracy curve: a dot per point at its mean with its 95% interval as whiskers, joined by
    a line (a point without a value leaves a gap), its n under its label; `reference` (the clean accuracy)
    as a dashed line. "" when no point has a value."""
    if not any(p.mean is not None for p in points):
        return ""
    with matplotlib.rc_context(STYLE):
        figure = _figure(2.6)
        axes = figure.add_subplot()
        xs = range(len(points))
        means = [p.mean if p.mean is not None else float("nan") for p in points]
        lows = [max(0.0, p.mean - p.ci95[0]) if p.mean is not None and p.ci95 else 0.0 for p in points]
        highs = [max(0.0, p.ci95[1] - p.mean) if p.mean is not None and p.ci95 else 0.0 for p in points]
        axes.errorbar(xs, means, yerr=[lows, highs], fmt="-o", color=COLOURS[0], ecolor=COLOURS[0], capsize=3,
                      markersize=5, elinewidth=1.0, label="accuracy (95% CI)")
        for x, point in zip(xs, points):
            if point.mean is not None:
                axes.annotate(f"{point.mean:.0%}", xy=(x, point.mean), xytext=(6, 4), textcoords="offset points",
                              fontsize=8, color=COLOURS[0])
        if reference is not None:
            axes.axhline(reference, color=COLOURS[5], linestyle="--", linewidth=1.0, label="asked clean")
        axes.set_xticks(list(xs), [f"{p.x}\n(n={p.n})" if p.mean is not None else f"{p.x}\n(unscored)"
                                   for p in points])
        axes.set_xlim(-0.5, len(points) - 0.5)
        axes.set_ylim(0, 1.05)
        axes.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        axes.set_xlabel(xlabel)
        axes.set_title(title, loc="left")
        axes.grid(axis="y", color="#e5e5e5", linewidth=0.6)
        axes.set_axisbelow(True)
        axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=8)
        _margins(figure, ["100%"], legend=["accuracy (95% CI)", "asked clean"])
        figure.subplots_adjust(bottom=0.75 / 2.6)   # two lines of x labels and the axis title
        return _svg(figure)


# Colours of a change: significantly better, significantly worse, no detectable change (as the page's cards).
CHANGE_COLOURS = {"better": "#2f7d4a", "worse": "#b8473d", "same": "#7f7f7f"}
FOREST_AXES = {"pts": "difference NEW − BASE, percentage points (rates)",
               "relative": "relative change NEW vs BASE, % of BASE (latency, tokens, cost)"}
ROW_INCHES, AXES_TOP, AXES_BOTTOM = 0.3, 0.3, 0.5
FOREST_LABEL = 0.45   # at most this share of the width for the row labels (longer ones are broken, then cut)


@dataclass
class ForestPoint:
    """One primary row of the forest plot: its difference and 95% interval on one of `FOREST_AXES`."""

    label: str
    axis: str                                # a key of FOREST_AXES
    x: float
    ci: tuple[float, float] | None
    state: str                               # a key of CHANGE_COLOURS
    text: str                                # the difference as the page writes it, beside the line


def forest_chart(points: Sequence[ForestPoint]) -> str:
    """Return the forest plot of `points` as SVG, "" when there is none."""
    return _svg(forest_figure(points)) if points else ""


def forest_figure(points: Sequence[ForestPoint]) -> Figure:
    """Return one small axes per kind of difference (`FOREST_AXES`, each with its zero line), one line
    per point: a dot at the difference, whiskers to its 95% interval, coloured by `state`, the
    difference written on the right."""
    labels = {id(p): fitted_label(p.label, FOREST_LABEL * WIDTH - 0.25) for p in points}
    groups = [(axis, [p for p in points if p.axis == axis]) for axis in FOREST_AXES]
    groups = [(axis, shown) for axis, shown in groups if shown]
    blocks = [AXES_TOP + sum(ROW_INCHES * labels[id(p)].count("\n") + ROW_INCHES for p in shown) + AXES_BOTTOM
              for _, shown in groups]
    height = sum(blocks)
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(WIDTH, height), dpi=96)
        lines = [line for text in labels.values() for line in text.split("\n")]
        left = min(FOREST_LABEL, (label_inches(lines) + 0.25) / WIDTH)
        right = 1 - min(0.3, (label_inches([p.text for p in points], 8.0) + 0.25) / WIDTH)
        top = height
        for (axis, shown), block in zip(groups, blocks):
            bottom = top - block + AXES_BOTTOM
            axes = figure.add_axes((left, bottom / height, right - left, (block - AXES_TOP - AXES_BOTTOM) / height))
            _forest_axes(axes, shown, [labels[id(p)] for p in shown], FOREST_AXES[axis])
            top -= block
        return figure


def fitted_label(label: str, inches: float, size: float = 9.0) -> str:
    """Return `label` fitted to `inches`: broken before " on " (a subset) into two lines, and each line
    that is still too wide cut with "…".

    >>> fitted_label("context/recall@5 on difficulty=hard", 1.5)
    'context/recall@5\\non difficulty=hard'
    >>> fitted_label("a" * 40, 1.0)
    'aaaaaaaaaaaa…'
    """
    lines = label.split(" on ", 1)
    if len(lines) == 2 and label_inches([label], size) > inches:
        lines[1] = "on " + lines[1]
    else:
        lines = [label]
    fitted = []
    for line in lines:
        while len(line) > 1 and label_inches([line], size) > inches:
            line = line[:-2] + "…"
        fitted.append(line)
    return "\n".join(fitted)


def _forest_axes(axes, points: Sequence[ForestPoint], labels: Sequence[str], xlabel: str) -> None:
    """Draw `points` (named `labels`) on one axes around its zero line."""
    ends = [0.0] + [v for p in points for v in ((p.x,) + tuple(p.ci or ()))]
    low, high = min(ends), max(ends)
    pad = (high - low) * 0.1 or 1.0
    axes.axvline(0.0, color="#555", linewidth=0.8)
    for y, point in enumerate(points):
        colour = CHANGE_COLOURS[point.state]
        err = [[point.x - point.ci[0]], [point.ci[1] - point.x]] if point.ci else None
        axes.errorbar([point.x], [y], xerr=err, fmt="o", color=colour, ecolor=colour, capsize=3, markersize=5,
                      elinewidth=1.4)
        axes.annotate(point.text, xy=(1.0, y), xycoords=("axes fraction", "data"), xytext=(6, 0),
                      textcoords="offset points", va="center", fontsize=8, color=colour)
    axes.set_yticks(range(len(points)), labels)
    axes.set_ylim(len(points) - 0.5, -0.5)
    axes.set_xlim(low - pad, high + pad)
    axes.set_xlabel(xlabel)
    axes.grid(axis="x", color="#e5e5e5", linewidth=0.6)
    axes.set_axisbelow(True)
