"""The gate of `evalrun compare --gate`: rules a NEW run must meet against BASE to be kept, read from
a TOML file's `[gate]` table (the same table may live in the workspace's curate.toml):

```toml
[gate]
alpha = 0.05                                   # on the corrected p-values
guard = ["context/recall@5", "lexical/f1"]     # globs: may not get significantly worse...
guard_subsets = ["all", "difficulty=hard"]     # ...on any of these subsets
improve = ["generation/correctness"]           # must improve significantly...
improve_subset = "all"                         # ...on this subset
max_latency_p95_rise = 0.20                    # p95 latency (latency_stage) may rise at most 20%
latency_stage = "total"
max_cost_per_item_rise = 0.10                  # the system's cost per item may rise at most 10%
require_controlled = true                      # a comparison that is not controlled fails the gate
max_permission_leaks = 0                       # NEW's items with a permission leak (on by default)
```

`max_permission_leaks` is on whether the table sets it or not: NEW fails the gate when more of its
items than this were given a chunk their asker may not see, in any layer (candidates, context,
citations). It may be raised, never turned off. It cannot be checked, and so fails, when NEW was scored
before permission leaks were checked, or its KB gives chunks access groups and no item names an asker;
it holds when no chunk of the KB has access groups (nothing can leak).

The guard and improve rules join the comparison's primary family (`evalrun.compare.family`): their
rows' p-values are corrected (Holm) together with the primary metrics', never over the whole table
of exploratory rows, so the gate decides on the same corrected p-values the verdict reads. A metric is worse when it falls, or rises for those where lower is better
(`LOWER_IS_BETTER`). A rule that cannot be checked (a subset the runs do not have, no latency or cost
recorded) fails: a gate passes only what it could check. A diagnostic --oracle-context run is never
the NEW side of a gate (an error, exit 2).

A rule that can never fail is refused or fails: an alpha outside MIN_ALPHA..MAX_ALPHA, or a rise limit
that is not a finite number from 0 to MAX_RISE, is a bad gate file (exit 2); a guard on too few pairs for any p-value
to get below alpha once corrected (`evalrun.compare.stats.smallest_p`: 2 / 2^n for n pairs) is a weak
rule, named, and fails the gate unless --allow-weak-rules; a guarded metric worse on every one of its
pairs fails, significant or not.
"""

from __future__ import annotations

import fnmatch
import math
import re
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ConfigDict, Field, ValidationError, field_validator

from curate import CurateError, InputError, Record, loads_toml, read_toml
from evalrun import numbers
from evalrun.compare.comparison import LOWER_IS_BETTER, CompareRow, Comparison, GateResult
from evalrun.compare.scope import leak_rule
from evalrun.compare.stats import RESAMPLES, holm, smallest_p

TABLE = "gate"
_HEADER = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]")
_ASSIGN = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*=")
# The smallest p-value the Monte Carlo sign-flip test gives a continuous metric is 1 / (1 + resamples):
# below this alpha no guard of such a metric could ever fail.
MIN_ALPHA = 1e-4
# Above this alpha a coin flip is "significant": an improve rule would pass on noise.
MAX_ALPHA = 0.5
# A rise limit above this (a 100-fold rise) cannot fail in practice: a rule that checks nothing.
MAX_RISE = 100.0
R = TypeVar("R", bound=Record)


def attainable_alpha(value: float) -> float:
    """Return `value`, an alpha a gate can decide with; one outside MIN_ALPHA..MAX_ALPHA is a ValueError
    saying why (the message a gate file's error shows)."""
    if value < MIN_ALPHA:
        raise ValueError(f"alpha {value:g} is below {MIN_ALPHA:g}: the sign-flip test never gives a p-value "
                         f"under 1/(1 + {RESAMPLES} resamples), so a guard of a continuous metric could never fail")
    if value > MAX_ALPHA:
        raise ValueError(f"alpha {value:g} is above {MAX_ALPHA:g}: a difference no larger than chance makes would "
                         f"count as significant, and an improve rule would pass on noise")
    return value


