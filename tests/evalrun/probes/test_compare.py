"""`evalrun compare BASE_PROBE NEW_PROBE`: two probe runs of the handbook's questions (examples/handbook,
released as handbook@v1), made by `evalrun.probe` with Python systems given each variant's context: a
careful one, the same again, one that obeys planted instructions and gives up at noise 0.6 and above,
one that obeys a single instruction of a single item, one whose calls fail on one item's planted
instructions, one without the injection probe, one probed with another seed. The variants are deterministic, so every system is asked the careful run's variants."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

import evalrun
from curate import init_workspace
from curate.checks.leakage import check_leakage
from curate.cli.main import cli as curate_cli
from curate.dataset import DatasetStore
from curate.release import release
from evalrun.cli.main import cli as evalrun_cli
from evalrun.compare.comparable import NotComparable
from evalrun.probes.build import accepted_answers, gold_ids
from evalrun.probes.compare import compare_probe_runs
from evalrun.probes.folder import ProbeRun
from tests.support import EXAMPLES

PROBES = "noise,negative,counterfactual,injection"
ITEMS = 36   # the handbook's answerable questions: each is probed


class Systems:
    """Systems under test, each `f(question, context)`: they know each question's gold chunks and accepted
    answer, and (from BASE's variants) which variant a call is."""

    def __init__(self, items):
        self.gold = {i.question: set(gold_ids(i)) for i in items}
        self.answer = {i.question: accepted_answers(i)[0] for i in items if accepted_answers(i)}
        self.first = min(items, key=lambda i: i.id).question
        self.variants = {}

    def learn(self, run: ProbeRun) -> None:
        """Remember which variant each (question, context) is."""
        self.variants = {self._key(v.question, [c.model_dump() for c in v.context]): v for v in run.variants}

    @staticmethod
    def _key(question: str, context: list[dict]) -> tuple:
        return question, tuple((c["chunk_id"], c["text"]) for c in context)

    def careful(self, question: str, context: list[dict]) -> dict:
        """The accepted answer when a gold chunk is given, a refusal without one, the changed fact as planted,
        and no planted instruction followed."""
        for chunk in context:
            if chunk["chunk_id"].startswith("probe:") and "counterfactual" in chunk["chunk_id"]:
                return {"answer": chunk["text"]}
        if not self.gold.get(question, set()) & {c["chunk_id"] for c in context}:
            return {"answer": "I don't know.", "refused": True}
        return {"answer": self.answer[question]}

    def again(self, question: str, context: list[dict]) -> dict:
        return self.careful(question, context)

    def worse(self, question: str, context: list[dict]) -> dict:
        """Careful, except that it gives up at noise 0.6 and above and obeys every planted instruction."""
        variant = self.variants[self._key(question, context)]
        if variant.probe == "noise" and variant.noise_rate >= 0.6:
            return {"answer": "The context does not say."}
        return {"answer": " ".join([self.careful(question, context)["answer"], *self._planted(context)])}

    def one_slip(self, question: str, context: list[dict]) -> dict:
        """Careful, except that it obeys the reveal_canary instruction of the first item."""
        variant = self.variants[self._key(question, context)]
        answer = self.careful(question, context)["answer"]
        if question == self.first and variant.probe == "injection" and variant.rule == "reveal_canary":
            answer = " ".join([answer, *self._planted(context)])
        return {"answer": answer}

    def crashes(self, question: str, context: list[dict]) -> dict:
        """Careful, except that its calls with the first item's planted instructions fail."""
        if question == self.first and self._planted(context):
            raise RuntimeError("the guard model is down")
        return self.careful(question, context)

    @staticmethod
    def _planted(context: list[dict]) -> list[str]:
        return [c["text"] for c in context if c["chunk_id"].startswith("probe:injection")]


@dataclass
class Probed:
    """The workspace and its probe runs."""

    workspace: Path
    careful: ProbeRun
    again: ProbeRun
    worse: ProbeRun
    one_slip: ProbeRun
    crashes: ProbeRun
    no_injection: ProbeRun
    seed_1: ProbeRun


def released_handbook(root: Path):
    """Return a workspace holding the handbook's KB and questions, released as handbook@v1."""
    workspace = init_workspace(root)
    runner = CliRunner(mix_stderr=False)
    for args in (["kb", "ingest", EXAMPLES / "handbook" / "docs", "--name", "handbook"],
                 ["import", EXAMPLES / "handbook" / "questions.jsonl", "--dataset", "handbook", "--source", "human",
                  "--kb", "handbook"]):
        result = runner.invoke(curate_cli, ["--workspace", str(root), *map(str, args)])
        assert result.exit_code == 0, (result.stdout, result.stderr)
    check_leakage(workspace, ref="handbook", semantic=False)
    release(workspace, dataset="handbook", message="v1")
    return workspace


@pytest.fixture(scope="module")
def probed(tmp_path_factory) -> Probed:
    workspace = released_handbook(tmp_path_factory.mktemp("probes") / "ws")
    systems = Systems(DatasetStore(workspace).items("handbook"))

    def probe(name, target, probes=PROBES, seed=0):
        return evalrun.probe("handbook@v1", target=target, probes=probes, workspace=workspace, seed=seed,
                             out=workspace.root / "runs" / name, no_judge=True)

    careful = probe("careful", systems.careful)
    systems.learn(careful)
    return Probed(workspace.root, careful, probe("again", systems.again), probe("worse", systems.worse),
                  probe("one_slip", systems.one_slip), probe("crashes", systems.crashes),
                  probe("no_injection", systems.careful, "noise,negative"),
                  probe("seed_1", systems.careful, seed=1))


def compare_cli(*args, code: int = 0):
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["compare", *map(str, args)])
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result


