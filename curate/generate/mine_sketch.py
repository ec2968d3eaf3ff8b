"""What mining for `curate generate` (`curate.generate.mine`) learns of one shard's own chunks before any pair is
judged: a `MineSketch` per view, made by the shard's worker and stored beside its lexical index (mining/), so a
generate killed half way resumes from the shards it sketched, and the next run over the snapshot starts at the join.

Per chunk: its language and document. Per sentence passage that is the first of its folded text in the shard (and
in its language: the first in the snapshot is one of these): its span, a digest of its folded text and of its shape
(numbers masked), and a 64-bit hash of each of its 32 MinHash bands, about 300 bytes a passage. Per code a line
passage states: the language it is stated in; where the passage is about it (`about`), its offset, the passage
and the other codes of its family the passage names (`named_codes`), so the command picks each code's passage
without reading its text.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from curate.generate.mine import BANDS, CODE, GRAM, about, codes_in, family, named_codes, shape
from curate.generate.passages import chunk_passages
from curate.index.kb_index import KBIndex
from curate.index.minhash import band_hashes, signatures
from curate.index.ngrams import NgramIndex
from curate.index.stored_arrays import load_arrays, save_arrays
from curate.records import MineSketchMeta
from curate.text.normalize import language_of

SKETCH_VERSION = 1
_ARRAYS = ("chunks", "passages", "digests", "shapes", "bands", "found", "stated", "named")


@dataclass
class MineSketch:
    """What one view tells mining of its own chunks, in their order (numbers into `languages`, `doc_ids`, `codes`)."""

    languages: list[str]
    doc_ids: list[str]
    codes: list[str]
    chunks: np.ndarray     # (chunks, 2) int32: language, document
    passages: np.ndarray   # (p, 3) int32: chunk, start, end of each sentence passage first of its text in the view
    digests: np.ndarray    # (p,) S16: of its folded text
    shapes: np.ndarray     # (p,) S16: of its shape
    bands: np.ndarray      # (p, BANDS) uint64
    found: np.ndarray      # (f, 2) int32: language, code: each code stated in a line passage of that language
    stated: np.ndarray     # (s, 5) int32: code, chunk, start, end, offset: a code in a line passage about it
    named: np.ndarray      # (n, 2) int32: a row of `stated`, another code of its family the passage names
    first: int = 0         # the snapshot position of the view's first chunk (not stored)


def mine_sketch(view: KBIndex, _: Any = None) -> MineSketch:
    """Return the mining sketch of a view's own chunks: the one stored beside its index, else made and stored."""
    folder = view.folder / "mining" if view.folder is not None else None
    made = _stored(folder, view) if folder is not None else None
    if made is None:
        made = _made(view)
        if folder is not None:
            save_arrays(folder, {name: getattr(made, name) for name in _ARRAYS},
                        MineSketchMeta(version=SKETCH_VERSION, chunks=view.size, snapshot=view.snapshot_id,
                                       languages=made.languages, doc_ids=made.doc_ids, codes=made.codes))
    made.first = view.global_position(0) if view.size else 0
    return made


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def _made(view: KBIndex) -> MineSketch:
    own = [view.chunks[position] for position in range(view.size)]
    languages: dict[str, int] = {}
    docs: dict[str, int] = {}
    codes: dict[str, int] = {}
    chunks = [(languages.setdefault(language_of(c.text), len(languages)), docs.setdefault(c.doc_id, len(docs)))
              for c in own]
    seen: set[tuple[int, str]] = set()
    passages = []
    for found in chunk_passages(own):
        key = (chunks[found.chunk][0], found.folded)
        if key not in seen:   # a later copy in this view never stands for its text
            seen.add(key)
            passages.append(found)
    folded = [p.folded for p in passages]
    bands = band_hashes(signatures(NgramIndex.build(folded, n=GRAM), len(folded)), bands=BANDS)
    stated_in: dict[tuple[int, int], None] = {}
    stated, named = [], []
    for found in chunk_passages(own, lines=True, holding=CODE):
        text = own[found.chunk].text[found.start:found.end]
        said, listed = codes_in(text)
        names = None
        for code, offset in said:
            number = codes.setdefault(code, len(codes))
            stated_in[chunks[found.chunk][0], number] = None
            if about(offset, listed):
                names = named_codes(text) if names is None else names
                named += [(len(stated), codes.setdefault(other, len(codes))) for other in sorted(names)
                          if other != code and family(other) == family(code)]
                stated.append((number, found.chunk, found.start, found.end, offset))
    return MineSketch(
        list(languages), list(docs), list(codes), np.array(chunks, dtype=np.int32).reshape(-1, 2),
        np.array([(p.chunk, p.start, p.end) for p in passages], dtype=np.int32).reshape(-1, 3),
        np.array([_digest(text) for text in folded], dtype="S16").reshape(-1),
        np.array([_digest(shape(text)) for text in folded], dtype="S16").reshape(-1), bands,
        np.array(list(stated_in), dtype=np.int32).reshape(-1, 2), np.array(stated, dtype=np.int32).reshape(-1, 5),
        np.array(named, dtype=np.int32).reshape(-1, 2))


def _stored(folder: Path, view: KBIndex) -> MineSketch | None:
    """Return the sketch stored in `folder` if it is whole and of this version and view, else None."""
    stored = load_arrays(folder, MineSketchMeta, _ARRAYS)
    if stored is None:
        return None   # missing or damaged: made again
    meta, loaded = stored
    passages = len(loaded["passages"])
    if meta.version != SKETCH_VERSION or meta.chunks != view.size or meta.snapshot != view.snapshot_id or \
            len(loaded["chunks"]) != view.size or loaded["bands"].shape != (passages, BANDS) or \
            any(len(loaded[name]) != passages for name in ("digests", "shapes")):
        return None
    return MineSketch(meta.languages, meta.doc_ids, meta.codes, **loaded)
