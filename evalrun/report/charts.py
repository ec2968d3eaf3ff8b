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
from pathlib import Path

import matplotlib
from matplotlib import font_manager
from matplotlib.figure import Figure

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
