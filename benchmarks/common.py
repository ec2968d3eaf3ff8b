"""What every benchmark shares: an aligned plain-text table, and results written atomically."""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from curate.fileio import atomic_write_json as save_json  # noqa: E402,F401  (one atomic writer for all)


def print_table(header: Sequence[str], rows: Sequence[Sequence[object]], left: int = 1) -> None:
    """Print `rows` under `header` as aligned columns: the first `left` columns to the left, the rest right."""
    lines = [tuple(map(str, header))] + [tuple(map(str, row)) for row in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for index, line in enumerate(lines):
        print("  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))))
        if index == 0:
            print("  ".join("-" * w for w in widths))


def machine(**extra: object) -> dict:
    """Return what the results say about the machine they were measured on, plus `extra`."""
    return {"cpu_count": os.cpu_count(), "platform": platform.platform(), "machine": platform.machine(),
            "python": platform.python_version(), "implementation": platform.python_implementation(), **extra}
