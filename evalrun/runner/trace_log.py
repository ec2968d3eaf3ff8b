"""traces.jsonl as a run writes it: one complete line per item."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from curate import atomic_write_bytes, dumps_json
from evalrun.records import TraceRecord


class TraceLog:
    """traces.jsonl, one complete line per item: written with one write() and fsync, so a kill
    leaves whole lines and at most one partial last line, which opening the log again cuts.

    The path is made absolute once, here: a target that changes the working folder does not move
    where the run writes."""

    def __init__(self, path: Path):
        self.path = Path(os.path.abspath(path))
        self._lock = threading.Lock()
        self.appended = 0  # lines this log wrote
        self.cut_partial_line()

    def cut_partial_line(self) -> None:
        """Cut a partial last line, so the next append starts on a line of its own. The file is
        rewritten atomically (temporary file, then rename): a kill during the cut loses nothing."""
        with self._lock:
            if not self.path.exists():
                return
            data = self.path.read_bytes()
            if data and not data.endswith(b"\n"):
                atomic_write_bytes(self.path, data[: data.rfind(b"\n") + 1])

    def append(self, record: TraceRecord) -> None:
        """Append one record as one whole line, flushed to disk before returning."""
        line = (dumps_json(record.model_dump(mode="json", exclude_none=True)) + "\n").encode("utf-8")
        with self._lock, open(self.path, "ab") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
            self.appended += 1
