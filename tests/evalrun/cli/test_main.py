"""evalrun's command line has curate's shape: one-line errors (exit 2), a bug is one line (exit 3),
--debug shows the traceback."""

from click.testing import CliRunner

from evalrun.cli.main import cli as evalrun_cli


def _boom(*args, **kwargs):
    raise ZeroDivisionError("a bug in the library")


def test_evalrun_has_the_same_shape(tmp_path, monkeypatch):
    not_a_run = tmp_path / "somewhere"
    not_a_run.mkdir()
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["show", str(not_a_run)])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {not_a_run} is not a run folder (no manifest.json); `evalrun run` writes one"
    missing = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["show", str(tmp_path / "nothing")])
    assert missing.exit_code == 2 and len(missing.stderr.strip().splitlines()) == 1

    import evalrun.cli.show as show
    monkeypatch.setattr(show, "scored_run", _boom)
    bug = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["show", str(not_a_run)])
    assert bug.exit_code == 3 and bug.stderr.startswith("internal error: ZeroDivisionError")
    debug = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["--debug", "show", str(not_a_run)])
    assert isinstance(debug.exception, ZeroDivisionError)


def test_bad_k_is_one_line(tmp_path):
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["run", "--dataset", "x@v1", "--traces", "t.jsonl",
                                                              "--k", "0,5", "--workspace", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: --k '0,5': give positive whole numbers, e.g. 1,3,5,10"
