"""`evalrun compare BASE NEW --gate FILE`: exit 0 when every rule holds, 1 with each failed rule on one
line, 2 for a bad gate file (one line naming file, line and field); hand-made runs whose verdict is
known."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from curate import InputError, init_workspace
from evalrun.cli.main import cli as evalrun_cli
from evalrun.compare.comparison import scored_run
from evalrun.compare.core import compare_scored
from evalrun.compare.gate import parse_gate
from tests.evalrun.compare.test_compare import hits, make_run


def gated(rules, base, new, items=None, **options):
    """Return the gate's result on NEW against BASE (Run objects), compared with the rules in the family."""
    return compare_scored(base, new, items, rules=rules, gate_source="gate.toml", **options).gate

GATE = """\
[gate]
guard = ["context/hit_rate@1"]
guard_subsets = ["all"]
improve = ["lexical/f1"]
max_latency_p95_rise = 0.20
max_cost_per_item_rise = 0.10
"""


def _values(hit_from: int, f1_step: float) -> dict[str, dict[str, float]]:
    """30 items: hit_rate@1 is 1 from item `hit_from` on; f1 is 0.5 + f1_step * k."""
    return {f"i{k:02d}": {"context/hit_rate@1": float(k >= hit_from), "lexical/f1": 0.5 + f1_step * k}
            for k in range(30)}


@pytest.fixture
def base(tmp_path):
    return make_run(tmp_path / "base", _values(0, 0.0), p95=100.0, cost=3.0)


def _gate(tmp_path, *args, text=GATE, code=0):
    gate = tmp_path / "gate.toml"
    gate.write_text(text)
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["compare", *map(str, args), "--gate", str(gate),
                                                              "--workspace", str(tmp_path / "nowhere")])
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result


def test_a_change_that_improves_the_target_and_keeps_the_guards_passes(tmp_path, base):
    new = make_run(tmp_path / "new", _values(0, 0.01), p95=110.0, cost=3.2)   # +10% latency, +6.7% cost
    result = _gate(tmp_path, base, new)
    # the four rules of GATE, and max_permission_leaks, on by default (no chunk has groups: nothing can leak)
    assert result.stdout.splitlines()[-1] == f"gate ({tmp_path / 'gate.toml'}): passed, 5 rules held"


def test_each_failed_rule_is_one_line_and_the_exit_is_1(tmp_path, base):
    new = make_run(tmp_path / "new", _values(20, 0.0), p95=150.0, cost=3.6)
    lines = _gate(tmp_path, base, new, code=1).stdout.splitlines()
    verdict = lines.index(f"gate ({tmp_path / 'gate.toml'}): FAILED, 4 of 5 rules")
    failed = lines[verdict + 1:]
    assert len(failed) == 4
    assert failed[0].startswith("failed: guard context/hit_rate@1 on all: 100.0% -> 33.3% (-66.7 pts [")
    assert failed[0].endswith("significantly worse")
    assert failed[1].startswith("failed: improve lexical/f1 on all: 50.0% -> 50.0% (+0.0 pts")
    assert failed[1].endswith("did not improve significantly")
    assert failed[2] == "failed: max_latency_p95_rise: p95 latency of total (ms) 100 -> 150 (+50.0%, at most +20%)"
    assert failed[3] == ("failed: max_cost_per_item_rise: system cost per item (USD) 0.1 -> 0.12 (+20.0%, "
                         "at most +10%)")


def test_a_guard_on_a_named_subset_and_an_uncontrolled_comparison(tmp_path, base):
    from curate import EvalItem
    items = [EvalItem(id=f"i{k:02d}", question="q?", answerable=True, language="en", source="human",
                      difficulty="hard" if k < 20 else "easy") for k in range(30)]
    new = make_run(tmp_path / "new", _values(20, 0.01), kb="kb-2")
    base, new = scored_run(base), scored_run(new)
    rules = parse_gate('[gate]\nguard = ["context/*"]\nguard_subsets = ["difficulty=easy", "difficulty=hard"]\n',
                       "gate.toml")
    result = gated(rules, base, new, items)
    assert [line.split(":")[0] for line in result.failed] == ["require_controlled", ("guard context/hit_rate@1 on "
                                                                                   "difficulty=hard")]
    assert result.failed[0] == "require_controlled: not a controlled comparison: KB snapshot kb-1 vs kb-2"
    assert result.checked[0] == "max_permission_leaks 0: no chunk of NEW's KB has access groups, nothing can leak"
    assert result.checked[1].startswith("guard context/hit_rate@1 on difficulty=easy: 100.0% -> 100.0%")
    loose = parse_gate('[gate]\nguard = ["context/*"]\nguard_subsets = ["difficulty=easy"]\nrequire_controlled = '
                       'false\n', "gate.toml")
    assert gated(loose, base, new, items).passed
    missing = parse_gate('[gate]\nguard = ["context/*"]\nguard_subsets = ["difficulty=medium"]\n', "gate.toml")
    assert gated(missing, base, new, items).failed[-1] == (
        "guard context/hit_rate@1 on difficulty=medium: not compared (no item of that subset scored in both runs)")


