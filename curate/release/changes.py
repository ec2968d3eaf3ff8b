"""What a set of items holds (counts) and how two sets differ (changes): pure functions of items."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from curate.records import EvalItem, reviewed_by_person

COUNTED = ("split", "difficulty", "qtype", "source", "status", "language", "answerable")


def counts(items: Sequence[EvalItem]) -> dict[str, dict[str, int]]:
    """Return item counts by split, difficulty, qtype, source, status, language and answerable, and for
    synthetic items (when any) how many a person reviewed (`reviewed_by_person`): the others are drafts,
    never gold, whatever their status says."""
    table: dict[str, Counter] = {k: Counter() for k in COUNTED}
    synthetic = Counter(("reviewed by a person" if reviewed_by_person(i) else "not reviewed")
                        for i in items if i.source == "synthetic")
    for item in items:
        table["split"][item.split or "unassigned"] += 1
        table["difficulty"][item.difficulty or "ungraded"] += 1
        table["qtype"][item.qtype or "none"] += 1
        table["source"][item.source] += 1
        table["status"][item.status] += 1
        table["language"][item.language] += 1
        table["answerable"][str(item.answerable).lower()] += 1
    if synthetic:
        table["synthetic"] = synthetic
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


def synthetic_lines(items: Sequence[EvalItem], dataset: str) -> list[str]:
    """Return what a release or a summary says of its synthetic items: their share, how many a person
    reviewed, and those whose status claims a review no person made (counted as not reviewed).

    >>> item = EvalItem(id="s1", question="What does LG-4031 mean?", language="en", source="synthetic")
    >>> synthetic_lines([item, EvalItem(id="h1", question="Why?", language="en", source="human")], "faq")[0]
    'synthetic: 1 of 2 items (50%): 0 reviewed by a person, 1 not (drafts, never gold: `curate annotate push --dataset faq` sends them to review)'
    """
    synthetic = [i for i in items if i.source == "synthetic"]
    if not synthetic:
        return []
    reviewed = sum(map(reviewed_by_person, synthetic))
    lines = [f"synthetic: {len(synthetic):,} of {len(items):,} items ({len(synthetic) / len(items):.0%}): "
             f"{reviewed:,} reviewed by a person, {len(synthetic) - reviewed:,} not (drafts, never gold: "
             f"`curate annotate push --dataset {dataset}` sends them to review)"]
    claimed = [i.id for i in synthetic if i.status in ("labelled", "verified") and not reviewed_by_person(i)]
    if claimed:
        shown = ", ".join(claimed[:5]) + (f" and {len(claimed) - 5:,} more" if len(claimed) > 5 else "")
        lines.append(f"warning: {len(claimed):,} synthetic items say {'/'.join(sorted({i.status for i in synthetic if i.id in claimed}))} "
                     f"but no person's review is recorded ({shown}): counted as not reviewed")
    return lines
