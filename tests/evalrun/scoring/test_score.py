"""Scores that nothing escapes: failed items count, unknown trace keys are named, a missing context
is not an empty one, a TREC run is a typed input, @K is the first K ranks, and items whose evidence
the leakage check excluded are scored apart."""

import json

import pytest

from curate.checks.leakage import check_leakage
from curate.dataset import DatasetStore, import_items
from curate.kb import ingest
from curate.release import release
from evalrun.records import read_run
from evalrun.runner import run
from evalrun.records import RunSettings

DOCS = {
    "reset.en.md": "To reset a password, open Settings and choose Security.\n\nThe reset link expires after 24 hours.",
    "billing.en.md": "Invoices are issued on the first day of each month.\n\nRefunds take five business days.",
    "office.en.md": "The Berlin office opens at 9 a.m.\n\nThe Lisbon office opens at 10 a.m.",
}
ROWS = [
    {"id": "reset", "question": "How long is a reset link valid?", "answers": ["24 hours"],
     "evidence": ["The reset link expires after 24 hours."],
     "key_points": [{"text": "the link expires after 24 hours", "evidence_ids": ["e1"]}]},
    {"id": "refund", "question": "How long do refunds take?", "answers": ["five business days"],
     "evidence": ["Refunds take five business days."]},
    {"id": "office", "question": "When does the Berlin office open?", "answers": ["9 a.m."],
     "evidence": ["The Berlin office opens at 9 a.m."]},
    {"id": "tokyo", "question": "When does the Tokyo office open?", "answerable": False},
]


def build(workspace, tmp_path, docs: dict[str, str], fix: str | None = None):
    (tmp_path / "docs").mkdir()
    for name, text in docs.items():
        (tmp_path / "docs" / name).write_text(text, encoding="utf-8")
    ingest(workspace, [tmp_path / "docs"], name="help", chunk_size=80)
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    import_items(workspace, path, dataset="help", source="human", kb="help")
    report = check_leakage(workspace, ref="help", fix=fix, semantic=False)
    release(workspace, dataset="help", message="v1")
    return report


@pytest.fixture
def kb(workspace, tmp_path):
    build(workspace, tmp_path, DOCS)
    return workspace


def chunks(workspace) -> dict[str, str]:
    """Return {item id: the chunk id of its first evidence}."""
    return {i.id: i.evidence[0].chunk_ids[0] for i in DatasetStore(workspace).items("help") if i.evidence}


def score(workspace, tmp_path, traces: dict[str, dict], **settings) -> tuple[dict, object]:
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps({"item_id": i, **t}) + "\n" for i, t in traces.items()), encoding="utf-8")
    folder = run(workspace, ref="help@v1", traces=path, out=tmp_path / "run", settings=RunSettings(**settings))
    result = read_run(folder)
    return {r.item_id: r for r in result.scores}, result.summary


def test_an_item_whose_target_failed_counts_as_retrieving_nothing_and_is_counted(kb, tmp_path):
    ids = chunks(kb)
    # "refund" and "office" have no trace: their target failed.
    rows, summary = score(kb, tmp_path, {"reset": {"candidates": [ids["reset"]], "context": [ids["reset"]],
                                                   "answer": "It expires after 24 hours."},
                                         "tokyo": {"candidates": [], "context": [], "answer": "I don't know."}},
)
    assert rows["refund"].failed.startswith("no trace for this item")
    assert rows["refund"].values["candidates/hit_rate@5"] == 0.0
    assert rows["refund"].values["lexical/f1"] == 0.0
    assert rows["refund"].attribution == ["target_failed"]
    hit = summary.metrics["all"]["candidates/hit_rate@5"]
    assert (hit.n, hit.failed, hit.mean) == (3, 2, 1 / 3)  # 308 of 429 averaged with nothing said: not any more
    assert sum(summary.failed_items.values()) == 2


def test_exclude_errors_leaves_failed_items_out_and_says_why(kb, tmp_path):
    ids = chunks(kb)
    rows, summary = score(kb, tmp_path, {"reset": {"candidates": [ids["reset"]], "context": [ids["reset"]],
                                                   "answer": "24 hours."}}, exclude_errors=True)
    assert "candidates/hit_rate@5" not in rows["refund"].values
    assert rows["refund"].unscored["candidates/hit_rate@5"].startswith("target failed, left out (--exclude-errors)")
    hit = summary.metrics["all"]["candidates/hit_rate@5"]
    assert (hit.n, hit.failed, hit.mean) == (1, 0, 1.0)
    assert sum(hit.unscored.values()) == 2


