"""Scoring under scope, on the scoped KB of tests/support/scope.py (salary bands for HR, a superseded
travel policy, two tenants): leaks found per layer and none invented, items with no usable evidence
scored as ones to decline, answers built on last year's policy attributed stale_evidence, retrieval
over usable evidence only, and subsets per asker group and moment."""

from __future__ import annotations

import json

from evalrun.records import RunSettings, read_run
from evalrun.runner import run
from tests.support import scope as kb

LAYERS = ("candidates", "context", "citations")


def scored(workspace, tmp_path, target, name: str):
    folder = run(workspace, ref="hr@v1", target=target, out=tmp_path / name, settings=RunSettings(no_judge=True))
    result = read_run(folder)
    return {row.item_id: row for row in result.scores}, result.summary


def test_a_target_that_filters_by_scope_leaks_nothing_and_declines_what_its_asker_may_not_see(hr, tmp_path):
    rows, summary = scored(hr, tmp_path, kb.scoped, "scoped")
    scope = summary.scope
    assert scope.permission_leak_items == []
    # 10 items, 9 name an asker ("office" does not): each layer checked on those 9, none leaked
    assert (scope.askers, scope.unchecked) == (9, 1)
    assert {layer: (found.checked, found.items, found.chunks) for layer, found in scope.permission_leaks.items()} == {
        layer: (9, 0, 0) for layer in LAYERS}
    assert not any("permission_leak" in row.attribution for row in rows.values())
    # the only evidence of band-staff and bonus is HR's: the system declines, and that is correct
    assert rows["band-staff"].values["unanswerable/correct_refusal"] == 1.0
    assert rows["band-staff"].refusal == "refusal phrase: you do not have access"
    assert rows["bonus"].values["unanswerable/correct_refusal"] == 1.0
    assert rows["bonus"].refusal == "refusal phrase: 无权查看"
    # it was given each item's asker and moment as keyword arguments
    given = {call["item"]: (call["asker_groups"], call["as_of"]) for call in kb.CALLS}
    assert given == {item_id: (askers, as_of) for item_id, (_, _, askers, as_of, *_rest) in kb.ITEMS.items()}


def test_a_target_that_does_not_filter_has_every_leak_found_and_none_invented(hr, tmp_path):
    rows, summary = scored(hr, tmp_path, kb.leaky, "leaky")
    expected = {item_id: kb.expected_leaks(kb.leaky(question), askers)
                for item_id, (question, _, askers, *_rest) in kb.ITEMS.items()}
    assert {item_id: row.scope.leaked for item_id, row in rows.items()} == expected
    leaking = [item_id for item_id in kb.ITEMS if expected[item_id]]
    assert leaking == ["band-staff", "leave", "bonus", "acme", "globex"]
    assert summary.scope.permission_leak_items == leaking
    assert [i for i, row in rows.items() if "permission_leak" in row.attribution] == leaking
    for layer in LAYERS:
        found = summary.scope.permission_leaks[layer]
        assert found.item_ids == [i for i in leaking if layer in expected[i]]
        assert found.chunks == sum(len(expected[i].get(layer, [])) for i in leaking)
    # by hand: band-staff leaks bands#0 and bands#1, the four others one chunk each; two cite what leaked
    assert (summary.scope.permission_leaks["candidates"].chunks, summary.scope.permission_leaks["citations"].items) == (6, 2)
    # "office" names no asker: HR's band among its candidates is not checked, and not counted as clean either
    assert "bands#0" in kb.leaky(kb.ITEMS["office"][0])["candidates"]
    assert rows["office"].scope.asker_checked is False and rows["office"].scope.leaked == {}
    assert summary.scope.unchecked == 1 and "office" not in summary.scope.permission_leaks["candidates"].item_ids


def test_an_item_whose_only_evidence_is_forbidden_is_one_to_decline_not_a_retrieval_miss(hr, tmp_path):
    rows, summary = scored(hr, tmp_path, kb.leaky, "leaky")
    band = rows["band-staff"]
    assert band.answerable is False and band.scope.declined_because == ["forbidden"]
    assert [(u.evidence_id, u.reasons) for u in band.scope.unusable] == [("e1", ["forbidden"])]
    # it answered with HR's band: not a correct refusal, a false answer; never a retrieval miss
    assert band.values["unanswerable/correct_refusal"] == 0.0
    assert band.values["unanswerable/retrieved"] == 3.0
    assert band.attribution == ["permission_leak", "false_answer"]
    assert not [name for name in band.values if name.startswith(("candidates/", "context/", "lexical/"))]
    assert summary.scope.declined == {"forbidden": 2} and summary.scope.declined_items == ["band-staff", "bonus"]
    refusal = summary.metrics["all"]["unanswerable/correct_refusal"]
    assert (refusal.n, refusal.mean) == (2, 0.0)
    assert summary.metrics["all"]["candidates/recall@5"].n == 8     # the 10 items less the 2 to decline


