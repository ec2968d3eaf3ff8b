"""How a run's numbers are put into words, the same in the terminal (`evalrun show`, `evalrun compare`)
and on the report's page: a metric's mean, interval and n, and the order metrics are listed in."""

from __future__ import annotations

from evalrun.records import ItemScores, MetricSummary

ATTRIBUTIONS = ("target_failed", "retrieval_miss", "context_cut", "generation_miss", "hallucination",
                "false_refusal", "false_answer")
INTERVALS = ("95% CI: a percentile bootstrap over resamples shared by a subset's metrics; W: a Wilson interval "
             "(0/1 values on fewer than 100 items, or all equal)")
OTHER = ("context/key_point_coverage", "lexical/", "generation/", "unanswerable/", "success")
LEXICAL = ("lexical: no judge scored these items; generation_miss by string match, not by meaning: the evidence "
           "reached the context and the answer holds no accepted answer and misses half of a key point's tokens or "
           "one of its numbers (without key points: token F1 below 0.5, or the accepted answers' number)")


def format_summary(summary: MetricSummary | None) -> tuple:
    """Return (mean, 95% CI, n) as printed: n says how many failed and how many are unscored."""
    if not summary:
        return ("", "", "")
    unscored = sum(summary.unscored.values())
    notes = [f"{summary.failed} failed"] if summary.failed else []
    if unscored:
        notes.append(f"+{unscored} unscored")
    n = f"{summary.n}" + (f" ({', '.join(notes)})" if notes else "")
    if summary.mean is None:
        return ("unscored", "", n)
    ci = summary.ci95
    mark = " W" if summary.ci_method == "wilson" else ""
    return (f"{summary.mean:.3f}", f"[{ci[0]:.3f}, {ci[1]:.3f}]{mark}" if ci else "", n)


def retrieval_names(metrics: dict[str, MetricSummary]) -> list[str]:
    """Return the retrieval metric names (without the layer) in display order: by metric, then K."""
    names = {n.split("/", 1)[1] for n in metrics if n.startswith(("candidates/", "context/"))
             and "@" in n}
    return sorted(names, key=lambda n: (n.split("@")[0], int(n.split("@")[1])))


def other_names(metrics: dict[str, MetricSummary]) -> list[str]:
    """Return the non-retrieval metric names in display order."""
    return [n for prefix in OTHER for n in sorted(metrics) if n.startswith(prefix) or n == prefix]


def attribution_names(row: ItemScores) -> list[str]:
    """Return an item's attributions as shown: one made by string match, not a judge, marked "(lexical)"."""
    return [f"{a} (lexical)" if a in row.lexical_attribution else a for a in row.attribution]
