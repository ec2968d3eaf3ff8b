"""`evalrun history DIR...`: the runs of one dataset oldest first with their metrics, and --alert (exit 1)
when the latest run is significantly worse than the previous one or a metric got worse N runs in a row."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from curate import InputError
from evalrun.cli.main import cli as evalrun_cli
from evalrun.compare.history import (
    chosen_metrics,
    consecutive_drops,
    find_runs,
    history,
)
from tests.evalrun.compare.test_compare import make_run

HIT = "context/hit_rate@1"


def _run(root, name, day, ones, *, f1=0.5, version="v1", subsets=None, dataset_kb="kb-1"):
    """A run on day `day` of December whose first `ones` of 40 items hit, lexical/f1 `f1` for each."""
    values = {f"i{k:02d}": {HIT: float(k < ones), "lexical/f1": f1} for k in range(40)}
    return make_run(root / name, values, started=f"2026-12-{day:02d}T00:00:00Z", version=version, kb=dataset_kb,
                    target=name, subsets=subsets)


def _history(*args, code=0):
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["history", *map(str, args)])
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result


def test_runs_are_listed_oldest_first_with_their_intervals(tmp_path):
    runs = tmp_path / "runs"
    _run(runs, "b-later", 3, 30, version="v2")
    _run(runs, "a-first", 1, 40)
    found = find_runs([runs])
    assert [r.manifest.target for r in found] == ["a-first", "b-later"]
    assert chosen_metrics(found, ["context/*"]) == [HIT]
    points = history(found, [HIT])
    assert [(p.version, p.summary.mean, p.summary.n) for p in points] == [("v1", 1.0, 40), ("v2", 0.75, 40)]
    assert points[1].summary.ci_method == "wilson"          # 0/1 values on fewer than 100 items
    out = _history(runs, "--metric", HIT).stdout
    assert "2 runs of d on all, oldest first" in out
    assert out.index("a-first") < out.index("b-later")
    with pytest.raises(InputError, match="no metric of these runs matches 'generation/\\*'"):
        chosen_metrics(found, ["generation/*"])


def test_alert_when_the_latest_run_is_significantly_worse_than_the_previous(tmp_path):
    runs = tmp_path / "runs"
    _run(runs, "a", 1, 40)
    _run(runs, "b", 2, 40)
    _history(runs, "--metric", HIT, "--alert", "--workspace", tmp_path / "nowhere")      # no change: exit 0
    _run(runs, "c", 3, 20)                                                               # 20 items lost
    result = _history(runs, "--metric", HIT, "--alert", "--workspace", tmp_path / "nowhere", code=1)
    alerts = [line for line in result.stdout.splitlines() if line.startswith("ALERT")]
    assert len(alerts) == 1
    assert alerts[0].startswith(f"ALERT: {HIT} on all: latest {runs / 'c'} is significantly worse than {runs / 'b'}: "
                                f"1.000 -> 0.500 (-0.500, n 40, p ")


def test_alert_when_a_metric_got_worse_in_n_consecutive_runs_naming_the_subset(tmp_path):
    runs = tmp_path / "runs"
    hard = {"difficulty=hard": [f"i{k:02d}" for k in range(20)]}
    for day, ones in ((1, 20), (2, 19), (3, 18), (4, 17)):   # one item fewer each run: never significant
        _run(runs, f"r{day}", day, ones, subsets=hard)
    found = find_runs([runs])
    assert consecutive_drops(found, [HIT], drops=3) == [
        f"{HIT} on all got worse in 3 consecutive runs: 0.500 -> 0.475 -> 0.450 -> 0.425",
        f"{HIT} on difficulty=hard got worse in 3 consecutive runs: 1.000 -> 0.950 -> 0.900 -> 0.850"]
    assert consecutive_drops(found, [HIT], drops=4) == []             # needs 5 runs
    assert consecutive_drops(found, ["lexical/f1"], drops=3) == []    # unchanged is no drop
    result = _history(runs, "--alert", "--metric", HIT, "--json", "--workspace", tmp_path / "nowhere", code=1)
    assert len(json.loads(result.stdout)["alerts"]) == 2
    _history(runs, "--alert", "--metric", HIT, "--drops", "4", "--workspace", tmp_path / "nowhere")


def test_runs_of_two_datasets_or_no_run_are_one_line(tmp_path):
    runs = tmp_path / "runs"
    _run(runs, "a", 1, 40)
    other = make_run(tmp_path / "elsewhere" / "x", {"i": {HIT: 1.0}})
    manifest = json.loads((other / "manifest.json").read_text())
    (other / "manifest.json").write_text(json.dumps({**manifest, "dataset": "e"}))
    result = _history(runs, tmp_path / "elsewhere", code=2)
    assert result.stderr.strip() == ("error: runs of 2 datasets (d, e): history follows one dataset; give the "
                                     "folders of one")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _history(empty, code=2).stderr.strip() == f"error: no scored run in {empty}"


def test_an_unknown_subset_is_refused_naming_the_closest_and_the_known_ones(tmp_path):
    """An unknown --subset used to print an empty history (and, with --alert, "no alert")."""
    runs = tmp_path / "runs"
    hard = {"difficulty=hard": [f"i{k:02d}" for k in range(20)], "tag=billing": ["i01"]}
    _run(runs, "a", 1, 40, subsets=hard)
    _run(runs, "b", 2, 20, subsets=hard)
    for subset, hint in (("difficulty=Hard", "did you mean 'difficulty=hard'? "),
                         ("dificulty=hard", "did you mean 'difficulty=hard'? "), ("lang=fr", "")):
        for extra in ((), ("--alert", "--workspace", tmp_path / "nowhere")):
            result = _history(runs, "--metric", HIT, "--subset", subset, *extra, code=2)
            assert result.stderr == (f"error: field 'subset': no run here has a subset {subset!r}: {hint}these runs "
                                     "have all, difficulty=hard, tag=billing\n")
    assert "2 runs of d on difficulty=hard" in _history(runs, "--metric", HIT, "--subset", "difficulty=hard").stdout


def _alerts(result) -> list[str]:
    return [line.removeprefix("ALERT: ") for line in result.stdout.splitlines() if line.startswith("ALERT")]


def test_an_unscored_newest_run_is_an_alert_never_looked_past(tmp_path):
    runs = tmp_path / "runs"
    _run(runs, "a", 1, 40)
    _run(runs, "b", 2, 40)
    newest = _run(runs, "c", 3, 10)          # a big loss, but the run was killed before it was scored
    (newest / "summary.json").unlink()
    (newest / "scores.jsonl").unlink()
    result = _history(runs, "--metric", HIT, "--alert", "--workspace", tmp_path / "nowhere", code=1)
    assert _alerts(result) == [f"the newest run {newest} (started 2026-12-03T00:00:00Z) is not scored, so the latest "
                               f"scored run {runs / 'b'} is not the newest: {newest} has not been scored yet (no "
                               f"summary.json): `evalrun run --resume --out {newest}`"]
    assert f"skipped run folder {newest}: " in result.stdout
    # an unscored run of another dataset in the same folder is not this history's newest
    manifest = json.loads((newest / "manifest.json").read_text())
    (newest / "manifest.json").write_text(json.dumps({**manifest, "dataset": "other"}))
    assert "no alert" in _history(runs, "--metric", HIT, "--alert", "--workspace", tmp_path / "nowhere").stdout
    (newest / "manifest.json").write_text(json.dumps(manifest))
    # an unscored run older than the latest scored one is named, not an alert
    (newest / "manifest.json").write_text((newest / "manifest.json").read_text().replace("2026-12-03", "2026-11-03"))
    result = _history(runs, "--metric", HIT, "--alert", "--workspace", tmp_path / "nowhere")
    assert "no alert" in result.stdout and f"skipped run folder {newest}: " in result.stdout


def test_a_run_folder_that_cannot_be_read_is_an_alert(tmp_path):
    runs = tmp_path / "runs"
    _run(runs, "a", 1, 40)
    _run(runs, "b", 2, 40)
    broken = _run(runs, "c", 3, 40)
    (broken / "manifest.json").write_text("{ damaged")
    result = _history(runs, "--alert", "--json", "--workspace", tmp_path / "nowhere", code=1)
    data = json.loads(result.stdout)
    assert data["skipped"][0]["folder"] == str(broken) and data["skipped"][0]["started_at"] is None
    assert len(data["alerts"]) == 1
    assert data["alerts"][0].startswith(f"run folder {broken} cannot be read, so it may be the newest run: "
                                        f"{broken / 'manifest.json'}")


def test_a_metric_the_latest_run_could_not_score_is_an_alert(tmp_path):
    runs = tmp_path / "runs"
    _run(runs, "a", 1, 40)
    values = {f"i{k:02d}": {HIT: 1.0} for k in range(40)}
    judge_down = {f"i{k:02d}": {"lexical/f1": "judge endpoint not reachable"} for k in range(40)}
    latest = make_run(runs / "b", values, unscored=judge_down, started="2026-12-02T00:00:00Z", target="b")
    result = _history(runs, "--alert", "--metric", "lexical/f1", "--workspace", tmp_path / "nowhere", code=1)
    assert _alerts(result) == [f"lexical/f1 on all: the latest run {latest} scored no item of it (40 judge endpoint "
                               f"not reachable)"]
    gone = make_run(runs / "c", values, started="2026-12-03T00:00:00Z", target="c")  # lexical/f1 is not in it at all
    result = _history(runs, "--alert", "--workspace", tmp_path / "nowhere", code=1)
    assert _alerts(result) == [f"lexical/f1: the latest run {gone} does not have it"]