def test_an_oracle_context_run_is_never_the_new_side_of_a_gate(tmp_path, base):
    oracle = make_run(tmp_path / "oracle", _values(0, 0.01), oracle=True)
    result = _gate(tmp_path, base, oracle, code=2)
    assert result.stderr.strip() == (f"error: {tmp_path / 'oracle'} is a diagnostic --oracle-context run: it can "
                                     f"never be the NEW side of a gate")


@pytest.mark.parametrize(("text", "message"), [
    ('[gate]\nguard = ["x"]\nmax_latency_p95_rise = "a lot"\n',
     "gate.toml:3: field 'gate.max_latency_p95_rise': Input should be a valid number"),
    ('[gate]\nguard = ["x"]\nalpha = "0.05"\n', "gate.toml:3: field 'gate.alpha': Input should be a valid number"),
    ('[gate]\nguard = ["x"]\nalpha = true\n', "gate.toml:3: field 'gate.alpha': Input should be a valid number"),
    ('[gate]\nguard = ["x"]\nrequire_controlled = "no"\n',
     "gate.toml:3: field 'gate.require_controlled': Input should be a valid boolean"),
    ('[gate]\nguard = ["x"]\nguards = ["y"]\n', "gate.toml:3: field 'gate.guards': unknown field"),
    ('[gate]\nguard = ["x"]\nalpha = = 1\n', None),
    ('[other]\nx = 1\n', "gate.toml: field 'gate': no [gate] table (see `evalrun compare --help`)"),
    ('# nothing\n[gate]\nalpha = 0.1\n', ("gate.toml:2: field 'gate': sets no rule (guard, improve, "
     "max_latency_p95_rise or max_cost_per_item_rise): a gate with only the default max_permission_leaks = 0 would "
     "pass any other change; set another rule, or set max_permission_leaks to gate on leaks alone")),
    ('[gate]\nalpha = 2\nguard = ["x"]\n', "gate.toml:2: field 'gate.alpha': Input should be less than 1"),
])
def test_a_bad_gate_file_is_one_line_naming_file_line_and_field(text, message):
    with pytest.raises(InputError) as raised:
        parse_gate(text, "gate.toml")
    if message is None:
        assert str(raised.value).startswith("gate.toml:3: not valid TOML")
    else:
        assert str(raised.value) == message


def test_a_bad_gate_file_exits_2_with_one_line(tmp_path, base):
    new = make_run(tmp_path / "new", _values(0, 0.01))
    result = _gate(tmp_path, base, new, text="[gate]\nimprove = 3\n", code=2)
    assert result.stderr.strip() == (f"error: {tmp_path / 'gate.toml'}:2: field 'gate.improve': Input should be a "
                                     f"valid list")


def test_gate_without_a_file_reads_the_workspace_curate_toml(tmp_path, base):
    workspace = init_workspace(tmp_path / "ws")
    new = make_run(tmp_path / "new", _values(20, 0.0))
    runner = CliRunner(mix_stderr=False)
    args = ["compare", str(base), str(new), "--workspace", str(workspace.root), "--gate"]
    missing = runner.invoke(evalrun_cli, args)
    assert missing.exit_code == 2 and "no [gate] table" in missing.stderr
    with workspace.config_path.open("a") as config:
        config.write('\n[gate]\nguard = ["context/hit_rate@1"]\n')
    failed = runner.invoke(evalrun_cli, args)
    assert failed.exit_code == 1
    assert failed.stdout.splitlines()[-2] == f"gate ({workspace.config_path}): FAILED, 1 of 2 rules"


