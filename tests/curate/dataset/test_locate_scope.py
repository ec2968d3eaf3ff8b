"""A quote that stands unchanged in several documents is placed where its item's asker may use it at its
moment: the 2026 policy for a question asked in 2026, the 2025 one for a question asked in 2025, the copy of
the asker's own tenant; where the asker may use none, at the first place (and the release reports the item)."""

from __future__ import annotations

import json
from pathlib import Path

from curate.dataset import DatasetStore, import_items
from curate.kb import SnapshotStore, ingest
from curate.release.scope import release_scope
from curate.scope import read_scope_settings

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
UNCHANGED = "Enterprise, severity 2: within 4 business hours."   # in the 2025 and in the 2026 policy
SCOPE = '\n[scope]\nversions = ["2025", "2026"]\ngroups = ["staff", "managers"]\n'


def _items(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _bound(workspace, name: str) -> dict[str, str]:
    return {i.id: i.evidence[0].doc_id for i in DatasetStore(workspace).items(name)}


def test_an_unchanged_sentence_of_a_superseded_policy_is_quoted_from_the_version_in_force(curate, tmp_path):
    workspace = curate.workspace
    with open(workspace.config_path, "a", encoding="utf-8") as config:
        config.write(SCOPE)
    ingest(workspace, [EXAMPLES / "handbook" / "scoped"], name="handbook")
    rows = [{"id": "in-2025", "question": "Severity 2 response?", "evidence": [UNCHANGED], "as_of": "2025-06-01"},
            {"id": "in-2026", "question": "Severity 2 response?", "evidence": [UNCHANGED], "as_of": "2026"},
            {"id": "latest", "question": "Severity 2 response?", "evidence": [UNCHANGED]}]
    import_items(workspace, _items(tmp_path, rows), dataset="sla", source="human", kb="handbook")
    assert _bound(workspace, "sla") == {"in-2025": "support-sla-2025.en.md", "in-2026": "support-sla-2026.en.md",
                                        "latest": "support-sla-2026.en.md"}
    snapshot = SnapshotStore(workspace)
    chunks = snapshot.chunks(snapshot.resolve("handbook"))
    report = release_scope(DatasetStore(workspace).items("sla"), chunks, read_scope_settings(workspace))
    assert report.should_decline == {}   # each is usable where it was placed


def test_a_sentence_two_tenants_share_is_bound_to_the_askers_own_copy(curate, tmp_path):
    workspace = curate.workspace
    with open(workspace.config_path, "a", encoding="utf-8") as config:
        config.write('\n[scope]\ngroups = ["tenant-a", "tenant-b", "tenant-c"]\n')
    sentence = "退款申请须在收货后30天内通过订单页面提交，逾期不予受理。"
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"doc_id": doc, "text": f"# {doc}\n\n{sentence}", "metadata": {"groups": [g]}},
                                       ensure_ascii=False) + "\n"
                            for doc, g in (("a-terms", "tenant-a"), ("b-terms", "tenant-b"))), encoding="utf-8")
    ingest(workspace, [docs], name="shop")
    rows = [{"id": f"asked-by-{g}", "question": "退款期限？", "evidence": [sentence], "asker_groups": [f"tenant-{g}"]}
            for g in "abc"]
    import_items(workspace, _items(tmp_path, rows), dataset="shop", source="human", kb="shop")
    assert _bound(workspace, "shop") == {"asked-by-a": "a-terms", "asked-by-b": "b-terms",
                                         "asked-by-c": "a-terms"}   # none usable: the first place
    snapshot = SnapshotStore(workspace)
    report = release_scope(DatasetStore(workspace).items("shop"), snapshot.chunks(snapshot.resolve("shop")),
                           read_scope_settings(workspace))
    assert report.should_decline == {"forbidden": ["asked-by-c"]}


def test_without_scope_a_shared_sentence_is_bound_to_its_first_place_as_before(curate, tmp_path):
    sentence = "Refunds are accepted within 30 days of delivery."
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"doc_id": doc, "text": f"# {doc}\n\n{sentence}"}) + "\n"
                            for doc in ("a-terms", "b-terms")), encoding="utf-8")
    ingest(curate.workspace, [docs], name="shop")
    rows = [{"id": "q", "question": "Refund window?", "evidence": [sentence], "asker_groups": ["tenant-b"]}]
    import_items(curate.workspace, _items(tmp_path, rows), dataset="shop", source="human", kb="shop")
    assert _bound(curate.workspace, "shop") == {"q": "a-terms"}
