"""`evalrun report`: what the page is built from, checked on a run whose funnel is counted by hand."""

from __future__ import annotations

import base64
import gzip
import json
import re

from click.testing import CliRunner

from curate import EvalItem
from evalrun.cli.main import cli as evalrun_cli
from evalrun.compare.comparison import compare_runs, scored_run
from evalrun.records import RunSettings
from evalrun.report import write_report
from evalrun.report.gather import funnels, page_language, read_inputs
from evalrun.report.items import CAPS, item_payload
from evalrun.runner import run
from tests.evalrun.report.conftest import LONG_ANSWER


def unpacked(html: str) -> dict:
    """Return the items' JSON document of a written page."""
    blob = re.search(r'<script type="application/octet-stream" id="items-data"[^>]*>([^<]*)</script>', html).group(1)
    return json.loads(gzip.decompress(base64.b64decode(blob)))


def _cli(*args, code=0):
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [*map(str, args)])
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result


def test_funnel_counts_are_those_counted_by_hand(scripted_run):
    curate, folder = scripted_run
    found = {f.k: f for f in funnels(read_inputs(folder, curate.workspace))}
    counts = {k: [f.items] + [s.count for s in f.stages[:3]] + [f.no_context] for k, f in found.items()}
    # items, in candidates, in context, cited, context not reported
    assert counts[1] == [4, 2, 1, 1, 1]          # t-1 and t-4 (gold first); t-2's gold is second
    assert counts[5] == [4, 3, 1, 1, 1]          # t-2 joins the candidates, its context is the distractor
    judged = found[5].stages[3]
    assert judged.count is None and judged.reason.startswith("not judged: unscored")


def test_long_texts_are_cut_counted_and_marked(scripted_run):
    curate, folder = scripted_run
    document, cuts = item_payload(read_inputs(folder, curate.workspace))
    entry = next(e for e in document["items"] if e["id"] == "t-1")
    assert entry["o"] == [LONG_ANSWER[:CAPS["answer"]], len(LONG_ANSWER)]
    assert cuts["answer"] == 1
    assert entry["rk"] == 1 and entry["ic"] == 1 and entry["cd"] == 1
    by_id = {e["id"]: e for e in document["items"]}
    assert by_id["t-2"]["rk"] == 2 and by_id["t-2"]["ic"] == 0
    assert by_id["t-4"]["ic"] is None and by_id["t-3"]["rk"] == 0
    gold = [c for c in by_id["t-2"]["c"] if c[1] is not None]
    assert [document["chunks"]["id"][c[0]] for c in by_id["t-2"]["c"]][0] == "upgrade.en.md#0" and gold


def test_a_chunk_budget_cuts_chunk_texts_and_the_page_says_so(scripted_run, monkeypatch, tmp_path):
    from evalrun.report import items
    curate, folder = scripted_run
    monkeypatch.setattr(items, "CHUNK_BUDGET", 100)
    written = write_report(folder, out=tmp_path / "r.html", workspace=curate.workspace)
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    document = unpacked(html)
    cap = document["chunks"]["cap"]
    assert cap < items.CHUNK_CAP and written.cuts["chunk"] >= 1
    assert sum(len(t) if isinstance(t, str) else len(t[0]) for t in document["chunks"]["text"] if t) <= 100
    assert f"{written.cuts['chunk']} chunk texts cut at {cap} characters" in html


def test_the_page_says_what_is_unscored_and_why(scripted_run, tmp_path):
    curate, folder = scripted_run
    result = _cli("report", folder, "--out", tmp_path / "r.html", "--workspace", curate.workspace.root)
    assert result.stdout.startswith(f"wrote {tmp_path / 'r.html'} (") and "1 long texts cut" in result.stdout
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    unscored = html[html.index('<section id="unscored">'):html.index('<section id="provenance">')]
    # t-4's context metrics, with the reason, and the generation layer's reason, each counted
    assert "<td>context/recall@5</td><td>the trace reports no context (no &#39;context&#39; key)</td>" in unscored
    summary = scored_run(folder).summary
    reason, n = next(iter(summary.metrics["all"]["generation/correctness"].unscored.items()))
    assert f"<td>generation/correctness</td><td>{reason}</td><td class=\"num\">{n}</td>" in unscored
    assert 'lang="en"' in html and "1 answer texts cut at 4000 characters" in html
    assert "kb-" in html[html.index('<section id="provenance">'):]


