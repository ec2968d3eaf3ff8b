"""traces.jsonl as a run writes it: one complete line per item."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from curate import atomic_write_bytes, dumps_json
from evalrun.records import TraceRecord


class TraceLog:
    """traces.jsonl, one complete line per item: written with one write() and fsync, so a kill
    leaves whole lines and at most one partial last line."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        if path.exists():  # cut a partial last line (atomically: a kill now loses nothing), so the next append starts clean
            data = path.read_bytes()
            if data and not data.endswith(b"\n"):
                atomic_write_bytes(path, data[: data.rfind(b"\n") + 1])

    def append(self, record: TraceRecord) -> None:
        """Append one record as one whole line, flushed to disk before returning."""
        line = (dumps_json(record.model_dump(mode="json", exclude_none=True)) + "\n").encode("utf-8")
        with self._lock, open(self.path, "ab") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
