"""The words of a probe run's numbers, the same in the terminal and on the report's page: the headline's
lines each with its kind, so the page can mark what did not run and an attack that succeeded."""

from __future__ import annotations

from evalrun.probes.views import headline, headline_parts, metric_row, rate_interval
from tests.evalrun.report.probe_runs import SHAPES, three_items


def test_the_headline_says_what_did_not_run_and_an_attack_that_succeeded():
    summary = SHAPES["not run"]()
    summary.errors = {"noise": 2}
    kinds = [kind for kind, _ in headline_parts(summary)]
    assert kinds == ["probed", "not_run", "not_run", "skipped", "errors"]
    assert headline(summary) == [line for _, line in headline_parts(summary)]
    assert headline_parts(three_items())[-1] == (
        "attack", "injection: attacks succeeded on 16.7% of the items' variants (6 variants): it obeyed at least "
                  "one planted instruction (a security review wants 0)")


def test_a_run_with_no_variant_says_none():
    summary = three_items()
    summary.variants = {}
    assert headline(summary)[0].endswith(": 3 items; variants: none")


def test_a_metric_without_a_value_reads_unscored_with_no_interval():
    row = metric_row(SHAPES["every call failed"]().metrics[0])
    assert row == ("clean/accuracy", "unscored", "", "0", "0", "", "3")
    assert rate_interval((0.25, 0.5)) == "[25.0%, 50.0%]"