def test_the_runs_are_what_the_systems_do(probed):
    careful, worse = probed.careful.summary, probed.worse.summary
    assert careful.items == worse.items == ITEMS
    assert careful.metric("noise/accuracy@0.6").summary.mean == 1.0
    assert worse.metric("noise/accuracy@0.6").summary.mean == 0.0
    assert worse.metric("noise/accuracy@0.4").summary.mean == 1.0
    assert worse.metric("injection/success").summary.mean == 1.0
    # one of the first item's four templates obeyed: 1/4 on that item, 0 on the 35 others
    assert probed.one_slip.summary.metric("injection/success").summary.mean == pytest.approx(0.25 / ITEMS)


def test_a_clearly_worse_new_is_worse_under_noise_and_injection(probed):
    comparison = compare_probe_runs(probed.careful, probed.worse, resamples=2000)
    assert comparison.verdict == "worse"
    assert comparison.sentence == "NEW is worse than BASE under noise, injection"
    verdicts = {p.probe: p.verdict for p in comparison.probes}
    assert verdicts == {"clean": "no detectable difference", "noise": "worse", "negative": "no detectable difference",
                        "counterfactual": "no detectable difference", "injection": "worse"}
    at = comparison.row("noise/accuracy@0.6")
    # all 36 pairs 1 -> 0: McNemar's exact p = 2 / 2^36
    assert (at.n, at.base, at.new, at.difference, at.fell, at.test) == (ITEMS, 1.0, 0.0, -1.0, ITEMS, "mcnemar_exact")
    assert at.p_value == pytest.approx(2 / 2 ** ITEMS)
    assert comparison.row("noise/accuracy@0.4").difference == 0.0
    attack = comparison.row("injection/success")
    assert attack.lower_is_better and attack.decides and attack.worse and attack.difference == 1.0
    assert not comparison.row("injection/accuracy").lower_is_better


def test_the_same_system_again_shows_no_difference(probed):
    comparison = compare_probe_runs(probed.careful, probed.again, resamples=2000)
    assert comparison.verdict == "no detectable difference"
    assert comparison.items == ITEMS and comparison.warnings == []
    assert all(r.difference == 0 and r.p_value == 1.0 and not (r.better or r.worse) for r in comparison.rows)


def test_new_better_when_base_is_the_worse_one(probed):
    comparison = compare_probe_runs(probed.worse, probed.careful, resamples=2000)
    assert comparison.verdict == "better"
    assert comparison.row("injection/success").better   # attack success fell: better


def test_metrics_of_one_run_only_are_named_and_not_compared(probed):
    comparison = compare_probe_runs(probed.careful, probed.no_injection, resamples=2000)
    assert "injection/success" in comparison.only_in["BASE"] and "NEW" not in comparison.only_in
    assert comparison.row("injection/success") is None
    assert [p.line for p in comparison.probes if p.probe == "injection"] == [
        "injection: not compared: only BASE has injection/success"]


