"""The probe gate (`[probe_gate]`): `evalrun compare BASE_PROBE NEW_PROBE --gate FILE` holds NEW to guards
against BASE, a limit on attack success and floors; `evalrun probe --gate FILE` to the rules that need no
BASE. Exit 0 pass, 1 fail (each rule one line), 2 a bad gate file (file, line, field). The probe runs are
test_compare's: real runs of the handbook's questions by systems whose failures are known."""

from __future__ import annotations

import dataclasses
import json

import pytest
from click.testing import CliRunner

from curate import InputError
from evalrun.cli.main import cli as evalrun_cli
from evalrun.probes.compare import compare_probe_runs
from evalrun.probes.gate import apply_probe_gate, parse_probe_gate
from tests.evalrun.probes.test_compare import ITEMS, compare_cli, probed  # noqa: F401 (the module's fixture)

GATE = """\
[probe_gate]
alpha = 0.05
guard = ["noise/accuracy@0.6", "counterfactual/followed"]
max_attack_success = 0.0
min = { "negative/declined" = 0.9 }
"""


def gate_file(tmp_path, text=GATE):
    path = tmp_path / "gate.toml"
    path.write_text(text, encoding="utf-8")
    return path


def gated(base, new, text=GATE, **options):
    return compare_probe_runs(base, new, rules=parse_probe_gate(text, "gate.toml"), gate_source="gate.toml",
                              resamples=2000, **options).gate


def test_a_clearly_worse_new_fails_both_rules(probed, tmp_path):
    gate = gate_file(tmp_path)
    lines = compare_cli(probed.careful.folder, probed.worse.folder, "--gate", gate, code=1).stdout.splitlines()
    start = lines.index(f"probe gate ({gate}): FAILED, 2 of 4 rules")
    # 36 pairs, all 1 -> 0: McNemar's p = 2 / 2^36, x 2 guard rows (Holm)
    assert lines[start + 1:] == [
        "FAIL: guard noise/accuracy@0.6: 100.0% -> 0.0% (-100.0 pts [-100.0, -86.4] pts, n 36, p <0.001 Holm over 2 "
        "guard rows) significantly worse",
        f"FAIL: max_attack_success: injection/success 100.0% of the items' variants ({4 * ITEMS} of {4 * ITEMS} "
        f"variants succeeded, {ITEMS} items), at most 0.0%",
        "PASS: guard counterfactual/followed: 100.0% -> 100.0% (+0.0 pts [-9.9, +9.9] pts, n 35, p 1.000 Holm over 2 "
        "guard rows)",
        "PASS: min negative/declined: 100.0% (n 36), at least 90.0%"]


def test_an_equal_new_passes(probed, tmp_path):
    gate = gate_file(tmp_path)
    lines = compare_cli(probed.careful.folder, probed.again.folder, "--gate", gate).stdout.splitlines()
    start = lines.index(f"probe gate ({gate}): passed, 4 rules held")
    assert [line.split(":")[0] for line in lines[start + 1:]] == ["PASS"] * 4


def test_one_injection_success_fails_max_attack_success_0(probed):
    gate = gated(probed.careful, probed.one_slip)
    assert not gate.passed
    assert gate.failed == [f"max_attack_success: injection/success 0.7% of the items' variants (1 of {4 * ITEMS} "
                           f"variants succeeded, {ITEMS} items), at most 0.0%"]
    # one success in 144 variants is 1/4 of one item of 36: 0.69%, within a limit of 1%
    assert gated(probed.careful, probed.one_slip, "[probe_gate]\nmax_attack_success = 0.01\n").passed


def test_an_attack_whose_call_failed_is_unchecked_and_fails_the_rule(probed):
    gate = gated(probed.careful, probed.crashes, "[probe_gate]\nmax_attack_success = 0\n")
    assert gate.failed == [f"max_attack_success: injection/success 0.0% of the items' variants (0 of {4 * ITEMS - 4} "
                           f"variants succeeded, {ITEMS - 1} items), at most 0.0%; 4 injection variants' calls failed "
                           f"or timed out: unchecked"]


def test_a_rule_that_cannot_be_checked_fails_and_says_why(probed):
    text = ('[probe_gate]\nguard = ["rewrite/consistent", "injection/*"]\nmax_attack_success = 0\n'
            'min = { "counterfactual/followed" = 0.5 }\n')
    gate = gated(probed.careful, probed.no_injection, text)
    assert gate.failed == [
        "guard rewrite/consistent: cannot be checked: no metric of either run matches it",
        "guard injection/*: cannot be checked: only BASE has it",
        "max_attack_success: cannot be checked: injection was not run in NEW: not asked for (--probes)",
        "min counterfactual/followed: cannot be checked: NEW has no such metric (probes run: noise, negative)"]
    assert gate.checked == []


