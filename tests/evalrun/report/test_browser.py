"""The report opens in headless Chromium from disk: no request leaves it, no console error, the
headline, funnel and item table are there, a filter filters, an item opens with its gold candidates
marked, Chinese is drawn with a CJK font, and the screenshot is not blank."""

from __future__ import annotations

import contextlib

import pytest

from tests.support.browser import ArgillaUI, blank_screenshot, chromium_page, require_browser

pytestmark = pytest.mark.browser


@contextlib.contextmanager
def offline_page(url: str):
    """Yield (a page where every request but `url` itself is refused and recorded, its console, the refused)."""
    refused: list[str] = []

    def route(request_route):
        if request_route.request.url == url:
            request_route.continue_()
        else:
            refused.append(request_route.request.url)
            request_route.abort()

    with chromium_page(1300, 900, routes=[("**/*", route)]) as (page, console):
        yield page, console, refused


def test_the_report_works_offline_in_chromium(scripted_run, tmp_path):
    require_browser()
    from evalrun.report import write_report
    curate, folder = scripted_run
    out = tmp_path / "report.html"
    write_report(folder, out=out, workspace=curate.workspace)
    url = out.as_uri()
    with offline_page(url) as (page, console, refused):
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']")
        assert "recall@5" in page.locator("#headline").inner_text()
        assert page.locator("#funnel svg.chart").count() == 1
        assert page.locator("#funnel-table tbody tr").count() == 2                  # K = 1, 5
        rows = page.locator("#item-table tr.row")
        assert rows.count() == 5
        page.select_option("#f-attribution", label="retrieval_miss")
        assert rows.count() == 1 and rows.first.get_attribute("data-item") == "t-3"
        page.select_option("#f-attribution", value="")
        assert rows.count() == 5
        page.locator("tr.row[data-item='t-2']").click()
        details = page.locator("tr.details")
        assert details.count() == 1
        candidates = details.locator("ol.passages").first.locator(":scope > li")
        assert candidates.count() >= 2
        assert "#1" in candidates.nth(0).inner_text() and "gold" not in candidates.nth(0).inner_text()
        assert "gold" in candidates.nth(1).inner_text() and "gold" in (candidates.nth(1).get_attribute("class") or "")
        fonts = ArgillaUI(page).fonts_of("tr.row[data-item='t-1'] td:nth-child(2)")
        assert any("CJK" in family for family in fonts), fonts
        png = page.screenshot(path=tmp_path / "report.png", full_page=True)
        assert console.errors == []
        assert refused == []
    assert blank_screenshot(png) is None, blank_screenshot(png)


