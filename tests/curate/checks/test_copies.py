"""Duplicate chunks: copies are one text (up to formatting, small edits, boilerplate); overlapping
production windows of one page are neighbours, never copies."""

import json

from curate.checks.copies import chunk_groups
from curate.checks.copy_rule import compare
from curate.index.kb_index import KBIndex
from curate.kb.store import import_chunks
from curate.text.normalize import fold
from curate.text.sentences import sentence_spans

from tests.support import EXAMPLES


def _long_pages() -> dict[str, str]:
    """The longest Chinese paragraph of the bundled CMRC 2018 sample and the longest English SciFact abstract."""
    cmrc = json.loads((EXAMPLES / "cmrc2018" / "cmrc2018_sample.json").read_text(encoding="utf-8"))
    zh = max((p["context"] for a in cmrc["data"] for p in a["paragraphs"]), key=len)
    abstracts = [json.loads(line)["text"] for line in (EXAMPLES / "scifact" / "corpus.jsonl").open(encoding="utf-8")]
    return {"zh-page": zh, "en-page": max(abstracts, key=len)}


def _windows(doc_id: str, text: str, size: int) -> list[dict]:
    """Production chunks: windows of `size` sentences over `text`, each shifted by one sentence."""
    spans = sentence_spans(text)
    rows = []
    for k in range(len(spans) - size + 1):
        start, end = spans[k][0], spans[k + size - 1][1]
        rows.append({"chunk_id": f"{doc_id}#{k}", "doc_id": doc_id, "text": text[start:end], "start": start, "end": end})
    return rows


def _groups(workspace, tmp_path, rows, name="prod"):
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    manifest, _ = import_chunks(workspace, path, name=name)
    groups, withheld = chunk_groups(KBIndex(workspace, manifest.snapshot_id))
    return sorted(tuple(g.chunks) for g in groups), withheld


def _chunk(chunk_id: str, text: str) -> dict:
    return {"chunk_id": chunk_id, "doc_id": chunk_id.split("#")[0], "text": text}


def test_windows_shifted_by_a_sentence_are_neighbours_not_copies(workspace, tmp_path):
    pages = _long_pages()
    rows = _windows("zh-page", pages["zh-page"], 10) + _windows("en-page", pages["en-page"], 8)
    assert len(rows) == 21 + 35             # 30 Chinese sentences, 42 English (one sentence splitter)
    groups, withheld = _groups(workspace, tmp_path, rows)
    assert groups == []                      # the rule before this one joined 7 groups of such windows
    overlaps = [w for w in withheld if w.why == "overlap"]
    # every alike pair (ratio >= 90) is said to overlap, and each names text the other lacks
    assert len(overlaps) == len(withheld) >= 10
    assert {w.a.split("#")[0] for w in overlaps} == {"zh-page", "en-page"}
    assert all(w.differs.startswith("overlapping: each holds text the other lacks") for w in overlaps)


def test_the_cli_says_why_alike_windows_are_not_joined(curate, tmp_path):
    rows = _windows("zh-page", _long_pages()["zh-page"], 10)
    path = tmp_path / "windows.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    curate("kb", "import", path, "--name", "prod")
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "q1", "question": "王处直是谁？", "answerable": False}, ensure_ascii=False) + "\n",
                     encoding="utf-8")
    curate("import", items, "--dataset", "d", "--source", "human", "--kb", "prod")
    result = curate("check-dups", "--dataset", "d", "--kb", "--no-semantic")
    assert "0 groups of duplicate chunks" in result.stdout
    assert "not joined, though alike: 8 pairs of neighbours, not copies (8 overlap:" in result.stdout


def test_a_short_chunk_inside_two_windows_joins_neither_to_the_other(workspace, tmp_path):
    text = _long_pages()["zh-page"]
    windows = _windows("zh-page", text, 10)[3:5]
    spans = sentence_spans(text)
    inner = text[spans[4][0]:spans[12][1]]        # sentences 4-12: inside window 3 (3-12) and window 4 (4-13)
    groups, withheld = _groups(workspace, tmp_path, windows + [_chunk("tail#0", inner)])
    assert groups == []
    assert {w.why for w in withheld} == {"overlap", "contained"}
    contained = [w for w in withheld if w.why == "contained"]
    assert {frozenset((w.a, w.b)) for w in contained} <= {frozenset(("zh-page#3", "tail#0")),
                                                          frozenset(("zh-page#4", "tail#0"))}


