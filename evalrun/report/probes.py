"""What a report shows of a probe run (`evalrun probe`), read from its folder alone: the headline lines
(what was probed, what did not run or was not built, failed calls, attack success), a card per probe,
every metric with n and its interval (lexical, and the judge's apart), each probe paired to the same
items asked clean, the two accuracy curves drawn, attack success per injection template, and the
failures per probe with the verdict, what was planted and the answer.

The words and numbers are those of the terminal (`evalrun.probes.views`); `render` lays them out.
"""

from __future__ import annotations

from collections.abc import Sequence

from curate import language_of
from evalrun import numbers
from evalrun.compare.records import ALPHA
from evalrun.probes.folder import PairedToClean, ProbeFailure, ProbeMetric, ProbeRun, ProbeSummary
from evalrun.probes.views import (
    ATTACK,
    CURVES,
    METRIC_COLUMNS,
    PAIRED,
    PAIRED_COLUMNS,
    VERDICTS,
    WHAT,
    failure_key,
    headline_parts,
    judge_line,
    metric_row,
    paired_row,
    rate_interval,
)
from evalrun.report import charts
from evalrun.report.items import Cuts, capped
from evalrun.views import INTERVALS

# Characters of each text a failure shows (`evalrun probe` keeps 300 of an answer or a planted text).
CAPS = {"question": 1_000, "planted text": 2_000, "answer": 4_000, "verdict": 500}
MAX_FAILURES = 500   # rows per probe and verdict; probe_summary.json and `evalrun show FOLDER --failures` hold all
CURVE_AXES = {"by_rate": "share of the context that is hard negatives",
              "by_position": "where the gold chunks stand in the context"}
ALARMS = ("not_run", "errors")   # headline lines shown as warnings (attack: when an attack succeeded)


def probe_page(run: ProbeRun) -> tuple[dict, Cuts]:
    """Return what the page of the scored probe run `run` shows, and the texts it cut."""
    summary = run.summary
    cuts = Cuts()
    failures = _failures(summary.failures, cuts)
    questions = [f.question for f in summary.failures]
    zh = sum(language_of(q) == "zh" for q in questions)
    return {
        "summary": summary, "manifest": run.manifest, "lang": "zh" if zh * 2 > len(questions) else "en",
        "lines": [{"kind": kind, "text": text, "alarm": kind in ALARMS or (kind == "attack" and _attacked(summary))}
                  for kind, text in headline_parts(summary)],
        "judge_line": judge_line(summary), "verdicts": VERDICTS, "intervals": INTERVALS, "paired_hint": PAIRED,
        "cards": _cards(summary),
        "metric_columns": METRIC_COLUMNS,
        "lexical": _metric_rows(summary.metrics, "lexical"), "judged": _metric_rows(summary.metrics, "judge"),
        "paired_columns": PAIRED_COLUMNS, "paired": [_paired(row) for row in summary.paired],
        "curves": _curves(summary), "attacks": _attacks(summary.metrics), "failures": failures,
        "cuts": dict(cuts), "caps": CAPS, "max_failures": MAX_FAILURES, "alpha": ALPHA,
    }, cuts


def _attacked(summary: ProbeSummary) -> bool:
    """Return whether any planted instruction was obeyed (attack success above 0)."""
    attack = summary.metric(ATTACK)
    return bool(attack and attack.summary.mean)


def _cards(summary: ProbeSummary) -> list[dict]:
    """Return a card per probe's headline metric (decided lexically), in the order of `WHAT`."""
    cards = []
    for name, what in WHAT.items():
        metric = summary.metric(name)
        if metric is None:
            continue
        s = metric.summary
        cards.append({"label": name, "what": what, "value": numbers.percent(s.mean) or "unscored",
                      "ci": rate_interval(s.ci95), "n": f"n = {s.n:,} items, {metric.variants:,} variants",
                      "attack": metric.lower_is_better, "bad": metric.lower_is_better and bool(s.mean)})
    return cards


def _metric_rows(metrics: Sequence[ProbeMetric], method: str) -> list[dict]:
    """Return the table rows of the metrics decided by `method`: a breakdown (name@rule) under its metric,
    an attack that succeeded marked."""
    return [{"cells": metric_row(m), "sub": "@" in m.name, "what": WHAT.get(m.name, ""),
             "unscored": m.summary.mean is None, "bad": m.lower_is_better and bool(m.summary.mean)}
            for m in metrics if m.method == method]


def _paired(row: PairedToClean) -> dict:
    """Return one pair against clean, its state: worse or better when its test's p is below `compare`'s ALPHA
    (uncorrected for the many rows: a lead to follow, not a finding)."""
    changed = row.p_value is not None and row.p_value < ALPHA and row.difference
    return {"cells": paired_row(row), "state": ("worse" if row.difference < 0 else "better") if changed else ""}


def _curves(summary: ProbeSummary) -> list[dict]:
    """Return each accuracy curve of the summary: its chart, and its points as table rows."""
    clean = summary.metric("clean/accuracy")
    reference = clean.summary.mean if clean is not None else None
    found = []
    for name, title in CURVES.items():
        points = summary.curves.get(name) or []
        if not points:
            continue
        found.append({"name": name, "title": title,
                      "chart": charts.curve_chart(title, CURVE_AXES[name], points, reference),
                      "rows": [(p.x, numbers.percent(p.mean) or "unscored", rate_interval(p.ci95), f"{p.n:,}")
                               for p in points]})
    return found


def _attacks(metrics: Sequence[ProbeMetric]) -> list[dict]:
    """Return attack success per injection template (lexical verdicts), a template that succeeded marked."""
    prefix = f"{ATTACK}@"
    return [{"template": m.name[len(prefix):], "value": numbers.percent(m.summary.mean) or "unscored",
             "ci": rate_interval(m.summary.ci95), "n": f"{m.summary.n:,}", "variants": f"{m.variants:,}",
             "bad": bool(m.summary.mean)}
            for m in metrics if m.method == "lexical" and m.name.startswith(prefix)]


def _failures(failures: Sequence[ProbeFailure], cuts: Cuts) -> list[dict]:
    """Return the failures per probe and verdict, at most MAX_FAILURES rows each, long texts cut."""
    groups: dict[str, dict] = {}
    for failure in failures:
        key = failure_key(failure)
        group = groups.setdefault(key, {"key": key, "probe": failure.probe, "method": failure.method, "count": 0,
                                        "rows": []})
        group["count"] += 1
        if len(group["rows"]) >= MAX_FAILURES:
            continue
        group["rows"].append({
            "variant": failure.variant_id, "rule": failure.rule or "",
            "what": capped(failure.what, "verdict", cuts, CAPS["verdict"]),
            "question": capped(failure.question, "question", cuts, CAPS["question"]),
            "lang": language_of(failure.question),
            "planted": capped(failure.planted, "planted text", cuts, CAPS["planted text"]),
            "answer": capped(failure.answer, "answer", cuts, CAPS["answer"]),
        })
    for group in groups.values():
        group["unlisted"] = group["count"] - len(group["rows"])
    return list(groups.values())
