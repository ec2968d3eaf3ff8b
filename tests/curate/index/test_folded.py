"""The folded texts of a lexical index (folded.txt): read back a text at a time as they were written; bytes
other than those written, or another number of lines, are refused (the index is then built again)."""

from __future__ import annotations

import zlib

import pytest

from curate.index.folded import FILE, FoldedTexts, write_folded

TEXTS = ["退款期限为十四天", "", "refundtakes14days", "a+与c#占50%"]


def test_texts_read_back_as_written_one_at_a_time(tmp_path):
    crc32 = write_folded(tmp_path, TEXTS)
    assert (tmp_path / FILE).read_bytes() == "\n".join(TEXTS).encode("utf-8")
    texts = FoldedTexts.read(tmp_path, len(TEXTS), crc32)
    assert list(texts) == TEXTS and texts[1:3] == TEXTS[1:3] and texts[-1] == TEXTS[-1]
    assert list(texts.followed_by(["发票"])) == TEXTS + ["发票"] and list(texts) == TEXTS


def test_positions_of_compares_the_stored_bytes(tmp_path):
    texts = FoldedTexts.read(tmp_path, len(TEXTS), write_folded(tmp_path, TEXTS)).followed_by(["refundtakes14days"])
    # the same length is not the same text; the texts after the stored ones count only under `below`
    assert texts.positions_of({"refundtakes14days", "退款期限为十四日", ""}, below=4) == [1, 2]
    assert texts.positions_of({"refundtakes14days"}, below=5) == [2, 4]


def test_other_bytes_or_another_count_are_refused(tmp_path):
    crc32 = write_folded(tmp_path, TEXTS)
    with pytest.raises(ValueError, match="damaged"):
        FoldedTexts.read(tmp_path, len(TEXTS), crc32 ^ 1)
    with pytest.raises(ValueError, match="5 texts were stored"):
        FoldedTexts.read(tmp_path, 5, crc32)
    data = "\n".join(TEXTS[:2]).encode("utf-8")
    (tmp_path / FILE).write_bytes(data)
    with pytest.raises(ValueError, match="2 lines where 4"):
        FoldedTexts.read(tmp_path, 4, zlib.crc32(data))
    with pytest.raises(ValueError, match="no text was stored"):
        FoldedTexts(b"x", 0)
    assert len(FoldedTexts(b"", 0)) == 0 and list(FoldedTexts(b"", 1)) == [""]


def test_a_text_with_a_line_break_is_never_written(tmp_path):
    with pytest.raises(ValueError, match="no line break"):
        write_folded(tmp_path, ["a\nb"])
