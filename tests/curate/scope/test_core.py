"""The scope rule: who may see a chunk, whether it holds at a moment, and what is left as usable evidence."""

from __future__ import annotations

from datetime import date

import pytest

from curate.records import Chunk, EvalItem, Evidence, KeyPoint, Scope
from curate.scope import MomentError, ScopeIndex, VersionOrder, check_layer, parse_moment, usable_view, version_order


def chunk(chunk_id: str, doc_id: str, **scope) -> Chunk:
    return Chunk(chunk_id=chunk_id, doc_id=doc_id, text=chunk_id, text_sha256="0", scope=Scope(**scope) if scope else None)


def item(*evidence: Evidence, asker=None, as_of=None, key_points=()) -> EvalItem:
    return EvalItem(id="q", question="?", language="zh", source="human", evidence=list(evidence),
                    key_points=list(key_points), asker_groups=asker, as_of=as_of)


def ev(evidence_id: str, *chunk_ids: str, text: str | None = None) -> Evidence:
    return Evidence(evidence_id=evidence_id, text=text or evidence_id, chunk_ids=list(chunk_ids))


POLICIES = [chunk("travel-2025#0", "travel-2025", valid_from="2025-01-01", valid_to="2025-12-31"),
            chunk("travel-2026#0", "travel-2026", valid_from="2026-01-01", supersedes=["travel-2025"]),
            chunk("bands#0", "bands", groups=["hr", "manager"]),
            chunk("faq#0", "faq")]


def test_dates_decide_which_policy_holds():
    index = ScopeIndex(POLICIES)
    assert index.reasons("travel-2025#0", None, date(2025, 6, 1)) == []
    assert index.reasons("travel-2025#0", None, date(2026, 3, 1)) == ["expired"]
    assert index.reasons("travel-2026#0", None, date(2025, 6, 1)) == ["not_yet_valid"]
    assert index.reasons("travel-2025#0", None, None) == ["superseded"], "the latest: whatever is replaced is stale"
    assert index.reasons("travel-2026#0", None, None) == []


def test_a_replacement_not_yet_in_effect_does_not_supersede():
    index = ScopeIndex([chunk("old#0", "old"), chunk("new#0", "new", valid_from="2026-07-01", supersedes=["old"])])
    assert index.reasons("old#0", None, date(2026, 6, 30)) == []
    assert index.reasons("old#0", None, date(2026, 7, 1)) == ["superseded"]


def test_versions_follow_the_declared_order():
    chunks = [chunk("a", "d1", version="v9"), chunk("b", "d2", version="v10", supersedes=["d1"])]
    natural = ScopeIndex(chunks)
    assert natural.reasons("a", None, "v9") == [] and natural.reasons("b", None, "v9") == ["later_version"]
    assert natural.reasons("a", None, "v10") == ["superseded"]
    declared = ScopeIndex(chunks, VersionOrder(["v10", "v9"]))
    assert declared.reasons("b", None, "v9") == [] and declared.reasons("a", None, "v10") == ["later_version"]


def test_groups_and_the_unknown_asker():
    index = ScopeIndex(POLICIES)
    assert index.reasons("bands#0", ["staff"], None) == ["forbidden"]
    assert index.reasons("bands#0", [], None) == ["forbidden"], "[] sees only what everyone may"
    assert index.reasons("bands#0", ["manager"], None) == []
    assert index.reasons("bands#0", None, None) == [], "an unknown asker is not checked"
    assert index.reasons("unknown-chunk", ["staff"], None) == []


def test_undecidable_kinds_are_counted():
    index = ScopeIndex([chunk("a", "d", version="2025")])
    assert index.reasons("a", None, date(2026, 1, 1)) == []
    assert index.undecided == 1


def test_unknown_superseded_ids_are_listed():
    assert ScopeIndex([chunk("a", "d", supersedes=["nowhere", "d"])]).unknown_superseded == ["nowhere"]


def test_only_forbidden_evidence_makes_a_should_decline_item():
    view = usable_view(item(ev("e1", "bands#0"), asker=["staff"]), ScopeIndex(POLICIES))
    assert view.item.answerable is False and view.declined_because == ["forbidden"]
    assert [u.evidence_id for u in view.unusable] == ["e1"]


def test_one_usable_fact_keeps_the_item_answerable_and_prunes_key_points():
    points = [KeyPoint(text="p", evidence_ids=["e1", "e2"])]
    view = usable_view(item(ev("e1", "bands#0"), ev("e2", "faq#0"), asker=["staff"], key_points=points), ScopeIndex(POLICIES))
    assert view.item.answerable is True and view.declined_because == []
    assert [e.evidence_id for e in view.item.evidence] == ["e2"]
    assert view.item.key_points[0].evidence_ids == ["e2"]


def test_a_copy_in_a_forbidden_document_is_no_copy_for_that_asker():
    index = ScopeIndex([chunk("public#0", "public"), chunk("secret#0", "secret", groups=["tenant-b"])])
    evidence = Evidence(evidence_id="e1", text="x", chunk_ids=["public#0", "secret#0"], copies=["secret#0"])
    view = usable_view(item(evidence, asker=["tenant-a"]), index)
    assert view.item.evidence[0].chunk_ids == ["public#0"] and view.item.evidence[0].copies == []
    assert view.unusable == []


def test_stale_only_evidence_is_declined_as_stale():
    view = usable_view(item(ev("e1", "travel-2025#0"), as_of="2026-02-01"), ScopeIndex(POLICIES))
    assert view.item.answerable is False and view.declined_because == ["expired"]


def test_unscoped_snapshot_leaves_the_item_alone():
    original = item(ev("e1", "x"), asker=["staff"])
    assert usable_view(original, ScopeIndex([chunk("x", "d")])).item is original


def test_layer_check_names_leaks_and_stale_chunks_once():
    found = check_layer(ScopeIndex(POLICIES), ["bands#0", "travel-2025#0", "bands#0", "faq#0"], ["staff"], None)
    assert found.leaked == ("bands#0",) and found.stale == ("travel-2025#0",)


@pytest.mark.parametrize("text", ["2026-13-01", "2026-02-30", "2026-1"])
def test_date_looking_moments_that_are_not_dates_are_refused(text):
    with pytest.raises(MomentError):
        parse_moment(text)


def test_moments_in_common_shapes():
    assert parse_moment("2026年3月1日") == parse_moment("2026/03/01") == parse_moment("2026-03-01T08:00:00+08:00") == date(2026, 3, 1)
    assert parse_moment("2026") == "2026"


def test_scope_settings_are_read_and_bad_ones_named(workspace):
    from curate.errors import InputError
    from curate.scope import read_scope_settings
    path = workspace.config_path
    original = path.read_text(encoding="utf-8")
    path.write_text(original + '\n[scope]\nversions = ["2025", "2026"]\ngroups = ["hr", "staff"]\n'
                    '[scope.roles]\nintern = []\nhr = ["hr", "staff"]\n[[scope.rules]]\npath = "hr/**"\ngroups = ["hr"]\n',
                    encoding="utf-8")
    settings = read_scope_settings(workspace)
    assert settings.roles == {"intern": [], "hr": ["hr", "staff"]} and settings.rule_for("hr/pay.md").groups == ["hr"]
    assert settings.rule_for("faq.md") is None and version_order(settings).key("2026") > version_order(settings).key("2025")
    path.write_text(original + '\n[scope]\ngroups = ["hr"]\n[scope.roles]\nboss = ["manager"]\n', encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_scope_settings(workspace)
    assert "scope.roles.boss" in str(raised.value) and "manager" in str(raised.value) and "curate.toml" in str(raised.value)
