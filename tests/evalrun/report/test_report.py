"""`evalrun report`: what the page is built from, checked on a run whose funnel is counted by hand."""

from __future__ import annotations

import base64
import gzip
import json
import re
from html import escape

from click.testing import CliRunner

from curate import EvalItem
from evalrun.cli.main import cli as evalrun_cli
from evalrun.compare.comparison import compare_runs, scored_run
from evalrun.records import RunSettings
from evalrun.compare.verdict import label
from evalrun.report.comparison import primary_rows
from evalrun.report import write_report
from evalrun.report.gather import funnels, page_language, read_inputs
from evalrun.report.items import CAPS, item_payload
from evalrun.runner import run
from tests.evalrun.report.conftest import LONG_ANSWER
from tests.support import targets


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


def _rows_of(html: str, table_id: str) -> list[tuple[str, str, str]]:
    """Return (metric, subset, n) of every row of one comparison table of a page."""
    table = html[html.index(f'id="{table_id}"'):]
    table = table[:table.index("</table>")]
    return re.findall(r"<tr class=\"[^\"]*\"><td>([^<]*)</td><td>([^<]*)</td><td class=\"num\">(\d+)</td>", table)


def test_with_vs_the_rows_and_flips_are_those_of_compare(versus_run, tmp_path):
    curate, folder, base = versus_run
    out = tmp_path / "r.html"
    _cli("report", folder, "--vs", base, "--out", out, "--workspace", curate.workspace.root)
    html = out.read_text(encoding="utf-8")
    inputs = read_inputs(folder, curate.workspace)
    expected = compare_runs(scored_run(base), scored_run(folder), items=inputs.items)
    primary = primary_rows(expected)           # in the family's order
    assert _rows_of(html, "primary-table") == [(r.metric, r.subset, str(r.n)) for r in primary] and primary
    document = unpacked(html)
    # the exploratory table shows the rows on "all" and the significant ones; the page's script draws the others
    explored = _rows_of(html, "exploratory-table") + [tuple(cells[:3]) for cells in document["explore"]]
    assert sorted(explored) == sorted((r.metric, r.subset, str(r.n)) for r in expected.rows if not r.primary)
    flips = sorted((e["id"], document["metrics"][m], change) for e in document["items"] for m, change, _ in e.get("fl", []))
    assert flips == sorted((f.item_id, f.metric, f.change) for f in expected.flips) and flips
    flip_table = html[html.index("<h3>Item flips (0/1 metrics)</h3>"):html.index('<section id="funnel">')]
    for count in expected.flip_counts:
        if count.lost or count.gained:
            assert (f"<td>{count.metric}</td><td class=\"num\">{count.pairs}</td><td class=\"num\">{count.lost}</td>"
                    f"<td class=\"num\">{count.gained}</td>") in flip_table
    assert "no judge in this metric" in flip_table          # retrieval flips: nothing to hold against a judge


def test_the_flipped_items_are_named_primary_metrics_first(versus_run, tmp_path):
    from evalrun.report import comparison as page_comparison
    curate, folder, base = versus_run
    out = tmp_path / "r.html"
    write_report(folder, out=out, workspace=curate.workspace, vs=base)
    html = out.read_text(encoding="utf-8")
    flips = html[html.index("<h3>Item flips (0/1 metrics)</h3>"):html.index('<section id="funnel">')]
    groups = re.findall(r'<table class="grid flips" data-metric="([^"]+)">', flips)
    assert groups[0] == "context/recall@5"               # the one 0/1 primary metric, before every other
    assert flips.index('<details id="flips-exploratory">') > flips.index('data-metric="context/recall@5"')
    first = flips[flips.index('data-metric="context/recall@5"'):]
    first = first[:first.index("</table>")]
    # t-2: its gold was in BASE's context and is cut from NEW's; t-3: retrieved no gold at all in NEW
    assert ('<tr class="flip lost" data-open="t-2" tabindex="0" title="open the item"><td><code>t-2</code></td>'
            '<td lang="en">What does version 3.2 change about the upstream timeout?</td><td class="no">lost</td>'
            '<td>generation_miss → context_cut</td><td>no judge</td></tr>') in first
    assert '<td lang="zh">默认每分钟可以发多少次请求？</td>' in first
    assert "<h4 class=\"flip-metric\">context/recall@5 <span class=\"badge\">primary</span>: 2 lost, 0 gained</h4>" in flips
    # a long list is capped, and says how many it does not list
    many = page_comparison.flip_groups(read_inputs(folder, curate.workspace, base).comparison, {})
    assert all(len(g.rows) == min(page_comparison.MAX_FLIPS, g.lost + g.gained) for g in many)