def test_the_comparison_and_an_item_side_by_side_in_chromium(versus_run, tmp_path):
    """With a BASE: the verdict leads, the cards are coloured by the change, the forest plot is drawn, the
    exploratory rows are folded, and a flip opens its item with BASE beside NEW."""
    require_browser()
    from evalrun.report.gather import read_inputs
    from evalrun.report.render import render
    curate, folder, base = versus_run
    inputs = read_inputs(folder, curate.workspace, base)
    recall, f1 = inputs.comparison.row("context/recall@5"), inputs.comparison.row("lexical/f1")
    recall.significant = recall.worse = True          # drawn as decided: made significant here to see the colours
    f1.significant = f1.better = True
    out = tmp_path / "report.html"
    out.write_text(render(inputs)[0], encoding="utf-8")
    url = out.as_uri()
    with offline_page(url) as (page, console, refused):
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']")
        verdict = page.locator("#verdict")
        assert verdict.locator(".outcome-badge").inner_text().lower() == inputs.comparison.verdict.outcome
        assert page.evaluate("document.querySelector('main').firstElementChild.id") == "verdict"
        colour = "(el) => getComputedStyle(el).borderTopColor"
        assert verdict.locator(".card.worse").evaluate(colour) == "rgb(184, 71, 61)"      # red
        assert verdict.locator(".card.better").evaluate(colour) == "rgb(47, 125, 74)"     # green
        assert verdict.locator(".card.same").first.evaluate(colour) == "rgb(200, 204, 209)"     # grey
        assert "33.3%" in verdict.locator(".card.worse").inner_text()
        assert page.locator("#forest svg.chart").is_visible()
        # the exploratory rows are folded until asked for; the primary ones are open
        assert page.locator("#primary-table").is_visible() and not page.locator("#exploratory-table").is_visible()
        page.locator("#exploratory > summary").click()
        assert page.locator("#exploratory-table").is_visible()
        # a flip of the primary metric opens its item: BASE's answer and context beside NEW's
        page.locator("table.flips[data-metric='context/recall@5'] tr.flip[data-open='t-2']").click()
        versus = page.locator("tr.details .versus")
        assert versus.count() == 1
        base_side, new_side = versus.locator(".side.base"), versus.locator(".side.new")
        assert "tests.support.targets:perfect" in base_side.inner_text()
        assert "an answer" in base_side.locator(".answer").inner_text()
        assert "It goes to 30 seconds." in new_side.locator(".answer").inner_text()
        gold = len(inputs.targets["t-2"][1].keys() & set(c.chunk_id for c in inputs.base_traces["t-2"].context))
        assert base_side.locator("ol.context > li.gold").count() == gold >= 1
        assert base_side.locator("ol.context > li.gold .badge.gold").count() == gold
        assert new_side.locator("ol.context > li").count() == 1 and new_side.locator("ol.context > li.gold").count() == 0
        changed = versus.locator("table.versus-metrics tr[data-metric='context/recall@5']")
        assert "changed" in changed.get_attribute("class")
        assert [changed.locator("td").nth(k).inner_text() for k in (1, 2)] == ["1", "0"]
        assert "lost" in changed.locator("td").first.inner_text()
        same = versus.locator("table.versus-metrics tr[data-metric='candidates/recall@5']")
        assert same.get_attribute("class") is None and same.locator("td").nth(1).inner_text() == "1"
        latency = versus.locator("table.versus-metrics tr[data-metric='latency total']")
        assert [latency.locator("td").nth(k).inner_text() for k in (1, 2)] == ["25 ms", "40 ms"]
        page.locator("#all-rows").check()
        assert page.locator("#exploratory-table tr.extra").count() == len(
            [r for r in inputs.comparison.rows if not r.primary and r.subset != "all" and not r.significant])
        png = page.screenshot(path=tmp_path / "versus.png", full_page=True)
        assert console.errors == [] and refused == []
    assert blank_screenshot(png) is None


def test_a_leak_opens_the_page_and_its_item_in_chromium(hr_runs, tmp_path):
    """The leak panel is the page's first section; a leaked chunk's row opens its item, which says the leak
    before its question and marks the leaked chunks among its candidates."""
    require_browser()
    from evalrun.report import write_report
    workspace, _, leaky = hr_runs
    out = tmp_path / "report.html"
    write_report(leaky, out=out, workspace=workspace)
    url = out.as_uri()
    with offline_page(url) as (page, console, refused):
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']")
        assert page.evaluate("document.querySelector('main').firstElementChild.id") == "leaks"
        assert page.locator("#leak-headline").inner_text().startswith("PERMISSION LEAKS: 5 items")
        page.select_option("#f-attribution", label="permission_leak")
        assert page.locator("#item-table tr.row").count() == 5
        page.select_option("#f-attribution", value="")
        page.locator("#leak-table tr.leak[data-open='band-staff']").first.click()
        details = page.locator("tr.details td.detail")
        first = details.locator(":scope > *").first
        assert first.inner_text().startswith("PERMISSION LEAK: chunks the asker may not see, candidates: bands#0, bands#1")
        assert "not usable by this asker now: forbidden" in details.inner_text()
        candidates = details.locator("ol.passages").first.locator(":scope > li")
        assert [candidates.nth(k).locator(".badge.leak").count() for k in range(candidates.count())] == [1, 1, 0]
        assert console.errors == [] and refused == []


