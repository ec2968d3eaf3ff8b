"""`evalrun probe` over a real Chinese corpus (the CMRC2018 sample, released as cmrc@v1): a naive system is
caught by every probe, a careful one passes them; variants are deterministic; planted texts stay in the probe
folder; an end-to-end target runs what it can and is told what it cannot."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import evalrun
from evalrun.cli.main import cli as evalrun_cli
from evalrun.probes.folder import read_probe_run
from tests.support import probe_targets

LIMIT = 24


@pytest.fixture(scope="session")
def naive_run(cmrc_release, tmp_path_factory):
    return evalrun.probe("cmrc@v1", target=probe_targets.generate, workspace=cmrc_release, limit=LIMIT, no_judge=True,
                         out=tmp_path_factory.mktemp("naive") / "probe")


@pytest.fixture(scope="session")
def careful_run(cmrc_release, tmp_path_factory):
    return evalrun.probe("cmrc@v1", target=probe_targets.careful, workspace=cmrc_release, limit=LIMIT, no_judge=True,
                         out=tmp_path_factory.mktemp("careful") / "probe")


def _mean(run, name):
    metric = run.summary.metric(name)
    assert metric is not None and metric.summary.n > 0, (name, [m.name for m in run.summary.metrics])
    return metric.summary.mean


def _paired(run, name):
    return next(p for p in run.summary.paired if p.name == name)


def test_every_probe_runs_on_the_chinese_corpus_with_the_planted_context(naive_run):
    summary = naive_run.summary
    assert summary.mode == "oracle_context" and summary.not_run == {}
    assert summary.items == LIMIT
    assert set(summary.variants) == {"clean", "noise", "negative", "counterfactual", "injection", "rewrite"}
    assert summary.variants["injection"] == 4 * LIMIT     # every template, every item
    assert summary.errors == {}


def test_a_naive_system_is_caught_by_every_probe(naive_run):
    run = naive_run
    assert _mean(run, "clean/accuracy") >= 0.9        # the first chunk is the gold: it holds the answer
    # lost in the middle: the gold anywhere but first is missed
    assert _mean(run, "noise/accuracy@last") <= 0.5 < _mean(run, "noise/accuracy@first")
    assert _paired(run, "noise/accuracy@0.6").difference < 0 and _paired(run, "noise/accuracy@0.6").p_value < 0.05
    assert [p.x for p in run.summary.curves["by_rate"]] == ["0", "0.2", "0.4", "0.6", "0.8"]
    assert _mean(run, "negative/declined") == 0.0      # it answers from hard negatives
    assert _mean(run, "counterfactual/followed") <= 0.2  # its memory of the KB wins over the changed chunk
    assert _mean(run, "injection/success") >= 0.5      # it obeys planted instructions
    assert _mean(run, "injection/success@reveal_canary") == 1.0
    assert _mean(run, "rewrite/consistent") <= 0.2     # it knows the questions word for word only
    failures = {f.probe for f in run.summary.failures}
    assert failures == {"noise", "negative", "counterfactual", "injection", "rewrite"}
    canary = next(f for f in run.summary.failures if f.variant_id.startswith("injection:") and "canary" in f.what)
    assert canary.planted and canary.answer and canary.what.split(": ")[-1] in canary.answer


def test_a_careful_system_passes_every_probe(careful_run):
    run = careful_run
    assert _mean(run, "clean/accuracy") == 1.0
    for rate in ("0", "0.2", "0.4", "0.6", "0.8"):
        assert _mean(run, f"noise/accuracy@{rate}") == 1.0
    assert _paired(run, "noise/accuracy@0.6").difference == 0.0
    assert _mean(run, "negative/declined") == 1.0
    assert _mean(run, "counterfactual/followed") >= 0.9
    assert _mean(run, "injection/success") == 0.0
    assert _mean(run, "rewrite/consistent") >= 0.9
    assert not [f for f in run.summary.failures if f.probe in ("negative", "injection")]


def test_the_variants_are_the_same_from_the_same_seed_and_differ_from_another(cmrc_release, naive_run, tmp_path):
    again = evalrun.probe("cmrc@v1", target=probe_targets.generate, workspace=cmrc_release, limit=LIMIT, no_judge=True,
                          probes="noise,injection", out=tmp_path / "again")
    first = {v.variant_id: v for v in read_probe_run(naive_run.folder).variants}
    for variant in again.variants:
        assert first[variant.variant_id] == variant
    other = evalrun.probe("cmrc@v1", target=probe_targets.generate, workspace=cmrc_release, limit=LIMIT, no_judge=True,
                          probes="injection", seed=7, out=tmp_path / "other")
    canaries = {c.canary for v in other.variants for c in v.context if c.canary}
    assert canaries and canaries.isdisjoint({c.canary for v in first.values() for c in v.context if c.canary})


def _hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and "probe" not in p.parts}


def test_planted_texts_never_reach_the_release_or_the_kb(cmrc_release, tmp_path):
    before = {name: _hashes(cmrc_release.root / name) for name in ("releases", "kb", "datasets")}
    run = evalrun.probe("cmrc@v1", target=probe_targets.careful, workspace=cmrc_release, limit=6, no_judge=True,
                        probes="counterfactual,injection", out=tmp_path / "probe")
    planted = [c for v in run.variants for c in v.context if c.role in ("counterfactual", "injection")]
    assert planted and all(c.chunk_id.startswith("probe:") for c in planted)
    for name, hashes in before.items():
        assert _hashes(cmrc_release.root / name) == hashes, name
    canaries = [c.canary for c in planted if c.canary]
    changed = [c.text for c in planted if c.role == "counterfactual"]
    for path in (cmrc_release.root / "releases").rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            assert not any(token in text for token in canaries + changed), path
    evalrun_ok = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["verify", "cmrc@v1", "--workspace", str(cmrc_release.root)])
    assert evalrun_ok.exit_code == 0, evalrun_ok.stderr


def answer_alone(question: str) -> dict:
    """An end-to-end system: it retrieves nothing it can show, and answers every question with a fixed fact."""
    return {"candidates": [], "answer": "答案是 42。"}


def test_an_end_to_end_target_runs_negative_and_rewrite_and_is_told_what_it_cannot(cmrc_release, tmp_path):
    run = evalrun.probe("cmrc@v1", target=answer_alone, workspace=cmrc_release, limit=8, no_judge=True,
                        out=tmp_path / "e2e")
    summary = run.summary
    assert summary.mode == "end_to_end"
    assert set(summary.not_run) == {"noise", "counterfactual", "injection"}
    assert all("generate(question, context)" in why for why in summary.not_run.values())
    absent = [v for v in run.variants if v.item_id.startswith("absent:")]
    assert absent and all(v.probe == "negative" and not v.context for v in absent)
    assert _mean(run, "negative/declined") == 0.0     # it answers questions about what the KB does not hold
    assert summary.metric("rewrite/consistent") is not None
    assert all(not v.context for v in run.variants)   # nothing planted end to end


def test_the_command_line_names_a_bad_probe_and_a_bad_rate_in_one_line(cmrc_release, tmp_path):
    runner = CliRunner(mix_stderr=False)
    for options, wanted in ((["--probes", "noise,nois"], "unknown probe 'nois'"),
                            (["--rates", "0,0.3"], "noise rate 0.3 of a context of 5 chunks")):
        result = runner.invoke(evalrun_cli, ["probe", "--dataset", "cmrc@v1", "--target",
                                             "tests.support.probe_targets:generate", "--out", str(tmp_path / "x"),
                                             "--workspace", str(cmrc_release.root), *options])
        assert result.exit_code == 2, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and wanted in result.stderr
        assert not (tmp_path / "x").exists()


def test_the_command_line_probes_and_prints_the_verdicts(cmrc_release, tmp_path):
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
        "probe", "--dataset", "cmrc@v1", "--target", "tests.support.probe_targets:generate", "--limit", "4",
        "--probes", "injection,negative", "--no-judge", "--out", str(tmp_path / "cli"), "--workspace", str(cmrc_release.root)])
    assert result.exit_code == 0, (result.stderr, result.exception)
    assert "injection/success" in result.stdout and "ATTACK" not in result.stderr
    assert "attacks succeeded on" in result.stdout
    summary = json.loads((tmp_path / "cli" / "probe_summary.json").read_text(encoding="utf-8"))
    assert summary["variants"]["injection"] == 16
