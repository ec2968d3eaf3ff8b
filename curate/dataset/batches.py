"""The batches of production failures a dataset took (`curate add-failures`): datasets/NAME/failures/BATCH.json,
and the key that fingerprints rows and sessions (datasets/NAME/failures/key, never leaves the workspace).
They are part of the dataset's state: the monthly flow (`curate.failures`) writes them, a release
(`curate.release`) reads them for its changelog.

A batch is written `pending` before the items are saved and `complete` after; a pending batch that
no item carries was killed before its items were saved, and is removed (the next run does it again).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence
from pathlib import Path

from curate.dataset.store import DatasetStore
from curate.fileio import create_private
from curate.records import EvalItem, FailureBatch
from curate.workspace import Workspace

MONTH = re.compile(r"(19|20)[0-9]{2}-(0[1-9]|1[0-2])")   # a batch's month, YYYY-MM


class FailureBatches:
    """The failure batches of one dataset."""

    def __init__(self, workspace: Workspace, dataset: str):
        self.folder = DatasetStore(workspace).folder(dataset) / "failures"

    def path(self, batch: str) -> Path:
        """Return the file of a batch."""
        return self.folder / f"{batch}.json"

    def all(self) -> list[FailureBatch]:
        """Return every batch, oldest first (by month, then sequence number)."""
        if not self.folder.is_dir():
            return []
        found = [FailureBatch.read(p) for p in self.folder.glob("*.json")]
        return sorted(found, key=lambda b: (b.month, int(b.batch.rsplit("-", 1)[1])))

    def settle(self, items: Sequence[EvalItem]) -> list[FailureBatch]:
        """Return the complete batches, after marking complete a pending one whose items were saved and
        removing one that was killed before (call under the dataset's lock)."""
        carried = {a.batch for i in items if i.production for a in i.production.asked}
        complete = []
        for batch in self.all():
            if batch.state == "pending":
                if batch.batch not in carried:
                    self.path(batch.batch).unlink()   # killed before its items were saved: done again
                    continue
                batch.state = "complete"
                batch.write(self.path(batch.batch))
            complete.append(batch)
        return complete

    def next_id(self, month: str, batches: Sequence[FailureBatch]) -> str:
        """Return the id of the next batch of `month`: the month and one past its highest number."""
        numbers = [int(b.batch.rsplit("-", 1)[1]) for b in batches if b.month == month]
        if self.folder.is_dir():   # a pending batch's number is never used twice either
            numbers += [int(p.stem.rsplit("-", 1)[1]) for p in self.folder.glob(f"{month}-*.json")]
        return f"{month}-{max(numbers, default=0) + 1}"

    def key(self) -> bytes:
        """Return the dataset's fingerprint key, made on first use (readable by its owner only, from the
        first instant)."""
        path = self.folder / "key"
        if not path.exists():
            create_private(path, secrets.token_hex(32))
        return path.read_bytes().strip()


def fingerprint(key: bytes, text: str) -> str:
    """Return a keyed fingerprint of a text (HMAC-SHA256, 16 hex): the same text gives the same one,
    and without the key no guess of the text can be checked against it.

    >>> fingerprint(b"k", "a") == fingerprint(b"k", "a") != fingerprint(b"other", "a")
    True
    """
    return hmac.new(key, text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:16]


def changelog_lines(batches: Sequence[FailureBatch]) -> list[str]:
    """Return one changelog line per month of `batches`: what its production failures added.

    >>> b = FailureBatch(batch="2026-11-1", month="2026-11", state="complete", added=["a", "b"], leaked=["c"],
    ...                  counts={"duplicates": 12, "personal_data_masked": 19, "semantically_deduplicated": 1})
    >>> changelog_lines([b])
    ['2026-11 production failures: +2 (duplicates 12, leaks 1, personal data masked 19)']
    """
    months: dict[str, list[FailureBatch]] = {}
    for batch in batches:
        months.setdefault(batch.month, []).append(batch)
    lines = []
    for month, group in sorted(months.items()):
        added = sum(len(b.added) for b in group)
        duplicates = sum(b.counts.get("duplicates", 0) for b in group)
        leaks = sum(len(b.leaked) for b in group)
        masked = sum(b.counts.get("personal_data_masked", 0) for b in group)
        unsure = [b.batch for b in group if not b.counts.get("semantically_deduplicated", 0)]
        note = f"; not semantically deduplicated: {', '.join(unsure)}" if unsure else ""
        lines.append(f"{month} production failures: +{added} (duplicates {duplicates}, leaks {leaks}, "
                     f"personal data masked {masked}{note})")
    return lines
