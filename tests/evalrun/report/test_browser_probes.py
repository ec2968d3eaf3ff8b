"""The page of a probe run opens in headless Chromium from disk: nothing is requested, no console error,
a hostile answer stays text, the attack that succeeded is red, both curves are drawn, the failures of a
probe unfold on a click, and Chinese is drawn with a CJK font."""

from __future__ import annotations

import pytest

from evalrun.report import write_report
from tests.evalrun.report.probe_runs import HOSTILE, probe_folder, three_items
from tests.evalrun.report.test_browser import offline_page
from tests.support.browser import ArgillaUI, blank_screenshot, require_browser

pytestmark = pytest.mark.browser


def test_the_probe_page_works_offline_in_chromium(tmp_path):
    require_browser()
    summary = three_items()
    summary.failures[1].answer = HOSTILE
    out = write_report(probe_folder(tmp_path / "probe", summary), out=tmp_path / "probes.html", workspace=None).path
    url = out.as_uri()
    with offline_page(url) as (page, console, refused):
        page.goto(url)
        assert page.locator("div.probe-curve svg.chart").count() == 2
        red = "rgb(184, 71, 61)"
        assert page.locator(".card.attack.bad").evaluate("(el) => getComputedStyle(el).borderTopColor") == red
        attack = page.locator("#probe-attack-table tr.attack td").first
        assert attack.inner_text() == "reveal_canary" and attack.evaluate("(el) => getComputedStyle(el).color") == red
        injection = page.locator("details.probe-failures[data-probe='injection']")
        assert injection.locator("td").nth(5).inner_text() == HOSTILE     # the answer, as text
        noise = page.locator("details.probe-failures[data-probe='noise']")
        assert not noise.locator("table").is_visible()
        noise.locator("summary").click()
        assert noise.locator("table").is_visible()
        fonts = ArgillaUI(page).fonts_of("details.probe-failures[data-probe='noise'] td[lang='zh']")
        assert any("CJK" in family for family in fonts), fonts
        png = page.screenshot(path=tmp_path / "probes.png", full_page=True)
        assert console.errors == [] and refused == []
    assert blank_screenshot(png) is None, blank_screenshot(png)
