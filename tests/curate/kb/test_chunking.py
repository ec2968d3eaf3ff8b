import random

import pytest

from curate.kb.chunking import fixed_spans, structure_spans
from curate.text.sentences import sentence_spans
from curate.kb import chunk_documents, read_documents
from curate.records import ChunkerSettings

from tests.support import DATA

ZH = "第一段。它有两句！\n\n第二段很长，" + "内容" * 200 + "。结尾；真的结束了？\n\n# 标题\n\n最后一段。"
EN = "First paragraph. It has two sentences!\n\nSecond one is long, " + "words " * 150 + "end. Done?\n\n## Heading\n\nLast."


@pytest.mark.parametrize("text", [ZH, EN])
@pytest.mark.parametrize("size", [20, 64, 500])
def test_every_chunk_is_its_source_span(text, size):
    for spans in (structure_spans(text, size=size), fixed_spans(text, size=size, overlap=size // 4)):
        assert spans
        for span in spans:
            assert 0 <= span.start < span.end <= len(text)
            assert len(text[span.start:span.end]) <= size
            assert text[span.start:span.end] == text[span.start:span.end].strip()


@pytest.mark.parametrize("text", [ZH, EN])
def test_structure_chunks_cover_all_non_space_text(text):
    spans = structure_spans(text, size=50)
    covered = set()
    for span in spans:
        covered.update(range(span.start, span.end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


def test_random_texts_keep_offsets():
    rng = random.Random(7)
    alphabet = "ab c。！？；.!?;\n#中文字"
    for _ in range(200):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300)))
        for span in structure_spans(text, size=rng.randint(1, 40)) + fixed_spans(text, size=13, overlap=3):
            assert text[span.start:span.end] and not text[span.start].isspace()


def test_sentences_end_at_chinese_and_english_marks():
    text = "价格是3.5元。真的吗？是的；好！Version 3.2 is out. Really? Yes; ok!"
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "价格是3.5元。", "真的吗？", "是的；", "好！", "Version 3.2 is out.", "Really?", "Yes;", "ok!"]


def test_heading_starts_a_chunk_and_names_its_section():
    text = "# A\n\nalpha.\n\n## B\n\nbeta.\n\n# C\n\ngamma."
    spans = structure_spans(text, size=1000)
    assert [text[s.start:s.end] for s in spans] == ["# A\n\nalpha.", "## B\n\nbeta.", "# C\n\ngamma."]
    assert [s.section for s in spans] == ["A", "A > B", "C"]


def test_long_paragraph_splits_at_sentence_ends():
    text = "一二三四五。六七八九十。" * 3
    spans = structure_spans(text, size=12)
    assert [text[s.start:s.end] for s in spans] == ["一二三四五。六七八九十。"] * 3


def test_fixed_windows_overlap():
    text = "0123456789" * 3
    spans = fixed_spans(text, size=10, overlap=4)
    assert [(s.start, s.end) for s in spans] == [(0, 10), (6, 16), (12, 22), (18, 28), (24, 30)]


def test_fixed_rejects_overlap_not_below_size():
    with pytest.raises(ValueError):
        fixed_spans("abc", size=5, overlap=5)


def test_chunk_documents_from_files_zh_and_en():
    documents = read_documents([DATA / "docs"])
    assert {d.doc_id for d in documents} == {"errors.zh.md", "upgrade.en.md"}
    by_id = {d.doc_id: d for d in documents}
    assert by_id["errors.zh.md"].title == "错误码说明"
    for settings in (ChunkerSettings(kind="structure", size=80), ChunkerSettings(kind="fixed", size=80, overlap=20)):
        chunks = chunk_documents(documents, settings)
        assert len({c.chunk_id for c in chunks}) == len(chunks)
        for chunk in chunks:
            assert by_id[chunk.doc_id].text[chunk.start:chunk.end] == chunk.text


def test_over_long_english_sentence_is_cut_between_words_and_its_tail_packs_on():
    sentence = " ".join(["immunohistochemistry"] * 12) + "."
    text = sentence + " Short one. Another."
    spans = structure_spans(text, size=100)
    pieces = [text[s.start:s.end] for s in spans]
    assert all(len(p) <= 100 for p in pieces)
    assert all(set(p.replace(".", "").split()) <= {"immunohistochemistry", "Short", "one", "Another"} for p in pieces)
    # 4 words (83 characters) fit a window; the 3rd piece (84) takes the next sentence (95)
    assert [len(p) for p in pieces] == [83, 83, 95, 8] and pieces[-1] == "Another."


def test_over_long_chinese_sentence_is_cut_at_the_window():
    text = "字" * 25 + "。后面一句。"
    assert [text[s.start:s.end] for s in structure_spans(text, size=12)] == ["字" * 12, "字" * 12, "字。后面一句。"]


LEAVE_ZH = """# 休假制度

## 年假

员工入职满一年后享有 10 天带薪年假，每多工作一年增加 1 天，最多 15 天。

## 病假

### 全薪病假

病假每年有 5 天全薪。超过 5 天的部分按基本工资的 80% 发放。

## 附录
"""
TRAVEL_EN = """# Travel and expenses

## Hotels

Hotel costs are reimbursed up to 150 euros per night in most cities.

## Claims
### Deadlines

Submit every claim within 30 days of the expense, with the receipt attached.

## See also
"""


def _is_only_headings(piece):
    return all(line.lstrip().startswith("#") for line in piece.splitlines() if line.strip())


@pytest.mark.parametrize("size", [40, 60, 100, 200, 500])
@pytest.mark.parametrize("text", [LEAVE_ZH, TRAVEL_EN], ids=["zh", "en"])
def test_no_chunk_is_only_headings(text, size):
    spans = structure_spans(text, size=size)
    pieces = [text[s.start:s.end] for s in spans]
    assert not [p for p in pieces if _is_only_headings(p)]
    assert all(len(p) <= size for p in pieces)
    covered = {i for s in spans for i in range(s.start, s.end)}
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


def test_consecutive_headings_join_the_text_under_the_last():
    spans = structure_spans(LEAVE_ZH, size=500)
    pieces = [LEAVE_ZH[s.start:s.end] for s in spans]
    assert pieces[0].startswith("# 休假制度\n\n## 年假\n\n员工入职满一年后") and spans[0].section == "休假制度 > 年假"
    assert pieces[1].startswith("## 病假\n\n### 全薪病假\n\n病假每年") and spans[1].section == "休假制度 > 病假 > 全薪病假"
    assert pieces[-1].endswith("按基本工资的 80% 发放。\n\n## 附录")   # a heading that ends the document
    spans = structure_spans(TRAVEL_EN, size=500)
    assert [s.section for s in spans] == ["Travel and expenses > Hotels", "Travel and expenses > Claims > Deadlines"]
    assert TRAVEL_EN[spans[1].start:spans[1].end].startswith("## Claims\n### Deadlines\n\nSubmit every claim")


def test_text_too_long_to_sit_beside_its_heading_is_cut_so_the_heading_is_never_alone():
    en = "# Title\n\n" + "word " * 8 + "end."
    assert [en[s.start:s.end] for s in structure_spans(en, size=30)] == ["# Title\n\nword word word word", "word word word word end."]
    zh = "# 标题\n\n" + "字" * 30 + "。"
    assert [zh[s.start:s.end] for s in structure_spans(zh, size=20)] == ["# 标题\n\n" + "字" * 14, "字" * 16 + "。"]