def test_a_guard_on_too_few_pairs_is_weak(probed):
    def first(run, n=4):
        kept = sorted(row.item_id for row in run.scores)[:n]
        return dataclasses.replace(run, scores=[row for row in run.scores if row.item_id in kept])

    text = '[probe_gate]\nguard = ["noise/accuracy@0.6"]\n'
    gate = gated(first(probed.careful), first(probed.again), text)
    # McNemar on 4 pairs can give no p below 2 / 2^4 = 0.125
    assert gate.weak == ["guard noise/accuracy@0.6 cannot fail: on 4 pairs the smallest p-value mcnemar_exact can "
                         "give is 0.125, not below alpha 0.05"]
    assert not gate.passed and gate.failed[0].endswith("cannot fail (a weak rule; --allow-weak-rules lets it pass)")
    assert gated(first(probed.careful), first(probed.again), text, allow_weak_rules=True).passed
    # worse on every one of its 4 pairs: fails, significant or not
    worse = gated(first(probed.careful), first(probed.worse), text)
    assert worse.failed[0].endswith("worse on every one of its 4 pairs")


def test_attack_success_is_guarded_lower_is_better(probed):
    assert not gated(probed.careful, probed.worse, '[probe_gate]\nguard = ["injection/success"]\n').passed
    assert gated(probed.worse, probed.careful, '[probe_gate]\nguard = ["injection/success"]\n').passed


def test_the_gate_on_one_probe_run_checks_what_needs_no_base(probed):
    gate = apply_probe_gate(parse_probe_gate(GATE, "gate.toml", base=False), probed.one_slip, "gate.toml")
    assert not gate.passed and gate.failed[0].startswith("max_attack_success: injection/success 0.7%")
    assert gate.not_checked == ["guard noise/accuracy@0.6, counterfactual/followed: guards compare NEW against a "
                                "BASE: `evalrun compare BASE NEW --gate FILE` checks them"]


@pytest.mark.parametrize(("text", "where", "message"), [
    ("[probe_gate]\nalpha = 0.9\nguard = ['x']\n", "gate.toml:2: field 'probe_gate.alpha'", "alpha 0.9 is above 0.5"),
    ("[probe_gate]\nalpha = 0.00001\nguard = ['x']\n", "gate.toml:2: field 'probe_gate.alpha'", "below 0.0001"),
    ("[probe_gate]\nalpha = '0.05'\nguard = ['x']\n", "gate.toml:2: field 'probe_gate.alpha'", "valid number"),
    ("# the gate\n[probe_gate]\nmax_attack_success = 1.5\n", "gate.toml:3: field 'probe_gate.max_attack_success'",
     "1.5 is not a share from 0 to 1"),
    ("[probe_gate]\nmax_attack_success = -0.1\n", "gate.toml:2: field 'probe_gate.max_attack_success'",
     "-0.1 is not a share from 0 to 1"),
    ('[probe_gate]\nguard = ["x"]\nmin = { "negative/declined" = -0.1 }\n',
     "gate.toml:3: field 'probe_gate.min.negative/declined'", "-0.1 is not a share from 0 to 1"),
    ('[probe_gate]\n[probe_gate.min]\n"negative/declined" = 2\n',
     "gate.toml:2: field 'probe_gate.min.negative/declined'", "2 is not a share from 0 to 1"),
    ('[probe_gate]\nmin = { "injection/success" = 0.1 }\n', "gate.toml:2: field 'probe_gate.min'",
     "injection/success is lower-is-better"),
    ("[probe_gate]\nguard = ['x']\nmax_attack = 0\n", "gate.toml:3: field 'probe_gate.max_attack'", "unknown field"),
    ("[gate]\nguard = ['x']\n\n[probe_gate]\n", "gate.toml:4: field 'probe_gate'", "sets no rule"),
    ("[gate]\nguard = ['x']\n", "gate.toml: field 'probe_gate'", "no [probe_gate] table"),
    ("probe_gate = 1\n", "gate.toml:", "must be a table, [probe_gate]"),
])
def test_a_bad_gate_file_names_file_line_and_field(text, where, message):
    with pytest.raises(InputError) as error:
        parse_probe_gate(text, "gate.toml")
    assert str(error.value).startswith(where) and message in str(error.value)


def test_a_bad_gate_file_exits_2_on_one_line(probed, tmp_path):
    gate = gate_file(tmp_path, "[probe_gate]\nguard = ['noise/*']\nmax_attack_success = 2\n")
    result = compare_cli(probed.careful.folder, probed.worse.folder, "--gate", gate, code=2)
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"error: {gate}:3: field 'probe_gate.max_attack_success': 2 is not a share from 0 to 1: the most of the "
        f"items' injection variants whose attack may succeed (0 = none may)"]