def test_retrieval_judged_by_the_judge_in_chromium(judged_run, tmp_path):
    """The judged section is drawn; a possibly missing chunk's row opens its item, where each chunk the judge
    graded shows its grade and reason (markup in a reason is text) and the possibly missing one is marked; a
    page whose grades file is damaged says so in the opened item, without a console error."""
    require_browser()
    from evalrun.report import write_report
    from tests.evalrun.report.conftest import HOSTILE_REASON
    curate, folder = judged_run
    out = tmp_path / "report.html"
    write_report(folder, out=out, workspace=curate.workspace)
    url = out.as_uri()
    with offline_page(url) as (page, console, refused):
        dialogs = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']")
        section = page.locator("#judged-retrieval")
        assert section.is_visible() and "retrieval judged by model judge" in section.inner_text()
        assert page.locator("#judged-table tbody tr").count() == 8
        assert page.locator("#judged-confusion tbody tr").count() == 3
        missing = page.locator("#possibly-missing tbody tr")
        assert missing.count() == 4 and HOSTILE_REASON in missing.first.inner_text()
        page.locator("#possibly-missing tr[data-open='t-2']").click()
        details = page.locator("tr.details td.detail")
        assert details.count() == 1 and "What does version 3.2 change" in details.inner_text()
        assert "Possibly missing evidence: upgrade.en.md#0" in details.inner_text()
        candidates = details.locator("ol.passages").first.locator(":scope > li")
        first = candidates.nth(0)     # the distractor: graded 2, nobody's evidence
        assert first.locator(".badge.missing").inner_text() == "possibly missing evidence"
        assert first.locator(".judge-grade .badge.g2").inner_text() == "judge: 2"
        assert HOSTILE_REASON in first.locator(".judge-grade").inner_text()
        assert first.locator(".judge-grade script").count() == 0 and page.locator("main script").count() == 0
        second = candidates.nth(1)    # the gold, graded 0 by the scripted judge
        assert second.locator(".judge-grade .badge.g0").inner_text() == "judge: 0"
        assert second.locator(".badge.missing").count() == 0
        png = page.screenshot(path=tmp_path / "judged.png", full_page=True)
        assert console.errors == [] and refused == [] and dialogs == []
    assert blank_screenshot(png) is None

    (folder / "retrieval_grades.jsonl").write_text("{not json\n", encoding="utf-8")
    write_report(folder, out=out, workspace=curate.workspace)
    with offline_page(url) as (page, console, refused):
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']")
        assert "could not be read" in page.locator("#judged-problem").inner_text()
        page.locator("tr.row[data-item='t-1']").click()
        details = page.locator("tr.details td.detail")
        assert "The judge's grades could not be read" in details.locator(".judged-problem").inner_text()
        assert details.locator(".judge-grade").count() == 0
        assert console.errors == [] and refused == []


def test_the_judged_rows_of_a_comparison_in_chromium(judged_run, tmp_path):
    """Against a BASE that the judge graded too: the judged/ rows have their own folded table, and the check
    box draws their subset rows there, not among the labelled ones."""
    require_browser()
    from evalrun.records import RunSettings
    from evalrun.report import write_report
    from evalrun.runner import run
    curate, folder = judged_run
    base = run(curate.workspace, ref="faq@v1", target="tests.support.targets:cut", out=tmp_path / "cut",
               settings=RunSettings(ks=[1, 5], judge_retrieval=True))
    out = tmp_path / "report.html"
    write_report(folder, out=out, workspace=curate.workspace, vs=base)
    url = out.as_uri()
    with offline_page(url) as (page, console, refused):
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']")
        page.locator("#exploratory > summary").click()
        labelled = page.locator("#exploratory-table tbody tr")
        graded = page.locator("#judged-exploratory-table tbody tr")
        assert graded.count() >= 1 and all(graded.nth(k).locator("td").first.inner_text().startswith("judged/")
                                           for k in range(graded.count()))
        before = graded.count()
        page.locator("#all-rows").check()
        assert graded.count() > before
        visible = page.locator("#judged-exploratory-table tr.extra").first
        assert visible.is_visible() and visible.locator("td").first.inner_text().startswith("judged/")
        assert not any(labelled.nth(k).locator("td").first.inner_text().startswith("judged/")
                       for k in range(labelled.count()))
        assert console.errors == [] and refused == []
