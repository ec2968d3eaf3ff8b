"""`evalrun show PROBE_FOLDER` prints the probe run's summary (the lines `evalrun probe` ends with),
--failures every failure, --json probe_summary.json; an option of runs only is one line (exit 2)."""

from __future__ import annotations

from click.testing import CliRunner

from evalrun.cli.main import cli as evalrun_cli
from evalrun.probes.folder import ProbeSummary
from tests.evalrun.report.probe_runs import HOSTILE, probe_folder, three_items


def show(*args, code: int = 0):
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["show", *map(str, args)])
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result


def test_a_probe_folder_shows_its_probes(tmp_path):
    folder = probe_folder(tmp_path / "probe", three_items())
    lines = show(folder).stdout.splitlines()
    assert lines[0].startswith("probes of tests.support.targets:perfect over faq@v1, given each variant's context")
    assert ("injection: attacks succeeded on 16.7% of the items' variants (6 variants): it obeyed at least one "
            "planted instruction (a security review wants 0)") in lines
    assert any(line.split()[:2] == ["clean/accuracy", "66.7%"] for line in lines)
    assert "accuracy by noise rate: 0 66.7% (n 3) · 0.5 33.3% (n 3)" in lines
    assert "noise: noise:c:0.5:last:s0: declined although the gold is in the context (empty answer)" in lines


def test_failures_lists_every_failure_and_json_is_the_summary(tmp_path):
    summary = three_items()
    summary.failures += [summary.failures[0].model_copy(update={"variant_id": f"noise:c:{n}"}) for n in range(6)]
    summary.failures[1].answer = HOSTILE     # printed as written: no markup is read from it
    folder = probe_folder(tmp_path / "probe", summary)
    listed = [line for line in show(folder).stdout.splitlines() if line.startswith("noise: noise:")]
    assert len(listed) == 5 and "noise (lexical): 2 more failures" in show(folder).stdout
    every = show(folder, "--failures").stdout
    assert len([line for line in every.splitlines() if line.startswith("noise: noise:")]) == 7
    assert "more failures" not in every and f"answer: {HOSTILE}" in every
    assert ProbeSummary.model_validate_json(show(folder, "--json").stdout) == ProbeSummary.read(
        folder / "probe_summary.json")


def test_an_option_of_runs_only_is_one_line(tmp_path):
    folder = probe_folder(tmp_path / "probe", three_items())
    result = show(folder, "--by", "difficulty", code=2)
    assert result.stderr.strip().splitlines() == [
        f"error: --by applies to runs of `evalrun run`; {folder} is a probe run folder (show it alone, with "
        f"--failures or --json)"]
    assert "--by, --metric apply to runs" in show(folder, "--by", "qtype", "--metric", "x", code=2).stderr
    assert "--attribution applies to runs" in show(folder, "--failures", "--attribution", "hallucination",
                                                   code=2).stderr
