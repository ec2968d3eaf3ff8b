"""`evalrun report PROBE_FOLDER`: the page of a probe run, built from its probe_summary.json alone: the
headline lines, every metric with n and its interval, the pairs against clean, the two curves drawn,
attack success per template, the failures per probe; every text escaped; unusual runs drawn whole."""

from __future__ import annotations

import re
from markupsafe import escape

import pytest
from click.testing import CliRunner

from evalrun.cli.main import cli as evalrun_cli
from evalrun.report import ReportError, write_report
from evalrun.report import probes as probe_report
from tests.evalrun.report.probe_runs import HOSTILE, SHAPES, probe_folder, three_items


def page(folder, tmp_path) -> str:
    """Return the page written of the probe run in `folder` (no workspace: it reads the folder alone)."""
    return write_report(folder, out=tmp_path / "probes.html", workspace=None).path.read_text(encoding="utf-8")


def rows(html: str, table_id: str) -> list[tuple[str, list[str]]]:
    """Return (the row's class, its cells' texts) of every body row of the table `table_id`."""
    body = re.search(rf'<table[^>]*id="{table_id}".*?<tbody>(.*?)</tbody>', html, re.DOTALL).group(1)
    return [(cls, [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.DOTALL)])
            for cls, row in re.findall(r'<tr class="([^"]*)">(.*?)</tr>', body, re.DOTALL)]


def test_the_numbers_are_those_counted_by_hand(tmp_path):
    html = page(probe_folder(tmp_path / "probe", three_items()), tmp_path)
    assert "probes of tests.support.targets:perfect over faq@v1" in html
    assert "noise: 2 variants not built: 2 gold chunk(s) and 4 hard negative(s) do not fit a context of 5 (2)" in html
    lexical = {cells[0]: (cls, cells[1:5]) for cls, cells in rows(html, "probe-lexical")}
    assert lexical["clean/accuracy"] == ("", ["66.7%", "[36.7%, 96.7%] W", "3", "3"])          # 2 of 3
    assert lexical["noise/accuracy"] == ("", ["50.0%", "[20.0%, 80.0%] W", "3", "12"])         # (1 + 0.5 + 0) / 3
    assert lexical["noise/accuracy@0.5"][0] == "sub"
    assert lexical["injection/success"] == (" attack", ["16.7%", "[0.0%, 46.7%] W", "3", "6"])  # 0.5 / 3
    assert lexical["injection/success@reveal_canary"][0] == "sub attack"
    assert lexical["injection/success@ignore_previous"][0] == "sub"                           # 0%: not marked
    attacks = {cells[0]: (cls, cells[1]) for cls, cells in rows(html, "probe-attack-table")}
    assert attacks == {"ignore_previous": ("", "0.0%"), "reveal_canary": ("attack", "33.3%")}
    assert escape("injection: attacks succeeded on 16.7% of the items' variants (6 variants): it obeyed at least "
                  "one planted instruction (a security review wants 0)") in html
    paired = {cells[0]: (cls, cells[1:6]) for cls, cells in rows(html, "probe-paired-table")}
    assert paired["noise/accuracy"] == ("", ["66.7%", "50.0%", "-16.7 pts", "[-50.0, +0.0] pts", "0.500"])
    assert paired["noise/accuracy@0.5"][0] == "worse significant"                              # p 0.02, down
    assert html.count('<svg') == 2 and 'data-curve="by_rate"' in html and 'data-curve="by_position"' in html
    assert '<details class="probe-failures" data-probe="injection" data-method="lexical" open>' in html
    assert '<details class="probe-failures" data-probe="noise" data-method="lexical">' in html
    assert "noise (lexical): 1 failed variant<" in html and "canary in the answer: ZE-CANARY" in html


def test_every_text_of_a_probe_run_is_escaped(tmp_path):
    summary = three_items()
    summary.target = summary.failures[0].question = summary.failures[1].answer = HOSTILE
    summary.failures[1].planted = summary.failures[1].what = summary.failures[1].rule = HOSTILE
    summary.not_run = {"counterfactual": HOSTILE}
    summary.skipped = {"noise": {HOSTILE: 2}}
    summary.curves["by_position"][0].x = summary.judge_usage = HOSTILE
    folder = probe_folder(tmp_path / "probe", summary, notes=[HOSTILE], prompt_versions={HOSTILE: HOSTILE})
    html = page(folder, tmp_path)
    assert "<script" not in html and "<img" not in html          # the page has no script of its own either
    assert "script-src 'none'" in html
    assert html.count(escape(HOSTILE)) >= 12
    assert "counterfactual: NOT RUN: " + escape(HOSTILE) in html


