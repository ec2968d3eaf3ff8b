"""The record of one batch of production failures: datasets/NAME/failures/BATCH.json.

It holds hashes and counts, never a log's content: the sha256 of each raw log, keyed fingerprints of
the failing rows (so the same row is never counted twice), the rule set, and every number
`curate add-failures` printed.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from curate.records.base import Record, VersionedRecord, now


class FailureSource(Record):
    """One production log of a batch, by its hash."""

    name: str = Field(description="The log's file name (no folder).")
    sha256: str = Field(description="sha256 of the raw file.")
    lines: int = Field(description="Lines in the file.")
    format: str = Field(description="jsonl or csv.")


class PromotedDuplicate(Record):
    """A failing question not added, being a duplicate: which item it counted on, and how it matched."""

    item_id: str = Field(description="The item it was counted on.")
    method: str = Field(description="exact, form, fuzzy or semantic (check-dups' matchers).")
    score: float = Field(description="The matcher's score.")
    rows: int = Field(description="Failing rows of this batch it stands for.")
    within_batch: bool = Field(description="True when the item was itself added by this batch.")


class FailureBatch(VersionedRecord):
    """One `curate add-failures` run over one month's logs."""

    batch: str = Field(description="Batch id: the month and a sequence number (2026-11-1).")
    month: str = Field(description="The month of the logs, YYYY-MM.")
    state: Literal["pending", "complete"] = Field(
        description="pending while the items are being saved; a pending batch whose id no item carries was "
        "killed before it saved anything and is done again by the next run.")
    at: str = Field(default_factory=now, description="When it ran (UTC).")
    sources: list[FailureSource] = Field(default_factory=list, description="The logs read.")
    rules: dict[str, Any] = Field(default_factory=dict, description="The failure rules and hints it ran with.")
    mapping: dict[str, str] = Field(default_factory=dict, description="The log's field names it read as which "
                                    "(--map): the same logs read otherwise are read again.")
    asker: dict[str, Any] = Field(default_factory=dict, description="Who asks and when for the rows that do not "
                                  "say (--asker-role, --asker-groups, --as-of): the same logs read with others are "
                                  "read again.")
    counts: dict[str, int] = Field(default_factory=dict, description="Rows read, failures, added, duplicates, "
                                   "leaks, skipped rows... every number the command printed.")
    by_rule: dict[str, int] = Field(default_factory=dict, description="Failing rows per rule that matched.")
    by_hint: dict[str, int] = Field(default_factory=dict, description="Rows per hint (failing or not).")
    unnamed_feedback: dict[str, int] = Field(default_factory=dict, description="The most frequent feedback values "
                                             "that no rule names and that are not known positives (masked, cut at "
                                             "40 characters): rows the rules did not count as failures.")
    personal_data: dict[str, int] = Field(default_factory=dict, description="Pieces of personal data masked, by kind.")
    duplicates: dict[str, int] = Field(default_factory=dict, description="Duplicate questions by matcher.")
    semantic: dict[str, Any] = Field(default_factory=dict, description="The semantic pass: used, or why it was "
                                     "skipped (then the batch is not semantically deduplicated).")
    added: list[str] = Field(default_factory=list, description="Ids of the items added (needs_evidence).")
    leaked: list[str] = Field(default_factory=list, description="Ids of the items added quarantined: their "
                              "question is in the KB (check-leakage's rules).")
    counted_on: list[PromotedDuplicate] = Field(default_factory=list, description="Duplicates, by the item they "
                                                "were counted on.")
    numbers_differ: list[list[str]] = Field(default_factory=list, description="Pairs [new item, item] alike "
                                            "(fuzzy or semantic) but with other numbers or codes (2025 / 2026): "
                                            "kept apart, the new one added.")
    rows: list[str] = Field(default_factory=list, description="Keyed fingerprints (HMAC-SHA256, 16 hex) of the "
                            "failing rows: a row seen in any batch is never counted again.")
    released_in: str | None = Field(None, description="The release whose changelog took this batch.")
