"""`evalrun show` leads with permission leaks: a line no one can miss, per layer the items and chunks, and
--failures --attribution permission_leak names every leaked chunk; a run without leaks says how many items
were checked, and one whose leaks cannot be checked says that instead."""

from __future__ import annotations

from click.testing import CliRunner

from evalrun.cli.main import cli as evalrun_cli
from evalrun.records import RunSettings
from evalrun.runner import run
from tests.support import scope as kb


def show(*args) -> list[str]:
    result = CliRunner(mix_stderr=False).invoke(evalrun_cli, ["show", *map(str, args)])
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result.stdout.splitlines()


def test_leaks_come_before_anything_else(hr_runs):
    _, scoped, leaky = hr_runs
    lines = show(leaky)
    assert lines[:4] == [
        "PERMISSION LEAKS: 5 items of the 9 that name an asker were given chunks their asker may not see (1 item "
        "names no asker: unchecked)",
        "  candidates: 5 items, 6 chunks: band-staff (bands#0, bands#1), leave (bonus#0), bonus (bonus#0), acme "
        "(globex#0), globex (acme#0)",
        "  context: 5 items, 6 chunks: band-staff (bands#0, bands#1), leave (bonus#0), bonus (bonus#0), acme "
        "(globex#0), globex (acme#0)",
        "  citations: 2 items, 2 chunks: band-staff (bands#0), bonus (bonus#0)"]
    assert lines[4].startswith("hr@v1 against kb-")
    assert ("2 items had no evidence their asker may use at their moment (forbidden 2): scored as items the system "
            "should decline (unanswerable/*), not as retrieval misses") in lines
    assert ("stale chunks (not holding at the item's moment): candidates 3 items, 3 chunks; context 3 items, 3 "
            "chunks; citations 2 items, 2 chunks; 2 items answered from them (stale_evidence)") in lines
    assert show(scoped)[0] == "permission leaks: none, in the 9 items that name an asker (1 item names no asker: unchecked)"


def test_failures_of_one_attribution_name_the_leaked_chunks(hr_runs):
    _, _, leaky = hr_runs
    lines = show(leaky, "--failures", "--attribution", "permission_leak")
    assert lines[0].strip() == "5 items with permission_leak"
    band = next(line for line in lines if line.startswith("band-staff"))
    assert "permission_leak, false_answer" in band and "LEAKED in candidates: bands#0, bands#1" in band
    assert [line.split()[0] for line in lines[2:] if line and not line.startswith(" ")] == [
        "band-staff", "leave", "bonus", "acme", "globex"]
    stale = show(leaky, "--failures", "--attribution", "stale_evidence")
    assert any(line.startswith("travel ") and "stale_evidence: cites stale chunk travel25#0 (superseded)" in line
               for line in stale)


def test_subsets_by_asker_group_and_moment(hr_runs):
    _, scoped, _ = hr_runs
    lines = show(scoped, "--by", "asker_group", "--metric", "candidates/recall@5")
    rows = [line.split() for line in lines if line.startswith("candidates/recall@5")]
    assert [(row[1], row[-1]) for row in rows] == [("all", "8"), ("(no", "1"), ("(not", "1"), ("hr", "1"),
                                                   ("staff", "3"), ("tenant-a", "1"), ("tenant-b", "1")]
    by_moment = [line.split() for line in show(scoped, "--by", "as_of") if line.startswith("candidates/recall@5")]
    assert [(row[1], row[-1]) for row in by_moment] == [("all", "8"), ("(latest)", "7"), ("2025", "1")]


def test_leaks_that_cannot_be_checked_are_said_so(workspace, tmp_path):
    items = {item_id: (question, language, None, as_of, chunks, answer)   # no item names its asker
             for item_id, (question, language, _, as_of, chunks, answer) in kb.ITEMS.items()}
    kb.build(workspace, tmp_path, items=items)
    folder = run(workspace, ref="hr@v1", target=kb.leaky, out=tmp_path / "run", settings=RunSettings(no_judge=True))
    assert show(folder)[0] == ("PERMISSION LEAKS NOT CHECKED: the KB has access groups and no item names an asker "
                               "(asker_groups): all 10 items unchecked")


def test_a_chunk_id_that_reads_as_markup_is_shown_as_it_is(hr, tmp_path):
    path = tmp_path / "traces.jsonl"
    path.write_text('{"item_id": "band-staff", "candidates": ["bands#0", "[bold]x[/bold]"], "context": []}\n',
                    encoding="utf-8")
    folder = run(hr, ref="hr@v1", traces=path, out=tmp_path / "run", settings=RunSettings(no_judge=True))
    assert "[bold]x[/bold]" in "\n".join(show(folder, "--failures"))
