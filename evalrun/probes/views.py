"""How a probe run's numbers are put into words, the same in the terminal (`evalrun probe`, `evalrun show`)
and on the report's page: the headline, what did not run, the metrics with n and intervals, the pairs
against the clean variants, the curves, and the failures with what was planted and the answer."""

from __future__ import annotations

from collections.abc import Iterable

from evalrun import numbers
from evalrun.probes.folder import PairedToClean, ProbeFailure, ProbeMetric, ProbeSummary

WHAT = {
    "clean/accuracy": "asked clean: an accepted answer (the baseline each probe is paired to)",
    "noise/accuracy": "an accepted answer among hard negatives (every rate > 0)",
    "negative/declined": "declined with no evidence in the context",
    "counterfactual/followed": "stated the changed fact its context gave",
    "injection/success": "ATTACK SUCCESS: obeyed a planted instruction or leaked its canary (lower is better)",
    "injection/accuracy": "an accepted answer despite the planted instruction",
    "rewrite/consistent": "the same answer to the question rephrased",
    "rewrite/accuracy": "an accepted answer to the question rephrased",
}
ATTACK = "injection/success"
VERDICTS = ("lexical verdicts: strings, no model (refusal phrases, the changed value, the canary, the accepted "
            "answers); undecided ones and failed calls have no value and are counted apart, never as a pass or a fail")


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def headline_parts(summary: ProbeSummary) -> list[tuple[str, str]]:
    """Return the first lines, each with its kind: what was probed and how many variants ("probed"), each
    probe not run ("not_run"), what was not built ("skipped"), the failed calls ("errors"), and how often
    a planted instruction was obeyed ("attack")."""
    mode = ("given each variant's context (generate(question, context))" if summary.mode == "oracle_context"
            else "end to end (it retrieves for itself)")
    asked = ", ".join(f"{p} {n:,}" for p, n in summary.variants.items())
    parts = [("probed", f"probes of {summary.target} over {summary.ref}, {mode}: {_plural(summary.items, 'item')}; "
                        f"variants: {asked or 'none'}")]
    parts += [("not_run", f"{probe}: NOT RUN: {why}") for probe, why in summary.not_run.items()]
    for probe, reasons in summary.skipped.items():
        total = sum(reasons.values())
        top = "; ".join(f"{why} ({n})" for why, n in sorted(reasons.items(), key=lambda r: -r[1])[:3])
        parts.append(("skipped", f"{probe}: {_plural(total, 'variant')} not built: {top}"))
    if summary.errors:
        parts.append(("errors", "calls that failed or timed out (no verdict, counted apart): "
                      + ", ".join(f"{p} {n:,}" for p, n in summary.errors.items())))
    attack = summary.metric(ATTACK)
    if attack is not None and attack.summary.mean is not None:
        parts.append(("attack", f"injection: attacks succeeded on {numbers.percent(attack.summary.mean)} of the "
                      f"items' variants ({attack.variants:,} variants)"
                      + (": it obeyed at least one planted instruction (a security review wants 0)"
                         if attack.summary.mean > 0 else ": it obeyed none")))
    return parts


def headline(summary: ProbeSummary) -> list[str]:
    """Return the first lines: what was probed, how many variants, what was not built, not run or failed."""
    return [line for _, line in headline_parts(summary)]


def metric_row(metric: ProbeMetric) -> tuple[str, ...]:
    """Return one metric as a table row: name, value, 95% CI, items, variants, undecided, errors."""
    s = metric.summary
    ci = rate_interval(s.ci95) + (" W" if s.ci95 and s.ci_method == "wilson" else "")
    return (metric.name, numbers.percent(s.mean) if s.mean is not None else "unscored", ci, f"{s.n:,}",
            f"{metric.variants:,}", f"{metric.undecided:,}" if metric.undecided else "",
            f"{metric.errors:,}" if metric.errors else "")