def test_with_vs_the_rows_and_flips_are_those_of_compare(scripted_run, tmp_path):
    curate, folder = scripted_run
    base = run(curate.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "perfect",
               settings=RunSettings(ks=[1, 5]))
    out = tmp_path / "r.html"
    _cli("report", folder, "--vs", base, "--out", out, "--workspace", curate.workspace.root)
    html = out.read_text(encoding="utf-8")
    inputs = read_inputs(folder, curate.workspace)
    expected = compare_runs(scored_run(base), scored_run(folder), items=inputs.items)
    table = html[html.index('<table class="grid" id="compare-table">'):]
    table = table[:table.index("</table>")]
    rows = re.findall(r"<tr class=\"[^\"]*\"><td>([^<]*)</td><td>([^<]*)</td><td class=\"num\">(\d+)</td>", table)
    assert rows == [(r.metric, r.subset, str(r.n)) for r in expected.rows]
    document = unpacked(html)
    flips = sorted((e["id"], document["metrics"][m], change) for e in document["items"] for m, change, _ in e.get("fl", []))
    assert flips == sorted((f.item_id, f.metric, f.change) for f in expected.flips) and flips
    flip_table = html[html.index("<h3>Item flips (0/1 metrics)</h3>"):html.index('<section id="funnel">')]
    for count in expected.flip_counts:
        if count.lost or count.gained:
            assert (f"<td>{count.metric}</td><td class=\"num\">{count.pairs}</td><td class=\"num\">{count.lost}</td>"
                    f"<td class=\"num\">{count.gained}</td>") in flip_table
    assert "no judge in this metric" in flip_table          # retrieval flips: nothing to hold against a judge


def test_the_headline_cards_are_the_summary_s_numbers_with_interval_and_n(scripted_run, tmp_path):
    from evalrun.views import format_summary
    curate, folder = scripted_run
    out = tmp_path / "r.html"
    write_report(folder, out=out, workspace=curate.workspace)
    html = out.read_text(encoding="utf-8")
    cards = html[html.index('<div class="cards">'):]
    cards = cards[:cards.index("</div></div>\n") + 12]
    overall = scored_run(folder).summary.metrics["all"]
    for label, metric in (("candidates recall@5", "candidates/recall@5"), ("context recall@5", "context/recall@5")):
        value, ci, n = format_summary(overall[metric])
        assert (f'<div class="label">{label}</div><div class="value">{value}</div><div class="ci">{ci}</div>'
                f'<div class="n">n = {n}</div>') in cards
    assert '<div class="value unscored">unscored</div>' in cards     # no judge here: correctness is unscored, not 0
    reason = scored_run(folder).summary.layers["generation"].removeprefix("unscored: ")
    assert f"Generation layer not scored: {reason}. Its metrics are unscored, never 0." in html


def test_errors_are_one_line_naming_the_folder(scripted_run, tmp_path):
    curate, folder = scripted_run
    not_a_run = tmp_path / "empty"
    not_a_run.mkdir()
    result = _cli("report", not_a_run, "--out", tmp_path / "r.html", "--workspace", curate.workspace.root, code=2)
    assert result.stderr.strip() == f"error: {not_a_run} is not a run folder (no manifest.json); `evalrun run` writes one"
    unscored = tmp_path / "unscored"
    unscored.mkdir()
    (unscored / "manifest.json").write_text((folder / "manifest.json").read_text())
    result = _cli("report", unscored, "--out", tmp_path / "r.html", "--workspace", curate.workspace.root, code=2)
    assert len(result.stderr.strip().splitlines()) == 1 and f"{unscored} has not been scored yet" in result.stderr
    from curate import init_workspace
    other = init_workspace(tmp_path / "other")
    result = _cli("report", folder, "--out", tmp_path / "r.html", "--workspace", other.root, code=2)
    assert len(result.stderr.strip().splitlines()) == 1
    assert f"the release faq@v1 of run {folder} cannot be read from workspace {other.root}" in result.stderr
    assert not (tmp_path / "r.html").exists()
    # into the run folder, and over an existing report: both fine
    _cli("report", folder, "--out", folder / "report.html", "--workspace", curate.workspace.root)
    _cli("report", folder, "--out", folder / "report.html", "--workspace", curate.workspace.root)
    assert (folder / "report.html").stat().st_size > 10_000


def test_the_page_is_chinese_when_most_items_are():
    def item(n, language):
        return EvalItem(id=f"i{n}", question="?", language=language, source="human")
    assert page_language([item(1, "zh"), item(2, "zh"), item(3, "en")]) == "zh"
    assert page_language([item(1, "zh"), item(2, "en")]) == "en"


def test_markup_in_questions_tags_and_answers_is_text_never_markup(scripted_run):
    from evalrun.report.render import render
    curate, folder = scripted_run
    inputs = read_inputs(folder, curate.workspace)
    hostile = "</svg></script><script>alert(1)</script><img src=x onerror=alert(2)>"
    inputs.items[0].question = hostile
    inputs.items[0].tags = [hostile]
    summary = inputs.run.summary
    summary.metrics[f"tag={hostile}"] = summary.metrics["all"]
    summary.attribution[hostile] = 1
    page, _ = render(inputs)
    assert "<script>alert(1)" not in page and "<img src=x" not in page
    assert page.count("<script") == 2            # the items' data and the page's own script, nothing else
    document = unpacked(page)
    assert document["items"][0]["q"] == hostile   # the text itself is kept, as text
