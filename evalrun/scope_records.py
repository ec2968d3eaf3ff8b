"""Records of a run's scope checks (see ../shared/DESIGN.md, "Scope"), part of the run folder that
`evalrun.records.read_run` reads:

- `TargetScope` (in manifest.json): what the system under test was given of each item's asker and moment;
- `ItemScope` (in each line of scores.jsonl): the item's permission leaks and stale chunks per layer, and
  the evidence its asker may not use;
- `ScopeSummary` (in summary.json): the same counted over the run, leaks per layer under keys that
  contain `permission_leak`.

A permission leak is a chunk the item's asker may not see, in its candidates, its context or its
citations; it is checked only for items that name an asker (`asker_groups` not None): the others are
counted as unchecked, never as clean. A stale chunk is one that does not hold at the item's moment
(superseded, not yet valid, expired, a later version).
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, model_serializer

from curate import Record, UnusableEvidence

LAYERS = ("candidates", "context", "citations")
"""The layers of a trace checked against scope: every chunk the trace names is in one of them."""
SCOPE_KEYS = ("asker_groups", "asker_role", "as_of")
"""An item's scope fields, as a target is given them (keyword arguments, or the HTTP request body)."""

ScopeKey = Literal["asker_groups", "asker_role", "as_of"]


class TargetScope(Record):
    """What the system under test is given of each item's asker and moment."""

    receives: list[ScopeKey] = Field(default_factory=list, description="The scope fields the target is given: a "
                                     "Python target those its signature accepts (all with **kwargs), an HTTP "
                                     "target all of them (in the request body, when the item sets them).")
    how: Literal["keyword arguments", "request body", "logged traces"] = Field(
        description="How: keyword arguments of a Python target, fields of an HTTP target's request body, or "
        "none (traces the system logged itself: evalrun gave it nothing).")


class ItemScope(Record):
    """One item's scope checks: what its asker may not use, and what each layer of its trace held that the
    asker may not see (leaked) or that does not hold at the item's moment (stale). Frozen: the items with
    nothing to say share one record (`ScopeCheck.item`)."""

    model_config = ConfigDict(frozen=True)

    asker_checked: bool = Field(description="The item names an asker (asker_groups, [] included): its leaks were "
                                "checked. False: not checked, counted as unchecked (never as clean).")
    declined_because: list[str] = Field(default_factory=list, description="Answerable in the release, but none of "
                                        "its evidence is usable (forbidden, superseded, not_yet_valid, expired, "
                                        "later_version): scored as an item the system should decline.")
    unusable: list[UnusableEvidence] = Field(default_factory=list, description="Evidence left out of R, with why.")
    leaked: dict[str, list[str]] = Field(default_factory=dict, description="Layer (candidates, context, citations) "
                                         "-> chunks the asker may not see, each once, in the layer's order. Only "
                                         "layers with a leak.")
    stale: dict[str, list[str]] = Field(default_factory=dict, description="Layer -> chunks that do not hold at the "
                                        "item's moment. Only layers with a stale chunk.")
    unreported: list[str] = Field(default_factory=list, description="Layers the trace does not report (a trace "
                                  "without candidates, a TREC run's context): not checked.")
    stale_answer: str | None = Field(None, description="Why the answer is taken as built on stale chunks (it cites "
                                     "one, or states a number, date or code found only in them): stale_evidence.")
    problem: str | None = Field(None, description="Why the item's moment could not be read: its stale chunks are "
                                "not checked.")

    @model_serializer(mode="wrap")
    def _without_empty(self, handler):
        """Leave out the lists and tables that are empty (read back as their defaults): most items have
        nothing to say, and a run writes a line per item."""
        return {key: value for key, value in handler(self).items() if value != [] and value != {}}


class LayerScope(Record):
    """One layer's leaks (or stale chunks) over the run."""

    checked: int = Field(description="Items whose layer was checked (for leaks: those naming an asker, with the "
                         "layer reported).")
    items: int = Field(description="Of those, items with at least one such chunk in the layer.")
    chunks: int = Field(description="Such chunks, summed over the items (each chunk once per item).")
    item_ids: list[str] = Field(default_factory=list, description="The items, in release order.")


class ScopeSummary(Record):
    """summary.json's scope section: leaks and stale chunks per layer, the askers checked and not, the items
    declined for want of usable evidence. Leaks are a security finding: counted and named, never a mean."""

    scoped: bool = Field(description="Some chunk of the KB snapshot has a scope (groups or validity); False: every "
                         "chunk is usable by anyone at any moment, nothing can leak or be stale.")
    access_groups: bool = Field(False, description="Some chunk has access groups: permission leaks are possible.")
    settings_digest: str = Field(description="Digest of the release's [scope] settings (versions, groups, roles): "
                                 "runs checked under different settings are not a controlled comparison.")
    askers: int = Field(0, description="Items that name an asker (asker_groups, [] included): their leaks checked.")
    unchecked: int = Field(0, description="Items that name no asker (asker_groups None): what they may see was not "
                           "checked; in no leak count, never counted as clean.")
    moments: int = Field(0, description="Items that name a moment (as_of); the others are asked at the latest.")
    declined: dict[str, int] = Field(default_factory=dict, description="Items left with no usable evidence, by "
                                     "reason (an item with two reasons counts under both).")
    declined_items: list[str] = Field(default_factory=list, description="Those items, scored as should-decline.")
    permission_leaks: dict[str, LayerScope] = Field(default_factory=dict, description="Layer (candidates, context, "
                                                    "citations) -> its permission leaks; empty when the KB has no "
                                                    "access groups.")
    permission_leak_items: list[str] = Field(default_factory=list, description="Items with a permission leak in "
                                             "any layer (attributed permission_leak).")
    stale: dict[str, LayerScope] = Field(default_factory=dict, description="Layer -> chunks that do not hold at the "
                                         "item's moment; empty when the KB has no scope.")
    stale_evidence_items: list[str] = Field(default_factory=list, description="Items whose answer is built on stale "
                                            "chunks (attributed stale_evidence).")
    undecided: int = Field(0, description="Items whose moment met a chunk whose validity is of the other kind (a "
                           "date moment, a chunk with only a version label, or the reverse): not comparable, so "
                           "the chunk was counted as holding.")
    unknown_superseded: list[str] = Field(default_factory=list, description="Ids named in `supersedes` that are "
                                          "no document or chunk of the snapshot.")
    target: TargetScope | None = Field(None, description="What the target was given (the manifest's); None: a run "
                                       "started before this was recorded.")
    not_received: list[str] = Field(default_factory=list, description="Scope fields the release's items set "
                                    "(asker_groups, as_of) that the target could not be given: it cannot filter "
                                    "by them.")