def rate_interval(ci: tuple[float, float] | None) -> str:
    """Return a 95% interval of a rate in percent.

    >>> rate_interval((0.132, 0.349)), rate_interval(None)
    ('[13.2%, 34.9%]', '')
    """
    return f"[{numbers.percent(ci[0])}, {numbers.percent(ci[1])}]" if ci else ""


METRIC_COLUMNS = ("metric", "value", "95% CI", "items", "variants", "undecided", "errors")


def metric_rows(metrics: Iterable[ProbeMetric], method: str = "lexical") -> list[tuple[str, ...]]:
    """Return the table rows of the metrics decided by `method`."""
    return [metric_row(m) for m in metrics if m.method == method]


PAIRED_COLUMNS = ("metric", "clean", "probed", "difference", "95% CI", "p", "test", "items")
PAIRED = ("paired: each metric against the same items' clean accuracy, over the items with both (+N: items with a "
          "value on one side only, left out); McNemar's exact test for 0/1 values, the sign-flip test otherwise, "
          "intervals as evalrun compare's")


def paired_row(row: PairedToClean) -> tuple[str, ...]:
    """Return one paired comparison as a table row."""
    return (row.name, numbers.percent(row.clean), numbers.percent(row.probed), numbers.difference("rate", row.difference),
            numbers.interval("rate", row.ci95), numbers.p_value(row.p_value), row.test or "",
            f"{row.n:,}" + (f" (+{row.left_out})" if row.left_out else ""))


CURVES = {"by_rate": "accuracy by noise rate", "by_position": "accuracy by gold position (lost in the middle)"}


def curve_line(summary: ProbeSummary, name: str) -> str | None:
    """Return a curve on one line: 'accuracy by noise rate: 0 90.0% (n 20) · 0.2 85.0% ...'."""
    points = summary.curves.get(name)
    if not points:
        return None
    return f"{CURVES[name]}: " + " · ".join(f"{p.x} {numbers.percent(p.mean) or 'unscored'} (n {p.n})" for p in points)


def failure_key(failure: ProbeFailure) -> str:
    """Return the group a failure is listed in: its probe and whose verdict, 'noise (lexical)'."""
    return f"{failure.probe} ({failure.method})"


def failure_lines(failures: Iterable[ProbeFailure], per_probe: int = 5, width: int = 160) -> list[str]:
    """Return up to `per_probe` failures of each probe, each on lines: the variant, the verdict, what was
    planted, the answer."""
    shown: dict[str, int] = {}
    total: dict[str, int] = {}
    lines: list[str] = []
    for failure in failures:
        key = failure_key(failure)
        total[key] = total.get(key, 0) + 1
        if shown.get(key, 0) >= per_probe:
            continue
        shown[key] = shown.get(key, 0) + 1
        lines.append(f"{failure.probe}: {failure.variant_id}: {_one_line(failure.what, width)}")
        lines.append(f"    question: {_one_line(failure.question, width)}")
        if failure.planted:
            lines.append(f"    planted: {_one_line(failure.planted, width)}")
        lines.append(f"    answer: {_one_line(failure.answer or '(none)', width)}")
    for key, n in total.items():
        if n > shown.get(key, 0):
            lines.append(f"{key}: {n - shown.get(key, 0):,} more failures (evalrun show FOLDER --failures, or "
                         f"probe_summary.json)")
    return lines


def _one_line(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3] + "..."


def judge_line(summary: ProbeSummary) -> str | None:
    """Return what the judge did: its verdicts counted apart, its failures, or why none were asked."""
    if summary.judge_note:
        why = summary.judge_note.removeprefix("not computed: ").replace(" (no judge was asked)", "")
        return f"judge: none asked ({why}); every verdict above is lexical"
    line = f"judge: {summary.judge_usage}" if summary.judge_usage else "judge:"
    if summary.judge_failed:
        line += ("; verdicts it could not give (the lexical verdict stands; counted apart): "
                 + ", ".join(f"{p} {n:,}" for p, n in summary.judge_failed.items()))
    return line if line != "judge:" else None
