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


def test_the_forest_plot_keeps_every_label_and_difference_inside_the_figure():
    from evalrun.report.charts import CHANGE_COLOURS, ForestPoint, forest_chart, forest_figure
    points = [ForestPoint("context/recall@5", "pts", 5.2, (1.0, 11.0), "better", "+5.2 pts"),
              ForestPoint("generation/correctness on difficulty=难题很长的子集标签", "pts", -40.0, (-80.0, -2.5),
                          "worse", "-40.0 pts"),
              ForestPoint("p95 latency", "relative", 73.3, None, "same", "+73.3% (+530 ms)")]
    figure = forest_figure(points)
    figure.draw_without_rendering()     # places the tick and axis labels (the base canvas draws nothing)
    assert [a.get_xlabel() for a in figure.axes] == [
        "difference NEW − BASE, percentage points (rates)",
        "relative change NEW vs BASE, % of BASE (latency, tokens, cost)"]              # one small axes per kind
    texts = [t for a in figure.axes for t in (*a.texts, *a.get_yticklabels(), a.xaxis.label) if t.get_text()]
    shown = {t.get_text() for t in texts}
    assert shown >= {"context/recall@5", "p95 latency"} | {p.text for p in points}
    assert "generation/correctness\non difficulty=难题很长的子集标签" in shown        # broken before its subset
    for text in texts:
        box = text.get_window_extent()
        assert figure.bbox.x0 <= box.x0 and box.x1 <= figure.bbox.x1, text.get_text()
        assert figure.bbox.y0 <= box.y0 and box.y1 <= figure.bbox.y1, text.get_text()
    for axes in figure.axes:
        low, high = axes.get_xlim()
        assert low < 0 < high                                                           # the zero line is drawn
    svg = forest_chart(points)
    assert svg.startswith("<svg") and CHANGE_COLOURS["better"] in svg and CHANGE_COLOURS["worse"] in svg
    assert forest_chart([]) == ""
