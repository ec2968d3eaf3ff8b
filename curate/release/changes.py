"""What a set of items holds (counts) and how two sets differ (changes): pure functions of items."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from curate.records import EvalItem

COUNTED = ("split", "difficulty", "qtype", "source", "status", "language", "answerable")


def counts(items: Sequence[EvalItem]) -> dict[str, dict[str, int]]:
    """Return item counts by split, difficulty, qtype, source, status, language and answerable."""
    table: dict[str, Counter] = {k: Counter() for k in COUNTED}
    for item in items:
        table["split"][item.split or "unassigned"] += 1
        table["difficulty"][item.difficulty or "ungraded"] += 1
        table["qtype"][item.qtype or "none"] += 1
        table["source"][item.source] += 1
        table["status"][item.status] += 1
        table["language"][item.language] += 1
        table["answerable"][str(item.answerable).lower()] += 1
    return {k: dict(sorted(v.items())) for k, v in table.items()}


def changes(old: Sequence[EvalItem], new: Sequence[EvalItem]) -> dict[str, list[str]]:
    """Return the ids of items added, removed and changed (in content) from `old` to `new`."""
    before = {i.id: i.content() for i in old}
    after = {i.id: i.content() for i in new}
    return {"added": sorted(after.keys() - before.keys()),
            "removed": sorted(before.keys() - after.keys()),
            "changed": sorted(k for k in before.keys() & after.keys() if before[k] != after[k])}


def count_changes(old: Sequence[EvalItem], new: Sequence[EvalItem]) -> dict[str, dict[str, tuple[int, int]]]:
    """Return, per counted field, the values whose count moved: {field: {value: (old, new)}}."""
    old_counts, new_counts = counts(old), counts(new)
    moved = {}
    for table in sorted(new_counts.keys() | old_counts.keys()):
        keys = old_counts.get(table, {}).keys() | new_counts.get(table, {}).keys()
        rows = {k: (old_counts.get(table, {}).get(k, 0), new_counts.get(table, {}).get(k, 0)) for k in sorted(keys)}
        rows = {k: v for k, v in rows.items() if v[0] != v[1]}
        if rows:
            moved[table] = rows
    return moved
