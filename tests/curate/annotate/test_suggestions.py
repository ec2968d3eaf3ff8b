"""`curate annotate push --suggest-from RUN`: the judge's grades of retrieved chunks as Argilla
suggestions (people over the judge), judged chunks in the pools, refusals and skipped grades counted;
and the pull reporting which suggested grades annotators changed. The last test runs against a real
argilla-server."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from curate.annotate.form import record
from curate.annotate.pool import Candidate, candidate_pools
from curate.annotate.pull import pull
from curate.annotate.push import push
from curate.annotate.state import judge_suggestions_path, load_state
from curate.annotate.suggestions import JudgeGrade, judge_agent, read_suggestions
from curate.dataset import DatasetStore
from curate.index.kb_index import KBIndex
from curate.kb import sha256_text
from curate.records import AnnotationState, Chunk, ChunkGrade, EvalItem, Evidence, JudgedGrades, Production
from tests.support.argilla import annotator_headers, owner_client, submit

MODEL = "qwen2.5:7b-instruct"
SCRIPT = "<script>alert(1)</script> is **bold** [x](y)"


def _grades(item_id: str, snapshot: str | None, grades: dict[str, int], labelled: bool = True,
            possibly_missing: tuple[str, ...] = (), reasons: dict[str, str] | None = None) -> JudgedGrades:
    return JudgedGrades(item_id=item_id, kb_snapshot=snapshot, judge_model=MODEL, prompt_version="p1",
                        guideline_version="g1", labelled=labelled, possibly_missing=list(possibly_missing),
                        grades=[ChunkGrade(chunk_id=c, grade=g, reason=(reasons or {}).get(c, f"why {c}"))
                                for c, g in grades.items()])


def _write_run(folder: Path, records: list[JudgedGrades]) -> Path:
    """A run folder holding retrieval_grades.jsonl as evalrun writes it, one record a line."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "retrieval_grades.jsonl").write_text(
        "".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    return folder


def _chunk(chunk_id: str, text: str) -> Chunk:
    return Chunk(chunk_id=chunk_id, doc_id=chunk_id.split("#")[0], text=text, text_sha256=sha256_text(text))


# -- the pool ---------------------------------------------------------------------------------------

def test_judged_chunks_join_after_evidence_and_production_before_bm25_one_per_copy_group_within_pool_k():
    refund = "Refunds are paid back within 14 days of the request."
    index = KBIndex.of_chunks([
        _chunk("faq#0", refund), _chunk("faq#1", refund),   # faq#1 is a copy of faq#0
        _chunk("ship#0", "Shipping fees are charged per parcel, not per item."),
        _chunk("policy#0", "A refund request must name the order number."),
        _chunk("policy#1", "Refunds for gift cards are not possible."),
        _chunk("blog#0", "Refunds, refunds, refunds: how long do refunds take in other shops?"),
    ], copies={"faq#0": ["faq#0", "faq#1"], "faq#1": ["faq#0", "faq#1"]})
    item = EvalItem(id="q", question="How long do refunds take?", language="en", source="production",
                    evidence=[Evidence(evidence_id="e1", text=refund, chunk_ids=["faq#0"], grade=2)],
                    production=Production(retrieved=["ship#0"]))
    judged = {"q": ["faq#1", "gone#3", "policy#1", "policy#0"]}

    pool = candidate_pools(index, [item], pool_k=8, judged=judged)["q"]
    assert [(c.chunk_id, c.origin) for c in pool][:4] == [
        ("faq#0", "evidence"), ("ship#0", "retrieved"), ("policy#1", "judged"), ("policy#0", "judged")]
    # the copy of the evidence is never shown twice; a chunk the snapshot lacks is left out; the rest is BM25
    assert "faq#1" not in [c.chunk_id for c in pool] and {c.origin for c in pool[4:]} <= {"bm25", "near_miss"}
    assert "blog#0" in [c.chunk_id for c in pool[4:]]
    # the pool size still holds: with 3 slots only the first judged chunk gets in, and no BM25
    assert [c.chunk_id for c in candidate_pools(index, [item], pool_k=3, judged=judged)["q"]] == [
        "faq#0", "ship#0", "policy#1"]
    # without the judge the pool is what it always was
    assert "judged" not in {c.origin for c in candidate_pools(index, [item], pool_k=8)["q"]}


