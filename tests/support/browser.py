"""Headless Chromium (Debian's package, driven by Playwright) and an annotator's view of the Argilla
web UI, for the tests that label through the browser as a person does.

Playwright is only the driver here: it never downloads a browser (none can be downloaded on the
machines this runs on); the Makefile installs `chromium` and `fonts-noto-cjk` with apt-get.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

# Without the networking flags Chromium keeps calling Google's hosts, which this closed network
# refuses; with a new empty profile every run starts from the same state.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# Console errors that say nothing about the labelling: Argilla's pages link Google Fonts (answered
# here with an empty stylesheet, see `annotator_page`), and a browser asks for /favicon.ico.
HARMLESS_CONSOLE_ERRORS = ("fonts.googleapis.com", "fonts.gstatic.com", "favicon.ico")


def chromium_path() -> str | None:
    """Return the Chromium executable (CURATE_CHROMIUM, or `chromium` on PATH), or None."""
    given = os.environ.get("CURATE_CHROMIUM")
    if given:
        return given if Path(given).exists() else None
    return shutil.which("chromium") or shutil.which("chromium-browser")


def missing_browser() -> str | None:
    """Return why the browser tests cannot run here (a sentence naming the fix), or None."""
    import importlib.util
    if importlib.util.find_spec("playwright") is None:
        return "the Python package playwright is not installed (`make setup` installs the test extra)"
    if chromium_path() is None:
        return ("Chromium is not installed: `make setup` installs Debian's chromium and fonts-noto-cjk with "
                "apt-get, which was unavailable or failed here")
    if not _has_chinese_font():
        return "no Chinese font (fonts-noto-cjk) is installed, so Chinese cannot render (`make setup` installs it)"
    return None


def _has_chinese_font() -> bool:
    """Return whether fontconfig knows a font covering Chinese (or, without fc-list, Noto CJK is on disk)."""
    import subprocess
    if shutil.which("fc-list"):
        listed = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True, check=False)
        return bool(listed.stdout.strip())
    return any(Path("/usr/share/fonts").glob("**/NotoSansCJK*"))


@dataclass
class Console:
    """What the page wrote to its console as errors, split into those that matter and the known harmless."""

    errors: list[str] = field(default_factory=list)
    harmless: list[str] = field(default_factory=list)

    def add(self, message) -> None:
        """Keep a console message if it is an error (Playwright's "console" event handler)."""
        if message.type != "error":
            return
        where = (message.location or {}).get("url", "")
        text = f"{message.text} ({where})" if where else message.text
        harmless = any(marker in text for marker in HARMLESS_CONSOLE_ERRORS)
        (self.harmless if harmless else self.errors).append(text)


@contextlib.contextmanager
def chromium_page(width: int = 1400, height: int = 1000, base_url: str | None = None,
                  routes: Sequence[tuple[str, Callable]] = ()) -> Iterator[tuple[object, Console]]:
    """Yield (a Playwright page in a fresh headless Chromium profile, its console errors); `routes`:
    (URL glob, handler) pairs installed on the browser context before the page opens."""
    from playwright.sync_api import sync_playwright

    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    with tempfile.TemporaryDirectory(prefix="curate-chromium-") as profile, sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            profile, executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True,
            viewport={"width": width, "height": height}, locale="en-US", base_url=base_url)
        for pattern, handler in routes:
            context.route(pattern, handler)
        console = Console()
        page = context.new_page()
        page.set_default_timeout(120_000)   # how long an action waits for its element: a safety net only
        page.on("console", console.add)
        page.on("pageerror", lambda error: console.errors.append(f"uncaught: {error}"))
        try:
            yield page, console
        finally:
            context.close()


def annotator_page(base_url: str, width: int = 1400, height: int = 1000):
    """Return `chromium_page` for Argilla's web UI at `base_url`: Google Fonts cannot be reached here,
    so an empty stylesheet keeps its pages from waiting on it."""
    return chromium_page(width, height, base_url, routes=[
        ("https://fonts.googleapis.com/**", lambda route: route.fulfill(status=200, content_type="text/css", body="")),
        ("https://fonts.gstatic.com/**", lambda route: route.abort())])


