"""Scope in a comparison: BASE's and NEW's permission leaks side by side, said before the verdict; whether
the two runs were checked under the same scope settings (else the comparison is not controlled); and the
gate's permission-leak rule, on by default (`max_permission_leaks = 0`).

Leaks are a security finding, not a metric: they are counted and named, never tested for significance.
"""

from __future__ import annotations

from evalrun.compare.records import ScopeComparison, ScopeSide
from evalrun.records import Run
from evalrun.scope_records import LAYERS

RESCORE = "evalrun run --resume --out RUN scores it again"


def scope_side(run: Run) -> ScopeSide:
    """Return a run's permission leaks as a comparison reads them; nothing known (`checked` False) for a run
    scored before scope was checked."""
    scope = run.summary.scope if run.summary is not None else None
    if scope is None:
        return ScopeSide(checked=False)
    if not scope.access_groups:
        leak_items = 0          # no chunk is restricted: nothing can leak, a fact and not a guess
    elif not scope.askers:
        leak_items = None       # restricted chunks, and no asker to check them against
    else:
        leak_items = len(scope.permission_leak_items)
    return ScopeSide(checked=True, access_groups=scope.access_groups, askers=scope.askers, unchecked=scope.unchecked,
                     leak_items=leak_items, leaks={layer: found.items for layer in LAYERS
                                                   if (found := scope.permission_leaks.get(layer)) is not None},
                     leak_ids=list(scope.permission_leak_items),
                     stale_evidence=len(scope.stale_evidence_items) if scope.scoped else 0)


def compare_scope(base: Run, new: Run) -> ScopeComparison:
    """Return both runs' permission leaks side by side."""
    return ScopeComparison(base=scope_side(base), new=scope_side(new))


def scope_difference(base: Run, new: Run) -> str | None:
    """Return how the two runs' scope checks differ, which makes their comparison not a controlled one: the
    releases' [scope] settings (their digest), or one run scored with scope checks on a scoped KB and the
    other without; None when they do not differ."""
    b = base.summary.scope if base.summary is not None else None
    n = new.summary.scope if new.summary is not None else None
    if b is None and n is None:
        return None
    if b is None or n is None:
        checked, side, other = (n, "NEW", "BASE") if b is None else (b, "BASE", "NEW")
        if not checked.scoped:   # its KB has no scope: the checks had nothing to find
            return None
        return f"{side} was scored with scope checks and {other} without ({RESCORE.replace('RUN', other)})"
    if b.settings_digest != n.settings_digest:
        return (f"scope settings {b.settings_digest} vs {n.settings_digest} (the releases' [scope] versions, groups "
                f"or roles differ)")
    return None


def _count(side: ScopeSide) -> str:
    """Return a side's leaking items as said: a count of the items checked, or why there is none."""
    if not side.checked:
        return "not checked (scored before scope checks)"
    if side.leak_items is None:
        return "not checked (access groups, and no item names an asker)"
    if not side.access_groups:
        return "0 (no chunk has access groups)"
    return f"{side.leak_items:,} of {side.askers:,}"


def leak_comparison_lines(scope: ScopeComparison | None) -> list[str]:
    """Return the lines a comparison opens with: items with a permission leak, BASE -> NEW (of the items that
    name an asker), per layer, and NEW's leaking items; none when neither run is known to have a KB with
    access groups (a run scored before scope was checked is of a KB that had no scope then).

    >>> base = ScopeSide(checked=True, access_groups=True, askers=4, unchecked=0, leak_items=0,
    ...                  leaks={"candidates": 0, "context": 0, "citations": 0})
    >>> new = ScopeSide(checked=True, access_groups=True, askers=4, unchecked=0, leak_items=1,
    ...                 leaks={"candidates": 1, "context": 0, "citations": 0}, leak_ids=["pay"])
    >>> leak_comparison_lines(ScopeComparison(base=base, new=new))
    ['PERMISSION LEAKS (items given chunks their asker may not see): BASE 0 of 4 -> NEW 1 of 4', '  candidates 0 -> 1, context 0 -> 0, citations 0 -> 0', "  NEW's items with a leak: pay"]
    """
    if scope is None:
        return []
    b, n = scope.base, scope.new
    if not (b.access_groups or n.access_groups):   # neither KB restricts a chunk (that is known of)
        return []
    alarm = n.leak_items is None or n.leak_items > 0 or b.leak_items is None or b.leak_items > 0
    lines = [f"{'PERMISSION LEAKS' if alarm else 'permission leaks'} (items given chunks their asker may not see): "
             f"BASE {_count(b)} -> NEW {_count(n)}"]
    if b.leaks or n.leaks:
        lines.append("  " + ", ".join(f"{layer} {_layer(b, layer)} -> {_layer(n, layer)}" for layer in LAYERS))
    if n.leak_ids:
        shown = n.leak_ids[:10]
        lines.append(f"  NEW's items with a leak: {', '.join(shown)}"
                     + (f", ... and {len(n.leak_ids) - len(shown):,} more" if len(n.leak_ids) > len(shown) else ""))
    return lines


def _layer(side: ScopeSide, layer: str) -> str:
    return f"{side.leaks[layer]:,}" if layer in side.leaks else "-"


def leak_rule(limit: int, new: ScopeSide | None) -> tuple[str, bool]:
    """Return the gate's permission-leak rule on NEW as one line, and whether it holds: NEW's items with a leak
    in any layer at most `limit`. A rule that cannot be checked fails (a gate passes only what it could check):
    NEW scored before scope was checked, or a KB with access groups and no item that names an asker."""
    rule = f"max_permission_leaks {limit}"
    if new is None or not new.checked:
        return f"{rule}: cannot be checked, NEW was scored before permission leaks were checked ({RESCORE})", False
    if not new.access_groups:
        return f"{rule}: no chunk of NEW's KB has access groups, nothing can leak", True
    if new.leak_items is None:
        return (f"{rule}: cannot be checked, NEW's KB has access groups and no item names an asker (asker_groups): "
                f"{new.unchecked:,} items unchecked"), False
    layers = ", ".join(f"{layer} {_layer(new, layer)}" for layer in LAYERS)
    named = f": {', '.join(new.leak_ids[:10])}" + (", ..." if len(new.leak_ids) > 10 else "") if new.leak_ids else ""
    unchecked = (f"; {new.unchecked:,} item{'s name' if new.unchecked != 1 else ' names'} no asker, unchecked"
                 if new.unchecked else "")
    return (f"{rule}: {new.leak_items:,} of NEW's {new.askers:,} items with an asker leak ({layers}){named}, at most "
            f"{limit:,}{unchecked}"), new.leak_items <= limit
