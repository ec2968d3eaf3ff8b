"""`curate generate` on the bundled handbook (Chinese and English): candidates filtered with a reason
each, kept ones added as synthetic drafts with located evidence and near misses, nothing added twice,
a run killed before its items were saved made whole by running it again, bad input one line."""

import json
from pathlib import Path

import pytest

from curate.dataset import DatasetStore
from curate.generate.run import generate
from curate.records.generated import Candidate, GenerateRun
from curate.formats.hf import item_from_row, release_row

HANDBOOK = Path(__file__).resolve().parents[3] / "examples" / "handbook"


@pytest.fixture
def kb(curate):
    curate("kb", "ingest", HANDBOOK / "docs", "--name", "handbook")
    return curate


def test_generate_adds_synthetic_drafts_with_evidence_and_near_misses(kb):
    result = kb("generate", "--dataset", "gen", "--kb", "handbook", "--n", "12")
    out = result.stdout
    assert "mined 23 near code, 2 probe:code" in out
    assert "type" in out and "candidates" in out and "kept" in out
    assert "added 12 items (source synthetic, status draft" in out
    assert "closed-book check: not checked: no model: set [generator] (or [judge])" in out
    items = DatasetStore(kb.workspace).items("gen")
    assert len(items) == 12
    for item in items:
        assert item.source == "synthetic" and item.status == "draft" and item.generation.method == "mined"
        assert "a person must confirm" in item.status_history[-1].reason
        assert item.qtype in ("confusable", "unanswerable")
        near = [e for e in item.evidence if e.evidence_id in item.generation.near_miss]
        assert near and all(e.grade == 0 and e.chunk_ids for e in near)
        if item.qtype == "confusable":
            assert item.evidence[0].grade == 2 and item.evidence[0].chunk_ids
            assert item.evidence[0].located_by in ("span", "exact")
            assert item.key_points[0].evidence_ids == ["e1"]
            code = item.question.split()[2] if item.language == "en" else item.question.split()[0]
            assert code in item.evidence[0].text and all(code not in e.text for e in near)
        else:
            assert not item.answerable and not any(e.grade > 0 for e in item.evidence)
    assert {item.language for item in items} == {"en", "zh"}
    record = GenerateRun.read(next((kb.workspace.datasets_dir / "gen" / "generated").iterdir()) / "run.json")
    assert record.state == "complete" and record.kept == 12 and len(record.added) == 12
    assert record.spread.asked >= 2 and record.spread.documents == 8