def test_on_runs_from_one_distribution_the_gate_fails_no_more_often_than_its_error_rate(tmp_path):
    # 120 pairs of runs of 100 items drawn from the same distribution (two 0/1 metrics, one continuous),
    # guarded on all three: the gate may fail only when a guard gets significantly worse, which under
    # no change happens at most at its stated rate (alpha 0.05, Holm over the guards).
    import numpy as np
    rules = parse_gate('[gate]\nguard = ["context/hit_rate@1", "context/hit_rate@5", "lexical/f1"]\n'
                       'guard_subsets = ["all"]\nrequire_controlled = true\n', "gate.toml")

    def values(rng, hit=0.6):
        return {f"i{k:03d}": {"context/hit_rate@1": float(rng.random() < hit),
                              "context/hit_rate@5": float(rng.random() < 0.85),
                              "lexical/f1": float(np.clip(rng.normal(0.5, 0.2), 0, 1))} for k in range(100)}

    failed, repetitions = 0, 120
    for n in range(repetitions):
        rng = np.random.default_rng(1000 + n)
        base = scored_run(make_run(tmp_path / f"b{n}", values(rng)))
        new = scored_run(make_run(tmp_path / f"n{n}", values(rng)))
        failed += not gated(rules, base, new, resamples=2000).passed
    # 0.05 stated; 120 repetitions: allow three standard errors (0.02 each) above it
    assert failed / repetitions <= 0.05 + 3 * (0.05 * 0.95 / repetitions) ** 0.5, failed
    # and the same gate does see a real loss (hit_rate@1 from 0.6 to 0.35)
    caught = 0
    for n in range(10):
        rng = np.random.default_rng(5000 + n)
        base = scored_run(make_run(tmp_path / f"B{n}", values(rng)))
        new = scored_run(make_run(tmp_path / f"N{n}", values(rng, hit=0.35)))
        caught += not gated(rules, base, new, resamples=2000).passed
    assert caught >= 8, caught


# -- rules that can never fail ---------------------------------------------------------------------------------

def test_a_guard_on_a_subset_too_small_to_reach_alpha_fails_as_a_weak_rule(tmp_path):
    # 3 items, 2 of them lost: McNemar p = 2 x (1/2)^2 = 0.5; on 3 pairs no p-value goes below
    # 2 / 2^3 = 0.25, so this guard could never have failed whatever NEW did.
    base, new = make_run(tmp_path / "base", hits("111")), make_run(tmp_path / "new", hits("001"))
    gate = tmp_path / "g.toml"
    gate.write_text('[gate]\nguard = ["context/hit_rate@1"]\n')
    args = ["compare", str(base), str(new), "--workspace", str(tmp_path / "nowhere"), "--gate", str(gate)]
    runner = CliRunner(mix_stderr=False)
    result = runner.invoke(evalrun_cli, args)
    assert result.exit_code == 1, (result.stdout, result.stderr)
    lines = result.stdout.splitlines()
    assert lines[-3] == f"gate ({gate}): FAILED, 1 of 2 rules"
    assert lines[-2].startswith("failed: guard context/hit_rate@1 on all: 100.0% -> 33.3% (-66.7 pts")
    assert lines[-2].endswith("cannot fail (a weak rule; --allow-weak-rules lets it pass)")
    assert lines[-1] == ("weak rule: guard context/hit_rate@1 on all cannot fail: on 3 pairs the smallest "
                         "p-value mcnemar_exact can give is 0.25, not below alpha 0.05")
    allowed = runner.invoke(evalrun_cli, args + ["--allow-weak-rules"])
    assert allowed.exit_code == 0, (allowed.stdout, allowed.stderr)
    assert allowed.stdout.splitlines()[-2:] == [
        f"gate ({gate}): passed, 2 rules held (1 of them could not have failed: --allow-weak-rules)", lines[-1]]
    data = json.loads(runner.invoke(evalrun_cli, args + ["--json"]).stdout)
    assert data["gate"]["passed"] is False and data["gate"]["weak"] == [lines[-1].removeprefix("weak rule: ")]
    alone = runner.invoke(evalrun_cli, ["compare", str(base), str(new), "--allow-weak-rules"])
    assert alone.exit_code == 2 and "--allow-weak-rules loosens --gate" in alone.stderr


def test_a_guarded_metric_worse_on_every_item_fails_even_where_no_p_value_could_say_so(tmp_path):
    from curate import EvalItem
    items = [EvalItem(id=f"i{k:02d}", question="q?", answerable=True, language="en", source="human",
                      difficulty="hard" if k < 3 else "easy") for k in range(30)]
    base = make_run(tmp_path / "base", hits("1" * 30))
    new = make_run(tmp_path / "new", hits("000" + "1" * 27))   # every hard item lost: p = 2 / 2^3, not significant
    rules = parse_gate('[gate]\nguard = ["context/hit_rate@1"]\nguard_subsets = ["difficulty=hard"]\n', "g.toml")
    result = gated(rules, scored_run(base), scored_run(new), items, allow_weak_rules=True)
    assert not result.passed
    assert result.failed[0].startswith("guard context/hit_rate@1 on difficulty=hard: 100.0% -> 0.0% (-100.0 pts")
    assert result.failed[0].endswith("p 0.250 Holm) worse on every one of its 3 pairs")
    # a continuous metric on 2 items, both a little lower: the same
    base = make_run(tmp_path / "b2", {"a": {"lexical/f1": 0.8}, "b": {"lexical/f1": 0.6}})
    new = make_run(tmp_path / "n2", {"a": {"lexical/f1": 0.7}, "b": {"lexical/f1": 0.5}})
    rules = parse_gate('[gate]\nguard = ["lexical/f1"]\n', "g.toml")
    result = gated(rules, scored_run(base), scored_run(new), allow_weak_rules=True)
    assert result.failed and result.failed[0].endswith("worse on every one of its 2 pairs")


