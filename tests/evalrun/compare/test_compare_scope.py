"""Scope in `evalrun compare`: BASE and NEW permission leaks said first, the gate's max_permission_leaks rule
on by default (and failing when it cannot be checked), runs checked under different scope settings, or one
with scope checks and one without, not a controlled comparison."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from curate import InputError, ScopeSettings
from evalrun.cli.main import cli as evalrun_cli
from evalrun.compare.comparable import check_comparable
from evalrun.compare.comparison import scored_run
from evalrun.compare.gate import parse_gate
from evalrun.scope_records import ScopeSummary
from tests.evalrun.compare.test_compare import hits, make_run
from tests.evalrun.compare.test_gate_rules import gated

LEAKS = "[gate]\nmax_permission_leaks = 0\n"
DIGEST = ScopeSettings().digest()     # the digest of no [scope] settings, as make_run's runs have


def compare(*args, code=0) -> list[str]:
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["compare", *map(str, args)])
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result.stdout.splitlines()


def test_leaks_of_both_runs_come_first_and_the_default_gate_fails_on_any(hr_runs, tmp_path):
    workspace, scoped, leaky = hr_runs
    gate = tmp_path / "gate.toml"
    gate.write_text(LEAKS)
    lines = compare(scoped, leaky, "--gate", gate, "--workspace", workspace.root, code=1)
    assert lines[:3] == [
        "PERMISSION LEAKS (items given chunks their asker may not see): BASE 0 of 9 -> NEW 5 of 9",
        "  candidates 0 -> 5, context 0 -> 5, citations 0 -> 2",
        "  NEW's items with a leak: band-staff, leave, bonus, acme, globex"]
    assert lines[4].startswith("Verdict: ")
    assert lines[-2:] == [
        f"gate ({gate}): FAILED, 1 of 1 rules",
        "failed: max_permission_leaks 0: 5 of NEW's 9 items with an asker leak (candidates 5, context 5, citations 2): "
        "band-staff, leave, bonus, acme, globex, at most 0; 1 item names no asker, unchecked"]
    # the other way round NEW leaks nothing: the rule holds
    assert compare(leaky, scoped, "--gate", gate, "--workspace", workspace.root)[-1] == f"gate ({gate}): passed, 1 rules held"
    # on by default: a gate that names only another rule holds NEW to it too
    other = tmp_path / "other.toml"
    other.write_text('[gate]\nguard = ["success"]\n')
    assert "failed: max_permission_leaks 0: 5 of NEW's 9 items" in "\n".join(
        compare(scoped, leaky, "--gate", other, "--allow-weak-rules", "--workspace", workspace.root, code=1))
    # raisable, deliberately
    raised = tmp_path / "raised.toml"
    raised.write_text("[gate]\nmax_permission_leaks = 5\n")
    assert compare(scoped, leaky, "--gate", raised, "--workspace", workspace.root)[-1] == (
        f"gate ({raised}): passed, 1 rules held")


@pytest.mark.parametrize(("line", "says"), [
    ("max_permission_leaks = -1", "Input should be greater than or equal to 0"),
    ("max_permission_leaks = false", "Input should be a valid integer"),
    ('max_permission_leaks = "0"', "Input should be a valid integer"),
    ("max_permission_leaks = 0.5", "Input should be a valid integer"),
])
def test_the_leak_rule_cannot_be_turned_off_by_accident(line, says):
    with pytest.raises(InputError) as raised:
        parse_gate(f'[gate]\nguard = ["x"]\n{line}\n', "gate.toml")
    assert str(raised.value) == f"gate.toml:3: field 'gate.max_permission_leaks': {says}"


def _scope(**fields) -> ScopeSummary:
    return ScopeSummary(**{"scoped": True, "access_groups": True, "settings_digest": DIGEST, **fields})


def test_a_leak_rule_that_cannot_be_checked_fails(tmp_path):
    base = scored_run(make_run(tmp_path / "base", hits("111")))
    rules = parse_gate(LEAKS, "gate.toml")
    nobody = scored_run(make_run(tmp_path / "nobody", hits("111"), scope=_scope(askers=0, unchecked=3)))
    result = gated(rules, base, nobody)
    assert not result.passed and result.failed == [
        "max_permission_leaks 0: cannot be checked, NEW's KB has access groups and no item names an asker "
        "(asker_groups): 3 items unchecked"]
    before = scored_run(make_run(tmp_path / "before", hits("111"), scope=None))
    assert gated(rules, base, before).failed == [
        "max_permission_leaks 0: cannot be checked, NEW was scored before permission leaks were checked (evalrun run "
        "--resume --out RUN scores it again)"]
    open_kb = scored_run(make_run(tmp_path / "open", hits("111")))     # no chunk has access groups
    assert gated(rules, base, open_kb).checked == [
        "max_permission_leaks 0: no chunk of NEW's KB has access groups, nothing can leak"]


def test_runs_checked_under_different_scope_settings_are_not_a_controlled_comparison(tmp_path):
    one = scored_run(make_run(tmp_path / "one", hits("111"), scope=_scope(askers=3)))
    other = scored_run(make_run(tmp_path / "other", hits("111"), scope=_scope(askers=3, settings_digest="d-2")))
    assert check_comparable(one, other).uncontrolled == [
        f"scope settings {DIGEST} vs d-2 (the releases' [scope] versions, groups or roles differ)"]
    before_folder = make_run(tmp_path / "before", hits("111"), scope=None)
    before = scored_run(before_folder)
    assert check_comparable(before, one).uncontrolled == [
        "NEW was scored with scope checks and BASE without (evalrun run --resume --out BASE scores it again)"]
    assert check_comparable(one, before).uncontrolled[0].startswith("BASE was scored with scope checks and NEW without")
    # a run of a KB without scope found nothing to check: against one scored before the checks, nothing differs
    open_folder = make_run(tmp_path / "open", hits("111"))
    assert check_comparable(before, scored_run(open_folder)).controlled
    assert compare(before_folder, open_folder, "--workspace", tmp_path / "nowhere")[0].startswith("Verdict: ")
