"""curate annotate status: exact counts per annotator over every Argilla dataset, against a real argilla-server."""

import re
import uuid


from curate.annotate.pull import _user_counts, pull, status
from curate.annotate.push import push
from tests.curate.annotate.test_adjudication import annotation_records, annotator, respond


def test_counts_add_up_by_hand():
    records = [{"status": "completed", "responses": [{"user_id": "1", "status": "submitted"}]},
               {"status": "pending", "responses": [{"user_id": "1", "status": "discarded"},
                                                   {"user_id": "2", "status": "draft"}]},
               {"status": "pending", "responses": []}]
    counts = _user_counts(records, {"ann", "bo", "cy"}, {"1": "ann", "2": "bo"})
    assert counts["ann"] == {"submitted": 1, "draft": 0, "discarded": 1, "pending": 1, "completed_by_others": 0,
                             "records": 3}
    assert counts["bo"] == {"submitted": 0, "draft": 1, "discarded": 0, "pending": 1, "completed_by_others": 1,
                            "records": 3}
    assert counts["cy"]["pending"] == 2 and counts["cy"]["completed_by_others"] == 1


def test_status_counts_submitted_draft_discarded_and_pending_exactly(handbook, argilla_env):
    space = "s" + uuid.uuid4().hex[:8]
    push(handbook.workspace, dataset="faq", pool_k=4, min_submitted=1, argilla_workspace=space)
    ann, _ = annotator(argilla_env, space, "ann"), annotator(argilla_env, space, "bo")
    records = annotation_records(argilla_env, space, handbook.workspace)
    total = len(records)
    assert total == 5
    respond(argilla_env, ann, records["t-1"]["id"], {1: 2})
    respond(argilla_env, ann, records["t-2"]["id"], {1: 2})
    respond(argilla_env, ann, records["t-3"]["id"], {1: 1}, status="draft")
    respond(argilla_env, ann, records["t-4"]["id"], status="discarded")

    result = status(handbook.workspace, dataset="faq")["argilla"]
    assert result["records"] == 5 and result["completed"] == 2   # one submitted answer completes a record here
    assert result["users"][f"ann-{space}"] == {"submitted": 2, "draft": 1, "discarded": 1, "pending": 1,
                                                "completed_by_others": 0, "records": 5}
    # bo answered nothing: the two records ann completed are closed to bo, the other three wait
    assert result["users"][f"bo-{space}"] == {"submitted": 0, "draft": 0, "discarded": 0, "pending": 3,
                                               "completed_by_others": 2, "records": 5}
    assert sum(d["records"] for d in result["datasets"].values()) == 5
    assert result["adjudication"] is None

    out = handbook("annotate", "status", "--dataset", "faq").stdout
    assert "2 of 5 records completed" in out
    row = next(line for line in out.splitlines() if f"ann-{space}" in line)
    assert [cell for cell in re.split(r"[^\w-]+", row) if cell][1:] == ["2", "1", "1", "1", "0", "5"]

    # once pulled, the labelled records say so in Argilla, and the counts do not move
    pull(handbook.workspace, dataset="faq")
    shown = annotation_records(argilla_env, space, handbook.workspace)
    assert shown["t-1"]["metadata"]["status"] == shown["t-2"]["metadata"]["status"] == "labelled"
    assert status(handbook.workspace, dataset="faq")["argilla"]["users"][f"ann-{space}"]["draft"] == 1
