"""curate's terminal output prints the user's text as written: markup in a question, a title or a reason
is text, never a style that eats it."""

import io

from curate.cli.display import console, table


def test_markup_in_the_users_text_is_printed_as_written():
    out = console()
    out.file = io.StringIO()
    out.print(table(None, ("item", "question"), [("q-1", "[bold]LG-4031[/bold] 是什么意思？ [judge]")]))
    out.print("not made: set [generator] (or [judge]) base_url")
    text = out.file.getvalue()
    assert "[bold]LG-4031[/bold] 是什么意思？ [judge]" in text
    assert "set [generator] (or [judge]) base_url" in text


def test_generate_prints_a_title_with_brackets_whole(curate, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")   # no cell is wrapped
    docs = tmp_path / "docs"
    docs.mkdir()
    for year, amount in (("2025", 500), ("2026", 650)):
        (docs / f"travel-{year}.md").write_text(f"---\ntitle: '[draft] {year}年差旅制度'\n---\n# 住宿补贴\n\n"
                                               f"一线城市每日住宿补贴为 {amount} 元，须凭发票报销。\n", encoding="utf-8")
    curate("kb", "ingest", docs, "--name", "kb")
    out = curate("generate", "--dataset", "gen", "--n", "2").stdout
    assert "根据《[draft] 202" in out
