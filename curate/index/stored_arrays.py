"""Arrays a stage keeps beside a shard's index (a copy sketch, a mining sketch): one .npy file per array (the
same bytes on every engine: an .npz holds the time it was made) and the record that describes them,
meta.json, in a folder written whole or not at all."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from curate.errors import CurateError
from curate.fileio import atomic_directory
from curate.records.base import VersionedRecord

M = TypeVar("M", bound=VersionedRecord)


def save_arrays(folder: Path, arrays: dict[str, np.ndarray], meta: VersionedRecord) -> None:
    """Write `arrays` and `meta` into `folder`, replacing what it held, all at once."""
    with atomic_directory(folder, replace=True) as tmp:
        for name, array in arrays.items():
            np.save(tmp / f"{name}.npy", array)
        meta.write(tmp / "meta.json")


def load_arrays(folder: Path, meta_type: type[M], names: Sequence[str]) -> tuple[M, dict[str, np.ndarray]] | None:
    """Return the record and arrays stored in `folder`, or None when any is missing or damaged (the caller
    makes them again)."""
    try:
        meta = meta_type.read(folder / "meta.json")
        return meta, {name: np.load(folder / f"{name}.npy", allow_pickle=False) for name in names}
    except (CurateError, OSError, ValueError, KeyError):
        return None
