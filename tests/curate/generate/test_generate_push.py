"""Generated questions are never gold until a person says so: pushed to a real argilla-server, one
accepted with a corrected question, one discarded (rejected at the pull), the rest unreviewed; show
and release say the synthetic share and count only what people reviewed."""

import uuid
from pathlib import Path

from curate.dataset import DatasetStore
from curate.records import reviewed_by_person
from tests.curate.annotate.test_adjudication import annotation_records, annotator, respond

HANDBOOK = Path(__file__).resolve().parents[3] / "examples" / "handbook"


def test_pushed_generated_questions_are_accepted_edited_or_rejected_by_people(curate, argilla_env):
    space = "g" + uuid.uuid4().hex[:8]
    curate("kb", "ingest", HANDBOOK / "docs", "--name", "handbook")
    result = curate("generate", "--dataset", "gen", "--kb", "handbook", "--n", "4", "--push", "--pool-k", "3",
                    "--argilla-workspace", space)
    assert "pushed 4 items to Argilla" in result.stdout
    items = DatasetStore(curate.workspace).items("gen")
    records = annotation_records(argilla_env, space, curate.workspace, dataset="gen")
    assert set(records) == {i.id for i in items}
    confusable = [i for i in items if i.qtype == "confusable"]
    kept, dropped = confusable[0], confusable[1]
    shown = records[kept.id]
    assert shown["fields"]["question"] == kept.question
    ann = annotator(argilla_env, space, "ann")
    corrected = kept.question.rstrip("?？") + "（网关返回的错误码）？"
    respond(argilla_env, ann, records[kept.id]["id"], {1: 2}, question_fixed=corrected)
    respond(argilla_env, ann, records[dropped.id]["id"], status="discarded")

    pulled = curate("annotate", "pull", "--dataset", "gen")
    assert f"rejected 1 generated questions their reviewers discarded: {dropped.id}" in pulled.stdout
    after = {i.id: i for i in DatasetStore(curate.workspace).items("gen")}
    assert after[dropped.id].status == "rejected" and after[dropped.id].status_history[-1].by == f"ann-{space}"
    assert after[kept.id].status == "labelled" and reviewed_by_person(after[kept.id])
    assert after[kept.id].question == corrected
    assert sum(reviewed_by_person(i) for i in after.values()) == 1

    show = curate("show", "gen")
    assert "synthetic: 4 of 4 items (100%): 1 reviewed by a person, 3 not" in show.stderr + show.stdout
    curate("check-leakage", "--dataset", "gen")
    released = curate("release", "--dataset", "gen", "-m", "generated")
    assert "synthetic: 3 of 3 items (100%): 1 reviewed by a person, 2 not" in released.stdout   # the rejected one is out
