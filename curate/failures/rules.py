"""Which production rows are failures: the rule set of `[failures]` in curate.toml, and the team's own
personal-data patterns (`[failures.pii]`).

A row is a failure when any rule matches: negative feedback (thumbs down, -1, 👎, 踩 ...), a rating
at or below `rating_at_most` (of `rating_scale`), or one of `failure_tags`. Escalation to a person and
a follow-up question are hints, not proof: they are counted and recorded beside the item, and make a
row a failure only when named in `failing_hints`.

    [failures]
    negative_feedback = ["thumbs_down", "down", "-1", "bad", "👎", "踩"]
    rating_at_most = 2
    rating_scale = 5
    failure_tags = ["wrong"]
    failing_hints = []            # "escalated", "follow_up"

    [failures.pii]
    patterns = { ORDER_ID = "ORD-[0-9]{8}" }
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from curate.failures.pii import compile_patterns
from curate.workspace import Workspace

HINTS = ("escalated", "follow_up")
# Feedback that says the answer was fine: not failures, and not reported as values no rule names.
POSITIVE = frozenset({"thumbs_up", "thumbsup", "up", "1", "+1", "good", "positive", "like", "yes", "👍", "赞",
                      "好评", "满意", "有用", "helpful"})
DEFAULT_NEGATIVE = ("thumbs_down", "thumbsdown", "down", "-1", "bad", "negative", "dislike", "no", "👎", "踩",
                    "差评", "不满意", "没用")
DEFAULTS = {"negative_feedback": list(DEFAULT_NEGATIVE), "rating_at_most": 2, "rating_scale": 5,
            "failure_tags": ["wrong"], "failing_hints": []}


@dataclass(frozen=True)
class FailureRules:
    """The rules that make a row a failure, and the hints counted beside them."""

    negative_feedback: frozenset[str]
    rating_at_most: float | None
    rating_scale: float
    failure_tags: frozenset[str]
    failing_hints: frozenset[str]

    def names(self) -> list[str]:
        """Return the name of every rule, as the counts per rule are keyed."""
        return (["negative_feedback", "low_rating"] + [f"tag:{t}" for t in sorted(self.failure_tags)]
                + sorted(self.failing_hints))

    def failed_by(self, feedback: str | None, rating: float | None, tags: list[str], hints: list[str]) -> list[str]:
        """Return the rules a row matches (none: not a failure).

        >>> rules = FailureRules(frozenset({"down"}), 2, 5, frozenset({"wrong"}), frozenset())
        >>> rules.failed_by("DOWN", 2, ["wrong"], ["escalated"]), rules.failed_by(None, 3, [], ["escalated"])
        (['negative_feedback', 'low_rating', 'tag:wrong'], [])
        """
        matched = []
        if feedback is not None and feedback.strip().lower() in self.negative_feedback:
            matched.append("negative_feedback")
        if rating is not None and self.rating_at_most is not None and rating <= self.rating_at_most:
            matched.append("low_rating")
        matched += [f"tag:{t}" for t in tags if t.strip().lower() in self.failure_tags]
        matched += [h for h in hints if h in self.failing_hints]
        return list(dict.fromkeys(matched))

    def unnamed(self, feedback: str | None) -> bool:
        """Return whether a feedback value is neither negative (a rule) nor a known positive one: a value
        the team may mean as a failure that no rule names (`add-failures` reports them).

        >>> rules = FailureRules(frozenset({"down"}), 2, 5, frozenset(), frozenset())
        >>> rules.unnamed("Down"), rules.unnamed("thumbs_up"), rules.unnamed("wrong answer"), rules.unnamed(None)
        (False, False, True, False)
        """
        if feedback is None:
            return False
        value = feedback.strip().lower()
        return value not in self.negative_feedback and value not in POSITIVE

    def record(self) -> dict:
        """Return the rule set as a batch record keeps it."""
        return {"negative_feedback": sorted(self.negative_feedback), "rating_at_most": self.rating_at_most,
                "rating_scale": self.rating_scale, "failure_tags": sorted(self.failure_tags),
                "failing_hints": sorted(self.failing_hints), "hints": list(HINTS)}


def _strings(workspace: Workspace, key: str, value: object) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
        raise workspace.setting_error("must be a list of strings", "failures", key)
    return frozenset(str(v).strip().lower() for v in value)


def _number(workspace: Workspace, key: str, value: object) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
        raise workspace.setting_error(f"must be a number >= 0, got {value!r}", "failures", key)
    return float(value)


def load_rules(workspace: Workspace) -> tuple[FailureRules, dict[str, re.Pattern]]:
    """Return the workspace's failure rules and its personal-data patterns (defaults where curate.toml
    is silent); a bad setting is one error naming curate.toml, its line and key."""
    section = workspace.config().get("failures", {})
    if not isinstance(section, dict):
        raise workspace.setting_error("must be a table ([failures])", "failures")
    unknown = sorted(set(section) - set(DEFAULTS) - {"pii"})
    if unknown:
        raise workspace.setting_error(f"unknown setting (known: {', '.join([*DEFAULTS, 'pii'])})", "failures",
                                      unknown[0])
    values = {**DEFAULTS, **{k: v for k, v in section.items() if k != "pii"}}
    rating_at_most = values["rating_at_most"]
    rules = FailureRules(
        negative_feedback=_strings(workspace, "negative_feedback", values["negative_feedback"]),
        rating_at_most=None if rating_at_most is False else _number(workspace, "rating_at_most", rating_at_most),
        rating_scale=_number(workspace, "rating_scale", values["rating_scale"]),
        failure_tags=_strings(workspace, "failure_tags", values["failure_tags"]),
        failing_hints=_strings(workspace, "failing_hints", values["failing_hints"]))
    if bad := sorted(rules.failing_hints - set(HINTS)):
        raise workspace.setting_error(f"unknown hint {bad[0]!r} (hints: {', '.join(HINTS)})", "failures",
                                      "failing_hints")
    if rules.rating_at_most is not None and rules.rating_at_most > rules.rating_scale:
        raise workspace.setting_error(f"is above rating_scale ({rules.rating_scale:g}): every rating would fail",
                                      "failures", "rating_at_most")
    pii = section.get("pii", {})
    if not isinstance(pii, dict) or set(pii) - {"patterns"} or not isinstance(pii.get("patterns", {}), dict):
        raise workspace.setting_error("takes one setting, patterns = { NAME = \"regex\" }", "failures", "pii")
    patterns = compile_patterns(pii.get("patterns", {}), lambda message, name: workspace.setting_error(
        message, "failures", "pii", "patterns", name))
    return rules, patterns
