"""What a careless user meets: each mistake is one line naming what to do (exit 2), nothing written."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from curate.errors import InputError
from evalrun.cli.main import cli
from evalrun.records import RunSettings
from evalrun.review.calibrate import thresholds
from evalrun.runner import run


def _evalrun(workspace, *args):
    return CliRunner(mix_stderr=False).invoke(cli, ["--workspace", str(workspace.root), *map(str, args)])


def test_a_run_without_a_judge_has_nothing_to_review_and_nothing_pushed_has_nothing_to_pull(released, tmp_path):
    workspace = released.workspace
    folder = run(workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "run",
                 settings=RunSettings(no_judge=True))
    pushed = _evalrun(workspace, "review", "push", folder)
    assert pushed.exit_code == 2
    assert pushed.stderr.strip().endswith("no judge scored this run (the summary names none), so there is no verdict "
                                          "to review; score it with a judge first")
    assert len(pushed.stderr.strip().splitlines()) == 1 and not (folder / "review.json").exists()
    pulled = _evalrun(workspace, "review", "pull", folder)
    assert pulled.exit_code == 2 and "nothing was pushed for review" in pulled.stderr
    calibrated = _evalrun(workspace, "calibrate", folder)
    assert calibrated.exit_code == 2 and "no review was pushed" in calibrated.stderr


@pytest.mark.parametrize(("line", "said"), [("min_kappa = 2", "must be a number from -1 to 1, got 2"),
                                            ('min_kappa = "high"', "must be a number from -1 to 1, got 'high'"),
                                            ("min_verdicts = 0", "must be a whole number of at least 1, got 0")])
def test_a_bad_review_threshold_names_curate_toml_its_line_and_field(workspace, line, said):
    with open(workspace.config_path, "a", encoding="utf-8") as config:
        config.write(f"\n[review]\n{line}\n")
    with pytest.raises(InputError) as caught:
        thresholds(workspace)
    text = str(caught.value)
    assert said in text and "curate.toml" in text and "review." in text
    assert caught.value.line == len(workspace.config_path.read_text(encoding="utf-8").splitlines())