class ArgillaUI:
    """An annotator's actions in Argilla 2.8's web UI: sign in, open a dataset, search, grade, submit."""

    def __init__(self, page):
        self.page = page

    def sign_in(self, username: str, password: str) -> None:
        page = self.page
        page.goto("/sign-in")
        page.get_by_label("Username").fill(username)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(lambda url: "/sign-in" not in url)

    def open_dataset(self, name: str) -> None:
        """Open a dataset from the home page's list by its exact name."""
        page = self.page
        home = page.get_by_role("link", name="Home", exact=True)
        if urlsplit(page.url).path != "/":
            if home.count():
                home.first.click()   # within the web app: no reload
            else:
                page.goto("/")
        page.get_by_text(name, exact=True).first.click()
        page.wait_for_url("**/annotation-mode**")
        page.get_by_label("Question: answerable").wait_for()

    def search(self, query: str) -> int:
        """Return how many pending records the dataset's search box finds for `query`."""
        page = self.page
        box = page.get_by_role("search")
        if not box.is_visible():
            page.locator(".search-area__icon").click()
        box.fill(query)
        box.press("Enter")
        page.wait_for_url(lambda url: "search=" in url)
        page.wait_for_load_state("networkidle")   # the pager shows the new total only once the search answered
        return self.record_count()

    def record_count(self, wait: float = 120.0) -> int:
        """Return the N of the pager's "1 of N" as soon as it shows, or 0 when it has not shown within
        `wait` s (no record matches; the wait is long so that a slow page is not taken for none)."""
        page = self.page
        total = page.get_by_label("Total Records")
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if total.count() and total.first.is_visible():
                return int(total.first.inner_text().split()[-1])
            page.wait_for_timeout(100)   # still loading, or no record matches
        return 0

    def show_record(self, question: str, pages: int = 20) -> None:
        """Page through the listed records until the one asking `question` is shown."""
        page = self.page
        shown = page.locator(".wrapper__records")
        for _ in range(pages):
            before = shown.inner_text()
            if question in before:
                return
            page.get_by_role("button", name="Next (→)").click()
            page.wait_for_function(   # the next record is shown (a fixed pause may not be enough)
                "previous => document.querySelector('.wrapper__records').innerText !== previous", arg=before)
        raise AssertionError(f"no record asks {question!r}")

    def candidates_shown(self) -> int:
        """Return how many candidate chunks the shown record has (fields titled "Candidate N")."""
        titles = self.page.locator(".wrapper__records .text_field_component__title-content").all_inner_texts()
        return sum(1 for title in titles if title.strip().startswith("Candidate "))

    def grading_questions(self) -> int:
        """Return how many "Relevance of candidate N" questions the form shows."""
        return self.page.locator("[aria-label^='Question: relevance_']").count()

    def grade(self, slot: int, grade: int) -> None:
        """Select grade `grade` for candidate `slot`, clicking only when it is not selected yet: a
        pre-filled suggestion is already selected, and clicking a selected grade clears it."""
        box = self.page.locator(f"#relevance_{slot}_{grade}")
        if not box.is_checked():
            self.page.locator(f"label[for='relevance_{slot}_{grade}']").click()
        assert box.is_checked(), f"candidate {slot}: grade {grade} is not selected after a click"

    def choose(self, question: str, label: str) -> None:
        """Select `label` of a label question (clicking a selected one would clear it)."""
        box = self.page.locator(f"#{question}_{label}")
        if not box.is_checked():
            self.page.locator(f"label[for='{question}_{label}']").click()
        assert box.is_checked(), f"{question}: {label} is not selected after a click"

    def write(self, question: str, text: str) -> None:
        """Replace the text of a text question, typing its lines with Enter between them."""
        page = self.page
        editor = page.get_by_label(f"Question: {question}").locator("[contenteditable='true']")
        editor.click()
        page.keyboard.press("Control+A")
        page.keyboard.press("Delete")
        for n, line in enumerate(text.split("\n")):
            if n:
                page.keyboard.press("Enter")   # a new line here; Enter submits only outside a text box
            page.keyboard.type(line)
        typed = [line for line in editor.inner_text().splitlines() if line.strip()]
        assert typed == text.split("\n"), f"{question}: the editor holds {typed!r}, not {text!r}"

    def submit(self) -> None:
        """Submit the shown record and wait until the UI has moved on from it."""
        page = self.page
        question = page.locator(".wrapper__records").inner_text()
        page.get_by_role("button", name="Submit").click()
        page.wait_for_function(
            "previous => !document.querySelector('.wrapper__records') "
            "|| document.querySelector('.wrapper__records').innerText !== previous", arg=question)
        page.wait_for_load_state("networkidle")   # the response is stored before the annotator moves on

    def guidelines(self) -> tuple[str, str]:
        """Return (the visible text, the HTML) of the dataset's guidelines panel, opening it first."""
        page = self.page
        shown = page.locator(".annotation-guidelines")
        if not shown.count() or not shown.first.is_visible():
            page.get_by_label("Expand Panel").filter(has_text="Guidelines").first.click()
        shown.first.wait_for()
        return shown.first.inner_text(), shown.first.inner_html()

    def fonts_of(self, selector: str) -> dict[str, int]:
        """Return {font family: glyphs drawn} for the text of the first element matching `selector`, as
        Chromium reports the fonts it really used (a missing CJK font shows as another family or none)."""
        session = self.page.context.new_cdp_session(self.page)
        try:
            session.send("DOM.enable")
            session.send("CSS.enable")
            root = session.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
            node = session.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
            if not node:
                raise AssertionError(f"nothing matches {selector!r}")
            fonts = session.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
            return {f["familyName"]: f["glyphCount"] for f in fonts}
        finally:
            session.detach()


def require_browser() -> None:
    """Skip the calling test, saying why, where Chromium, its Chinese fonts or playwright are missing;
    fail instead under CURATE_REQUIRE_BROWSER=1 (.ci/run sets it: CI must never pass by skipping)."""
    import pytest
    if (reason := missing_browser()):
        if os.environ.get("CURATE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"the browser test is required here (CURATE_REQUIRE_BROWSER=1): {reason}")
        pytest.skip(reason)


def blank_screenshot(png: bytes) -> str | None:
    """Return why a screenshot looks blank (too few colours, too little drawn, no variance), or None."""
    import io

    from PIL import Image, ImageStat
    image = Image.open(io.BytesIO(png)).convert("RGB")
    small = image.resize((max(1, image.width // 4), max(1, image.height // 4)))
    colours = small.getcolors(maxcolors=1 << 20) or []
    background = max(colours)[0] if colours else 0
    drawn = 1 - background / (small.width * small.height)
    variance = sum(ImageStat.Stat(small.convert("L")).var)
    if len(colours) < 50 or drawn < 0.05 or variance < 100:
        return f"{len(colours)} colours, {drawn:.0%} of the pixels differ from the background, variance {variance:.0f}"
    return None
