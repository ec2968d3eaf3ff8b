"""What an Argilla record says about scope, in the item's language: who asks and at which moment (the
`scope` field), and on each candidate the asker may not use at that moment, why (a mark above its
text). The annotator grades the passage by what it says all the same (guidelines §4, "Who asks, and
when"); the tool decides usability from the chunk's scope and the item's asker and moment.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from curate.annotate.markdown import markdown_escape
from curate.errors import InputError
from curate.records import EvalItem, Scope
from curate.scope import MomentError, ScopeIndex, moment_of

WORDS = {
    "en": {"asked by": "Asked by", "at": "At", "role": "role {role} (groups {groups})", "groups": "groups {groups}",
           "no group": "no group: may see only what everyone may", "unknown": "not given (what the asker may see is "
           "not checked)", "date": "{moment}", "version": "KB version {moment}", "latest": "the latest (anything "
           "superseded is out of date)", "sep": ", ",
           "mark": "> ⚠ **Not usable for this asker at this moment**: {why}. Grade it by what it says.",
           "forbidden": "the asker may not see it (visible to {groups})", "superseded": "superseded: a newer text "
           "replaces it at this moment", "not_yet_valid": "not yet valid (from {valid_from})",
           "expired": "expired (valid until {valid_to})", "later_version": "it belongs to a later version ({version})",
           "and": "; "},
    "zh": {"asked by": "提问者", "at": "时间", "role": "角色 {role}（用户组 {groups}）", "groups": "用户组 {groups}",
           "no group": "无用户组：只能看到所有人可见的内容", "unknown": "未给出（不检查其可见范围）", "date": "{moment}",
           "version": "知识库版本 {moment}", "latest": "最新（已被取代的内容视为过时）", "sep": "、",
           "mark": "> ⚠ **此时对该提问者不可用**：{why}。请照常按片段内容打分。",
           "forbidden": "提问者无权查看（可见范围：{groups}）", "superseded": "已被取代：此时有新的内容生效",
           "not_yet_valid": "尚未生效（自 {valid_from} 起）", "expired": "已失效（有效期至 {valid_to}）",
           "later_version": "属于更晚的版本（{version}）", "and": "；"},
}
_COLON = {"en": ": ", "zh": "："}


def _words(item: EvalItem) -> dict[str, str]:
    return WORDS.get(item.language, WORDS["en"])


def scope_text(item: EvalItem) -> str:
    """Return the record's `scope` field: who asks, then at which moment, one line each.

    >>> print(scope_text(EvalItem(id="q", question="?", language="en", source="human", asker_role="manager",
    ...                           asker_groups=["manager", "staff"], as_of="2026-03-01")))
    Asked by: role manager (groups manager, staff)
    At: 2026-03-01
    """
    words, colon = _words(item), _COLON.get(item.language, ": ")
    groups = words["sep"].join(item.asker_groups or [])
    if item.asker_role is not None:
        who = words["role"].format(role=item.asker_role, groups=groups or "[]")
    elif item.asker_groups is None:
        who = words["unknown"]
    else:
        who = words["groups"].format(groups=groups) if groups else words["no group"]
    if item.as_of is None:
        when = words["latest"]
    else:
        when = words["date" if item.as_of[:4].isdigit() and item.as_of[4:5] == "-" else "version"].format(
            moment=item.as_of)
    return f"{words['asked by']}{colon}{who}\n{words['at']}{colon}{when}"


def mark(item: EvalItem, reasons: list[str], scope: Scope | None) -> str:
    """Return the line shown above a candidate the item's asker may not use at its moment ("" when usable).

    >>> mark(EvalItem(id="q", question="?", language="zh", source="human"), ["forbidden"], Scope(groups=["hr"]))
    '> ⚠ **此时对该提问者不可用**：提问者无权查看（可见范围：hr）。请照常按片段内容打分。'
    """
    if not reasons:
        return ""
    words, scope = _words(item), scope or Scope()
    # shown in a Markdown field: a group or version named `**x**` or `<b>` shows as written
    details = {"groups": words["sep"].join(markdown_escape(g) for g in scope.groups or []),
               "valid_from": scope.valid_from, "valid_to": scope.valid_to,
               "version": None if scope.version is None else markdown_escape(scope.version)}
    return words["mark"].format(why=words["and"].join(words[r].format(**details) for r in reasons))


@dataclass
class RecordScope:
    """What a push knows of scope: the snapshot's scope index, each scoped chunk's scope, and whether the
    Argilla dataset has the `scope` field (one made before scope, holding answers, cannot take it)."""

    index: ScopeIndex
    chunks: dict[str, Scope] = field(default_factory=dict)
    has_field: bool = True

    def marks(self, item: EvalItem, chunk_ids: list[str]) -> dict[str, str]:
        """Return {chunk id: mark} for the candidates the item's asker may not use at its moment; a moment
        the settings cannot place is an InputError naming the item."""
        try:
            moment = moment_of(item)
            found = {c: self.index.reasons(c, item.asker_groups, moment) for c in chunk_ids}
        except MomentError as exc:
            raise InputError(f"item {item.id}: {exc}", field="as_of") from None
        return {c: mark(item, reasons, self.chunks.get(c)) for c, reasons in found.items() if reasons}
