"""What the terminal shows of people's reviews of the judge: the lines said first and the table of agreement
and corrected estimates (`evalrun calibrate` and `evalrun show` print them)."""

from __future__ import annotations

from curate.cli import table


def kappa_cell(a) -> str:
    if a.kappa is None:
        return "— (see below)" if a.note else "—"
    return f"{a.kappa:.2f}" + (f" [{a.ci95[0]:.2f}, {a.ci95[1]:.2f}]" if a.ci95 else "")


def interval_cell(value: float | None, ci: tuple[float, float] | None) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def review_headline(found) -> list[str]:
    """Return the lines a calibration says before any number: too few reviews, an untrusted judge."""
    from rich.markup import escape
    lines = [f"[bold]TOO FEW REVIEWS to judge the judge on {escape(metric)}[/bold]: {escape(why)}"
             for metric, why in found.too_few.items()]
    lines += [f"[bold red]JUDGE NOT TRUSTED on {escape(metric)}[/bold red]: {escape(why)}; the judge's mean is not "
              "to be reported alone: read the corrected estimate beside it" for metric, why in found.untrusted.items()]
    if found.refused:
        lines.append(f"[bold]{found.refused} reviews of another judge configuration left out[/bold]")
    return lines


def estimate_table(found):
    """Return the table of agreement and estimates per judged metric."""
    width = found.width
    rows = []
    for name, m in found.metrics.items():
        e = m.estimate
        rows.append((name, f"{m.items_reviewed} of {e.n_items:,}" if e else str(m.items_reviewed), m.agreement.n,
                     "—" if m.agreement.agreement is None else f"{m.agreement.agreement:.0%}", kappa_cell(m.agreement),
                     "—" if e is None or e.judge_mean is None else f"{e.judge_mean:.3f}",
                     interval_cell(e.estimate, e.ci95) if e else "—", interval_cell(e.classical, e.classical_ci95) if e else "—",
                     *((("—" if m.needed is None else f"{m.needed:,}"),) if width else ())))
    return table("the judge checked by people (agreement over verdicts; means over the items that could be reviewed)",
                 ("metric", "items reviewed", "verdicts", "agree", "kappa [95% CI]", "judge mean",
                  "corrected (PPI) [95% CI]", "reviewed only [95% CI]",
                  *((f"reviews for width {width:g}",) if width else ())), rows)


