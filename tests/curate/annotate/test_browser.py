"""An annotator labels in the Argilla web UI, in headless Chromium, and `curate annotate pull` brings
back exactly what they entered: grades per candidate, answerability and key points."""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, field

import pytest

from curate.annotate.push import push
from curate.annotate.state import load_state
from curate.dataset import DatasetStore
from tests.support.browser import ArgillaUI, annotator_page, missing_browser

pytestmark = pytest.mark.browser

PASSWORD = "annotator-password-1"
QUESTION_TEXT = ".text_field_component .content-area > div"   # the first is the record's question


@dataclass
class Label:
    """What the annotator enters for one item of tests/data/items.jsonl, and how they find it."""

    search: str                      # typed in the dataset's search box
    question: str                    # the record it must show
    grades: dict[int, int]           # candidate number -> grade clicked (every candidate shown)
    answerable: str                  # "answerable" or "unanswerable"
    key_points: str | None = None    # typed, one per line, "[n]" naming supporting candidates
    expected_points: list = field(default_factory=list)   # (key point, {candidate numbers}) after pull


LABELS = {
    "t-1": Label("令牌", "LG-4031 是什么意思？", {1: 2, 2: 1, 3: 0, 4: 0}, "answerable",
                 "访问令牌已过期 [1]\n需要重新登录 [1, 2]", [("访问令牌已过期", {1}), ("需要重新登录", {1, 2})]),
    "t-2": Label("timeout", "What does version 3.2 change about the upstream timeout?", {1: 2, 2: 1, 3: 0, 4: 0},
                 "answerable", "The default upstream timeout rises from 15 to 30 seconds [1]",
                 [("The default upstream timeout rises from 15 to 30 seconds", {1})]),
    "t-5": Label("SAML", "Does Lumen support SAML single sign-on?", {1: 0, 2: 0}, "unanswerable"),
}