def test_retrieval_counts_only_the_evidence_usable_at_the_moment(hr, tmp_path):
    rows, _ = scored(hr, tmp_path, kb.leaky, "leaky")
    # travel-both has both policies as evidence; asked at the latest, only 2026's is usable: finding 2025's
    # alone is a miss (recall 0, not 1/2)
    both = rows["travel-both"]
    assert [(u.evidence_id, u.reasons) for u in both.scope.unusable] == [("e1", ["superseded"])]
    assert both.values["candidates/recall@5"] == 0.0 and "retrieval_miss" in both.attribution
    # asked in 2025, the 2025 policy is the usable one, and the 2026 one in its context is stale
    assert rows["travel-2025"].values["candidates/recall@5"] == 1.0
    assert rows["travel-2025"].scope.stale == {"candidates": ["travel26#0"], "context": ["travel26#0"]}


def _traces(tmp_path, traces: dict[str, dict]):
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps({"item_id": i, **t}, ensure_ascii=False) + "\n" for i, t in traces.items()),
                    encoding="utf-8")
    return path


def test_a_superseded_policy_answered_with_last_years_amount_is_stale_evidence(hr, tmp_path):
    both = ["travel25#0", "travel26#0"]
    path = _traces(tmp_path, {
        # 45 EUR is only in the superseded 2025 chunk: built on it, though the 2026 one reached the context
        "travel": {"candidates": both, "context": both, "answer": "The daily travel allowance is 45 EUR."},
        # the right amount, with last year's chunk beside it in the context: stale chunks, not a stale answer
        "travel-both": {"candidates": both, "context": both, "answer": "It is 52 EUR a day."},
        # asked in 2025, 45 EUR is right; 2026's chunk is the stale one here
        "travel-2025": {"candidates": both, "context": both, "answer": "In 2025 it was 45 EUR a day."},
    })
    folder = run(hr, ref="hr@v1", traces=path, out=tmp_path / "run", settings=RunSettings(no_judge=True))
    result = read_run(folder)
    rows = {row.item_id: row for row in result.scores}
    travel = rows["travel"]
    assert travel.scope.stale_answer == ("states 45, found only in stale chunk travel25#0 of its context "
                                         "(superseded)")
    # apart from, and instead of, the generation miss string match would have made of it
    assert "stale_evidence" in travel.attribution and "generation_miss" not in travel.attribution
    assert "generation_miss" not in travel.lexical_attribution
    assert rows["travel-both"].scope.stale == {"candidates": ["travel25#0"], "context": ["travel25#0"]}
    assert rows["travel-both"].scope.stale_answer is None and "stale_evidence" not in rows["travel-both"].attribution
    assert rows["travel-2025"].scope.stale_answer is None
    scope = result.summary.scope
    assert scope.stale_evidence_items == ["travel"]
    # the seven other items have no trace: their target failed and returned nothing, which holds no stale chunk
    assert (scope.stale["context"].items, scope.stale["context"].checked) == (3, 10)


def test_an_answer_citing_a_stale_chunk_is_stale_evidence(hr, tmp_path):
    rows, summary = scored(hr, tmp_path, kb.leaky, "leaky")
    assert rows["travel"].scope.stale_answer == "cites stale chunk travel25#0 (superseded)"
    assert summary.scope.stale_evidence_items == ["travel", "travel-both"]


def test_subsets_per_asker_group_and_moment_carry_their_n(hr, tmp_path):
    _, summary = scored(hr, tmp_path, kb.scoped, "scoped")
    recall = {label: table["candidates/recall@5"].n for label, table in summary.metrics.items()
              if "candidates/recall@5" in table and label.startswith(("asker_group=", "as_of="))}
    # staff: travel, travel-2025, travel-both (band-staff and bonus are to decline); [] is "(no group)"
    assert recall == {"asker_group=hr": 1, "asker_group=staff": 3, "asker_group=(no group)": 1,
                      "asker_group=(not named)": 1, "asker_group=tenant-a": 1, "asker_group=tenant-b": 1,
                      "as_of=(latest)": 7, "as_of=2025": 1}
    assert summary.metrics["asker_group=staff"]["unanswerable/correct_refusal"].n == 2


def test_a_kb_without_scope_is_checked_for_nothing_and_says_so(released, tmp_path):
    folder = run(released.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "run",
                 settings=RunSettings(no_judge=True))
    result = read_run(folder)
    assert result.summary.scope.scoped is False and result.summary.scope.permission_leaks == {}
    assert all(row.scope is None for row in result.scores)
