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

# the command that writes each record, and the item fields it changes
COMMANDS = {"leakage": "check-leakage", "consistency": "check-consistency", "duplicates": "check-dups",
            "split": "split", "difficulty": "grade", "annotation": "annotate pull"}
WRITES = {"leakage": {"status"}, "consistency": {"status"}, "duplicates": {"status", "evidence"},
          "split": {"split"}, "difficulty": {"difficulty", "tags"}, "annotation": {"evidence", "status"}}
LABELS = {"leakage": "leakage check", "consistency": "consistency check", "duplicates": "duplicates check",
          "split": "split record", "difficulty": "grade record", "annotation": "annotation record"}


@dataclass(frozen=True)
class Stale:
    """A check record that no longer matches the dataset's items."""

    check: str     # its name in DatasetChecks: leakage, difficulty, ...
    dataset: str
    at: str        # when it ran
    cause: str     # what changed the items after it, as far as the records tell

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
        later = sorted((other.at, other_name) for other_name, other in present.items()
                       if other_name != name and other.at >= record.at and WRITES.get(other_name, set()) - type(record).IGNORES)
        cause = (", ".join(f"`curate {COMMANDS[n]}`" for _, n in later) + " ran after it"
                 if later else "they changed after it")
        stale.append(Stale(name, meta.name, record.at, cause))
    return stale
