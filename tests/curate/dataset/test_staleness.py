"""A check record is stale only when the fields it reads changed; the line says how many items were
added or changed since and the command that makes it current again."""

from curate.dataset import items_digest
from curate.dataset.staleness import stale_checks
from curate.records import DatasetMeta, DifficultyCheck, EvalItem, LeakageCheck, SplitCheck

T0, T1, T2 = "2026-11-01T10:00:00+00:00", "2026-11-02T10:00:00+00:00", "2026-11-03T10:00:00+00:00"


def _item(n, **fields):
    return EvalItem(id=f"q-{n}", question=f"question {n}?", language="en", source="human", created_at=T0, updated_at=T0, **fields)


def _meta(items, split_at=None):
    meta = DatasetMeta(name="hr")
    meta.checks.leakage = LeakageCheck(at=T1, ref="hr", checked=len(items), outcome="clean",
                                       items_sha256=items_digest(items, ignore=LeakageCheck.IGNORES))
    meta.checks.difficulty = DifficultyCheck(at=T1, outcome="clean", assessed=len(items), unmeasured=0, misfits=0,
                                             target="2:5:3", items_sha256=items_digest(items, ignore=DifficultyCheck.IGNORES))
    if split_at:
        meta.checks.split = SplitCheck(at=split_at, outcome="clean", units=len(items))
    return meta


def test_a_grade_after_leakage_leaves_it_current_and_a_split_after_grade_leaves_grade_current():
    items = [_item(1), _item(2)]
    meta = _meta(items)
    items[0].difficulty = "hard"                                   # grade, after the leakage check
    meta.checks.difficulty.items_sha256 = items_digest(items, ignore=DifficultyCheck.IGNORES)
    assert stale_checks(meta, items) == []
    items[1].split = "test"                                        # then split
    assert [s.check for s in stale_checks(meta, items)] == ["leakage"]   # leakage reads the split; grade does not


def test_the_line_counts_what_was_added_and_changed_and_names_the_command():
    items = [_item(1), _item(2)]
    meta = _meta(items, split_at=T2)
    items[0].question, items[0].updated_at = "edited?", T2
    items.append(EvalItem(id="q-3", question="new?", language="en", source="human", created_at=T2, updated_at=T2))
    lines = [s.line() for s in stale_checks(meta, items)]
    assert lines == [
        f"the leakage check of 'hr' ({T1}) no longer matches its items: 1 item added and 1 item changed since "
        f"(`curate split` ran since); run `curate check-leakage --dataset hr` again",
        f"the grade record of 'hr' ({T1}) no longer matches its items: 1 item added and 1 item changed since; "
        f"run `curate grade --dataset hr` again"]
