"""A reviewer checks the judge in the Argilla web UI, in headless Chromium: signs in, sees the record's two
columns, answers three records in Chinese and English, and `evalrun review pull` brings back exactly that.
Markup in an answer is shown as text, never run."""

from __future__ import annotations

import time
import uuid

import pytest

from curate import DatasetStore
from evalrun.review.argilla import pull, push
from evalrun.review.records import read_reviews
from evalrun.runner import run
from tests.evalrun.scoring.test_generation import _reply
from tests.support import targets
from tests.support.browser import ArgillaUI, annotator_page, blank_screenshot, require_browser
from tests.support.servers import ScriptedServer

pytestmark = pytest.mark.browser

PASSWORD = "reviewer-password-1"
MARKUP = "<b>bold?</b><img src=x onerror=\"window.pwned=1\"><script>window.pwned=2</script>"


def marked_up(question: str) -> dict:
    """The `perfect` system, its answers carrying markup a careless system might return."""
    trace = targets.perfect(question)
    if trace["answer"]:
        trace["answer"] = f"{trace['answer']} {MARKUP}"
    return trace


@pytest.fixture
def reviewed(released, tmp_path, argilla_server, monkeypatch):
    """faq@v1 run and judged, every judged answer pushed for review, and a reviewer in the Argilla workspace."""
    import argilla as rg
    require_browser()
    server = ScriptedServer(_reply)
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", server.base_url)
    monkeypatch.setenv("CURATE_JUDGE_MODEL", "judge")
    monkeypatch.setenv("ARGILLA_API_KEY", argilla_server.api_key)
    monkeypatch.setenv("ARGILLA_API_URL", argilla_server.url)
    workspace = released.workspace
    folder = run(workspace, ref="faq@v1", target="tests.evalrun.review.test_browser:marked_up", out=tmp_path / "run")
    space = "w" + uuid.uuid4().hex[:8]
    pushed = push(workspace, folder, n=10, argilla_workspace=space)
    client = rg.Argilla(api_url=argilla_server.url, api_key=argilla_server.api_key)
    user = rg.User(username=f"rev-{space}", password=PASSWORD, role="annotator", client=client).create()
    client.workspaces(space).add_user(user)
    yield workspace, folder, pushed, user.username
    server.close()


def test_a_reviewer_answers_three_records_in_the_browser_and_pull_brings_them_back(reviewed, argilla_server,
                                                                                   tmp_path):
    workspace, folder, pushed, username = reviewed
    items = {i.id: i for i in DatasetStore(workspace).items("faq")}
    chosen = sorted(read_reviews(folder).state.items)
    assert len(chosen) >= 3 and {items[i].language for i in chosen} >= {"zh", "en"}
    started = time.monotonic()
    answered: dict[str, str] = {}
    with annotator_page(argilla_server.url) as (page, console):
        ui = ArgillaUI(page)
        ui.sign_in(username, PASSWORD)
        page.get_by_text(pushed.argilla_dataset, exact=True).first.click()
        page.wait_for_url("**/annotation-mode**")
        page.get_by_label("Question: overall").wait_for()
        for n in range(3):
            shown = page.locator(".wrapper__records")
            field = shown.frame_locator("iframe").first          # Argilla draws a custom field in a frame
            field.locator(".rv").first.wait_for()
            left, right = field.locator(".rv .left").first, field.locator(".rv .right").first
            lbox, rbox = left.bounding_box(), right.bounding_box()
            assert lbox["x"] + lbox["width"] <= rbox["x"] + 1 and abs(lbox["y"] - rbox["y"]) < 40   # two columns
            text = left.inner_text()
            item_id = next(i for i in chosen if items[i].question in left.inner_text())
            assert MARKUP in right.inner_text()                  # markup shown as the text it is
            assert "judge:" in right.inner_text() and "R " in right.inner_text()
            if n == 0:
                page.screenshot(path=tmp_path / "review-record.png")
            if items[item_id].language == "zh" and "wrong" not in answered.values():
                ui.choose("overall", "wrong")
                ui.choose("relevance", "no")
                ui.write("reason", "R：回答答非所问")
                answered[item_id] = "wrong"
            else:
                ui.choose("overall", "reasonable")
                answered[item_id] = "reasonable"
            assert item_id in text or items[item_id].question in text
            ui.submit()
        assert page.evaluate("window.pwned") is None                 # nothing in an answer ran, here
        assert all(frame.evaluate("window.pwned") is None for frame in page.frames)   # nor in the field's frame
        png = (tmp_path / "review-record.png").read_bytes()
        assert (why := blank_screenshot(png)) is None, why
        assert console.errors == [], console.errors
    print(f"\nreviewed in the browser in {time.monotonic() - started:.1f} s: {answered}")

    report = pull(workspace, folder)
    assert report.records == 3 and not report.unreadable and not report.refused
    reviews = read_reviews(folder).reviews
    relevance = {r.item_id: r for r in reviews if r.metric == "generation/answer_relevance"}
    assert set(relevance) == set(answered)
    for item_id, said in answered.items():
        r = relevance[item_id]
        assert r.reviewer == username
        if said == "wrong":
            assert r.person_value == 0.0 and r.reason == "R：回答答非所问"
        else:
            assert r.person_value == r.judge_value and r.reason is None