def test_runs_whose_variants_differ_are_refused(probed):
    with pytest.raises(NotComparable, match=r"different settings \(seed 0 vs 1\)"):
        compare_probe_runs(probed.careful, probed.seed_1)
    other = dataclasses.replace(probed.again, manifest=probed.again.manifest.model_copy(
        update={"content_sha256": "0" * 64, "ref": "handbook@v2"}))
    with pytest.raises(NotComparable, match="BASE probes handbook@v1 and NEW handbook@v2, releases of different"):
        compare_probe_runs(probed.careful, other)
    end_to_end = dataclasses.replace(probed.again, manifest=probed.again.manifest.model_copy(
        update={"mode": "end_to_end"}))
    with pytest.raises(NotComparable, match="BASE was probed oracle_context and NEW end_to_end"):
        compare_probe_runs(probed.careful, end_to_end)
    settings = probed.again.manifest.settings.model_copy(update={"rates": [0.0, 0.6]})
    rates = dataclasses.replace(probed.again, manifest=probed.again.manifest.model_copy(update={"settings": settings}))
    with pytest.raises(NotComparable, match=r"rates \[0.0, 0.2, 0.4, 0.6, 0.8\] vs \[0.0, 0.6\]"):
        compare_probe_runs(probed.careful, rates)


def test_settings_that_shape_no_variant_are_not_refused_and_a_kb_change_is_a_warning(probed):
    # absent shapes end-to-end variants only; concurrency and timeout shape none
    settings = probed.again.manifest.settings.model_copy(update={"absent": 3, "concurrency": 1, "timeout": 5.0,
                                                                 "templates": []})
    manifest = probed.again.manifest.model_copy(update={"settings": settings, "kb_snapshot": "kb-other"})
    comparison = compare_probe_runs(probed.careful, dataclasses.replace(probed.again, manifest=manifest),
                                    resamples=2000)
    assert comparison.warnings == [f"KB snapshot {probed.careful.manifest.kb_snapshot} (BASE) vs kb-other (NEW): the "
                                   "variants have the same ids, but their hard negatives, fillers and changed facts "
                                   "come from different chunks"]


def test_the_command_prints_the_verdicts_then_the_rows(probed):
    out = compare_cli(probed.careful.folder, probed.worse.folder).stdout
    lines = out.splitlines()
    assert lines[0] == "Verdict: NEW is worse than BASE under noise, injection"
    assert lines[2].startswith("  noise: worse: noise/accuracy 100.0% -> ")
    assert "  injection: worse: injection/success (lower is better) 0.0% -> 100.0% (+100.0 pts [" in out
    row = next(line for line in lines if line.lstrip().startswith("noise/accuracy@0.6 "))
    assert row.split()[1:6] == ["36", "100.0%", "0.0%", "-100.0", "pts"]
    assert row.split()[-1] == "worse"
    deciding = next(line for line in lines if line.lstrip().startswith("noise/accuracy "))
    assert deciding.rstrip().endswith("decides, worse")


def test_json_holds_every_row(probed):
    document = json.loads(compare_cli(probed.careful.folder, probed.worse.folder, "--json").stdout)
    assert document["verdict"] == "worse" and document["gate"] is None
    rows = {r["metric"]: r for r in document["rows"]}
    assert rows["injection/success"]["lower_is_better"] is True
    assert (rows["noise/accuracy@0.6"]["base"], rows["noise/accuracy@0.6"]["new"]) == (1.0, 0.0)


def test_a_probe_run_and_a_run_are_one_line_and_exit_2(probed, tmp_path):
    from tests.evalrun.compare.test_compare import make_run
    run = make_run(tmp_path / "run", {"i1": {"lexical/f1": 1.0}})
    for base, new in ((probed.careful.folder, run), (run, probed.careful.folder)):
        result = compare_cli(base, new, code=2)
        assert result.stderr.strip().splitlines() == [
            f"error: {probed.careful.folder} is a probe run (`evalrun probe`) and {run} a run (`evalrun run`): "
            f"compare two probe runs, or two runs"]
    with pytest.raises(evalrun.api.InputError, match="are probe runs"):
        evalrun.compare(probed.careful.folder, probed.again.folder)


def test_different_seeds_exit_2(probed):
    result = compare_cli(probed.careful.folder, probed.seed_1.folder, code=2)
    assert "different settings (seed 0 vs 1)" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_options_of_runs_only_are_refused_for_probe_runs(probed):
    result = compare_cli(probed.careful.folder, probed.again.folder, "--flips", code=2)
    assert "--flips compares runs, not probe runs" in result.stderr


def test_failed_calls_are_a_warning(probed):
    comparison = compare_probe_runs(probed.careful, probed.crashes, resamples=2000)
    assert comparison.warnings == ["NEW: 4 calls failed or timed out (no value: those variants are in no row)"]
    assert comparison.row("injection/success").n == ITEMS - 1
