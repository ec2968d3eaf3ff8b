"""`curate diff`: how two versions of a dataset (releases or the draft) differ."""

from __future__ import annotations

from curate.release.changes import changes, count_changes
from curate.release.store import resolve_items
from curate.workspace import Workspace


def diff(workspace: Workspace, *, old: str, new: str) -> dict:
    """Return items added, removed and changed (with the fields that changed) and count changes."""
    old_items = resolve_items(workspace, old)[0]
    new_items = resolve_items(workspace, new)[0]
    result = changes(old_items, new_items)
    before = {i.id: i.content() for i in old_items}
    after = {i.id: i.content() for i in new_items}
    changed_fields = {k: sorted(f for f in after[k] if after[k][f] != before[k][f]) for k in result["changed"]}
    return {"old": old, "new": new, "items": (len(old_items), len(new_items)), **result,
            "changed_fields": changed_fields, "counts": count_changes(old_items, new_items)}
