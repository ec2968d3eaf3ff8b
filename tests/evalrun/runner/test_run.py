import json
import threading

import pytest
from click.testing import CliRunner

from curate.checks.leakage import check_leakage
from curate.dataset import DatasetStore
from curate.errors import CurateError
from curate.release import release
from evalrun.cli.main import cli as evalrun_cli
from evalrun.records import RunSettings, TraceRecord, read_run, read_traces
from evalrun.runner import run
from evalrun.runner.trace_log import TraceLog

from tests.support import targets
from tests.support.processes import PATIENCE


def _summary(folder):
    return read_run(folder).summary


def _scores(folder):
    return {r.item_id: r for r in read_run(folder).scores}


def test_a_perfect_system_scores_full_marks_on_both_layers(released, tmp_path):
    folder = run(released.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "run")
    summary = _summary(folder)
    overall = summary.metrics["all"]
    assert (summary.answerable, summary.unanswerable) == (4, 1)
    assert overall["candidates/recall@5"].mean == 1.0 and overall["candidates/recall@5"].n == 4
    assert overall["candidates/mrr@10"].mean == 0.5           # the distractor always ranks first
    assert overall["context/mrr@10"].mean == 1.0 and summary.context_loss["recall@5"] == 0.0
    assert overall["unanswerable/correct_refusal"].mean == 1.0
    assert "context/key_point_coverage" not in overall   # no key point is linked to its evidence here
    assert summary.problems == {}
    # no judge here: the placeholder answer ("an answer") holds no accepted answer, lexically a generation miss
    assert summary.attribution == summary.attribution_lexical == {"generation_miss": 4}
    assert summary.end_to_end.latency_ms["total"].p50 == 25.0
    assert summary.end_to_end.system_tokens == {"prompt_tokens": 500, "completion_tokens": 50}
    assert "qtype=unanswerable" in summary.metrics and summary.metrics["all"]["success"].mean == 1.0
    manifest = read_run(folder).manifest
    assert manifest.leakage_gate.status == "clean" and manifest.settings.ks == [1, 3, 5, 10]
    assert manifest.judge["unavailable"].startswith("field 'judge': no judge configured")   # as curate init leaves it
    assert "gen_key_point/en" in manifest.prompt_versions
    assert summary.end_to_end.system_cost is None                 # no cost reported, no price given
    priced = run(released.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "priced",
                 settings=RunSettings(price_input=1.0, price_output=4.0))
    assert _summary(priced).end_to_end.system_cost == pytest.approx((500 * 1.0 + 50 * 4.0) / 1e6)


def test_context_cut_and_false_answer_are_attributed(released, tmp_path):
    folder = run(released.workspace, ref="faq@v1", target="tests.support.targets:cut", out=tmp_path / "run")
    scores = _scores(folder)
    assert {i: r.attribution for i, r in scores.items()} == {
        "t-1": ["context_cut"], "t-2": ["context_cut"], "t-3": ["context_cut"], "t-4": ["context_cut"],
        "t-5": ["false_answer"]}
    summary = _summary(folder)
    assert summary.context_loss["recall@5"] == 1.0 and summary.attribution["context_cut"] == 4
    result = CliRunner().invoke(evalrun_cli, ["show", str(folder), "--failures"])
    assert result.exit_code == 0 and "context_cut" in result.output and "t-5" in result.output


def test_bad_input_is_recorded_per_item_and_the_run_goes_on(released, tmp_path):
    folder = run(released.workspace, ref="faq@v1", target="tests.support.targets:troubled", out=tmp_path / "run",
                 settings=RunSettings(timeout=1.0))
    scores = _scores(folder)
    assert scores["t-1"].problems == ["target raised RuntimeError: index offline"]
    assert scores["t-2"].problems[0].startswith("bad trace: trace of t-2: must be a JSON object")
    assert scores["t-3"].problems[0].startswith("bad trace: trace of t-3: field 'candidates'")
    assert scores["t-4"].problems == ["unknown chunk ids: no-such-chunk"]
    assert scores["t-5"].problems == ["target timed out after 1 s"]
    summary = _summary(folder)
    assert summary.problems == {"target raised RuntimeError": 1, "bad trace": 2, "unknown chunk id": 1,
                                   "target timed out after 1 s": 1}
    assert summary.metrics["all"]["success"].mean == 1 / 5     # only t-4 produced a usable trace
    # the abandoned SAML call returns a second later and records its question in CALLS: let it, here,
    # rather than in the next test
    for thread in threading.enumerate():
        if thread.name.startswith("evalrun call"):
            thread.join(timeout=PATIENCE)   # it sleeps 2 s: the timeout is a safety net