class GateRules(Record):
    """The `[gate]` table: what NEW may not lose and must win against BASE. Strict: a value of another TOML
    type ("0.05" for a number, true for a number) is refused, not converted."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, strict=True)

    alpha: float = Field(0.05, gt=0, lt=1, allow_inf_nan=False,
                         description=f"Significance level of the corrected p-values ({MIN_ALPHA:g} to {MAX_ALPHA:g}).")
    guard: list[str] = Field(default_factory=list, description="Metric globs that may not get significantly worse.")
    guard_subsets: list[str] = Field(default_factory=lambda: ["all"], min_length=1,
                                     description="Subsets on which the guards hold: 'all', 'difficulty=hard', ...")
    improve: list[str] = Field(default_factory=list, description="Metric globs that must improve significantly.")
    improve_subset: str = Field("all", description="The subset on which they must improve.")
    max_latency_p95_rise: float | None = Field(None, description="Largest relative rise of p95 latency "
                                               f"(0.2 = 20%; 0 to {MAX_RISE:g}).")
    latency_stage: str = Field("total", description="The stage whose p95 latency is checked.")
    max_cost_per_item_rise: float | None = Field(None, description="Largest relative rise of the system's cost "
                                                 f"per item (0.1 = 10%; 0 to {MAX_RISE:g}).")
    require_controlled: bool = Field(True, description="Fail when the comparison is not controlled (a different KB "
                                     "snapshot, judge, prompts, scope settings, or a degraded run).")
    use_reviews: bool = Field(False, description="Judged metrics (generation/*) on 'all' are decided by the "
                              "difference corrected for the judge's error by people's reviews of both runs "
                              "(`evalrun review`): a guard fails when its 95% interval lies on the worse side of 0, "
                              "an improve rule passes only when it lies on the better side; without a corrected "
                              "estimate such a rule fails.")
    max_permission_leaks: int = Field(0, ge=0, description="Most items of NEW with a permission leak in any layer "
                                      "(on by default; raisable, never off). Cannot be checked, and fails, when NEW "
                                      "was scored before leaks were checked or its KB has access groups and no "
                                      "item names an asker.")

    @field_validator("alpha")
    @classmethod
    def _attainable_alpha(cls, value: float) -> float:
        return attainable_alpha(value)

    @field_validator("max_latency_p95_rise", "max_cost_per_item_rise")
    @classmethod
    def _a_limit_that_can_fail(cls, value: float | None) -> float | None:
        if value is None:
            return None
        if not math.isfinite(value):
            raise ValueError(f"a limit of {value} can never fail: give a finite rise (0.2 = 20%), or leave the "
                             f"rule out")
        if value < 0:
            raise ValueError(f"{value:g} is negative: this is the largest rise allowed (0 = no rise at all)")
        if value > MAX_RISE:
            raise ValueError(f"{value:g} allows a {value:g}-fold rise and cannot fail in practice: at most "
                             f"{MAX_RISE:g}, or leave the rule out")
        return value


def _line_of(text: str, key: str | None, name: str = TABLE) -> int | None:
    """Return the line of the table `name` (`[gate]`) that sets `key`: its assignment, or the header of
    `[name.key]`; the table's header when `key` is None or not set."""
    header, table = None, None
    for number, line in enumerate(text.splitlines(), start=1):
        if found := _HEADER.match(line):
            table = found.group(1).strip().strip("\"'")
            if table == name:
                header = number
            elif key and table == f"{name}.{key}":
                return number
        elif table == name and key and (found := _ASSIGN.match(line)) and found.group(1) == key:
            return number
    return header


def validated_table(model: type[R], table: dict[str, Any], text: str, file: str, name: str = TABLE) -> R:
    """Return the TOML table `name` (parsed: `table`; its file's `text`) as the rules `model`; a value that
    does not fit is an InputError naming the file, the line and the field (`name.key`)."""
    try:
        return model.model_validate(table)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = str(error["loc"][0]) if error["loc"] else None
        field = ".".join(map(str, (name, *error["loc"])))
        message = "unknown field" if error["type"] == "extra_forbidden" else error["msg"].removeprefix("Value error, ")
        raise InputError(message, file=file, line=_line_of(text, key, name), field=field) from None


def _rules(data: dict[str, Any], text: str, file: str, table_required: bool) -> GateRules | None:
    """Return the rules of the parsed TOML `data`'s `[gate]` table (see `parse_gate`)."""
    table = data.get(TABLE)
    if table is None:
        if not table_required:
            return None
        raise InputError("no [gate] table (see `evalrun compare --help`)", file=file, field=TABLE)
    if not isinstance(table, dict):
        raise InputError("must be a table, [gate]", file=file, line=_line_of(text, None), field=TABLE)
    rules = validated_table(GateRules, table, text, file)
    if not (rules.guard or rules.improve or rules.max_latency_p95_rise is not None
            or rules.max_cost_per_item_rise is not None or "max_permission_leaks" in table):
        raise InputError("sets no rule (guard, improve, max_latency_p95_rise or max_cost_per_item_rise): a gate with "
                         "only the default max_permission_leaks = 0 would pass any other change; set another rule, or "
                         "set max_permission_leaks to gate on leaks alone", file=file, line=_line_of(text, None),
                         field=TABLE)
    return rules


def parse_gate(text: str, file: str, *, table_required: bool = True) -> GateRules | None:
    """Return the rules of the `[gate]` table of the TOML `text`; None when there is none and
    `table_required` is false. A bad file raises InputError naming file, line and field."""
    return _rules(loads_toml(text, file), text, file, table_required)


