"""add-failures' pure core on rows in memory: failing rows become masked regression items, repeats are
counted on the item they repeat, a question in the KB is quarantined, and rows seen before are dropped."""

from curate.dataset.batches import fingerprint
from curate.failures.core import _identity, failures_from
from curate.failures.log import LogRow
from curate.failures.pii import Scrubber
from curate.failures.rules import FailureRules
from curate.index.kb_index import KBIndex
from curate.kb import sha256_text
from curate.records import Chunk, EvalItem, FailureBatch, FailureSource

RULES = FailureRules(frozenset({"down"}), 2, 5, frozenset(), frozenset())
TEXT = "Q: Can a viewer see API key secrets? A: No, viewers never see them."
INDEX = KBIndex.of_chunks([Chunk(chunk_id="faq#0", doc_id="faq", text=TEXT, text_sha256=sha256_text(TEXT))])
SOURCE = FailureSource(name="log.jsonl", sha256="0" * 64, lines=5, format="jsonl")


def _row(line: int, question: str, **signals) -> LogRow:
    return LogRow(file="log.jsonl", line=line, fields={"question": question, **signals.pop("fields", {})}, names={},
                  **signals)


def _run(rows, items=(), seen=frozenset()):
    batch = FailureBatch(batch="2026-05-1", month="2026-05", state="pending")
    return failures_from([(SOURCE, rows)], items=list(items), batch=batch, rules=RULES, scrubber=Scrubber(),
                         key=b"key", index=INDEX, seen=seen)


def test_failing_rows_become_masked_items_and_repeats_are_counted():
    old = EvalItem(id="t-1", question="How do I rotate a key?", language="en", source="human", split="test")
    rows = [_row(1, "How do I rotate a key?", feedback="down"),                 # repeats t-1
            _row(2, "Why is 13812345678 blocked?", rating=1),
            _row(3, "Why is 13812345678 blocked?", feedback="down"),           # the same question again
            _row(4, "Can a viewer see API key secrets?", feedback="down"),     # in the KB: quarantined
            _row(5, "Is the gateway fast?", feedback="up")]                    # not a failure
    report = _run(rows, [old])
    batch = report.batch
    assert [(i.question, i.status) for i in report.new_items] == [("Why is [PHONE] blocked?", "needs_evidence"),
                                                                  ("Can a viewer see API key secrets?", "quarantined")]
    assert len(batch.added) == 1 and len(batch.leaked) == 1
    assert [(a.batch, a.count) for a in old.production.asked] == [("2026-05-1", 1)]   # counted on t-1
    assert batch.counts["rows"] == 5 and batch.counts["failing_rows"] == 4
    assert batch.counts["duplicates"] == 2 and batch.duplicates == {"exact": 2}        # row 1 on t-1, row 3 on row 2
    assert batch.personal_data == {"PHONE": 2}
    assert report.semantic.settings()["semantic"] == "skipped"                       # no embed given: recorded


def test_rows_an_earlier_batch_took_are_dropped():
    row = _row(1, "Why is my invoice late?", feedback="down")
    report = _run([row], seen={fingerprint(b"key", _identity(row))})
    assert report.new_items == [] and report.batch.counts["already_added"] == 1