def test_leakage_gate_refuses_an_unchecked_release(handbook, tmp_path):
    release(handbook.workspace, dataset="faq", message="unchecked")
    with pytest.raises(CurateError, match="faq@v1 is not cleared for evaluation: no leakage check against KB"):
        run(handbook.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "run")
    folder = run(handbook.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "run2",
                 settings=RunSettings(allow_unchecked=True))
    assert _summary(folder).leakage_gate.status == "unchecked"
    result = CliRunner().invoke(evalrun_cli, ["show", str(folder)])
    assert "LEAKAGE UNCHECKED" in result.output


def test_a_killed_run_resumes_without_losing_or_repeating_an_item(released, tmp_path):
    folder = tmp_path / "run"
    run(released.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=folder)
    lines = (folder / "traces.jsonl").read_bytes().splitlines(keepends=True)
    # as if killed while writing the third line: two whole lines and half of one
    (folder / "traces.jsonl").write_bytes(b"".join(lines[:2]) + lines[2][: len(lines[2]) // 2])
    targets.CALLS.clear()
    run(released.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=folder, resume=True)
    assert len(targets.CALLS) == 3
    ids = [json.loads(line)["item_id"] for line in (folder / "traces.jsonl").read_text().splitlines()]
    assert sorted(ids) == ["t-1", "t-2", "t-3", "t-4", "t-5"] == sorted(read_run(folder).traces)
    with pytest.raises(CurateError, match="not empty: pass --resume"):
        run(released.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=folder)


def test_trace_log_cuts_a_partial_line(tmp_path):
    path = tmp_path / "traces.jsonl"
    path.write_bytes(b'{"item_id": "a"}\n{"item_id": "b"')
    TraceLog(path).append(TraceRecord(item_id="c", error="x"))
    assert list(read_traces(path)) == ["a", "c"]


def test_trec_run_scores_candidates_only(released, tmp_path):
    lines = []
    for item in DatasetStore(released.workspace).items("faq"):
        for rank, chunk in enumerate(targets.GOLD[item.question] or ["upgrade.en.md#0"], start=1):
            lines.append(f"{item.id} Q0 {chunk} {rank} {10 - rank} bm25")
    run_file = tmp_path / "run.trec"
    run_file.write_text("\n".join(lines) + "\n")
    folder = run(released.workspace, ref="faq@v1", traces=run_file, out=tmp_path / "run")
    scores = _scores(folder)
    assert scores["t-1"].values["candidates/recall@1"] == 1.0
    assert scores["t-1"].unscored["context/recall@5"] == "a TREC run has no final context or answer"
    assert _summary(folder).metrics["all"]["context/recall@5"].unscored == {"a TREC run has no final context or answer": 4}


def test_oracle_context_is_a_labelled_diagnostic_run(released, tmp_path):
    result = CliRunner().invoke(evalrun_cli, ["run", "--dataset", "faq@v1", "--target", "tests.support.targets:perfect",
                                              "--oracle-context", "--out", str(tmp_path / "run"),
                                              "--workspace", str(released.workspace.root)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("DIAGNOSTIC RUN (oracle context)")
    summary = json.loads(CliRunner().invoke(evalrun_cli, ["show", str(tmp_path / "run"), "--json"]).output)
    assert summary["run"]["diagnostic"] is True


def test_key_point_coverage_counts_points_whose_evidence_reached_the_context(handbook, tmp_path):
    store = DatasetStore(handbook.workspace)
    meta, items = store.load("faq")
    t3 = next(i for i in items if i.id == "t-3")
    from curate.records import KeyPoint
    t3.key_points = [KeyPoint(text="600 per minute", evidence_ids=["e1"]),
                     KeyPoint(text="6000 on enterprise", evidence_ids=["e2"])]
    store.save(meta, items)
    check_leakage(handbook.workspace, ref="faq", semantic=False)
    release(handbook.workspace, dataset="faq", message="v1")
    targets.GOLD.clear()
    for item in store.items("faq"):
        targets.GOLD[item.question] = list(dict.fromkeys(c for e in item.evidence if e.grade > 0 for c in e.chunk_ids))
    folder = run(handbook.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "run")
    assert _scores(folder)["t-3"].values["context/key_point_coverage"] == 2 / 2
    folder = run(handbook.workspace, ref="faq@v1", target="tests.support.targets:cut", out=tmp_path / "cut")
    assert _scores(folder)["t-3"].values["context/key_point_coverage"] == 0 / 2


def test_http_target_and_its_garbage(released, tmp_path):
    from http.server import BaseHTTPRequestHandler

    from tests.support.servers import ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if body["item_id"] == "t-2":
                data = b"<html>oops</html>"
            else:
                data = json.dumps(targets.perfect(body["question"])).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        folder = run(released.workspace, ref="faq@v1", target=f"http://127.0.0.1:{server.server_address[1]}/rag",
                     out=tmp_path / "run")
    finally:
        server.shutdown()
    scores = _scores(folder)
    assert scores["t-2"].problems[0].startswith("target raised ValueError: the target answered HTTP 200 with no JSON")
    assert scores["t-1"].values["candidates/recall@5"] == 1.0


def test_generation_is_judged_when_a_judge_answers_and_unscored_with_the_reason_when_not(released, tmp_path,
                                                                                        monkeypatch):
    from tests.support.servers import ScriptedServer
    from tests.evalrun.scoring.test_generation import _reply

    store = DatasetStore(released.workspace)
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", "http://127.0.0.1:9/v1")    # nothing listens there
    folder = run(released.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "off")
    summary = _summary(folder)
    assert summary.layers["generation"].startswith("unscored: judge endpoint http://127.0.0.1:9/v1 not reachable")
    faithfulness = summary.metrics["all"]["generation/faithfulness"]
    assert faithfulness.n == 0 and sum(faithfulness.unscored.values()) == 4   # the 4 answered items
    assert summary.metrics["all"]["candidates/recall@5"].mean == 1.0         # retrieval still complete

    server = ScriptedServer(_reply)
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", server.base_url)
    try:
        folder = run(released.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "on")
    finally:
        server.close()
    summary = _summary(folder)
    assert summary.layers["generation"] == "scored" and summary.judge.requests == server.requests > 0
    assert summary.metrics["all"]["generation/answer_relevance"].n == 4
    assert "generation/correctness" in summary.metrics["all"]
    assert len(store.items("faq")) == 5


def test_judge_repeats_are_kept_in_the_manifest_and_the_summary_and_shown(released, tmp_path, monkeypatch):
    from tests.evalrun.scoring.test_generation import _reply
    from tests.support.servers import ScriptedServer

    server = ScriptedServer(_reply)
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", server.base_url)
    try:
        once = run(released.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "once")
        asked = server.requests
        folder = run(released.workspace, ref="faq@v1", target="tests.support.targets:perfect", out=tmp_path / "twice",
                     settings=RunSettings(judge_repeats=2))
    finally:
        server.close()
    assert server.requests - asked == asked        # the first judgements come from the cache, the repeats are new
    assert _summary(once).judge.agreement == {} and _summary(once).judge.repeats == 1
    judge = _summary(folder).judge
    assert judge.repeats == 2 and read_run(folder).manifest.settings.judge_repeats == 2
    relevance = judge.agreement["generation/answer_relevance"]
    assert (relevance.items, relevance.compared, relevance.changed, relevance.rate) == (4, 4, 0, 0.0)  # scripted: steady
    out = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["show", str(folder)]).stdout
    assert "the judge asked 2 times about each answer" in out
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["run", "--dataset", "faq@v1", "--judge-repeats", "0",
                                                              "--target", "x:y", "--workspace", str(released.workspace.root)])
    assert result.exit_code == 2 and "--judge-repeats" in result.stderr
