"""The pure core of `evalrun compare`: two scored runs and the release's items in, the comparison
(every row, the warnings, and the gate's verdict when there are rules) out. No workspace, no file
is read: `evalrun.compare` reads the runs, the gate file and the release, then calls this."""

from __future__ import annotations

from collections.abc import Sequence

from curate import EvalItem
from evalrun.compare.comparable import Comparability, check_comparable
from evalrun.compare.comparison import ALPHA, Comparison, compare_runs
from evalrun.compare.gate import GateRules, apply_gate, gate_rows, refuse_diagnostic
from evalrun.compare.stats import RESAMPLES
from evalrun.records import Run
from evalrun.review.paired import judge_corrected
from evalrun.review.records import Reviewed


def compare_scored(base: Run, new: Run, items: list[EvalItem] | None = None, *, metrics: Sequence[str] = (),
                   primary: Sequence[str] = (), primary_source: str = "--primary",
                   alpha: float = ALPHA, rules: GateRules | None = None,
                   gate_source: str = "gate", allow_weak_rules: bool = False, checked: Comparability | None = None,
                   resamples: int = RESAMPLES, reviews: tuple[Reviewed, Reviewed] | None = None) -> Comparison:
    """Return the comparison of the scored run `new` against `base`, held to the gate `rules` if given
    (`comparison.gate`, its verdict; None without rules).

    `items`: the release's items, for the subsets (None: "all" only, and the comparison says so).
    `metrics`, `primary` (from `primary_source`), `alpha` as `compare_runs` takes them; the gate's
    guard and improve rules join the primary family. `checked`: what
    `check_comparable(base, new)` found, when the caller already asked. Raises NotComparable for runs
    that cannot be compared at all. `reviews`: people's reviews of BASE's and NEW's judge, as read from their
    folders (`evalrun.review.records.read_reviews`): the judged metrics' changes corrected for the judge's
    error (`comparison.judge_corrected`). Raises CurateError when a gate would hold a diagnostic
    (--oracle-context) NEW run, before anything is computed.
    """
    checked = checked or check_comparable(base, new)
    if rules is not None:
        refuse_diagnostic(str(new.folder), checked.new_diagnostic)
    gate = gate_rows(rules) if rules is not None else ()
    comparison = compare_runs(base, new, items=items, metrics=metrics, primary=primary, primary_source=primary_source,
                              gate=gate, alpha=alpha, checked=checked, resamples=resamples)
    if reviews is not None:
        comparison.judge_corrected = judge_corrected(base, new, *reviews)
    if rules is not None:
        comparison.gate = apply_gate(rules, comparison, gate_source, allow_weak_rules=allow_weak_rules)
    return comparison
