"""`evalrun report` under scope: a leak panel opens the page (every leaked chunk with its item's asker and
the chunk's own groups), each item carries what scope found of it, chunk ids and group names are text and
never markup, and the page is written for unusual runs: no asker anywhere, every item declined, a target
that failed everywhere, a scoped run against one scored before scope was checked."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from curate import Scope
from evalrun.records import SCORES, SUMMARY, ItemScores, RunSettings, RunSummary
from evalrun.report import write_report
from evalrun.runner import run
from tests.evalrun.report.test_report import unpacked
from tests.support import scope as kb


def page(folder, workspace, tmp_path, vs=None, name="report.html") -> str:
    out = tmp_path / name
    write_report(folder, out=out, workspace=workspace, vs=vs)
    return out.read_text(encoding="utf-8")


def panel(html: str) -> str:
    return re.search(r'<section id="leaks".*?</section>', html, re.S).group(0)


def test_the_leak_panel_opens_the_page_and_names_every_leaked_chunk(hr_runs, tmp_path):
    workspace, scoped, leaky = hr_runs
    html = page(leaky, workspace, tmp_path)
    main = html[html.index("<main>"):]
    assert main.removeprefix("<main>\n").startswith('<section id="leaks" class="leaks alarm">')
    found = panel(html)
    assert ("PERMISSION LEAKS: 5 items of the 9 that name an asker were given chunks their asker may not see (1 item "
            "names no asker: unchecked)") in found
    rows = re.findall(r'<tr class="leak" data-open="([^"]+)"[^>]*><td><code>[^<]+</code></td><td>([^<]*)</td>'
                      r'<td>([^<]+)</td><td><code>([^<]+)</code></td><td>([^<]+)</td>', found)
    expected = [(item_id, ", ".join(askers) or "(no group)", layer, chunk, ", ".join(kb.GROUPS[chunk]))
                for item_id, (question, _, askers, *_rest) in kb.ITEMS.items()
                for layer, chunks in kb.expected_leaks(kb.leaky(question), askers).items() for chunk in chunks]
    assert sorted(rows) == sorted(expected) and len(rows) == 6 + 6 + 2
    items = {entry["id"]: entry for entry in unpacked(html)["items"]}
    chunk_ids = unpacked(html)["chunks"]["id"]
    assert {layer: [chunk_ids[c] for c in cs] for layer, cs in items["band-staff"]["sc"]["lk"].items()} == {
        "candidates": ["bands#0", "bands#1"], "context": ["bands#0", "bands#1"], "citations": ["bands#0"]}
    assert items["band-staff"]["sc"]["dc"] == ["forbidden"] and items["band-staff"]["ak"] == [["staff"], None, None]
    assert "ak" not in items["office"] and "lk" not in items["office"]["sc"]     # no asker, no moment named
    clean = panel(page(scoped, workspace, tmp_path, name="scoped.html"))
    assert 'class="leaks"' in clean and "permission leaks: none, in the 9 items that name an asker" in clean


def test_chunk_ids_and_group_names_are_text_never_markup(workspace, tmp_path):
    hostile = "<img src=x onerror=alert(1)>#0"
    chunks = {hostile: ("secret", "The secret plan is filed.", Scope(groups=["<b>hr</b>"])),
              "faq#0": ("faq", "The office opens at 9 a.m. on weekdays.", None)}
    items = {"office": ("When does the office open?", "en", ["<i>staff</i>"], None, "faq#0", "9 a.m.")}
    kb.build(workspace, tmp_path, scope_toml="", items=items, chunks=chunks)
    traces = tmp_path / "traces.jsonl"
    traces.write_text(json.dumps({"item_id": "office", "candidates": [hostile, "faq#0"], "context": ["faq#0"],
                                  "answer": "9 a.m."}) + "\n", encoding="utf-8")
    folder = run(workspace, ref="hr@v1", traces=traces, out=tmp_path / "run", settings=RunSettings(no_judge=True))
    html = page(folder, workspace, tmp_path)
    assert "<img src=x" not in html and "<b>hr</b>" not in html and "<i>staff</i>" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;#0" in panel(html) and "&lt;b&gt;hr&lt;/b&gt;" in panel(html)
    assert html.count("<script") == 2
    assert unpacked(html)["chunks"]["id"][unpacked(html)["items"][0]["sc"]["lk"]["candidates"][0]] == hostile


def _unscoped(items: dict) -> dict:
    return {item_id: (question, language, None, as_of, chunks, answer)
            for item_id, (question, language, _, as_of, chunks, answer) in items.items()}


@pytest.mark.parametrize("case", ["no asker anywhere", "every item declined", "target failed everywhere"])
def test_the_report_is_written_for_unusual_runs(workspace, tmp_path, case):
    items = {"no asker anywhere": _unscoped(kb.ITEMS),
             "every item declined": {i: kb.ITEMS[i] for i in ("band-staff", "bonus")},
             "target failed everywhere": kb.ITEMS}[case]
    kb.build(workspace, tmp_path, items=items)

    def failing(question):
        raise RuntimeError("index offline")

    target = failing if case == "target failed everywhere" else kb.leaky
    folder = run(workspace, ref="hr@v1", target=target, out=tmp_path / "run", settings=RunSettings(no_judge=True))
    html = page(folder, workspace, tmp_path)
    said = panel(html)
    if case == "no asker anywhere":
        assert "PERMISSION LEAKS NOT CHECKED: the KB has access groups and no item names an asker" in said
    elif case == "every item declined":
        assert "PERMISSION LEAKS: 2 items of the 2 that name an asker" in said
        assert "2 items had no evidence their asker may use at their moment (forbidden 2)" in said
        # the funnel has no item to count: their only evidence is forbidden, none is gold for them
        assert '<tr><td>5</td><td class="num">0</td>' in html
    else:
        assert "permission leaks: none, in the 9 items that name an asker" in said   # a failed call returned nothing
        assert "10 items whose target failed" in html


def test_a_scoped_run_against_one_scored_before_scope_checks(hr_runs, tmp_path):
    workspace, _, leaky = hr_runs
    before = tmp_path / "before"
    shutil.copytree(leaky, before)
    summary = RunSummary.read(before / SUMMARY)
    summary.scope = None
    summary.write(before / SUMMARY)
    rows = [json.loads(line) for line in (before / SCORES).read_text(encoding="utf-8").splitlines()]
    (before / SCORES).write_text("".join(json.dumps({k: v for k, v in ItemScores(**row).model_dump(mode="json").items()
                                                     if k != "scope"}) + "\n" for row in rows), encoding="utf-8")
    html = page(leaky, workspace, tmp_path, vs=before)
    assert "NEW was scored with scope checks and BASE without" in html
    leads = re.search(r'<section id="verdict".*?<p class="outcome">', html, re.S).group(0)
    assert ("PERMISSION LEAKS (items given chunks their asker may not see): BASE not checked (scored before scope "
            "checks) -&gt; NEW 5 of 9") in leads
    back = page(before, workspace, tmp_path, vs=leaky, name="back.html")
    assert 'id="leaks"' not in back and "BASE was scored with scope checks and NEW without" in back