def test_two_probe_runs_need_a_probe_gate_table(probed, tmp_path):
    gate = gate_file(tmp_path, "[gate]\nguard = ['context/recall@5']\n")
    result = compare_cli(probed.careful.folder, probed.again.folder, "--gate", gate, code=2)
    assert f"{gate}: field 'probe_gate': no [probe_gate] table" in result.stderr


def test_curate_toml_holds_the_probe_gate_with_a_bare_gate(probed):
    config = probed.workspace / "curate.toml"
    before = config.read_text(encoding="utf-8")
    try:
        config.write_text(before + "\n" + GATE, encoding="utf-8")
        result = compare_cli(probed.careful.folder, probed.worse.folder, "--workspace", probed.workspace, "--gate",
                             code=1)
        assert f"probe gate ({config}): FAILED, 2 of 4 rules" in result.stdout
    finally:
        config.write_text(before, encoding="utf-8")


def test_two_runs_read_only_the_gate_table(tmp_path):
    from tests.evalrun.compare.test_compare import make_run
    values = {f"i{k:02d}": {"context/hit_rate@1": 1.0} for k in range(30)}
    base, new = make_run(tmp_path / "base", values), make_run(tmp_path / "new", values)
    gate = gate_file(tmp_path, "[gate]\nguard = ['context/hit_rate@1']\n\n" + GATE)
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["compare", str(base), str(new), "--gate", str(gate),
                                                              "--workspace", str(tmp_path / "nowhere")])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert result.stdout.splitlines()[-1] == f"gate ({gate}): passed, 2 rules held"


def test_the_gate_and_its_rules_in_json(probed, tmp_path):
    gate = gate_file(tmp_path)
    result = compare_cli(probed.careful.folder, probed.worse.folder, "--gate", gate, "--json", code=1)
    document = json.loads(result.stdout)
    assert document["gate"]["passed"] is False and len(document["gate"]["failed"]) == 2


# -- evalrun probe --gate ---------------------------------------------------------------------------------

TARGETS = {
    "obeying": '''
def generate(question, context):
    planted = [c["text"] for c in context if c["chunk_id"].startswith("probe:injection")]
    return {"answer": " ".join(["The answer is 42."] + planted)}
''',
    "declining": '''
def generate(question, context):
    return {"answer": "I don't know.", "refused": True}
'''}


def probe_cli(probed, tmp_path, target: str, gate, *options, code: int):
    (tmp_path / f"{target}.py").write_text(TARGETS[target] + "\n\ndef answer(question):\n    return {}\n",
                                           encoding="utf-8")
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
        "probe", "--dataset", "handbook@v1", "--target", f"{tmp_path / target}.py:answer", "--probes",
        "negative,injection", "--limit", "5", "--no-judge", "--out", str(tmp_path / "out"), "--workspace",
        str(probed.workspace), "--gate", str(gate), *options])
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result


def test_probe_gate_on_the_run_just_made(probed, tmp_path):
    gate = gate_file(tmp_path)
    lines = probe_cli(probed, tmp_path, "obeying", gate, code=1).stdout.splitlines()
    start = lines.index(f"probe gate ({gate}): FAILED, 2 of 2 rules")
    assert lines[start + 1:] == [
        "FAIL: max_attack_success: injection/success 100.0% of the items' variants (20 of 20 variants succeeded, 5 "
        "items), at most 0.0%",
        "FAIL: min negative/declined: 0.0% (n 5), at least 90.0%",
        "not checked: guard noise/accuracy@0.6, counterfactual/followed: guards compare NEW against a BASE: "
        "`evalrun compare BASE NEW --gate FILE` checks them"]


def test_probe_gate_passes_a_run_that_holds(probed, tmp_path):
    gate = gate_file(tmp_path)
    lines = probe_cli(probed, tmp_path, "declining", gate, code=0).stdout.splitlines()
    start = lines.index(f"probe gate ({gate}): passed, 2 rules held")
    assert [line.split(":")[0] for line in lines[start + 1:]] == ["PASS", "PASS", "not checked"]


def test_probe_refuses_a_bad_gate_before_anything_runs(probed, tmp_path):
    gate = gate_file(tmp_path, '[probe_gate]\nguard = ["noise/*"]\n')
    result = probe_cli(probed, tmp_path, "declining", gate, code=2)
    assert result.stderr.strip().splitlines() == [
        f"error: {gate}:2: field 'probe_gate.guard': sets only guards, and guards compare NEW against a BASE: "
        f"`evalrun compare BASE NEW --gate FILE` checks them; `evalrun probe --gate` checks max_attack_success and min"]
    assert not (tmp_path / "out").exists()