# -- reading the run: refusals and skipped grades ---------------------------------------------------

def test_a_run_without_grades_is_refused_in_one_line(handbook, tmp_path):
    run = tmp_path / "run-without-grades"
    run.mkdir()
    result = handbook("annotate", "push", "--dataset", "faq", "--suggest-from", run, code=2)
    assert result.stderr == (f"error: {run}: field 'suggest-from': no retrieval_grades.jsonl: the run was made "
                             f"without --judge-retrieval (evalrun run ... --judge-retrieval)\n")
    assert not (handbook.workspace.root / "datasets" / "faq" / "annotation.json").exists()   # nothing recorded


def test_grades_of_another_kb_snapshot_are_refused_in_one_line(handbook, tmp_path):
    snapshot = DatasetStore(handbook.workspace).load("faq")[0].kb_snapshot
    run = _write_run(tmp_path / "run", [_grades("t-1", snapshot, {"errors.zh.md#1": 2}),
                                        _grades("t-2", "kb-0123456789abcdef", {"upgrade.en.md#4": 2})])
    result = handbook("annotate", "push", "--dataset", "faq", "--suggest-from", run, code=2)
    assert result.stderr.startswith(f"error: {run / 'retrieval_grades.jsonl'}: field 'kb_snapshot': graded against "
                                    f"KB snapshot kb-0123456789abcdef (item t-2), but dataset 'faq' is on {snapshot}")
    assert result.stderr.count("\n") == 1


def test_grades_of_unknown_items_and_chunks_are_skipped_and_counted(handbook, tmp_path):
    meta, items = DatasetStore(handbook.workspace).load("faq")
    index = KBIndex(handbook.workspace, meta.kb_snapshot)
    run = _write_run(tmp_path / "run", [
        _grades("t-1", meta.kb_snapshot, {"errors.zh.md#1": 0, "upgrade.en.md#2": 2, "errors.zh.md#9": 2},
                possibly_missing=("upgrade.en.md#2", "errors.zh.md#9")),
        _grades("t-5", meta.kb_snapshot, {"upgrade.en.md#0": 1, "errors.zh.md#0": 0, "errors.zh.md#1": 2},
                labelled=False),
        _grades("t-2", meta.kb_snapshot, {"upgrade.en.md#1": 1}),
        _grades("not-here", meta.kb_snapshot, {"upgrade.en.md#1": 1, "upgrade.en.md#2": 0}),
    ])
    found = read_suggestions(run, kb_snapshot=meta.kb_snapshot, dataset="faq", items=items,
                             pushing={"t-1", "t-5"}, known=index.position)
    # errors.zh.md#9 is not a chunk of the snapshot; t-2 is here but not pushed; not-here is no item here
    assert dict(found.skipped) == {"chunk not in snapshot": 1, "item not pushed (status draft)": 1,
                                   "item not in dataset": 2}
    assert found.joining == {"t-1": ["upgrade.en.md#2"],              # possibly missing, in the snapshot
                             "t-5": ["errors.zh.md#1", "upgrade.en.md#0"]}   # unlabelled: 2s, then 1s
    assert found.models == {MODEL} and found.grades["t-1"]["errors.zh.md#1"] == JudgeGrade(0, "why errors.zh.md#1",
                                                                                          MODEL)
    found.leave_out(["t-5"], "held")
    assert found.skipped["held"] == 3 and "t-5" not in found.joining


# -- what a record shows ----------------------------------------------------------------------------

