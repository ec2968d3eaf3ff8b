"""check-leakage's pure core on items and chunks in memory: copies in the KB, pairs across the split,
acceptances, and both fixes, with nothing read or written."""

import pytest

from curate.checks.leakage.core import leak_check
from curate.errors import InputError
from curate.index.kb_index import KBIndex
from curate.kb import sha256_text
from curate.records import Chunk, EvalItem, LeakageAcceptances, LeakageDocs


def _chunk(chunk_id: str, doc_id: str, text: str) -> Chunk:
    return Chunk(chunk_id=chunk_id, doc_id=doc_id, text=text, text_sha256=sha256_text(text))


def _item(item_id: str, question: str, split: str, answer: str | None = None) -> EvalItem:
    return EvalItem(id=item_id, question=question, reference_answer=answer, language="en", source="human",
                    split=split)


INDEX = KBIndex.of_chunks([
    _chunk("faq#0", "faq", "Q: How long do refunds take for annual plans? A: Refunds take 14 days."),
    _chunk("guide#0", "guide", "Annual plans renew every year. Viewers never see API key secrets."),
])


def _items():
    return [_item("leaky", "How long do refunds take for annual plans?", "test", "14 days"),
            _item("clean", "Which roles can rotate keys?", "test"),
            _item("dev-twin", "Which roles can rotate keys ?", "dev")]


def test_leak_check_finds_copies_and_pairs_across_the_split():
    items = _items()
    report = leak_check(items, INDEX, ref="faq", draft=items)
    found = sorted((f.item_id, f.kind, f.other_item or ",".join(f.chunk_ids)) for f in report.findings)
    assert found == [("clean", "split_leak", "dev-twin"), ("dev-twin", "split_leak", "clean"),
                     ("leaky", "qa_pair_in_kb", "faq#0")]
    assert report.record.outcome == "findings" and report.record.items == ["clean", "dev-twin", "leaky"]
    assert report.record.counts == {"qa_pair_in_kb": 1, "split_leak": 2}
    assert report.record.settings["semantic"] == "skipped"      # no embedding function given: said
    assert [i.status for i in items] == ["draft"] * 3            # no fix: nothing changed


def test_quarantine_changes_the_draft_and_exclude_docs_the_documents_handed_in():
    items = _items()
    report = leak_check(items, INDEX, ref="faq", draft=items, fix="quarantine")
    assert report.quarantined == ["leaky", "clean", "dev-twin"] and report.clean
    assert [i.status for i in items] == ["quarantined"] * 3
    docs = LeakageDocs()
    fresh = _items()
    report = leak_check(fresh, INDEX, ref="faq", draft=fresh, docs=docs, fix="exclude-docs")
    assert docs.exclude.keys() == {"faq"} and report.newly_excluded == ["faq"]
    assert {f.kind for f in report.findings} == {"split_leak"}   # the leak's document is left out of evaluation


def test_an_acceptance_holds_until_the_item_changes():
    kept = LeakageAcceptances()
    items = _items()
    leak_check(items, INDEX, ref="faq", draft=items, acceptances=kept, accept_items=("leaky",),
               reason="an FAQ meant to hold it", accepted_by="ana")
    assert [(a.item_id, a.by) for a in kept.accepted] == [("leaky", "ana")]
    again = _items()
    report = leak_check(again, INDEX, ref="faq", draft=again, acceptances=kept)
    assert [f.status for f in report.findings if f.item_id == "leaky"] == ["accepted"]
    changed = _items()
    changed[0].reference_answer = "Refunds take 14 days"   # still in the FAQ, but not what was accepted
    report = leak_check(changed, INDEX, ref="faq", draft=changed, acceptances=kept)
    assert [f.item_id for f in report.lapsed] == ["leaky"]


def test_a_release_cannot_be_quarantined_and_a_reason_needs_an_item():
    with pytest.raises(InputError, match="a release is immutable"):
        leak_check(_items(), INDEX, ref="faq@v1", fix="quarantine")
    with pytest.raises(InputError, match="--reason goes with --allow"):
        leak_check(_items(), INDEX, ref="faq", reason="why")
