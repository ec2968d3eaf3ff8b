"""Scope's hard cases, end to end through curate and evalrun, on knowledge bases built from the bundled real
corpora (tests/support/scope_corpus.py): two tenants sharing one SciFact index, CMRC2018 paragraphs as
policies whose 2026 version differs from the 2025 one only in its numbers, a document revoked from a group
between two snapshots, items whose only evidence is forbidden to their asker.

The truth each test holds evalrun to is computed here from how the corpus was built (which tenant holds each
document, which version each question is about), never from curate.scope.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

import evalrun
from curate import SnapshotStore
from curate.dataset import DatasetStore
from tests.support.scope_corpus import TENANTS, next_year, two_tenants, yearly_policies

K_CANDIDATES, K_CONTEXT = 10, 3


def _words(text: str) -> set[str]:
    return set(re.findall(r"[\u4e00-\u9fff]|[a-z0-9]+", text.lower()))


class Ranker:
    """A retriever over a snapshot's chunks by shared words, with or without a scope filter of its own."""

    def __init__(self, workspace, kb: str, allowed=None):
        store = SnapshotStore(workspace)
        self.chunks = store.chunks(store.resolve(kb))
        self.words = {c.chunk_id: _words(c.text) for c in self.chunks}
        self.allowed = allowed   # (chunk, asker_groups, as_of) -> bool; None: every chunk

    def __call__(self, question: str, *, asker_groups=None, as_of=None) -> dict:
        asked = _words(question)
        pool = [c for c in self.chunks if self.allowed is None or self.allowed(c, asker_groups, as_of)]
        ranked = sorted(pool, key=lambda c: (-len(asked & self.words[c.chunk_id]), c.chunk_id))[:K_CANDIDATES]
        ids = [c.chunk_id for c in ranked]
        return {"candidates": ids, "context": ids[:K_CONTEXT], "citations": ids[:1],
                "answer": ranked[0].text[:200] if ranked else None}


def _release(curate, docs: Path, questions: Path, name: str, scope_toml: str) -> None:
    with open(curate.workspace.config_path, "a", encoding="utf-8") as config:
        config.write(scope_toml)
    curate("kb", "ingest", docs, "--name", name)
    curate("import", questions, "--dataset", name, "--source", "human", "--kb", name)
    curate("split", "--dataset", name, "--seed", "1", "--no-semantic")
    curate("check-leakage", "--dataset", name)
    curate("release", "--dataset", name, "-m", "scoped")


def _rows(run) -> dict:
    return {row.item_id: row for row in run.scores}


# -- two tenants sharing one index ----------------------------------------------------------------------------

@pytest.fixture
def tenants(curate, tmp_path):
    corpus = two_tenants(tmp_path / "tenants", questions=40)
    _release(curate, corpus.documents, corpus.questions, "labs",
             '\n[scope]\ngroups = ["tenant-a", "tenant-b"]\n')
    return curate, corpus


def test_tenant_a_never_sees_tenant_b_through_a_filtering_system_and_every_leak_of_one_that_does_not_is_found(
        tenants, tmp_path):
    curate, corpus = tenants
    workspace = curate.workspace

    def own_tenant(chunk, asker_groups, as_of):   # the system's own rule, from the corpus it was given
        return corpus.tenant_of[chunk.doc_id] in (asker_groups or [])

    leaky = evalrun.run("labs@v1", target=Ranker(workspace, "labs"), workspace=workspace, out=tmp_path / "leaky",
                        no_judge=True)
    safe = evalrun.run("labs@v1", target=Ranker(workspace, "labs", own_tenant), workspace=workspace,
                       out=tmp_path / "safe", no_judge=True)
    traces = {item_id: record.trace for item_id, record in leaky.traces.items()}
    doc_of = {c.chunk_id: c.doc_id for c in Ranker(workspace, "labs").chunks}
    truth = {layer: {} for layer in ("candidates", "context", "citations")}
    for item_id, trace in traces.items():
        for layer in truth:
            foreign = [c for c in trace[layer] if corpus.tenant_of[doc_of[c]] != corpus.asker_of[item_id]]
            if foreign:
                truth[layer][item_id] = foreign
    assert truth["candidates"], "the tenants' abstracts share words: a system that does not filter must leak"
    rows = _rows(leaky)
    for layer, expected in truth.items():   # every leak found, none invented, per item and per chunk
        found = {i: r.scope.leaked[layer] for i, r in rows.items() if r.scope and layer in r.scope.leaked}
        assert found == expected, layer
        summary = leaky.summary.scope.permission_leaks[layer]
        assert (summary.items, summary.chunks) == (len(expected), sum(map(len, expected.values())))
    assert set(leaky.summary.scope.permission_leak_items) == set().union(*map(set, truth.values()))
    assert all("permission_leak" in rows[i].attribution for i in leaky.summary.scope.permission_leak_items)
    # the filtering system: tenant A's questions never see tenant B's chunks, and none of its items leaks
    for item_id, record in safe.traces.items():
        assert {corpus.tenant_of[doc_of[c]] for c in record.trace["candidates"]} <= {corpus.asker_of[item_id]}
    assert safe.summary.scope.permission_leak_items == []
    assert {layer: found.items for layer, found in safe.summary.scope.permission_leaks.items()} == {
        "candidates": 0, "context": 0, "citations": 0}
    assert safe.summary.scope.askers == 40 and safe.summary.scope.unchecked == 0
    # leaks are counted, never a mean: no metric of the summary holds them
    assert not any("leak" in metric for metric in safe.summary.metrics["all"])


