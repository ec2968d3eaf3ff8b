"""Fixtures of the difficulty tests: a small Chinese KB whose items quote their evidence."""

from __future__ import annotations

import json

import pytest

# A Chinese KB about medicines; d-1 quotes a negation from its evidence, d-2 and d-3 add their own.
DRUG_DOCS = [
    {"doc_id": "drug-a", "text": "该药物不适用于儿童。成人每日两次，每次一片，饭后服用。"},
    {"doc_id": "drug-b", "text": "本品适用于成人和十二岁以上儿童。孕妇慎用，哺乳期妇女用药前请咨询医生。"},
    {"doc_id": "store", "text": "请在阴凉干燥处保存，避免阳光直射。开封后三个月内用完。"},
]
DRUG_ITEMS = [
    {"id": "d-1", "question": "文中说‘该药物不适用于儿童’的依据是什么？", "answer": "说明书。",
     "evidence": ["该药物不适用于儿童"]},
    {"id": "d-2", "question": "如果没有医嘱，成人每日服用几次？", "answer": "两次。",
     "evidence": ["成人每日两次，每次一片"]},
    {"id": "d-3", "question": "文中说‘该药物不适用于儿童’，没有写明的成人用法是什么？", "answer": "每日两次。",
     "evidence": ["该药物不适用于儿童。成人每日两次，每次一片"]},
]


@pytest.fixture
def drugs(curate, tmp_path):
    """A workspace with the drug KB ingested as 'drugs' and DRUG_ITEMS imported as dataset 'drugs'."""
    docs, items = tmp_path / "drugs.jsonl", tmp_path / "drug_items.jsonl"
    docs.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in DRUG_DOCS), encoding="utf-8")
    items.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in DRUG_ITEMS), encoding="utf-8")
    curate("kb", "ingest", docs, "--name", "drugs")
    curate("import", items, "--dataset", "drugs", "--source", "human", "--kb", "drugs")
    return curate
