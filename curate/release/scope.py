"""What a release says about scope: who its items are asked by and when, the items their asker may use
none of whose evidence at their moment (legitimate "the system should decline" items, shown so a team
sees them, never refused), and the items that name no asker while the KB has access groups.

A pure core: items, the snapshot's chunks and the `[scope]` settings in, a `ReleaseScope` out; and the
lines a person reads (`scope_lines`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from curate.dataset.asker import asker_label, names_scope, scope_index, view
from curate.records import Chunk, EvalItem, ReleaseScope, ScopeSettings
from curate.scope import REASONS

# how each reason reads after "N items whose evidence is all ..."
REASON_WORDS = {"forbidden": "forbidden to their asker", "superseded": "superseded at their moment",
                "not_yet_valid": "not yet valid at their moment", "expired": "expired at their moment",
                "later_version": "of a later version than their moment"}


def release_scope(items: Sequence[EvalItem], chunks: Sequence[Chunk], settings: ScopeSettings,
                  snapshot_id: str | None = None) -> ReleaseScope | None:
    """Return the scope report of `items` against the snapshot's `chunks` under `settings`; None when no
    item names an asker or a moment and no chunk has a scope (nothing to report).

    >>> from curate.records import Scope
    >>> chunks = [Chunk(chunk_id="bands#0", doc_id="bands", text="t", text_sha256="0", scope=Scope(groups=["hr"]))]
    >>> def item(n, **asker):
    ...     return EvalItem(id=f"q{n}", question="?", language="en", source="human", **asker,
    ...                     evidence=[{"evidence_id": "e1", "text": "t", "chunk_ids": ["bands#0"]}])
    >>> report = release_scope([item(1, asker_groups=["staff"]), item(2, asker_role="hr", asker_groups=["hr"]),
    ...                         item(3)], chunks, ScopeSettings(roles={"hr": ["hr"]}))
    >>> report.by_asker, report.should_decline, report.unchecked
    ({'groups:staff': 1, 'no asker': 1, 'role:hr': 1}, {'forbidden': ['q1']}, 1)
    """
    index = scope_index(chunks, settings, snapshot_id)
    asked = any(names_scope(i) for i in items)
    if not asked and not index.scoped:
        return None
    kb_groups = any(c.scope is not None and c.scope.groups is not None for c in chunks)
    declined: dict[str, list[str]] = {}
    for item in items:
        for reason in view(item, index).declined_because:
            declined.setdefault(reason, []).append(item.id)
    return ReleaseScope(
        by_asker=dict(sorted(Counter(asker_label(i) for i in items).items())),
        by_moment=dict(sorted(Counter(i.as_of or "latest" for i in items).items())),
        should_decline={r: sorted(declined[r]) for r in REASONS if r in declined},
        kb_groups=kb_groups, unchecked=sum(i.asker_groups is None for i in items) if kb_groups else 0,
        undecided=index.undecided)


def _ids(ids: list[str], shown: int = 10) -> str:
    return ", ".join(ids[:shown]) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


def scope_lines(report: ReleaseScope | None) -> list[str]:
    """Return what a person reads first about a release's scope: the items to decline by reason, the
    items whose asker is not checked, and the counts by asker and moment ([] when there is no report).

    >>> scope_lines(ReleaseScope(by_asker={"groups:staff": 1}, by_moment={"latest": 1},
    ...                          should_decline={"forbidden": ["q1"]}))[:2]
    ['scope: 1 item whose evidence is all unusable to its asker at its moment: the system should decline it', 'scope:   forbidden to their asker: q1']
    """
    if report is None:
        return []
    lines = []
    flagged = sorted({i for ids in report.should_decline.values() for i in ids})
    if flagged:
        many = len(flagged) > 1
        lines.append(f"scope: {len(flagged)} item{'s' * many} whose evidence is all unusable to {'their' if many else 'its'} "
                     f"asker at {'their' if many else 'its'} moment: the system should decline "
                     f"{'them' if many else 'it'}")
        lines += [f"scope:   {REASON_WORDS[r]}: {_ids(ids)}" for r, ids in report.should_decline.items()]
    if report.unchecked:
        lines.append(f"scope: {report.unchecked} item{'s name' if report.unchecked > 1 else ' names'} no asker while "
                     f"the KB has access groups: what {'they' if report.unchecked > 1 else 'it'} may see is not "
                     f"checked (give asker_groups or asker_role)")
    if report.undecided:
        lines.append(f"scope: {report.undecided} checks met a date and a chunk with only a version label (or the "
                     f"reverse): counted as holding")
    askers = ", ".join(f"{k} {v}" for k, v in report.by_asker.items())
    moments = ", ".join(f"{k} {v}" for k, v in report.by_moment.items())
    lines.append(f"scope: by asker: {askers}; by moment: {moments}")
    return lines
