"""The passages of a KB's chunks: each line of a chunk (a list item, a table row, a paragraph), cut
into its sentences. Mining compares passages, not whole chunks: two error codes listed in one chunk,
or two yearly rules in two long chunks, differ in one passage each.
"""

from __future__ import annotations

import re

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from curate.records import Chunk
from curate.records.generated import Passage
from curate.text.normalize import fold
from curate.text.sentences import sentence_spans, trim_span

LINE_MAX = 400  # a longer line (a whole paragraph on one line) is cut into its sentences all the same
MIN_FOLDED = 12  # a passage shorter than this, folded ("表1", "Step 3."), says too little to be asked about


@dataclass(frozen=True)
class ChunkPassage:
    """A passage of one chunk: the chunk's position in the snapshot and the span in its text."""

    chunk: int
    start: int
    end: int
    folded: str


def chunk_passages(chunks: Sequence[Chunk], min_folded: int = MIN_FOLDED, lines: bool = False,
                   holding: re.Pattern | None = None) -> list[ChunkPassage]:
    """Return the passages of every chunk, in chunk order: each line cut into sentences (`lines`: each
    line of at most LINE_MAX characters whole, a list item with all its sentences), white space trimmed, those whose folded text is
    shorter than `min_folded` left out, and with `holding`, those it finds nothing in (before any is folded).

    >>> from curate.records import Chunk
    >>> chunk = Chunk(chunk_id="c", doc_id="d", text="# 错误码\\n- LG-4031：路由权限未授予。请联系管理员。\\n短",
    ...               text_sha256="x")
    >>> [chunk.text[p.start:p.end] for p in chunk_passages([chunk], min_folded=5)]
    ['- LG-4031：路由权限未授予。', '请联系管理员。']
    """
    found = []
    for position, chunk in enumerate(chunks):
        for start, end in _spans(chunk.text, lines):
            if holding is not None and not holding.search(chunk.text[start:end]):
                continue
            folded = fold(chunk.text[start:end])
            if len(folded) >= min_folded:
                found.append(ChunkPassage(position, start, end, folded))
    return found


def _spans(text: str, lines: bool) -> Iterator[tuple[int, int]]:
    """Yield the span of each line of `text`, or of each of its sentences (Markdown heading lines left
    out)."""
    offset = 0
    for line in text.splitlines(keepends=True):
        start, end = trim_span(text, offset, offset + len(line))
        offset += len(line)
        if start < end and not text.startswith("#", start):
            yield from [(start, end)] if lines and end - start <= LINE_MAX else sentence_spans(text, start, end)


def passage(chunks: Sequence[Chunk], found: ChunkPassage) -> Passage:
    """Return the record of a passage: its chunk, document offsets (when the chunk's are known), text,
    and the chunk's title and section."""
    chunk = chunks[found.chunk]
    title, section = chunk.metadata.get("title"), chunk.metadata.get("section")
    return Passage(chunk_id=chunk.chunk_id, doc_id=chunk.doc_id,
                   start=None if chunk.start is None else chunk.start + found.start,
                   end=None if chunk.start is None else chunk.start + found.end,
                   text=chunk.text[found.start:found.end],
                   title=str(title) if title else None, section=str(section) if section else None)