@pytest.fixture
def chromium():
    """Skips the test, saying why, where Chromium, its Chinese fonts or playwright are missing; fails
    instead under CURATE_REQUIRE_BROWSER=1 (.ci/run sets it: CI must never pass by skipping it)."""
    if (reason := missing_browser()):
        if os.environ.get("CURATE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"the browser test is required here (CURATE_REQUIRE_BROWSER=1): {reason}")
        pytest.skip(reason)


@pytest.fixture
def team(handbook, argilla_server, monkeypatch):
    """The handbook items pushed to their own Argilla workspace, and an annotator in it."""
    import argilla as rg
    monkeypatch.setenv("ARGILLA_API_KEY", argilla_server.api_key)
    monkeypatch.setenv("ARGILLA_API_URL", argilla_server.url)
    space = "b" + uuid.uuid4().hex[:8]
    push(handbook.workspace, dataset="faq", pool_k=4, min_submitted=1, argilla_workspace=space)
    client = rg.Argilla(api_url=argilla_server.url, api_key=argilla_server.api_key)
    user = rg.User(username=f"ann-{space}", password=PASSWORD, role="annotator", client=client).create()
    client.workspaces(space).add_user(user)
    # Which Argilla dataset holds each item: one named after the dataset, or one per pool size.
    names = [dataset.name for dataset in client.workspaces(space).datasets]
    holder = {str(r.id): name for name in names
              for r in client.datasets(name=name, workspace=space).records(with_suggestions=False)}
    return handbook, user.username, holder


def _blank(png: bytes) -> str | None:
    """Return why a screenshot looks blank (too few colours or too little drawn), or None."""
    import io

    from PIL import Image
    image = Image.open(io.BytesIO(png)).convert("RGB")
    small = image.resize((image.width // 4, image.height // 4))
    colours = small.getcolors(maxcolors=1 << 20) or []
    background = max(colours)[0] if colours else 0
    drawn = 1 - background / (small.width * small.height)
    if len(colours) < 50 or drawn < 0.05:
        return f"{len(colours)} colours, {drawn:.0%} of the pixels differ from the background"
    return None


def _label_in_browser(ui: ArgillaUI, holder: dict[str, str], tmp_path) -> dict[str, dict]:
    """Label the LABELS records as an annotator does (search, find, grade, choose, write, submit);
    return what the UI showed for each: its dataset, search hits, candidates, grading questions,
    fonts used for the question and which guideline languages the panel holds."""
    page, seen = ui.page, {}
    for item_id, label in LABELS.items():
        ui.open_dataset(holder[item_id])
        found = ui.search(label.search)
        assert found >= 1, f"searching {label.search!r} found nothing"
        ui.show_record(label.question)
        fonts = ui.fonts_of(QUESTION_TEXT)
        guideline_text, guideline_html = ui.guidelines()
        if item_id == "t-1":   # Chinese drawn with a CJK font, not as empty boxes
            assert any("CJK" in family for family in fonts), fonts
            page.screenshot(path=tmp_path / "chinese-record.png")
        # rendered Markdown, not its source
        assert "<h2" in guideline_html and "<strong>" in guideline_html, holder[item_id]
        assert "**" not in guideline_text and "\n## " not in guideline_text, holder[item_id]
        shown = seen.setdefault(item_id, {
            "dataset": holder[item_id], "found": found, "candidates": ui.candidates_shown(),
            "grading_questions": ui.grading_questions(), "fonts": fonts,
            "guidelines": [language for language, title in (("en", "Relevance guidelines"), ("zh", "相关性标注规范"))
                           if title in guideline_text]})
        assert shown["candidates"] == len(label.grades), (item_id, shown)
        assert shown["grading_questions"] == shown["candidates"], f"{item_id}: grading questions without a candidate"
        for slot, grade in label.grades.items():
            ui.grade(slot, grade)
        ui.choose("answerable", label.answerable)
        if label.key_points:
            ui.write("key_points_fixed", label.key_points)
        ui.submit()
    return seen


def test_an_annotator_labels_in_the_browser_and_pull_brings_it_back(chromium, team, argilla_server, tmp_path):
    handbook, username, holder = team
    started = time.monotonic()
    with annotator_page(argilla_server.url) as (page, console):
        ui = ArgillaUI(page)
        ui.sign_in(username, PASSWORD)
        ui.open_dataset(holder["t-1"])
        assert ui.record_count() == list(holder.values()).count(holder["t-1"])   # all pending, all listed
        seen = _label_in_browser(ui, holder, tmp_path)
        png = page.screenshot(path=tmp_path / "after-submit.png", full_page=True)
        for shot in (png, (tmp_path / "chinese-record.png").read_bytes()):
            assert (why := _blank(shot)) is None, f"a screenshot looks blank: {why}"
        assert console.errors == [], console.errors
    print(f"\nin the browser {time.monotonic() - started:.1f} s; shown: {seen}; "
          f"harmless console errors: {console.harmless}")

    result = handbook("annotate", "pull", "--dataset", "faq")
    assert "waiting for annotators 2" in result.stdout, result.stdout   # t-3 and t-4 were not labelled
    state = load_state(handbook.workspace, "faq")
    items = {i.id: i for i in DatasetStore(handbook.workspace).items("faq")}
    for item_id, label in LABELS.items():
        item, slots = items[item_id], state.items[item_id].slots
        assert item.status == "labelled" and username in item.status_history[-1].reason, item.status_history[-1]
        assert item.answerable is (label.answerable == "answerable")
        graded = {c: e.grade for e in item.evidence for c in e.chunk_ids}
        assert {n: graded.get(slots[n - 1], 0) for n in label.grades} == label.grades, item_id
        supported = [(k.text, {n for n, chunk in enumerate(slots, start=1) for e in item.evidence
                               if e.evidence_id in k.evidence_ids and chunk in e.chunk_ids})
                     for k in item.key_points]
        if label.key_points:
            assert supported == label.expected_points, item_id
    assert items["t-5"].qtype == "unanswerable"
    assert {i.status for i in items.values() if i.id not in LABELS} == {"draft"}


def test_an_annotator_sees_who_asks_when_and_the_marks_rendered(chromium, curate, argilla_server, monkeypatch, tmp_path):
    """The scope field and a candidate's mark, as the web UI draws them: text, and Markdown rendered."""
    import argilla as rg

    from tests.support.scoped import scoped_kb
    monkeypatch.setenv("ARGILLA_API_KEY", argilla_server.api_key)
    monkeypatch.setenv("ARGILLA_API_URL", argilla_server.url)
    scoped_kb(curate.workspace)
    data = os.path.join(os.path.dirname(__file__), "..", "dataset", "data", "scoped_items.jsonl")
    curate("import", data, "--dataset", "hr", "--source", "human", "--kb", "policies")
    space = "v" + uuid.uuid4().hex[:8]
    push(curate.workspace, dataset="hr", pool_k=4, argilla_workspace=space)
    client = rg.Argilla(api_url=argilla_server.url, api_key=argilla_server.api_key)
    user = rg.User(username=f"ann-{space}", password=PASSWORD, role="annotator", client=client).create()
    client.workspaces(space).add_user(user)
    holder = next(d.name for d in client.workspaces(space).datasets
                  if any(str(r.id) == "s-3" for r in client.datasets(name=d.name, workspace=space).records()))
    with annotator_page(argilla_server.url) as (page, console):
        ui = ArgillaUI(page)
        ui.sign_in(user.username, PASSWORD)
        ui.open_dataset(holder)
        ui.search("L5")                        # s-3 (staff) and s-6 (hr) ask it: the one staff asks
        ui.show_record("Asked by: groups staff")
        shown = page.locator(".wrapper__records")
        text, html = shown.inner_text(), shown.inner_html()
        page.screenshot(path=tmp_path / "scope-record.png")
    assert "Who asks, and when" in text and "Asked by: groups staff" in text
    assert "⚠ Not usable for this asker at this moment: the asker may not see it (visible to hr, manager)." in text
    assert "<strong>Not usable for this asker at this moment</strong>" in html and "**" not in text