def test_an_unknown_trace_key_is_named_with_a_suggestion_and_a_missing_context_is_unscored(kb, tmp_path):
    ids = chunks(kb)
    rows, summary = score(kb, tmp_path, {
        "reset": {"candidates": [ids["reset"]], "contexts": [ids["reset"]], "answer": "24 hours."},
        "refund": {"candidates": [ids["refund"]], "context": [], "answer": "Five business days."},
        "office": {"candidates": [ids["office"]], "context": [ids["office"]], "answer": "9 a.m."},
        "tokyo": {"candidates": [], "context": [], "answer": "No information."}})
    assert rows["reset"].problems == ["unknown trace keys (ignored): contexts (did you mean context?)"]
    assert summary.problems["unknown trace key"] == 1
    # no context reported: unscored, not an empty context (no context_cut, no zero)
    assert rows["reset"].unscored["context/recall@5"].startswith("the trace reports no context")
    assert "context/recall@5" not in rows["reset"].values and rows["reset"].attribution == []
    # an empty context is scored: nothing reached the model
    assert rows["refund"].values["context/recall@5"] == 0.0 and rows["refund"].attribution == ["context_cut"]
    recall = summary.metrics["all"]["context/recall@5"]
    assert (recall.n, recall.mean, recall.unscored) == (2, 0.5, {rows["reset"].unscored["context/recall@5"]: 1})


def test_a_trace_without_candidates_leaves_candidate_metrics_unscored_and_is_counted(kb, tmp_path):
    ids = chunks(kb)
    rows, summary = score(kb, tmp_path, {
        "reset": {"context": [ids["reset"]], "answer": "24 hours."},
        "refund": {"context": [ids["office"]], "answer": "Five business days."},
        "office": {"candidates": [], "context": [], "answer": "9 a.m."},
        "tokyo": {"context": [], "answer": "No information."}})
    reason = "the trace reports no candidates (no 'candidates' key)"
    for item_id in ("reset", "refund"):
        assert rows[item_id].unscored["candidates/recall@5"] == reason
        assert not any(name.startswith("candidates/") for name in rows[item_id].values)
        assert rows[item_id].problems == [f"{reason}: its candidate metrics are unscored"]
    assert rows["tokyo"].unscored["unanswerable/retrieved"] == reason
    assert rows["reset"].values["context/recall@5"] == 1.0 and rows["reset"].attribution == []
    # what retrieval found is read from the context: the evidence never reached it
    assert rows["refund"].values["context/recall@5"] == 0.0 and rows["refund"].attribution == ["retrieval_miss"]
    # an empty candidates list is scored: nothing was retrieved
    assert rows["office"].values["candidates/recall@5"] == 0.0
    recall = summary.metrics["all"]["candidates/recall@5"]
    assert (recall.n, recall.mean, recall.unscored) == (1, 0.0, {reason: 2})
    assert summary.problems["no candidates"] == 3


def test_lexical_metrics_and_refusal_phrases_need_no_judge(kb, tmp_path):
    ids = chunks(kb)
    rows, summary = score(kb, tmp_path, {
        "reset": {"candidates": [ids["reset"]], "context": [ids["reset"]], "answer": "24 hours"},
        "refund": {"candidates": [ids["refund"]], "context": [ids["refund"]], "answer": "It takes five days."},
        "office": {"candidates": [ids["office"]], "context": [ids["office"]], "answer": "I don't know."},
        "tokyo": {"candidates": [], "context": [], "answer": "Sorry, I cannot answer that from the documents."}})
    assert rows["reset"].values["lexical/exact_match"] == 1.0
    assert rows["refund"].values["lexical/exact_match"] == 0.0
    # SQuAD F1: prediction "it takes five days", reference "five business days": overlap 2
    assert rows["refund"].values["lexical/f1"] == pytest.approx(2 * (2 / 4) * (2 / 3) / (2 / 4 + 2 / 3))
    assert rows["office"].attribution == ["false_refusal"] and rows["office"].refusal.startswith("refusal phrase")
    assert rows["tokyo"].values["unanswerable/correct_refusal"] == 1.0
    assert summary.layers["generation"].startswith("unscored")
    assert summary.metrics["all"]["lexical/exact_match"].n == 3


def test_a_trec_run_is_typed_retrieval_only(kb, tmp_path):
    ids = chunks(kb)
    path = tmp_path / "run.trec"
    path.write_text(f"reset Q0 {ids['reset']} 1 9.5 bm25\nrefund Q0 {ids['reset']} 1 3.0 bm25\n"
                    f"refund Q0 {ids['refund']} 2 2.0 bm25\n", encoding="utf-8")
    folder = run(kb, ref="help@v1", traces=path, out=tmp_path / "run", settings=RunSettings())
    result = read_run(folder)
    assert {r.kind for r in result.traces.values() if r.error is None} == {"trec"}
    rows = {r.item_id: r for r in result.scores}
    assert rows["refund"].values["candidates/mrr@10"] == 1 / 2
    assert rows["refund"].unscored["context/recall@5"] == "a TREC run has no final context or answer"
    assert rows["refund"].unscored["lexical/f1"] == "a TREC run has no final context or answer"
    assert rows["tokyo"].unscored["unanswerable/correct_refusal"] == "a TREC run has no final context or answer"
    assert rows["refund"].attribution == [] and rows["office"].attribution == ["target_failed"]


