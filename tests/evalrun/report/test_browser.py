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
