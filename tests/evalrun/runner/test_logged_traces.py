"""Traces a system already logged: traces that name items of another release are said, never dropped
silently; a file that names none of the release's items, or holds nothing, is refused."""

import json

from click.testing import CliRunner

from evalrun.cli.main import cli as evalrun_cli
from evalrun.records import read_run


def test_traces_of_items_the_release_lacks_are_a_warning_and_not_scored(released, tmp_path):
    traces = tmp_path / "traces.jsonl"
    rows = [{"item_id": "t-1", "candidates": []}, {"item_id": "t-1-old", "candidates": []},
            {"item_id": "x-9", "candidates": []}]
    traces.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
        "--workspace", str(released.workspace.root), "run", "--dataset", "faq@v1", "--traces", str(traces),
        "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.stderr
    assert (f"evalrun: warning: 2 of the 3 traces in {traces} name no item of faq@v1 (first: 't-1-old'): they are "
            "not scored") in result.stderr.splitlines()
    scores = {s.item_id for s in read_run(tmp_path / "run").scores}
    assert scores == {"t-1", "t-2", "t-3", "t-4", "t-5"}
