"""The report's charts: readable whatever the run (labels and legends never on top of each other)."""

from __future__ import annotations

from evalrun.report.charts import funnel_chart, funnel_figure
from evalrun.report.gather import Funnel, FunnelStage


def _full(k: int) -> Funnel:
    """A funnel where every item reached every step: bars reach 100%, their labels the axes' right edge."""
    return Funnel(k=k, items=7, stages=[FunnelStage("evidence in candidates", 7), FunnelStage("in context", 7)])


def test_the_funnel_legend_stays_clear_of_bars_that_reach_every_item():
    figure = funnel_figure([_full(k) for k in (1, 3, 5, 10)])
    figure.canvas.draw()
    axes = figure.axes[0]
    legend = axes.get_legend().get_window_extent()
    assert legend.x0 >= axes.get_window_extent().x1                 # beside the axes, not over the bars
    assert legend.x1 <= figure.bbox.x1                                # and inside the figure
    assert [t.get_text() for t in axes.get_legend().get_texts()] == ["K = 1", "K = 3", "K = 5", "K = 10"]
    assert funnel_chart([_full(5)]).startswith("<svg")