def test_the_default_gate_fails_the_system_that_leaks_and_passes_the_one_that_filters(tenants, tmp_path):
    curate, corpus = tenants
    workspace = curate.workspace

    def own_tenant(chunk, asker_groups, as_of):
        return corpus.tenant_of[chunk.doc_id] in (asker_groups or [])

    safe = evalrun.run("labs@v1", target=Ranker(workspace, "labs", own_tenant), workspace=workspace,
                       out=tmp_path / "safe", no_judge=True)
    leaky = evalrun.run("labs@v1", target=Ranker(workspace, "labs"), workspace=workspace, out=tmp_path / "leaky",
                        no_judge=True)
    gate = tmp_path / "gate.toml"
    gate.write_text('[gate]\nguard = ["context/recall@3"]\n', encoding="utf-8")
    leaked = evalrun.compare(safe, leaky, gate=gate, allow_weak_rules=True)
    assert not leaked.gate.passed
    assert any("max_permission_leaks" in line for line in leaked.gate.failed)
    kept = evalrun.compare(leaky, safe, gate=gate, allow_weak_rules=True)
    assert not any("max_permission_leaks" in line for line in kept.gate.failed)


def test_an_item_whose_only_evidence_another_tenant_holds_is_one_to_decline_not_a_retrieval_miss(curate, tmp_path):
    corpus = two_tenants(tmp_path / "tenants", questions=12)
    rows = [json.loads(line) for line in corpus.questions.read_text("utf-8").splitlines()]
    crossed = rows[0]["id"]
    rows[0]["asker_groups"] = [t for t in TENANTS if t not in rows[0]["asker_groups"]]   # asked by the other tenant
    corpus.questions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    _release(curate, corpus.documents, corpus.questions, "labs", '\n[scope]\ngroups = ["tenant-a", "tenant-b"]\n')
    manifest = curate("show", "labs@v1")
    assert f"forbidden to their asker: {crossed}" in manifest.stdout
    workspace = curate.workspace

    def declines(question, *, asker_groups=None):
        return {"candidates": [], "context": [], "answer": "You do not have access to this information.",
                "refused": True}

    run = evalrun.run("labs@v1", target=declines, workspace=workspace, out=tmp_path / "declines", no_judge=True)
    row = _rows(run)[crossed]
    assert row.scope.declined_because == ["forbidden"]
    assert row.values["unanswerable/correct_refusal"] == 1.0
    assert "retrieval_miss" not in row.attribution and "candidates/recall@3" not in row.values
    others = [r for i, r in _rows(run).items() if i != crossed]
    assert all("retrieval_miss" in r.attribution for r in others)   # the rest could have been found
    assert run.summary.scope.declined == {"forbidden": 1}


# -- policies superseded with only the year and the amounts changed --------------------------------------------

@pytest.fixture
def policies(curate, tmp_path):
    corpus = yearly_policies(tmp_path / "policies", paragraphs=10)
    _release(curate, corpus.documents, corpus.questions, "rules",
             '\n[scope]\nversions = ["2025", "2026"]\n')
    return curate, corpus


def test_each_question_is_bound_to_its_years_version_and_the_versions_are_never_copies(policies):
    curate, corpus = policies
    items = DatasetStore(curate.workspace).items("rules")
    assert {i.id: i.evidence[0].doc_id.rsplit("-", 1)[1] for i in items} == corpus.version_of
    found = curate("check-dups", "--dataset", "rules", "--kb").stdout
    groups = json.loads((curate.workspace.kb_dir / "index").joinpath(
        SnapshotStore(curate.workspace).resolve("rules"), "groups.json").read_text("utf-8"))["groups"]
    joined = [g["chunks"] for g in groups if len({c.split("#")[0].rsplit("-", 1)[1] for c in g["chunks"]}) > 1]
    assert joined == [], found