def test_a_record_suggests_the_judges_grade_only_where_no_person_labelled_and_escapes_its_reason():
    item = EvalItem(id="q", question="How long do refunds take?", language="en", source="human")
    candidates = [Candidate("faq#0", "evidence", 2), Candidate("policy#0", "judged"), Candidate("blog#0", "bm25")]
    texts = {c.chunk_id: ("", f"text of {c.chunk_id}") for c in candidates}
    judged = {"faq#0": JudgeGrade(0, "Says nothing about time.", MODEL), "policy#0": JudgeGrade(1, SCRIPT, MODEL)}

    built = record(item, candidates, texts, origin="curate", judged=judged)
    suggested = {s.question_name: (s.value, s.agent) for s in built.suggestions if s.question_name.startswith("rel")}
    # people over the judge: slot 1's label stays; slot 2 suggests the judge's grade, named by its model
    assert suggested == {"relevance_1": (2, "curate"), "relevance_2": (1, "judge:qwen2.5:7b-instruct")}
    assert built.fields["chunk_1"] == ("`faq#0`\n\n> judge (qwen2.5:7b-instruct): 0 — Says nothing about time."
                                       "\n\ntext of faq#0")
    assert built.fields["chunk_2"] == (r"`policy#0`" "\n\n"
                                       r"> judge (qwen2.5:7b-instruct): 1 — \<script\>alert(1)\</script\> is "
                                       r"\*\*bold\*\* \[x\](y)" "\n\ntext of policy#0")
    assert "<script>" not in built.fields["chunk_2"] and "judge" not in built.fields["chunk_3"]


def test_the_agent_names_the_judge_model_as_argilla_accepts_it():
    assert judge_agent(MODEL) == "judge:qwen2.5:7b-instruct"
    assert judge_agent("openai/gpt-4o@2024-08 (eu)") == "judge:openai/gpt-4o_2024-08 _eu_"
    assert len(judge_agent("m" * 300)) == 200


def test_an_annotation_state_of_schema_3_reads_without_judge_suggestions(tmp_path):
    path = tmp_path / "annotation.json"
    path.write_text(json.dumps({"schema_version": 3, "items": {"t-1": {
        "slots": ["a"], "digest": "d", "pushed_at": "2026-01-01T00:00:00+00:00", "argilla_dataset": None}},
        "push_started": None}), encoding="utf-8")
    state = AnnotationState.read(path)
    assert state.schema_version == 4 and state.items["t-1"].judge == [] and state.judge_run is None


# -- against a real Argilla -------------------------------------------------------------------------

def _suggestions(server, space: str, item_id: str):
    """Return question -> (value, agent) of the relevance suggestions an item's record holds in Argilla, and
    the record."""
    client = owner_client(server)
    for dataset in client.workspaces(space).datasets:
        for found in client.datasets(name=dataset.name, workspace=space).records(with_suggestions=True):
            if str(found.id) == item_id:
                return {s.question_name: (s.value, s.agent) for s in found.suggestions
                        if s.question_name.startswith("relevance_")}, found
    raise AssertionError(f"no record {item_id}")


