"""`evalrun report` of a run whose retrieval the judge graded (--judge-retrieval): the section says what
`evalrun show` says, the judged/ metrics stay apart from the labelled ones, the judge's reasons are text,
possibly missing evidence is listed and opens its item; a run made before the feature, and a run whose
grades file is missing or damaged, still report."""

from __future__ import annotations

import json
import re
import pytest
from click.testing import CliRunner
from markupsafe import escape

from curate import read_judged_grades
from evalrun.cli.main import cli as evalrun_cli
from evalrun.records import RunSettings, scored_run
from evalrun.report import write_report
from evalrun.report.comparison import judged
from evalrun.report.gather import read_inputs
from evalrun.runner import run
from evalrun.views import format_summary, judged_lines, judged_names
from tests.evalrun.report.conftest import HOSTILE_REASON
from tests.evalrun.report.test_report import unpacked

DISTRACTOR = "upgrade.en.md#0"


def _section(html: str, name: str) -> str:
    start = html.index(f'<section id="{name}">')
    return html[start:html.index("</section>", start)]


def _report(workspace, folder, out, *more) -> str:
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["report", str(folder), "--out", str(out), *map(str, more),
                                                              "--workspace", str(workspace.root)])
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return out.read_text(encoding="utf-8")


def test_the_section_says_what_the_judge_graded_apart_from_the_labels(judged_run, tmp_path):
    curate, folder = judged_run
    html = _report(curate.workspace, folder, tmp_path / "r.html")
    summary = scored_run(folder).summary
    section = summary.judged_retrieval
    assert section.status == "scored" and section.k == 5
    page = _section(html, "judged-retrieval")
    assert '<a href="#judged-retrieval">Judged retrieval</a>' in html
    # the words of `evalrun show`, each a line
    lines = judged_lines(section)
    assert len(lines) == 3
    for line in lines:
        assert f'<p class="judged-line">{escape(line)}</p>' in page
    assert "notice bad" not in page                      # nothing was refused: no warning
    # the judged/ metrics side by side, as the labelled table has them; and only there
    overall = summary.metrics["all"]
    names = judged_names(overall)
    assert names == ["hit_rate@1", "hit_rate@5", "mrr@1", "mrr@5", "ndcg@1", "ndcg@5", "precision@1", "precision@5"]
    for name in names:
        cells = [*format_summary(overall[f"judged/candidates/{name}"]),
                 *format_summary(overall[f"judged/context/{name}"])]
        assert (f'<tr><td>{name}</td><td class="num">{cells[0]}</td><td class="ci">{cells[1]}</td><td class="n">'
                f'{cells[2]}</td><td class="num">{cells[3]}</td><td class="ci">{cells[4]}</td><td class="n">{cells[5]}'
                f'</td></tr>') in page
    # perfect puts the distractor first, graded 2 on every item: judged hit rate 1 at K = 1 on the candidates;
    # the context is the gold alone, graded 2 only on t-1 (the chunk naming LG-4031)
    assert overall["judged/candidates/hit_rate@1"].mean == 1.0 and overall["judged/context/hit_rate@1"].mean == 1 / 4
    headline = _section(html, "headline")
    assert "judged/" not in headline
    # the agreement with the labels: overall and per language, and the 3 x 3 table of grades
    agreement = page[page.index('id="judged-agreement"'):]
    found = section.agreement
    assert found.chunks == 8 and found.items == 4 and found.confusion["2"]["0"] == 4
    assert (f'<tr><td>all</td><td class="num">8</td><td class="num">4</td><td class="num">12.5%</td><td class="num">'
            f'{found.kappa:.2f}</td><td class="ci">[{found.kappa_ci95[0]:.2f}, {found.kappa_ci95[1]:.2f}]</td></tr>'
            ) in agreement
    assert '<tr><td>en</td><td class="num">4</td><td class="num">2</td><td class="num">0.0%</td>' in agreement
    assert '<tr><td>zh</td><td class="num">4</td><td class="num">2</td><td class="num">25.0%</td>' in agreement
    confusion = page[page.index('id="judged-confusion"'):]
    for grade in ("2", "1", "0"):
        counts = "".join(f'<td class="num">{found.confusion[grade][label]}</td>' for label in ("2", "1", "0"))
        assert f"<tr><th>{grade}</th>{counts}</tr>" in confusion
    # possibly missing evidence: the distractor on every labelled item, a row opening its item
    assert section.possibly_missing == {item: [DISTRACTOR] for item in ("t-1", "t-2", "t-3", "t-4")}
    listed = page[page.index('id="possibly-missing"'):]
    for item in section.possibly_missing:
        assert (f'<tr data-open="{item}" tabindex="0" title="open the item"><td><code>{item}</code></td><td><code>'
                f'{DISTRACTOR}</code></td><td>{escape(HOSTILE_REASON)}</td></tr>') in listed