def test_copies_up_to_formatting_and_small_edits_are_joined(workspace, tmp_path):
    zh, en = _long_pages()["zh-page"], _long_pages()["en-page"]
    # segmentation spaces between Chinese characters, bold, full-width brackets made ASCII, line breaks
    spaced = "".join(c + " " if "\u4e00" <= c <= "\u9fff" else c for c in zh[:300])
    reformatted = "**" + spaced + "**\n\n" + zh[300:].replace("（", " (").replace("）", ") ").replace("。", "。\n")
    assert fold(reformatted) == fold(zh)
    edited = en.replace("In the central", "In the centre of the").replace("apparent", "aparent", 1)
    groups, _ = _groups(workspace, tmp_path, [_chunk("zh#0", zh), _chunk("zh-copy#0", reformatted),
                                              _chunk("en#0", en), _chunk("en-edited#0", edited)])
    assert groups == [("en#0", "en-edited#0"), ("zh#0", "zh-copy#0")]


FOOTER = "——本文由客服中心整理，© 2024 某某科技。转载请注明出处，更多问题请拨打客服热线 400-800-1234。"


def test_a_copy_with_a_boilerplate_footer_is_a_copy_and_one_with_text_of_its_own_is_not(workspace, tmp_path):
    page = _long_pages()["zh-page"][:400]
    own_sentence = "王处直晚年被养子王都囚禁，后死于囚所。"   # 19 characters no other document holds
    rows = [_chunk("page#0", page), _chunk("page-footer#0", page + FOOTER), _chunk("page-more#0", page + own_sentence)]
    rows += [_chunk(f"other-{n}#0", f"第{n}篇文章的正文内容，与本页无关，讲的是另一件事情。" + FOOTER) for n in range(3)]
    groups, withheld = _groups(workspace, tmp_path, rows)
    # the footer (in 4 documents) is boilerplate: its year and phone number are no facts of the page
    assert groups == [("page#0", "page-footer#0")]
    (more,) = [w for w in withheld if {w.a, w.b} == {"page#0", "page-more#0"}]
    assert more.why == "contained"
    assert "王处直晚年被养子王都囚禁" in more.differs and more.score >= 90   # alike: the old rule joined them


def test_a_footer_only_one_document_holds_is_text_of_its_own(workspace, tmp_path):
    page = _long_pages()["zh-page"][:400]
    groups, withheld = _groups(workspace, tmp_path, [_chunk("page#0", page), _chunk("page-footer#0", page + FOOTER)])
    assert groups == [] and [w.why for w in withheld] == ["contained"]


def test_copies_that_differ_in_a_year_are_still_withheld(workspace, tmp_path):
    page = _long_pages()["zh-page"][:400]
    groups, withheld = _groups(workspace, tmp_path, [_chunk("a#0", page), _chunk("b#0", page.replace("895年", "896年"))])
    assert groups == [] and [(w.why, w.differs) for w in withheld] == [("differs", "895 ≠ 896")]


def test_compare_by_hand():
    one, two, three = "第一句话讲退款的期限", "第二句话讲退款的方式", "第三句话讲发票怎么开"
    assert compare(one + two, two + three).relation == "overlap"
    assert compare(two, one + two).relation == "contained"
    assert compare(one + two + three, one + two + three.replace("怎么", "如何")).relation == "copy"


def test_a_section_under_another_page_title_is_still_a_copy_but_not_under_another_version(workspace, tmp_path):
    """A page's title joins its first section's chunk (no chunk is only headings): copies are compared
    without their headings, and the headings apart, for what they say (a version)."""
    rows = [
        {"chunk_id": "pricing#0", "doc_id": "pricing", "text": "## 退款\n\n购买后 14 天内可以申请全额退款；超过 14 天不予退款。"},
        {"chunk_id": "faq#0", "doc_id": "faq", "text": "# 常见问题\n\n## 退款\n\n购买后 14 天内可以申请全额退款；超过 14 天不予退款。"},
        {"chunk_id": "v2#0", "doc_id": "v2", "text": "# Version 2.1\n\nUploads larger than 2 GB are rejected with error UP-413."},
        {"chunk_id": "v3#0", "doc_id": "v3", "text": "# Version 3.4\n\nUploads larger than 2 GB are rejected with error UP-413."},
    ]
    path = tmp_path / "chunks.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    manifest, _ = import_chunks(workspace, path, name="kb")
    groups, withheld = chunk_groups(KBIndex(workspace, manifest.snapshot_id))
    assert [sorted(g.chunks) for g in groups] == [["faq#0", "pricing#0"]]
    assert [(w.a, w.b) for w in withheld] == [("v2#0", "v3#0")]