def read_gate(path: Path) -> GateRules:
    """Return the rules of the gate file at `path` (its `[gate]` table): curate.toml or a file of its own.
    Bytes that are not UTF-8, bad TOML or absurd nesting are one InputError naming file and line; a
    UTF-8 byte order mark is read past."""
    text, data = read_toml(Path(path))
    return _rules(data, text, str(path), True)


def _rows(comparison: Comparison, patterns: list[str], subset: str, rule: str) -> tuple[list[CompareRow], list[str]]:
    """Return the rows of the metrics matching `patterns` on `subset`, and a line per rule that cannot be checked."""
    names = sorted({r.metric for r in comparison.rows})
    found, missing = [], []
    for pattern in patterns:
        matched = [n for n in names if fnmatch.fnmatchcase(n, pattern)]
        if not matched:
            missing.append(f"{rule} {pattern}: no metric of both runs matches it")
            continue
        for name in matched:
            row = comparison.row(name, subset)
            if row is None or row.p_value is None:
                missing.append(f"{rule} {name} on {subset}: not compared (no item of that subset scored in both runs)")
            else:
                found.append(row)
    return found, missing


def _effect(row: CompareRow, adjusted: float) -> str:
    """Return a gate row's change as a person reads it: "79.2% -> 87.5% (+8.3 pts [+0.0, +27.3] pts, ...)"."""
    ci = numbers.interval(row.metric, row.ci95)
    return (f"{numbers.value(row.metric, row.base)} -> {numbers.value(row.metric, row.new)} "
            f"({numbers.difference(row.metric, row.difference)}{' ' + ci if ci else ''}, n {row.n:,}, "
            f"p {numbers.p_value(adjusted)} Holm)")


def _rise(measure: str, base: float | None, new: float | None, limit: float, rule: str) -> tuple[str, bool]:
    if base is None or new is None:
        return f"{rule}: cannot be checked ({measure} is not recorded in both runs)", False
    if base == 0:
        ok = new == 0
        return f"{rule}: {measure} {base:g} -> {new:g}", ok
    rise = (new - base) / base
    return (f"{rule}: {measure} {base:.4g} -> {new:.4g} ({rise:+.1%}, at most {limit:+.0%})", rise <= limit)


def _unreachable(row: CompareRow, family: int, alpha: float, resamples: int) -> str | None:
    """Return why no p-value of `row` could get below `alpha` once Holm-corrected over `family` rows,
    whatever the values of its pairs; None when one could. Holm compares the smallest p-value of the
    family with alpha / family, so a row can be significant only if its test can go below that."""
    floor = smallest_p(row.test, row.n, resamples)
    if family * floor < alpha:
        return None
    held = f", x {family} rows of the primary family (Holm) = {min(1.0, family * floor):.3g}" if family > 1 else ""
    return (f"on {row.n} pairs the smallest p-value {row.test} can give is {floor:.3g}{held}, not below alpha "
            f"{alpha:g}")


def _worse_on_every_pair(row: CompareRow) -> bool:
    """Return whether every pair of the row got worse (a fall; a rise where lower is better)."""
    worse = row.rose if row.metric in LOWER_IS_BETTER else row.fell
    return row.n > 0 and worse == row.n


def gate_rows(rules: GateRules) -> list[tuple[list[str], str]]:
    """Return the (metric globs, subset) pairs the rules test, which join the primary family."""
    return [(rules.guard, subset) for subset in rules.guard_subsets] + [(rules.improve, rules.improve_subset)]


def refuse_diagnostic(new: str, diagnostic: bool) -> None:
    """Raise CurateError when the NEW side of a gate is a diagnostic --oracle-context run."""
    if diagnostic:
        raise CurateError(f"{new} is a diagnostic --oracle-context run: it can never be the NEW side of a gate")


def _by_reviews(comparison: Comparison, guards: dict, improves: dict, checked: list[str], failed: list[str]
                ) -> tuple[dict, dict]:
    """Decide the judged metrics' rules on the differences people's reviews corrected (`use_reviews`); return
    the guards and improve rows left for the judge's own p-values."""
    corrected = {d.metric: d for d in comparison.judge_corrected}
    left = []
    for rule, rows in (("guard", guards), ("improve", improves)):
        kept = {}
        for key, row in rows.items():
            if not row.metric.startswith("generation/"):
                kept[key] = row
                continue
            found = corrected.get(row.metric)
            name = f"{rule} {row.metric} on {row.subset} (use_reviews)"
            if row.subset != "all" or found is None or found.ci95 is None:
                why = ("corrected estimates are over 'all' only" if row.subset != "all" else
                       found.note if found is not None and found.note else "no reviews of both runs to correct it "
                       "(`evalrun review push`, and `--like BASE` for NEW)")
                failed.append(f"{name}: cannot be decided: {why}")
                continue
            low, high = found.ci95
            lower_better = row.metric in LOWER_IS_BETTER
            worse = high < 0 if not lower_better else low > 0
            better = low > 0 if not lower_better else high < 0
            line = (f"{name}: corrected {found.difference:+.3f} [{low:+.3f}, {high:+.3f}] over {found.reviewed} "
                    f"reviewed of {found.items} items")
            if rule == "guard":
                (failed if worse else checked).append(line + (" worse" if worse else ""))
            else:
                (checked if better else failed).append(line + ("" if better else " did not improve"))
        left.append(kept)
    return left[0], left[1]


