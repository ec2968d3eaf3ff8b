"""A KB of two pages that hold one sentence word for word under different headings: exact-copy chunks."""

from __future__ import annotations

from pathlib import Path

from curate.kb import ingest

REFUND = "退款申请须在收货后30天内通过订单页面提交，逾期不予受理。"


def ingest_copied_pages(workspace, tmp_path: Path, name: str = "shop") -> str:
    """Ingest docs/a.zh.md and docs/b.zh.md, each the refund sentence under its own heading, as `name`
    (chunks of 40, so each page is one chunk); return the sentence."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.zh.md").write_text("# 售后\n\n" + REFUND, encoding="utf-8")
    (docs / "b.zh.md").write_text("# 退款\n\n" + REFUND, encoding="utf-8")
    ingest(workspace, [docs], name=name, chunk_size=40)
    return REFUND