def test_a_long_flip_list_says_how_many_it_does_not_list(versus_run, tmp_path, monkeypatch):
    from evalrun.report import comparison as page_comparison
    from evalrun.report.render import render
    monkeypatch.setattr(page_comparison, "MAX_FLIPS", 1)
    curate, folder, base = versus_run
    page, _ = render(read_inputs(folder, curate.workspace, base))
    group = page[page.index('<table class="grid flips" data-metric="context/recall@5">'):]
    group = group[:group.index("</p>")]
    assert group.count('<tr class="flip') == 1
    assert ("and 1 more (1 lost, 0 gained) not listed here: choose “context/recall@5 lost” or “gained” in the item "
            "table's flip filter") in group


def test_the_verdict_leads_the_page_with_the_compare_lines(versus_run, tmp_path):
    from evalrun import numbers
    curate, folder, base = versus_run
    out = tmp_path / "r.html"
    write_report(folder, out=out, workspace=curate.workspace, vs=base)
    html = out.read_text(encoding="utf-8")
    verdict = html[html.index('<section id="verdict"'):]
    verdict = verdict[:verdict.index("</section>")]
    assert html.index('<section id="verdict"') < html.index('<section id="notices">') < html.index('<section id="headline">')
    comparison = read_inputs(folder, curate.workspace, base).comparison
    v = comparison.verdict
    assert v.outcome == "no detectable difference"        # five items: nothing can be significant
    assert verdict.startswith('<section id="verdict" class="verdict same">')
    assert f'<span class="outcome-badge same">{v.outcome}</span> <span class="sentence">{v.sentence}</span>' in verdict
    for line in [*v.caveats, *v.costs, *v.against, *v.judge]:
        assert f">{escape(line)}</li>" in verdict
    assert v.caveats and "Too few items to detect anything" in v.caveats[0]
    # one card per primary row: BASE -> NEW, the change and its interval, as evalrun.numbers writes them
    row = comparison.row("context/recall@5")
    card = (f'<div class="card same" title="{escape(next(c for c in v.changes if c.startswith("context/recall@5")))}" '
            f'data-metric="context/recall@5"><div class="label">context/recall@5</div><div class="value">100.0% → 33.3%'
            f'</div><div class="change">{numbers.difference(row.metric, row.difference)}</div><div class="ci">95% CI '
            f'{numbers.interval(row.metric, row.ci95)}</div><div class="n">p {numbers.p_value(row.p_adjusted)} (Holm over '
            f'{comparison.compared}) · n 3 · no detectable change</div></div>')
    assert card in verdict
    assert verdict.count('<div class="card ') == comparison.compared == len(comparison.family)
    # the forest plot: one line per primary row, against zero
    section = html[html.index('<section id="comparison">'):]
    forest = section[section.index('<div id="forest">'):section.index("</svg>") + 6]
    assert "<svg" in forest and "percentage points" in forest
    for name in comparison.family:
        assert escape(label(name)) in forest or escape(label(name)) in section   # drawn, or said why not
    # the primary table is open, the exploratory one folded and labelled with p and q
    assert '<details id="exploratory"><summary>Exploratory rows' in section
    assert section.index('id="primary-table"') < section.index('<details id="exploratory">')
    exploratory = section[section.index('<details id="exploratory">'):section.index("</details>")]
    assert "<th>p</th><th>q (BH)</th>" in exploratory and 'id="exploratory-table"' in exploratory


def test_the_cards_are_coloured_by_significance_and_direction(versus_run):
    from evalrun.report.render import render
    curate, folder, base = versus_run
    inputs = read_inputs(folder, curate.workspace, base)
    comparison = inputs.comparison
    # the page draws what the comparison decided: made significant here, to see each colour
    recall, f1 = comparison.row("context/recall@5"), comparison.row("lexical/f1")
    recall.significant = recall.worse = True
    f1.significant = f1.better = True
    page, _ = render(inputs)
    verdict = page[page.index('<section id="verdict"'):page.index('<section id="notices">')]
    assert re.search(r'<div class="card worse" title="[^"]*" data-metric="context/recall@5">', verdict)
    assert re.search(r'<div class="card better" title="[^"]*" data-metric="lexical/f1">', verdict)
    assert re.search(r'<div class="card same" title="[^"]*" data-metric="unanswerable/correct_refusal">', verdict)
    assert "significantly worse</div>" in verdict and "significantly better</div>" in verdict
    primary = page[page.index('id="primary-table"'):]
    assert '<tr class="worse significant"><td>context/recall@5</td>' in primary
    assert '<tr class="better significant"><td>lexical/f1</td>' in primary
    from evalrun.report.charts import CHANGE_COLOURS
    forest = page[page.index('<div id="forest">'):]
    forest = forest[:forest.index("</svg>")]
    assert CHANGE_COLOURS["worse"] in forest and CHANGE_COLOURS["better"] in forest