def test_an_answer_from_last_years_policy_is_stale_and_this_years_is_not(policies, tmp_path):
    curate, corpus = policies
    workspace = curate.workspace
    chunks = SnapshotStore(workspace).chunks(SnapshotStore(workspace).resolve("rules"))
    paragraph = {i.question: i.evidence[0].doc_id.rsplit("-", 1)[0] for i in DatasetStore(workspace).items("rules")}

    def from_year(version):
        """A system that answers every question from the paragraph's `version`, whatever the moment."""
        def answer(question, *, as_of=None):
            held = [c for c in chunks if c.doc_id == f"{paragraph[question]}-{version}"]
            return {"candidates": [c.chunk_id for c in held], "context": [c.chunk_id for c in held],
                    "answer": " ".join(c.text for c in held)}
        return answer

    old = evalrun.run("rules@v1", target=from_year("2025"), workspace=workspace, out=tmp_path / "old", no_judge=True)
    new = evalrun.run("rules@v1", target=from_year("2026"), workspace=workspace, out=tmp_path / "new", no_judge=True)
    asked_2026 = sorted(i for i, v in corpus.version_of.items() if v == "2026")
    asked_2025 = sorted(i for i, v in corpus.version_of.items() if v == "2025")
    old_rows, new_rows = _rows(old), _rows(new)
    # last year's policy given for this year's question: stale in the context, its numbers in the answer
    assert sorted(i for i, r in old_rows.items() if r.scope and "context" in r.scope.stale) == asked_2026
    assert sorted(old.summary.scope.stale_evidence_items) == asked_2026
    assert all("generation_miss" not in old_rows[i].attribution for i in asked_2026)
    assert all(old_rows[i].values["context/recall@5"] == 0.0 for i in asked_2026)   # never "found the evidence"
    assert all(old_rows[i].values["context/recall@5"] == 1.0 for i in asked_2025)
    # this year's policy for a question of 2025: not yet valid then, stale too; for 2026 right
    assert sorted(i for i, r in new_rows.items() if r.scope and "context" in r.scope.stale) == asked_2025
    assert all(new_rows[i].values["context/recall@5"] == 1.0 for i in asked_2026)
    assert Counter(old.summary.scope.stale["context"].item_ids) == Counter(asked_2026)
    assert next_year("364.6") == "365.7"   # the rule the corpus was built by: only numbers differ


# -- a document revoked from a group between two snapshots ------------------------------------------------------

def test_a_document_revoked_from_a_group_turns_its_evidence_forbidden_and_its_retrieval_a_leak(curate, tmp_path):
    corpus = two_tenants(tmp_path / "tenants", questions=8)
    rows = [json.loads(line) for line in corpus.questions.read_text("utf-8").splitlines()]
    asked = rows[0]
    documents = [json.loads(line) for line in corpus.documents.read_text("utf-8").splitlines()]
    holder = next(d for d in documents if asked["evidence"][0] in d["text"])
    holder["metadata"]["groups"] = list(TENANTS)   # shared by both tenants at first
    shared = tmp_path / "shared.jsonl"
    shared.write_text("".join(json.dumps(d) + "\n" for d in documents), encoding="utf-8")
    reader = [t for t in TENANTS if t not in asked["asker_groups"]][0]
    rows[0]["asker_groups"] = [reader]   # asked by the tenant that is about to lose the document
    corpus.questions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    _release(curate, shared, corpus.questions, "labs", '\n[scope]\ngroups = ["tenant-a", "tenant-b"]\n')
    workspace = curate.workspace
    store = SnapshotStore(workspace)
    first = store.resolve("labs")
    holder["metadata"]["groups"] = [t for t in TENANTS if t != reader]   # revoked from the reader's tenant
    shared.write_text("".join(json.dumps(d) + "\n" for d in documents), encoding="utf-8")
    curate("kb", "ingest", shared, "--name", "labs")
    second = store.resolve("labs")
    assert second != first and store.manifest(first).snapshot_id == first   # the old snapshot is kept as it was
    curate("remap", "--dataset", "labs", "--kb", "labs")
    curate("check-leakage", "--dataset", "labs")
    released = curate("release", "--dataset", "labs", "-m", "revoked")
    assert f"forbidden to their asker: {asked['id']}" in released.stdout
    gold = {c.chunk_id for c in store.chunks(second) if c.doc_id == holder["doc_id"]}

    def still_shows_it(question, *, asker_groups=None):
        ids = sorted(gold)
        return {"candidates": ids, "context": ids, "citations": ids[:1], "answer": "..."}

    before = evalrun.run("labs@v1", target=still_shows_it, workspace=workspace, out=tmp_path / "before",
                         no_judge=True)
    after = evalrun.run("labs@v2", target=still_shows_it, workspace=workspace, out=tmp_path / "after", no_judge=True)
    assert before.summary.scope.permission_leak_items == []   # v1: the reader's tenant still held it
    assert asked["id"] in after.summary.scope.permission_leak_items
    assert _rows(after)[asked["id"]].scope.declined_because == ["forbidden"]
    assert _rows(before)[asked["id"]].values["context/recall@5"] == 1.0