def test_the_correction_over_the_gates_rows_decides_whether_a_guard_can_fail(tmp_path):
    # 6 items: one guard can reach 2 / 2^6 = 0.03125 < 0.05; two guards cannot (Holm: 2 x 0.03125 = 0.0625)
    values = {f"i{k}": {"context/hit_rate@1": 1.0, "context/hit_rate@5": 1.0} for k in range(6)}
    new_values = {f"i{k}": {"context/hit_rate@1": float(k > 0), "context/hit_rate@5": 1.0} for k in range(6)}
    runs = scored_run(make_run(tmp_path / "b", values)), scored_run(make_run(tmp_path / "n", new_values))
    one = gated(parse_gate('[gate]\nguard = ["context/hit_rate@1"]\n', "g"), *runs)
    assert one.passed and one.weak == []
    two = gated(parse_gate('[gate]\nguard = ["context/hit_rate@*"]\n', "g"), *runs)
    assert not two.passed
    assert two.weak == ["guard context/hit_rate@1 on all cannot fail: on 6 pairs the smallest p-value mcnemar_exact "
                        "can give is 0.0312, x 2 rows of the primary family (Holm) = 0.0625, not below alpha 0.05",
                        "guard context/hit_rate@5 on all cannot fail: on 6 pairs the smallest p-value mcnemar_exact "
                        "can give is 0.0312, x 2 rows of the primary family (Holm) = 0.0625, not below alpha 0.05"]
    # one glob named twice is still one row of the family
    twice = gated(parse_gate('[gate]\nguard = ["context/hit_rate@1", "context/hit_rate@1"]\n'
                             'guard_subsets = ["all", "all"]\n', "g"), *runs)
    assert twice.passed and twice.weak == [] and len(twice.checked) == 2   # and max_permission_leaks


def test_an_improve_rule_that_cannot_be_met_says_so(tmp_path):
    base = make_run(tmp_path / "b", hits("000"))
    new = make_run(tmp_path / "n", hits("111"))
    result = gated(parse_gate('[gate]\nimprove = ["context/hit_rate@1"]\n', "g"), scored_run(base), scored_run(new))
    assert len(result.failed) == 1 and result.failed[0].startswith("improve context/hit_rate@1 on all: 0.0% -> 100.0%")
    assert result.failed[0].endswith("n 3, p 0.250 Holm) did not improve significantly (it cannot: on 3 pairs the "
                                     "smallest p-value mcnemar_exact can give is 0.25, not below alpha 0.05)")


@pytest.mark.parametrize(("line", "says"), [
    ("alpha = 1e-300", "alpha 1e-300 is below 0.0001: the sign-flip test never gives a p-value under 1/(1 + 10000 "
                       "resamples), so a guard of a continuous metric could never fail"),
    ("alpha = nan", "Input should be a finite number"),
    ("alpha = 0.9", "alpha 0.9 is above 0.5: a difference no larger than chance makes would count as significant, and "
                    "an improve rule would pass on noise"),
    ("max_latency_p95_rise = inf", "a limit of inf can never fail: give a finite rise (0.2 = 20%), or leave the "
                                   "rule out"),
    ("max_latency_p95_rise = -inf", "a limit of -inf can never fail: give a finite rise (0.2 = 20%), or leave the "
                                    "rule out"),
    ("max_cost_per_item_rise = nan", "a limit of nan can never fail: give a finite rise (0.2 = 20%), or leave the "
                                     "rule out"),
    ("max_cost_per_item_rise = -0.1", "-0.1 is negative: this is the largest rise allowed (0 = no rise at all)"),
    ("max_cost_per_item_rise = 1e300", "1e+300 allows a 1e+300-fold rise and cannot fail in practice: at most 100, "
                                       "or leave the rule out"),
])
def test_a_gate_rule_that_can_never_fail_is_refused_with_its_line(line, says):
    with pytest.raises(InputError) as raised:
        parse_gate(f'[gate]\nguard = ["x"]\n{line}\n', "gate.toml")
    key = line.split(" =")[0]
    assert str(raised.value) == f"gate.toml:3: field 'gate.{key}': {says}"


def test_a_gate_file_with_a_byte_order_mark_is_read(tmp_path, base):
    new = make_run(tmp_path / "new", _values(0, 0.01), p95=110.0, cost=3.2)
    result = _gate(tmp_path, base, new, text="\ufeff" + GATE)
    assert result.stdout.splitlines()[-1] == f"gate ({tmp_path / 'gate.toml'}): passed, 5 rules held"