def test_the_items_carry_base_s_answer_context_and_values(versus_run):
    curate, folder, base = versus_run
    inputs = read_inputs(folder, curate.workspace, base)
    document, _ = item_payload(inputs)
    assert document["base"]["target"] == "tests.support.targets:perfect" and document["base"]["note"] is None
    by_id = {e["id"]: e for e in document["items"]}
    chunk_ids = document["chunks"]["id"]
    t2 = by_id["t-2"]
    assert t2["b"]["o"] == "an answer" and t2["o"] == "It goes to 30 seconds."
    gold = inputs.targets["t-2"][1]
    assert [chunk_ids[c] for c, _ in t2["b"]["x"]] == [c for c in targets.GOLD[inputs.items[1].question]]
    assert all(group is not None for _, group in t2["b"]["x"])              # BASE's context: the gold
    assert [chunk_ids[c] for c, _ in t2["x"]] == [targets.DISTRACTOR] and t2["x"][0][1] is None
    assert set(chunk_ids[c] for c, _ in t2["b"]["x"]) <= set(gold)
    recall, candidates = (document["metrics"].index(m) for m in ("context/recall@5", "candidates/recall@5"))
    position = document["items"].index(t2)
    # BASE's values where they differ from NEW's: recall@5 of the context fell 1 -> 0, of the candidates it did not
    assert [recall, 1] in t2["b"]["v"] and document["values"][recall][position] == 0
    assert candidates not in [m for m, _ in t2["b"]["v"]] and document["values"][candidates][position] == 1
    base_row = inputs.base_rows["t-2"]
    new_row = inputs.rows["t-2"]
    assert sorted(document["metrics"][m] for m, _ in t2["b"]["v"]) == sorted(
        m for m in base_row.values.keys() | new_row.values.keys()
        if round(base_row.values.get(m, -1), 4) != round(new_row.values.get(m, -1), 4))
    assert t2["b"]["ms"] == 25.0 and t2["ms"] == 40.0
    # per-item tokens where the run recorded them, absent (never 0) where not
    assert t2["b"].get("tk") == base_row.end_to_end.tokens and t2.get("tk") == new_row.end_to_end.tokens
    without, _ = item_payload(read_inputs(folder, curate.workspace))
    assert "base" not in without and all("b" not in e for e in without["items"])


def test_an_item_s_tokens_and_cost_are_read_when_its_run_recorded_them():
    from types import SimpleNamespace
    from evalrun.report.items import end_to_end
    row = SimpleNamespace(end_to_end=SimpleNamespace(tokens=120, cost=0.00042, latency_ms=30.0, warmup=False))
    trace = SimpleNamespace(latency_ms={"total": 30.04})
    assert end_to_end(row, trace) == {"ms": 30.0, "tk": 120, "usd": 0.00042}
    assert end_to_end(SimpleNamespace(end_to_end=SimpleNamespace(tokens=None, cost=None)), None) == {}
    assert end_to_end(SimpleNamespace(), None) == {} and end_to_end(None, None) == {}


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


def test_base_s_answers_share_one_budget_and_the_page_says_what_was_cut(versus_run, monkeypatch):
    from evalrun.report import items
    from evalrun.report.render import render
    monkeypatch.setattr(items, "BASE_ANSWER_BUDGET", 12)
    curate, folder, base = versus_run
    page, cuts = render(read_inputs(folder, curate.workspace, base))
    document = unpacked(page)
    answers = [e["b"]["o"] for e in document["items"] if "o" in e.get("b", {})]
    assert len(answers) == 4 and document["base"]["answer_cap"] == 3            # "an answer" x 4 in 12 characters
    assert all(a == ["an ", 9] for a in answers) and cuts["BASE answer"] == 4
    assert ("4 BASE answer texts cut at 3 characters (BASE's answers share a budget of 12 characters in one "
            "page)") in page