def test_the_judges_reasons_are_text_never_markup(judged_run, tmp_path):
    curate, folder = judged_run
    html = _report(curate.workspace, folder, tmp_path / "r.html")
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.count("<script") == 2            # the items' data and the page's own script, nothing else
    document = unpacked(html)
    reasons = {g[2] for entry in document["items"] for g in entry.get("jg", [])}
    assert HOSTILE_REASON in reasons              # kept as the judge wrote it, for the page's textContent


def test_an_item_carries_the_judges_grade_of_each_chunk(judged_run, tmp_path):
    curate, folder = judged_run
    document = unpacked(_report(curate.workspace, folder, tmp_path / "r.html"))
    assert document["judged"] == {"status": "scored", "k": 5, "problem": None}
    ids = document["chunks"]["id"]
    grades = read_judged_grades(folder)
    by_id = {entry["id"]: entry for entry in document["items"]}
    for item_id, record in grades.items():
        entry = by_id[item_id]
        assert [[ids[c], grade, reason, copy] for c, grade, reason, copy in entry["jg"]] == [
            [g.chunk_id, g.grade, g.reason, g.copy_of] for g in record.grades]
        assert [ids[c] for c in entry["jm"]] == record.possibly_missing == [DISTRACTOR]
        assert "jn" not in entry                 # every chunk was graded
        # each graded chunk is one the item's view draws: among its candidates or its context
        shown = {ids[c] for c, *_ in entry["c"]} | {ids[c] for c, *_ in entry["x"]}
        assert {ids[c] for c, *_ in entry["jg"]} <= shown
    assert "jg" not in by_id["t-5"]                # unanswerable: not graded
    t1 = {ids[c]: grade for c, grade, *_ in by_id["t-1"]["jg"]}
    assert t1 == {"errors.zh.md#1": 2, DISTRACTOR: 2}


