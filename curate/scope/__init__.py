"""Scope: which KB version a question is about and what its asker may see (DESIGN.md, "Scope").

A pure core: chunks' scopes and an item in, usable evidence, permission leaks and stale chunks out.
curate uses it to report releases whose evidence is out of scope; evalrun to score over usable
evidence and to check every layer of a run.
"""

from curate.scope.index import REASONS, STALE_REASONS, Reason, ScopeIndex
from curate.scope.moment import Moment, MomentError, VersionOrder, parse_date, parse_moment
from curate.records.scope import ScopeRule, ScopeSettings, UnusableEvidence
from curate.scope.settings import read_scope_settings, version_order
from curate.scope.usable import LayerCheck, UsableView, check_layer, moment_of, usable_view

__all__ = [
    "REASONS", "STALE_REASONS", "LayerCheck", "Moment", "MomentError", "Reason", "ScopeIndex", "ScopeRule",
    "ScopeSettings", "UnusableEvidence", "UsableView", "VersionOrder", "check_layer", "moment_of", "parse_date",
    "parse_moment", "read_scope_settings", "usable_view", "version_order",
]
