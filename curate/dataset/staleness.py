"""Which of a dataset's check records no longer match its items, why, and the command that makes
each current again.

A check speaks for the items it saw, as far as it reads them (`CheckRecord.IGNORES`): a later
`curate grade` leaves a leakage check current, a later `curate split` does not (leakage across the
split reads the split)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from curate.dataset.store import check_current
from curate.records import UNRELEASED_STATUSES, DatasetMeta, EvalItem

# the command that writes each record
COMMANDS = {"leakage": "check-leakage", "consistency": "check-consistency", "duplicates": "check-dups",
            "split": "split", "difficulty": "grade", "annotation": "annotate pull"}
LABELS = {"leakage": "leakage check", "consistency": "consistency check", "duplicates": "duplicates check",
          "split": "split record", "difficulty": "grade record", "annotation": "annotation record"}


@dataclass(frozen=True)
class Stale:
    """A check record that no longer matches the dataset's items."""

    check: str     # its name in DatasetChecks: leakage, difficulty, ...
    dataset: str
    at: str        # when it ran
    cause: str     # how many items were added or changed since (by their dates), and whether split ran

    @property
    def command(self) -> str:
        """Return the command that makes the record current again."""
        return f"curate {COMMANDS[self.check]} --dataset {self.dataset}"

    def line(self) -> str:
        """Return the one line that says it (without a leading 'warning:')."""
        return (f"the {LABELS[self.check]} of '{self.dataset}' ({self.at}) no longer matches its items: {self.cause}; "
                f"run `{self.command}` again")


def stale_checks(meta: DatasetMeta, items: Sequence[EvalItem]) -> list[Stale]:
    """Return the dataset's check records that no longer match its items (those a release would leave
    out), in the order DatasetChecks lists them; a record that kept no digest is never stale."""
    live = [i for i in items if i.status not in UNRELEASED_STATUSES]
    present = meta.checks.present()
    stale = []
    for name, record in present.items():
        if check_current(record, live) is not False:
            continue
        added = sum(i.created_at > record.at for i in live)
        changed = sum(i.created_at <= record.at < i.updated_at for i in live)
        told = [f"{n} item{'s' * (n > 1)} {what}" for n, what in ((added, "added"), (changed, "changed")) if n]
        cause = (" and ".join(told) + " since" if told else "they changed after it")
        split = present.get("split")
        if name != "split" and "split" not in type(record).IGNORES and split is not None and split.at >= record.at:
            cause += " (`curate split` ran since)"
        stale.append(Stale(name, meta.name, record.at, cause))
    return stale