def test_a_run_made_before_judged_retrieval_reports_without_the_section(scripted_run, tmp_path):
    curate, folder = scripted_run
    # as a run scored before the feature wrote it: no judged_retrieval in the summary, no settings for it
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert summary.pop("judged_retrieval") is None
    summary["schema_version"] = 5
    (folder / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    for key in ("judge_retrieval", "judge_retrieval_k", "budget_usd", "budget_tokens"):
        manifest["settings"].pop(key)
    manifest["schema_version"] = 5
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert not (folder / "retrieval_grades.jsonl").exists()
    html = _report(curate.workspace, folder, tmp_path / "r.html")
    assert 'id="judged-retrieval"' not in html and "Judged retrieval" not in html and "judged/" not in html
    document = unpacked(html)
    assert "judged" not in document and not any(key in entry for entry in document["items"]
                                                for key in ("jg", "jn", "jm"))


@pytest.mark.parametrize("damage", ["missing", "not json", "a grade of 7", "bad bytes", "a folder"])
def test_a_damaged_grades_file_leaves_the_page_whole_and_says_so(judged_run, tmp_path, damage):
    curate, folder = judged_run
    path = folder / "retrieval_grades.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    if damage == "missing":
        path.unlink()
    elif damage == "not json":
        path.write_text(lines[0] + "\n{\"item_id\": \"t-2\", \"grades\": [\n", encoding="utf-8")
    elif damage == "a grade of 7":
        second = json.loads(lines[1])
        second["grades"][0]["grade"] = 7
        path.write_text(f"{lines[0]}\n{json.dumps(second)}\n", encoding="utf-8")
    elif damage == "bad bytes":
        path.write_bytes(b"\xff\xfe\x00garbage\n")
    else:
        path.unlink()
        path.mkdir()
    html = _report(curate.workspace, folder, tmp_path / "r.html")
    problem = read_inputs(folder, curate.workspace).judged.problem
    assert problem and "retrieval_grades.jsonl" in problem
    page = _section(html, "judged-retrieval")
    assert f"could not be read, so no opened item shows them: {escape(problem)}." in page
    assert f"The judge's grades of each chunk are not shown: {escape(problem)}." in _section(html, "notices")
    # the summary's figures are still there: the table and the possibly missing list (without reasons)
    assert 'id="judged-table"' in page and '<tr data-open="t-1"' in page
    document = unpacked(html)
    assert document["judged"]["problem"] == problem
    assert not any("jg" in entry for entry in document["items"])


def test_a_run_without_a_judge_says_its_judged_metrics_are_unscored(released, tmp_path):
    folder = run(released.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "r",
                 settings=RunSettings(ks=[1, 5], judge_retrieval=True, no_judge=True))
    html = _report(released.workspace, folder, tmp_path / "r.html")
    [line] = judged_lines(scored_run(folder).summary.judged_retrieval)
    page = _section(html, "judged-retrieval")
    assert f'<p class="notice bad">{escape(line)}</p>' in page          # stands out as the page's warnings do
    notices = _section(html, "notices")
    assert f'<p class="notice bad judged-alarm">{escape(line)} (<a href="#judged-retrieval">' in notices
    assert '<td class="num">unscored</td>' in page and 'id="judged-problem"' not in html
    assert "Possibly missing" not in page and 'id="judged-agreement"' not in page


def test_a_reached_budget_stands_out(judged_run, tmp_path):
    from evalrun.report.render import render
    curate, folder = judged_run
    inputs = read_inputs(folder, curate.workspace)
    inputs.run.summary.judged_retrieval.budget, inputs.run.summary.judged_retrieval.budget_refused = "3,000 tokens", 2
    page, _ = render(inputs)
    line = next(line for line in judged_lines(inputs.run.summary.judged_retrieval) if line.startswith("JUDGE BUDGET"))
    assert f'<p class="notice bad">{escape(line)}</p>' in _section(page, "judged-retrieval")
    assert f'<p class="notice bad judged-alarm">{escape(line)}' in _section(page, "notices")


def test_a_comparison_lists_the_judged_rows_apart(judged_run, tmp_path):
    curate, folder = judged_run
    base = run(curate.workspace, ref="faq@v1", target="tests.support.targets:cut", out=tmp_path / "cut",
               settings=RunSettings(ks=[1, 5], judge_retrieval=True))
    html = _report(curate.workspace, folder, tmp_path / "r.html", "--vs", base)
    comparison = read_inputs(folder, curate.workspace, base).comparison
    rows = [r for r in comparison.rows if not r.primary]
    graded = sorted((r.metric, r.subset) for r in rows if judged(r))
    assert graded and all(metric.startswith("judged/") for metric, _ in graded)
    exploratory = html[html.index('<details id="exploratory">'):]
    exploratory = exploratory[:exploratory.index("</details>")]
    labelled = exploratory[exploratory.index('id="exploratory-table"'):exploratory.index('id="judged-rows"')]
    apart = exploratory[exploratory.index('id="judged-exploratory-table"'):]
    assert "judged/" not in labelled and "<td>candidates/recall@5</td>" in labelled
    from tests.evalrun.report.test_report import _rows_of
    document = unpacked(html)
    shown = _rows_of(html, "judged-exploratory-table") + [tuple(cells[:3]) for cells in document["explore_judged"]]
    assert sorted((m, s) for m, s, _ in shown) == graded
    assert not any(cells[0].startswith("judged/") for cells in document["explore"])
    assert "<td>judged/candidates/precision@5</td><td>all</td>" in apart
    # a judged metric's flips: the judge graded each chunk once, so no flip rate of its own is measured
    counts = html[html.index('id="flip-counts"'):]
    counts = counts[:counts.index("</table>")]
    judged_counts = re.findall(r"<tr><td>(judged/[^<]+)</td>.*?</tr>", counts)
    assert judged_counts and counts.count("not measured (the judge grades each chunk once)") == len(judged_counts)