def test_context_equal_to_the_first_k_candidates_loses_nothing_at_k(kb, tmp_path):
    ids = chunks(kb)
    # The reset chunk twice, the office chunk, then the refund evidence at rank 4; the context is
    # the first three. Collapsing the copy before the cut would find the evidence in the candidates@3.
    candidates = [ids["reset"], ids["reset"], ids["office"], ids["refund"]]
    rows, summary = score(kb, tmp_path, {"refund": {"candidates": candidates, "context": candidates[:3],
                                                    "answer": "Five business days."}}, ks=[3, 4])
    for metric in ("hit_rate", "recall", "precision", "mrr", "ndcg"):
        assert rows["refund"].values[f"candidates/{metric}@3"] == rows["refund"].values[f"context/{metric}@3"]
        assert summary.context_loss[f"{metric}@3"] == 0.0
    assert rows["refund"].values["candidates/recall@3"] == 0.0
    assert rows["refund"].values["candidates/mrr@4"] == 1 / 4


def test_items_whose_evidence_the_leakage_check_excluded_are_scored_apart(workspace, tmp_path):
    # The billing document holds the refund question verbatim: a leak; exclude-docs excludes it.
    docs = {**DOCS, "billing.en.md": DOCS["billing.en.md"] + "\n\nHow long do refunds take?"}
    report = build(workspace, tmp_path, docs, fix="exclude-docs")
    assert report.excluded_docs == ["billing.en.md"]
    ids = chunks(workspace)
    rows, summary = score(workspace, tmp_path, {i: {"candidates": [c], "context": [c], "answer": "x"}
                                                for i, c in ids.items()})
    assert rows["refund"].apart == "evidence in documents the leakage check excluded: billing.en.md"
    assert summary.apart == {"excluded evidence": ["refund"]}
    assert summary.metrics["all"]["candidates/hit_rate@1"].n == 2  # reset and office, not refund
    assert summary.metrics["apart=excluded evidence"]["candidates/hit_rate@1"].n == 1
    assert not any(label.startswith("apart") for label in summary.metrics if label != "apart=excluded evidence")
    assert all(summary.metrics[label].get("candidates/hit_rate@1") is None
               or summary.metrics[label]["candidates/hit_rate@1"].n <= 2
               for label in summary.metrics if label != "apart=excluded evidence")


def test_the_command_line_shows_subsets_failures_by_attribution_and_excludes_errors(kb, tmp_path):
    from click.testing import CliRunner

    from evalrun.cli.main import cli
    ids = chunks(kb)
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps({"item_id": "reset", "candidates": [ids["office"], ids["reset"]],
                                "context": [ids["office"]], "answer": "24 hours"}) + "\n", encoding="utf-8")
    runner = CliRunner(mix_stderr=False)
    for flags, folder in (([], "plain"), (["--exclude-errors"], "excluded")):
        result = runner.invoke(cli, ["run", "--dataset", "help@v1", "--traces", str(path), "--out",
                                     str(tmp_path / folder), "--workspace", str(kb.root), *flags])
        assert result.exit_code == 0, result.stderr
    said = " ".join(result.stdout.split())
    assert "3 items whose target failed (3 no trace for this item in the --traces file): left out of every metric " \
        "(--exclude-errors)" in said
    by = runner.invoke(cli, ["show", str(tmp_path / "plain"), "--by", "source", "--metric", "candidates/hit_rate@1",
                             "--metric", "lexical/*"])
    assert by.exit_code == 0, by.stderr
    lines = [line.split() for line in by.stdout.splitlines() if line.startswith("candidates/hit_rate@1")]
    assert [line[1] for line in lines] == ["all", "human"]
    assert lines[0][-3:] == ["3", "(2", "failed)"]  # n = 3 answerable, 2 of them failed
    assert any(line.startswith("lexical/f1") for line in by.stdout.splitlines())
    cut = runner.invoke(cli, ["show", str(tmp_path / "plain"), "--failures", "--attribution", "context_cut"])
    assert cut.exit_code == 0 and "1 items with context_cut" in cut.stdout and "reset" in cut.stdout
    failed = runner.invoke(cli, ["show", str(tmp_path / "plain"), "--failures", "--attribution", "target_failed"])
    assert "3 items with target_failed" in failed.stdout
    wrong = runner.invoke(cli, ["show", str(tmp_path / "plain"), "--by", "nope"])
    assert wrong.exit_code == 2 and len(wrong.stderr.strip().splitlines()) == 1
    lone = runner.invoke(cli, ["show", str(tmp_path / "plain"), "--attribution", "context_cut"])
    assert lone.exit_code == 2 and "--attribution filters --failures" in lone.stderr