def test_push_suggests_the_judges_grades_and_pull_reports_the_ones_annotators_changed(handbook, argilla_env, tmp_path):
    space = "j" + uuid.uuid4().hex[:8]
    snapshot = DatasetStore(handbook.workspace).load("faq")[0].kb_snapshot
    run = _write_run(tmp_path / "run", [
        # t-1 has labelled evidence (errors.zh.md#1, grade 2); the judge thinks upgrade.en.md#2 is missing
        _grades("t-1", snapshot, {"errors.zh.md#1": 0, "upgrade.en.md#2": 2, "errors.zh.md#0": 1},
                possibly_missing=("upgrade.en.md#2",)),
        # t-2: a grade of a candidate its pool has anyway, and one of a chunk the snapshot does not have
        _grades("t-2", snapshot, {"upgrade.en.md#1": 1, "upgrade.en.md#9": 2}),
        # t-5 has no evidence: what the judge graded 2, then 1, joins its pool
        _grades("t-5", snapshot, {"upgrade.en.md#0": 1, "errors.zh.md#1": 2}, labelled=False,
                reasons={"upgrade.en.md#0": SCRIPT}),
        _grades("t-404", snapshot, {"errors.zh.md#2": 2}),
    ])
    result = handbook("annotate", "push", "--dataset", "faq", "--pool-k", "4", "--argilla-workspace", space,
                      "--suggest-from", run)
    assert (f"judge's suggestions from {run} (judge model {MODEL}): 3 items; 5 candidates suggest the judge's grade, "
            f"1 keep a person's label (the judge's grade in their text); 3 chunks joined the pools as judged"
            in result.stdout)
    assert "2 grades skipped: chunk not in snapshot 1, item not in dataset 1" in result.stdout

    agent = "judge:qwen2.5:7b-instruct"
    t1, t1_record = _suggestions(argilla_env, space, "t-1")
    # slot 1 is the labelled evidence: the person's 2 stays the suggestion, the judge's 0 is in the text
    assert t1 == {"relevance_1": (2, "curate"), "relevance_2": (2, agent), "relevance_3": (1, agent)}
    assert "\n\n> judge (qwen2.5:7b-instruct): 0 — why errors.zh.md\\#1\n\n" in t1_record.fields["chunk_1"]
    assert "`upgrade.en.md#2`" in t1_record.fields["chunk_2"].split("\n")[0]   # joined as judged, slot 2
    t5, t5_record = _suggestions(argilla_env, space, "t-5")
    assert t5 == {"relevance_1": (2, agent), "relevance_2": (1, agent)}
    assert r"\<script\>alert(1)\</script\> is \*\*bold\*\*" in t5_record.fields["chunk_2"]
    state = load_state(handbook.workspace, "faq")
    assert [(s.slot, s.chunk_id, s.grade, s.judge_model) for s in state.items["t-1"].judge] == [
        (2, "upgrade.en.md#2", 2, MODEL), (3, "errors.zh.md#0", 1, MODEL)]
    assert state.judge_run == str(run)   # outside the workspace: kept as it is

    # an annotator changes the judge's 2 on slot 2 to 0, keeps its 1 on slot 3
    ann = annotator_headers(argilla_env, space, "ann")
    submit(argilla_env, ann, str(t1_record._server_id), {1: 2, 2: 0, 3: 1, 4: 0})
    report = pull(handbook.workspace, dataset="faq")
    assert [(item_id, c.slot, c.chunk_id, c.judge_grade, c.person_grade, c.user) for item_id, c in
            report.judge.changed()] == [("t-1", 2, "upgrade.en.md#2", 2, 0, f"ann-{space}")]
    assert report.judge.kept() == 1
    kept = json.loads(judge_suggestions_path(handbook.workspace, "faq").read_text(encoding="utf-8"))
    assert [(c["chunk_id"], c["judge_grade"], c["person_grade"]) for c in kept["items"]["t-1"]] == [
        ("upgrade.en.md#2", 2, 0), ("errors.zh.md#0", 1, 1)]
    result = handbook("annotate", "pull", "--dataset", "faq")
    assert "judge's suggestions: 1 kept, 1 changed (judge 2 → person 0 on 1)" in result.stdout
    assert "upgrade.en.md#2" in result.stdout.split("grades annotators changed")[1]

    # a later push keeps showing the run's grades (t-1, labelled now, is not pushed: its grades are counted)
    again = push(handbook.workspace, dataset="faq", pool_k=4, argilla_workspace=space)
    assert again.judge.run == str(run) and again.judge.skipped["item not pushed (status labelled)"] == 3
    assert _suggestions(argilla_env, space, "t-2")[0]["relevance_3"] == (1, agent)
    # until --no-suggestions: the judge's suggestion on t-2 (same slots, same record) is removed
    dropped = push(handbook.workspace, dataset="faq", pool_k=4, argilla_workspace=space, no_suggestions=True)
    assert dropped.judge is None and dropped.judge_dropped == 1
    assert _suggestions(argilla_env, space, "t-2")[0] == {"relevance_1": (2, "curate")}
    state = load_state(handbook.workspace, "faq")
    assert state.judge_run is None and state.items["t-2"].judge == [] and state.items["t-1"].judge != []
    with pytest.raises(Exception, match="not both"):
        push(handbook.workspace, dataset="faq", pool_k=4, argilla_workspace=space, suggest_from=run,
             no_suggestions=True)