def apply_gate(rules: GateRules, comparison: Comparison, source: str, *, allow_weak_rules: bool = False) -> GateResult:
    """Return whether `comparison` (NEW against BASE) passes the rules; refuse a diagnostic NEW run.

    A guard that could not have failed whatever NEW did (its subset too small for any p-value to get below
    alpha after the correction) is a weak rule: listed, and it fails the gate unless `allow_weak_rules`.
    A guarded metric worse on every one of its pairs fails whether significant or not."""
    refuse_diagnostic(comparison.new, comparison.new_diagnostic)
    checked, failed, weak = [], [], []
    # first: a leak is a security finding, and the first line a failed gate prints
    line, ok = leak_rule(rules.max_permission_leaks, comparison.scope.new if comparison.scope else None)
    (checked if ok else failed).append(line)
    if rules.require_controlled and comparison.uncontrolled:
        failed.append("require_controlled: not a controlled comparison: " + "; ".join(comparison.uncontrolled))
    guards: dict[tuple[str, str], CompareRow] = {}   # a row named twice (two globs, a subset twice) counts once
    for subset in rules.guard_subsets:
        rows, missing = _rows(comparison, rules.guard, subset, "guard")
        guards.update({(r.metric, r.subset): r for r in rows})
        failed += [line for line in missing if line not in failed]
    rows, missing = _rows(comparison, rules.improve, rules.improve_subset, "improve")
    improves = {(r.metric, r.subset): r for r in rows}
    failed += [line for line in missing if line not in failed]
    family_size = max(comparison.compared, 1)
    if rules.use_reviews:
        guards, improves = _by_reviews(comparison, guards, improves, checked, failed)
    for k, row in enumerate(list(guards.values()) + list(improves.values())):
        if not row.primary:   # a caller's mistake, never a user's: the gate decides on the family's p-values
            raise ValueError(f"{row.metric} on {row.subset} is not in the comparison's primary family: compare "
                             f"with the gate's rules (compare_scored(..., rules=rules))")
        p = row.p_adjusted
        significant = p < rules.alpha
        better = row.difference < 0 if row.metric in LOWER_IS_BETTER else row.difference > 0
        worse = row.difference != 0 and not better
        unreachable = _unreachable(row, family_size, rules.alpha, comparison.resamples)
        if k < len(guards):
            line = f"guard {row.metric} on {row.subset}: {_effect(row, p)}"
            if significant and worse:
                failed.append(line + " significantly worse")
            elif _worse_on_every_pair(row):
                failed.append(line + f" worse on every one of its {row.n} pairs")
            elif unreachable:
                weak.append(f"guard {row.metric} on {row.subset} cannot fail: {unreachable}")
                (checked if allow_weak_rules else failed).append(
                    line + " cannot fail (" + ("a weak rule, allowed by --allow-weak-rules" if allow_weak_rules
                                               else "a weak rule; --allow-weak-rules lets it pass") + ")")
            else:
                checked.append(line)
        elif significant and better:
            checked.append(f"improve {row.metric} on {row.subset}: {_effect(row, p)}")
        else:
            failed.append(f"improve {row.metric} on {row.subset}: {_effect(row, p)} did not improve significantly"
                          + (f" (it cannot: {unreachable})" if unreachable else ""))
    trade = {t.measure: t for t in comparison.trade_offs}
    if rules.max_latency_p95_rise is not None:
        latency = trade.get(f"latency p95 {rules.latency_stage} (ms)")
        line, ok = _rise(f"p95 latency of {rules.latency_stage} (ms)", latency and latency.base,
                         latency and latency.new, rules.max_latency_p95_rise, "max_latency_p95_rise")
        (checked if ok else failed).append(line)
    if rules.max_cost_per_item_rise is not None:
        cost = trade["system cost per item (USD)"]
        line, ok = _rise("system cost per item (USD)", cost.base, cost.new, rules.max_cost_per_item_rise,
                         "max_cost_per_item_rise")
        (checked if ok else failed).append(line)
    return GateResult(source=source, passed=not failed, checked=checked, failed=failed, weak=weak)
