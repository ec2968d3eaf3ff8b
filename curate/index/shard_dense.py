"""Every chunk's vector under one embedding model for a snapshot in shards (`build_dense_shards`), and the
dense ranks of questions over those vectors (`dense_ranks_over`).

Embedding is the slow stage of a large KB (a few to a few dozen Chinese chunks a second per core with the
models that ship in a package), so it runs on an engine: each shard's own chunks are embedded by one worker,
which loads the model once, keeps each slice of `SLICE` vectors as it is done (a killed build resumes from
the slices done) and writes the shard's vectors whole beside its index (`shards/part-NNNNN/dense/KEY/`);
a shard whose vectors are stored is not embedded again. The ranks read the shards' vectors one at a time,
never the snapshot's in one array.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from curate.engine import Engine, LocalEngine, pending
from curate.fileio import atomic_write_bytes
from curate.index.embeddings import EmbeddingCache, load_model, npy_bytes
from curate.index.kb_index import DENSE_SAMPLE, DENSE_VERSION, KBIndex
from curate.index.shard_index import ShardIndex, shard_views
from curate.kb.shards import read_column
from curate.records.kb import DenseIndexMeta

SLICE = 1_000   # chunks embedded and kept at a time in a shard


def _view(index: KBIndex, number: int) -> ShardIndex:
    return ShardIndex(index.workspace, index.snapshot_id, number)


def shard_vectors(index: KBIndex, model: str) -> list[np.ndarray] | None:
    """Return each shard's chunk vectors under `model` (memory-mapped, in shard order) if every shard's are
    built, else None."""
    vectors = [_view(index, n).stored_dense(model) for n in range(shard_views(index))]
    return None if any(v is None for v in vectors) else vectors


def dense_sample(index: KBIndex) -> list[str]:
    """Return the texts of up to DENSE_SAMPLE chunks spread evenly over a snapshot in shards, read one shard's
    text column at a time (what `KBIndex.dense_sample` picks from the whole snapshot)."""
    total = index.store.manifest(index.snapshot_id).chunks
    step = max(1, total // DENSE_SAMPLE)
    wanted = list(range(0, total, step))[:DENSE_SAMPLE]
    texts: list[str] = []
    for shard in index.store.shards(index.snapshot_id):
        mine = [g - shard.first for g in wanted if shard.first <= g < shard.first + shard.chunks]
        if mine:
            column = read_column(index.store.root / index.snapshot_id / shard.file, "text")
            texts += [column[p] for p in mine]
    return texts


def check_dense_shards(index: KBIndex, cache: EmbeddingCache) -> DenseIndexMeta:
    """Return (and store beside the snapshot's index) how many of a sample of its chunks the model cannot read."""
    return index.check_dense(cache, dense_sample(index), index.store.manifest(index.snapshot_id).chunks)


def build_dense_shards(index: KBIndex, model: str, engine: Engine | None = None) -> tuple[int, int]:
    """Embed the chunks of every shard of a snapshot whose vectors are not stored yet, on `engine` (default:
    the local engine); return (shards embedded, shards found embedded)."""
    tasks = list(range(shard_views(index)))
    left, done = pending(tasks, lambda n: _done(_view(index, n), model))
    (engine or LocalEngine()).map(_embed_shard, [(index.workspace, index.snapshot_id, n) for n in left],
                                  shared=model, label=f"embedding {index.snapshot_id} with {model}")
    return len(left), done


def _done(view: ShardIndex, model: str) -> bool:
    meta = view.dense_meta(model)
    return meta is not None and meta.built and meta.chunks == view.size


def _embed_shard(task: tuple, model: str) -> int:
    """Embed one shard's own chunks in slices, each kept as it is done; store the shard's vectors whole."""
    view = ShardIndex(*task)
    if _done(view, model):
        return 0
    texts = read_column(view.path, "text")
    slices = view.folder / "dense-slices" / view._dense_folder(model).name
    encoder = None
    parts = []
    for number, start in enumerate(range(0, len(texts), SLICE)):
        path = slices / f"{number:05d}.npy"
        part = _stored_slice(path, len(texts[start:start + SLICE]))
        if part is None:
            encoder = encoder or load_model(model)
            part = np.asarray(encoder.encode(texts[start:start + SLICE]), dtype=np.float32)
            _keep_slice(path, part)
        parts.append(part)
    vectors = np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)
    meta = DenseIndexMeta(version=DENSE_VERSION, model=model, snapshot=view.snapshot_id, chunks=view.size,
                          sampled=0, unreadable=0, built=True)
    view._write_dense(meta, vectors)
    shutil.rmtree(slices, ignore_errors=True)
    return len(texts)


def _keep_slice(path: Path, part: np.ndarray) -> None:
    """Keep a slice of a shard's vectors, where a killed embedding resumes from."""
    try:
        atomic_write_bytes(path, npy_bytes(part))
    except FileNotFoundError:
        pass   # another command embedding this shard at once finished it and removed its slices: none is needed


def _stored_slice(path, rows: int) -> np.ndarray | None:
    try:
        part = np.load(path)
    except (OSError, ValueError):
        return None   # not done yet, or cut short by a kill: embedded again
    return part if part.ndim == 2 and len(part) == rows else None


def dense_ranks_over(shards: Sequence[np.ndarray], vectors: np.ndarray, gold: Sequence[set[int]], k: int,
                     block: int = 256) -> list[int | None]:
    """Return, per question vector, the 1-based rank of its best gold chunk (snapshot positions) among the
    chunks of every shard (`dense_rank` over the whole snapshot: ties, the earlier chunk first), None beyond k;
    `block` questions at a time, each shard's scores made twice (the gold's, then the count) rather than held.

    >>> shards = [np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[0.6, 0.8], [1.0, 0.0]])]
    >>> dense_ranks_over(shards, np.array([[1.0, 0.0], [0.0, 1.0]]), [{3}, {2}], k=10)
    [2, 2]
    """
    starts = np.cumsum([0] + [len(s) for s in shards])
    ranks: list[int | None] = []
    for at in range(0, len(vectors), block):
        questions = np.asarray(vectors[at:at + block], dtype=np.float32)
        golds = gold[at:at + block]
        best = np.full(len(questions), -np.inf, dtype=np.float32)
        first = np.zeros(len(questions), dtype=np.int64)
        for shard, start in zip(shards, starts[:-1].tolist()):
            scores = questions @ np.asarray(shard, dtype=np.float32).T
            for n, positions in enumerate(golds):
                for g in sorted(p for p in positions if start <= p < start + len(shard)):
                    if scores[n, g - start] > best[n]:
                        best[n], first[n] = scores[n, g - start], g
        higher = np.zeros(len(questions), dtype=np.int64)
        for shard, start in zip(shards, starts[:-1].tolist()):
            scores = questions @ np.asarray(shard, dtype=np.float32).T
            higher += (scores > best[:, None]).sum(axis=1)
            before = np.arange(start, start + len(shard))[None, :] < first[:, None]
            higher += ((scores == best[:, None]) & before).sum(axis=1)
        ranks += [int(1 + h) if 1 + h <= k else None for h in higher.tolist()]
    return ranks
