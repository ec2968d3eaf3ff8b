"""What copy detection (`curate.checks.copies`) learns of each shard's chunks before comparing any pair: a
`Sketch` per view, made by the shard's worker and stored beside its lexical index, so a check-dups killed
half way resumes from the shards it sketched, and a second run over the same snapshot compares at once.

Per chunk: the digest of its compared text (folded, without Markdown headings: two chunks of one digest are
exact copies), whether it has no text, its scope (a number into the sketch's distinct scopes) and a 64-bit
hash of each of its 16 MinHash bands (`curate.index.minhash`): about 150 bytes a chunk, so the sketches of a
million chunks are joined in one process.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from curate.checks.copy_pairs import compared_text, headings
from curate.index.kb_index import KBIndex
from curate.index.minhash import band_hashes, signatures
from curate.index.stored_arrays import load_arrays, save_arrays
from curate.kb.scope_fields import scope_key
from curate.records import CopySketchMeta, Scope

SKETCH_VERSION = 1
_ARRAYS = ("digests", "empty", "codes", "bands")


@dataclass
class Sketch:
    """What one view tells of its own chunks, in their order."""

    digests: np.ndarray       # 16 bytes each ("S16")
    empty: np.ndarray         # bool: no text to compare
    codes: np.ndarray         # int32, into `scopes`
    scopes: list[Scope | None]
    scoped: bool              # whether any chunk has a scope
    bands: np.ndarray         # (chunks, 16) uint64


def sketch(view: KBIndex, _: Any = None) -> Sketch:
    """Return the sketch of a view's own chunks: the one stored beside its index, else made and stored."""
    folder = view.folder / "sketch" if view.folder is not None else None
    if folder is not None:
        stored = _stored(folder, view)
        if stored is not None:
            return stored
    made = _made(view)
    if folder is not None:
        save_arrays(folder, {name: getattr(made, name) for name in _ARRAYS},
                    CopySketchMeta(version=SKETCH_VERSION, chunks=view.size, snapshot=view.snapshot_id, scopes=made.scopes))
    return made


def _made(view: KBIndex) -> Sketch:
    keys: dict[Any, int] = {}
    scopes: list[Scope | None] = []
    digests, empty, codes, scoped = [], [], [], False
    for position in range(view.size):
        chunk = view.chunks[position]
        text = compared_text(chunk.text) if headings(chunk.text) else view.folded[position]
        digests.append(hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest())
        empty.append(not text)
        key = scope_key(chunk.scope)
        if key not in keys:
            keys[key] = len(scopes)
            scopes.append(chunk.scope)
        elif scopes[keys[key]] is None:   # an empty scope is everyone's, but says the snapshot has scopes
            scopes[keys[key]] = chunk.scope
        codes.append(keys[key])
        scoped = scoped or chunk.scope is not None
    return Sketch(np.array(digests, dtype="S16").reshape(-1), np.array(empty, dtype=bool),
                  np.array(codes, dtype=np.int32), scopes, scoped, band_hashes(signatures(view.ngrams, view.size)))


def _stored(folder: Path, view: KBIndex) -> Sketch | None:
    """Return the sketch stored in `folder` if it is whole and of this version and view, else None."""
    stored = load_arrays(folder, CopySketchMeta, _ARRAYS)
    if stored is None:
        return None   # missing or damaged: made again
    meta, loaded = stored
    if meta.version != SKETCH_VERSION or meta.chunks != view.size or meta.snapshot != view.snapshot_id or any(
            len(array) != view.size for array in loaded.values()):
        return None
    scoped = any(scope is not None for scope in meta.scopes)
    return Sketch(loaded["digests"], loaded["empty"], loaded["codes"], meta.scopes, scoped, loaded["bands"])
