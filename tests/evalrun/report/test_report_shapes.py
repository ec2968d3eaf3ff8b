"""`evalrun report` on runs of every shape a newcomer's first run may have: one bar per chart, no
failure at all, failures all of one kind, every metric unscored. Each page is written (exit 0) and
says what it has; a bug is one line (exit 3)."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from curate import DatasetStore
from evalrun.cli.main import cli as evalrun_cli
from evalrun.records import RunSettings, scored_run
from evalrun.runner import run
from tests.evalrun.report import systems
from tests.support import targets


def _report(workspace, folder, out, code=0):
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["report", str(folder), "--out", str(out),
                                                              "--workspace", str(workspace.root)])
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result


def _page(out) -> str:
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    for section in ("headline", "funnel", "subsets", "attribution", "unscored", "provenance"):
        assert f'<section id="{section}">' in html
    return html


def _section(html: str, name: str) -> str:
    start = html.index(f'<section id="{name}">')
    return html[start:html.index("</section>", start)]


def _script(released, answering: bool, gold_in_context: bool) -> None:
    """Fill systems.SCRIPT: each answerable item retrieves its gold chunks (or only the distractor) and
    answers with its reference answer (or refuses); the unanswerable one refuses."""
    systems.SCRIPT.clear()
    for item in DatasetStore(released.workspace).items("faq"):
        gold = targets.GOLD[item.question]
        chunks = gold if gold_in_context else [targets.DISTRACTOR]
        if not item.answerable:
            systems.SCRIPT[item.question] = {"candidates": [targets.DISTRACTOR], "context": [], "refused": True}
        else:
            systems.SCRIPT[item.question] = {"candidates": chunks, "context": chunks,
                                             "answer": item.reference_answer if answering else None,
                                             "refused": not answering}


@pytest.mark.parametrize("ks", [[5], [1, 5]])
def test_a_run_without_failures_reports(released, tmp_path, ks):
    _script(released, answering=True, gold_in_context=True)
    folder = run(released.workspace, ref="faq@v1", target="tests.evalrun.report.systems:scripted",
                 out=tmp_path / "clean", settings=RunSettings(ks=ks))
    assert scored_run(folder).summary.attribution == {}
    _report(released.workspace, folder, tmp_path / "r.html")
    html = _page(tmp_path / "r.html")
    assert "No item has a failure attribution." in _section(html, "attribution")
    assert "<svg" in _section(html, "funnel")


def test_failures_all_of_one_kind_are_one_bar(released, tmp_path):
    _script(released, answering=True, gold_in_context=False)
    folder = run(released.workspace, ref="faq@v1", target="tests.evalrun.report.systems:scripted",
                 out=tmp_path / "missed", settings=RunSettings(ks=[1]))
    assert scored_run(folder).summary.attribution == {"retrieval_miss": 4}
    result = _report(released.workspace, folder, tmp_path / "r.html")
    assert result.stdout.startswith("wrote ")
    attribution = _section(_page(tmp_path / "r.html"), "attribution")
    assert "<svg" in attribution and "retrieval_miss" in attribution


def test_a_run_with_every_metric_unscored_reports(released, tmp_path):
    folder = run(released.workspace, ref="faq@v1", target="tests.evalrun.report.systems:broken",
                 out=tmp_path / "broken", settings=RunSettings(exclude_errors=True))
    overall = scored_run(folder).summary.metrics["all"]
    assert all(summary.mean is None for name, summary in overall.items() if name != "success")
    _report(released.workspace, folder, tmp_path / "r.html")
    html = _page(tmp_path / "r.html")
    assert '<div class="value unscored">unscored</div>' in html
    unscored = _section(html, "unscored")
    assert "target failed, left out (--exclude-errors): target raised RuntimeError: index offline" in unscored
    assert re.search(r"target_failed", _section(html, "attribution"))


def test_a_bug_in_the_report_is_one_line_with_the_hint(released, tmp_path, monkeypatch):
    import evalrun.cli.report as report

    def boom(*args, **kwargs):
        raise ValueError("bottom cannot be >= top")
    monkeypatch.setattr(report, "write_report", boom)
    folder = tmp_path / "any"
    folder.mkdir()
    result = _report(released.workspace, folder, tmp_path / "r.html", code=3)
    assert result.stderr.splitlines() == ["internal error: ValueError: bottom cannot be >= top; run with --debug "
                                          "(or CURATE_DEBUG=1) for the traceback"]
    assert not (tmp_path / "r.html").exists()


def test_traces_without_candidates_are_in_no_step_of_the_funnel(released, tmp_path):
    _script(released, answering=True, gold_in_context=True)
    for trace in systems.SCRIPT.values():
        del trace["candidates"]
    folder = run(released.workspace, ref="faq@v1", target="tests.evalrun.report.systems:scripted",
                 out=tmp_path / "context-only", settings=RunSettings(ks=[5]))
    _report(released.workspace, folder, tmp_path / "r.html")
    funnel = _section(_page(tmp_path / "r.html"), "funnel")
    assert "4 answerable items are in no step: their traces report no candidates" in funnel


@pytest.mark.browser
def test_an_item_without_candidates_opens_in_chromium(released, tmp_path):
    from tests.evalrun.report.test_browser import offline_page
    from tests.support.browser import require_browser
    require_browser()
    _script(released, answering=True, gold_in_context=True)
    for trace in systems.SCRIPT.values():
        del trace["candidates"]
    folder = run(released.workspace, ref="faq@v1", target="tests.evalrun.report.systems:scripted",
                 out=tmp_path / "context-only", settings=RunSettings(ks=[5]))
    out = tmp_path / "r.html"
    _report(released.workspace, folder, out)
    with offline_page(out.as_uri()) as (page, console, refused):
        page.goto(out.as_uri())
        page.wait_for_selector("body[data-ready='1']")
        page.locator("tr.row[data-item='t-2']").click()
        details = page.locator("tr.details").inner_text()
        assert "The trace does not report its candidates." in details and "Context sent to the model" in details
        assert "Cut: candidates not in the context" not in details
        assert console.errors == [] and refused == []


def test_without_out_the_report_is_written_in_the_run_folder(released, tmp_path):
    _script(released, answering=True, gold_in_context=True)
    folder = run(released.workspace, ref="faq@v1", target="tests.evalrun.report.systems:scripted",
                 out=tmp_path / "clean")
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["report", str(folder), "--workspace",
                                                              str(released.workspace.root)])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert result.stdout.startswith(f"wrote {folder / 'report.html'} (")
    assert "<svg" in _section(_page(folder / "report.html"), "funnel")


HOSTILE = "</td></table><script>alert(1)</script><b onclick=x>访问令牌</b>"


def _versus(released, tmp_path, base_script: dict[str, dict], new_script: dict[str, dict], fail: set[str] = ()):
    """Return (NEW, BASE) run folders of faq@v1: BASE answers `base_script` (failing on the questions
    `fail`), NEW `new_script` (question -> trace)."""
    systems.SCRIPT.clear()
    systems.SCRIPT.update(base_script)
    systems.FAIL.clear()
    systems.FAIL.update(fail)
    base = run(released.workspace, ref="faq@v1", target="tests.evalrun.report.systems:flaky", out=tmp_path / "base",
               settings=RunSettings(ks=[1, 5]))
    systems.FAIL.clear()
    systems.SCRIPT.clear()
    systems.SCRIPT.update(new_script)
    new = run(released.workspace, ref="faq@v1", target="tests.evalrun.report.systems:scripted", out=tmp_path / "new",
              settings=RunSettings(ks=[1, 5]))
    return new, base


def _scripts(released) -> tuple[dict, dict, dict]:
    """Return the faq items by id, and two scripts: BASE with the gold in every context, NEW with it in none;
    both answer with markup and Chinese."""
    items = {item.id: item for item in DatasetStore(released.workspace).items("faq")}
    good, bad = {}, {}
    for item in items.values():
        gold = targets.GOLD[item.question]
        good[item.question] = {"candidates": gold, "context": gold, "answer": f"BASE {HOSTILE}"}
        bad[item.question] = {"candidates": [targets.DISTRACTOR], "context": [targets.DISTRACTOR],
                              "answer": f"NEW {HOSTILE}"}
    return items, good, bad


def test_a_base_that_failed_on_an_item_and_lacks_another_reports(released, tmp_path):
    from tests.evalrun.report.test_report import unpacked
    items, good, bad = _scripts(released)
    new, base = _versus(released, tmp_path, good, bad, fail={items["t-1"].question})
    # BASE never scored t-4: its line taken out of the scores and traces
    for name in ("scores.jsonl", "traces.jsonl"):
        lines = (base / name).read_text(encoding="utf-8").splitlines(keepends=True)
        (base / name).write_text("".join(line for line in lines if '"t-4"' not in line), encoding="utf-8")
    out = tmp_path / "r.html"
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["report", str(new), "--vs", str(base), "--out", str(out),
                                                              "--workspace", str(released.workspace.root)])
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    html = _page(out)
    assert "0 items only BASE scored, 1 only NEW: in no row." in _section(html, "comparison")
    by_id = {e["id"]: e for e in unpacked(html)["items"]}
    assert "b" not in by_id["t-4"]                                     # the page says BASE has no scores for it
    assert by_id["t-1"]["b"]["fa"].startswith("target raised RuntimeError: index offline")
    assert "o" not in by_id["t-1"]["b"] and "x" not in by_id["t-1"]["b"]
    assert by_id["t-2"]["b"]["o"] == f"BASE {HOSTILE}" and by_id["t-2"]["o"] == f"NEW {HOSTILE}"
    assert "<script>alert(1)" not in html and "<b onclick" not in html and html.count("<script") == 2


def test_no_primary_row_no_verdict_and_a_base_of_none_report(released, tmp_path):
    from evalrun.compare.verdict import verdict_of
    from evalrun.report.gather import read_inputs
    from evalrun.report.render import render
    items, good, bad = _scripts(released)
    new, base = _versus(released, tmp_path, good, bad)
    inputs = read_inputs(new, released.workspace, base)
    comparison = inputs.comparison
    # a primary row whose BASE has no mean (nothing to draw), then no primary row at all
    row = next(r for r in comparison.rows if r.primary)
    row.base = row.difference = row.ci95 = None
    page, _ = render(inputs)
    assert f"Not drawn: {row.metric}: no difference (no pair compared)" in page
    assert re.search(rf'data-metric="{re.escape(row.metric)}"><div class="label">[^<]*</div><div class="value">— →', page)
    for r in comparison.rows:
        r.primary, r.p_adjusted = False, None
    comparison.verdict = verdict_of(comparison)
    assert comparison.verdict.outcome == "no verdict"
    page, _ = render(inputs)
    verdict = page[page.index('<section id="verdict"'):page.index('<section id="notices">')]
    assert '<span class="outcome-badge none">no verdict</span>' in verdict
    assert "No primary metric could be compared: no card to show." in verdict
    assert "No primary row: no verdict." in page and '<p class="notice" id="forest">No primary row to draw.</p>' in page
    comparison.verdict = None
    page, _ = render(inputs)
    assert "No verdict was computed for this comparison" in page


def test_questions_with_markup_are_text_in_the_flips_table(released, tmp_path):
    from evalrun.report.gather import read_inputs
    from evalrun.report.render import render
    items, good, bad = _scripts(released)
    new, base = _versus(released, tmp_path, good, bad)
    inputs = read_inputs(new, released.workspace, base)
    for item in inputs.items:
        item.question = HOSTILE
    page, _ = render(inputs)
    flips = _section(page, "comparison")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;b onclick=x&gt;访问令牌&lt;/b&gt;" in flips
    assert page.count("<script") == 2 and "<b onclick" not in page