def test_every_candidate_keeps_each_filters_verdict_and_reason(kb):
    kb("generate", "--dataset", "gen", "--kb", "handbook", "--n", "5")
    folder = next((kb.workspace.datasets_dir / "gen" / "generated").iterdir())
    candidates = [Candidate.model_validate(json.loads(line))
                  for line in (folder / "candidates.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(candidates) == 22   # 20 codes asked (10 a language) and one probe in each language
    for candidate in candidates:
        assert {"grounded", "standalone", "language", "duplicate", "retrievable", "closed_book"} <= set(candidate.filters)
        assert all(verdict.reason for verdict in candidate.filters.values())
    assert sum(c.kept for c in candidates) == 5
    over = [c for c in candidates if not c.kept]
    assert over and all(c.filters["sample"].passed is False for c in over)
    assert all("bm25_rank" in c.generation.features for c in candidates if c.answerable)


def test_the_same_command_again_adds_nothing_and_another_run_drops_duplicates(kb):
    kb("generate", "--dataset", "gen", "--kb", "handbook", "--n", "6")
    again = kb("generate", "--dataset", "gen", "--kb", "handbook", "--n", "6")
    assert "added 0 items" in again.stdout and "6 kept questions were added by this run before" in again.stdout
    assert len(DatasetStore(kb.workspace).items("gen")) == 6
    other = kb("generate", "--dataset", "gen", "--kb", "handbook", "--n", "30", "--seed", "3")
    assert "dropped: duplicate" in other.stdout
    items = DatasetStore(kb.workspace).items("gen")
    assert len({i.question for i in items}) == len(items) == 22    # every distinct question once


def test_a_run_killed_before_saving_its_items_is_made_whole_by_running_it_again(kb, monkeypatch):
    def killed(self, meta, items):
        raise KeyboardInterrupt
    monkeypatch.setattr(DatasetStore, "save", killed)
    with pytest.raises(KeyboardInterrupt):
        generate(kb.workspace, dataset="gen", kb="handbook", n=8)
    monkeypatch.undo()
    record = GenerateRun.read(next((kb.workspace.datasets_dir / "gen" / "generated").iterdir()) / "run.json")
    assert record.state == "running"
    report = generate(kb.workspace, dataset="gen", kb="handbook", n=8)
    assert len(report.record.added) == 8 and report.record.state == "complete"
    assert len(DatasetStore(kb.workspace).items("gen")) == 8


def test_bad_types_and_a_dataset_on_another_snapshot_are_one_line(kb, data_dir):
    bad = kb("generate", "--dataset", "gen", "--kb", "handbook", "--types", "confusable,trivia", code=2)
    assert "unknown type trivia" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    kb("kb", "ingest", data_dir / "docs", "--name", "other")
    kb("generate", "--dataset", "gen", "--kb", "handbook", "--n", "2")
    other = kb("generate", "--dataset", "gen", "--kb", "other", "--n", "2", code=2)
    assert "refers to KB snapshot" in other.stderr and "curate remap" in other.stderr


def test_model_types_without_a_model_are_said_not_made(kb):
    result = kb("generate", "--dataset", "gen", "--kb", "handbook", "--n", "4", "--types", "single,confusable")
    assert "warning: single: not made: no model: set [generator] (or [judge]) base_url" in result.stderr
    assert "added 4 items" in result.stdout    # confusable takes what single could not fill


def test_generated_items_keep_their_generation_record_in_a_release_row(kb):
    kb("generate", "--dataset", "gen", "--kb", "handbook", "--n", "4")
    items = DatasetStore(kb.workspace).items("gen")
    for item in items:
        row = json.loads(json.dumps(release_row(item)))
        assert isinstance(row["generation"]["features"], str)    # JSON text, as difficulty_features
        back = item_from_row(row)
        assert back.generation == item.generation and back == item


def test_a_question_about_last_years_rule_is_asked_as_of_last_year(curate):
    # the scoped handbook: the 2025 and 2026 support policies differ in a few numbers; a question about the
    # 2025 side holds for 2025 (its evidence usable then, never stale), the 2026 one for 2026
    from curate.kb import SnapshotStore
    from curate.scope import ScopeIndex, usable_view
    curate("kb", "ingest", HANDBOOK / "docs", HANDBOOK / "scoped", "--name", "handbook")
    curate("generate", "--dataset", "gen", "--kb", "handbook", "--n", "40", "--types", "confusable")
    items = [i for i in DatasetStore(curate.workspace).items("gen") if "support-sla" in i.evidence[0].doc_id]
    assert items
    snapshots = SnapshotStore(curate.workspace)
    index = ScopeIndex(snapshots.chunks(snapshots.resolve("handbook")))
    for item in items:
        year = "2025" if "2025" in item.evidence[0].doc_id else "2026"
        assert item.as_of == f"{year}-01-01"
        view = usable_view(item, index)
        assert view.item.answerable and not view.declined_because
        assert not [u for u in view.unusable if u.evidence_id == "e1"]     # the evidence is usable then


@pytest.mark.parametrize(("setting", "field"), [('concurrency = "many"', "generator.concurrency"),
                                                 ('max_retries = -1', "generator.max_retries"),
                                                 ('timeout = "slow"', "generator.timeout"),
                                                 ('max_tokens = "lots"', "generator.max_tokens")])
def test_a_bad_generator_setting_is_one_line_naming_it(kb, setting, field):
    with open(kb.workspace.config_path, "a", encoding="utf-8") as config:
        config.write(f'\n[generator]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n{setting}\n')
    bad = kb("generate", "--dataset", "gen", "--kb", "handbook", "--types", "single", "--dry-run", code=2)
    assert len(bad.stderr.strip().splitlines()) == 1
    assert f"field '{field}'" in bad.stderr and "curate.toml" in bad.stderr