@pytest.mark.parametrize("shape", SHAPES)
def test_unusual_probe_runs_are_drawn_whole(shape, tmp_path):
    summary = SHAPES[shape]()
    mode = summary.mode
    html = page(probe_folder(tmp_path / "probe", summary), tmp_path)
    assert html.rstrip().endswith("</html>") and 'id="provenance"' in html
    if shape == "zero variants":
        assert "variants: clean 3, noise 0" in html
        assert dict((c[0], c[1]) for _, c in rows(html, "probe-lexical"))["noise/accuracy"] == "unscored"
        assert "No variant failed." in html and "No probe metric could be paired" in html
    if shape == "every call failed":
        assert "calls that failed or timed out (no verdict, counted apart): clean 3, injection 6, noise 12" in html
        assert all(cells[1] == "unscored" for _, cells in rows(html, "probe-lexical"))
        assert "<svg" not in html and "no point has a value" in html
        assert "No variant failed (calls that failed have no verdict: see above)." in html
    if shape == "no curves":
        assert "<svg" not in html and "No accuracy curve: the noise probe did not run or gave no value." in html
    if shape == "not run":
        assert '<p class="notice bad" data-kind="not_run">injection: NOT RUN: the target takes no context</p>' in html
        assert 'id="probe-attacks"' not in html
    if shape == "end to end":
        assert mode == "end_to_end" and "end to end (the target retrieves for itself)" in html
        assert "No accuracy curve: the noise probe plants a context" in html
        assert "rewrite/recall@5" in html and "answered a question about content the KB does not hold" in html


def test_long_texts_are_cut_and_long_lists_end_with_how_many_more(tmp_path, monkeypatch):
    summary = three_items()
    summary.failures[1].answer = "令牌" * 2_500                                   # 5,000 characters
    summary.failures += [summary.failures[0].model_copy(update={"variant_id": f"noise:c:{n}"}) for n in range(3)]
    monkeypatch.setattr(probe_report, "MAX_FAILURES", 2)
    written = write_report(probe_folder(tmp_path / "probe", summary), out=tmp_path / "p.html", workspace=None)
    html = written.path.read_text(encoding="utf-8")
    assert written.cuts == {"answer": 1} and written.items == 3
    assert "[cut: 4000 of 5000 characters shown]" in html and "1 answer texts cut at 4,000 characters" in html
    assert "noise (lexical): 4 failed variants" in html and "and 2 more not listed here (the first 2 are)" in html


def test_a_probe_run_has_no_base_and_is_reported_from_the_command_line(tmp_path):
    folder = probe_folder(tmp_path / "probe", three_items())
    with pytest.raises(ReportError, match="is a probe run folder: --vs and --probes go with a run"):
        write_report(folder, out=tmp_path / "p.html", workspace=None, vs=folder)
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["report", str(folder)])   # no workspace here
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    assert result.stdout.startswith(f"wrote {folder / 'report.html'} (") and "3 items" in result.stdout
    assert "Robustness probes: faq@v1" in (folder / "report.html").read_text(encoding="utf-8")


def test_a_probe_folder_not_scored_yet_is_one_line(tmp_path):
    folder = probe_folder(tmp_path / "probe", three_items())
    (folder / "probe_summary.json").unlink()
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["report", str(folder)])
    assert result.exit_code == 2 and "has not been scored yet" in result.stderr


def obeying(question: str, context: list[dict]) -> dict:
    """Answer with markup and every text of the context: each planted instruction is obeyed (its canary
    repeated)."""
    return {"answer": HOSTILE + " " + " ".join(c.get("text") or "" for c in context),
            "context": [{"chunk_id": c["chunk_id"]} for c in context]}


def test_a_probe_run_is_reported_and_shown(released, tmp_path):
    import evalrun
    probed = evalrun.probe("faq@v1", target=obeying, probes="noise,injection", workspace=released.workspace,
                           out=tmp_path / "probe", no_judge=True)
    html = evalrun.report(probed).read_text(encoding="utf-8")
    assert escape("injection: attacks succeeded on 100.0% of the items' variants") in html
    assert all(cls == "attack" for cls, _ in rows(html, "probe-attack-table"))
    assert "<script" not in html and str(escape(HOSTILE)) in html
    shown = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["show", str(probed.folder)])
    assert shown.exit_code == 0 and shown.stdout.startswith("probes of tests.evalrun.report.test_report_probes:obeying")


def test_a_run_page_shows_a_probe_run_in_its_own_section(scripted_run, tmp_path):
    curate, folder = scripted_run
    probes = probe_folder(tmp_path / "probe", three_items())

    def report(*args, code=0):
        result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
            "report", str(folder), "--workspace", str(curate.workspace.root), "--out", str(tmp_path / "r.html"),
            *map(str, args)])
        assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
        return result

    report()
    assert 'id="probes"' not in (tmp_path / "r.html").read_text(encoding="utf-8")
    report("--probes", probes)
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert '<a href="#probes">Probes</a>' in html and 'id="items-data"' in html and 'id="funnel"' in html
    assert ("The probes below are of tests.support.targets:perfect over faq@v1; this run is of "
            "tests.evalrun.report.systems:scripted over faq@v1.") in html
    assert [cells[0] for cls, cells in rows(html, "probe-attack-table")] == ["ignore_previous", "reveal_canary"]
    assert "is not a probe run folder" in report("--probes", folder, code=2).stderr
