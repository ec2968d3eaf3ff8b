"""add-failures keeps who asked and when: a log row's asker and moment go onto its item, checked as import
checks them; the same question asked by another asker or at another moment is another item, not a
duplicate; personal data in a group name is masked like every other text."""

from __future__ import annotations

from pathlib import Path

from curate.dataset import DatasetStore
from curate.dataset.batches import FailureBatches
from tests.support.scoped import scoped_kb

DATA = Path(__file__).parents[1] / "dataset" / "data"
TRAVEL = "一线城市出差每晚住宿上限是多少？"


def _log(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "2026-03.csv"
    path.write_text("question,feedback,user_groups,user_role,asked_at,session_id\n" + "\n".join(rows) + "\n",
                    encoding="utf-8")
    return path


def test_a_row_keeps_its_asker_and_another_asker_is_another_item(curate, tmp_path):
    scoped_kb(curate.workspace)
    curate("import", DATA / "scoped_items.jsonl", "--dataset", "hr", "--source", "human", "--kb", "policies")
    log = _log(tmp_path,
               f"{TRAVEL},thumbs_down,staff,,2026-03-01,u1",        # s-1 asks it for staff on that day: counted there
               f"{TRAVEL},thumbs_down,hr;manager,,2026/3/1,u2",     # another asker: a new item
               f"{TRAVEL},thumbs_down,manager;hr,,2026-03-01,u3",   # the same asker and moment: the same new item
               "What does level L5 pay?,thumbs_down,,intern,,u4")   # s-3 and s-6 ask it for others: a new item
    curate("add-failures", log, "--dataset", "hr", "--month", "2026-03", "--no-semantic")
    items = {i.id: i for i in DatasetStore(curate.workspace).items("hr")}
    batch = FailureBatches(curate.workspace, "hr").all()[0]
    new = {(i.question, tuple(i.asker_groups or ()), i.asker_role, i.as_of): i for i in items.values()
           if i.id in batch.added}
    assert set(new) == {(TRAVEL, ("hr", "manager"), None, "2026-03-01"),
                        ("What does level L5 pay?", (), "intern", None)}
    assert new[(TRAVEL, ("hr", "manager"), None, "2026-03-01")].production.asked[0].count == 2
    assert items["s-1"].production.asked[0].count == 1 and items["s-2"].production is None
    assert batch.counts["kept_apart_by_scope"] == 2 and "asker_groups_masked" not in batch.counts


def test_a_bad_asker_in_a_log_is_one_line_that_never_shows_the_value(curate, tmp_path):
    scoped_kb(curate.workspace)
    log = _log(tmp_path, f"{TRAVEL},thumbs_down,staff,,2026-03-01,u1", f"{TRAVEL},thumbs_down,,ceo,,u2",
               f"{TRAVEL},thumbs_down,li.si@example.cn,,,u3", f"{TRAVEL},thumbs_down,,,2026-02-30,u4")
    result = curate("add-failures", log, "--dataset", "hr", "--month", "2026-03", "--kb", "policies",
                    "--no-semantic", code=2)
    assert result.stderr.splitlines()[:3] == [
        f"error: {log}:3: field 'user_role': unknown role (roles of curate.toml [scope.roles]: hr, intern, manager, "
        f"staff)",
        f"error: {log}:4: field 'user_groups': undeclared group (groups of curate.toml [scope]: hr, manager, staff)",
        f"error: {log}:5: field 'asked_at': looks like a date and is not one (as_of is a date, YYYY-MM-DD, or a KB "
        f"version label)"]
    assert "li.si" not in result.stderr and "ceo" not in result.stderr and "02-30" not in result.stderr
    assert not DatasetStore(curate.workspace).exists("hr")


def test_personal_data_in_a_group_name_is_masked_and_counted(curate, tmp_path):
    scoped_kb(curate.workspace, settings=False)   # groups not declared: any name is read
    log = _log(tmp_path, f"{TRAVEL},thumbs_down,zhang.san@example.com;staff,,,u1")
    curate("add-failures", log, "--dataset", "hr", "--month", "2026-03", "--kb", "policies", "--no-semantic")
    (item,) = DatasetStore(curate.workspace).items("hr")
    assert item.asker_groups == ["[EMAIL]", "staff"]
    assert FailureBatches(curate.workspace, "hr").all()[0].counts["asker_groups_masked"] == 1
    stored = b"".join(p.read_bytes() for p in curate.workspace.root.rglob("*") if p.is_file())
    assert b"zhang.san@example.com" not in stored


def test_rows_that_do_not_say_who_asks_take_the_default_asker_and_count_on_its_item(curate, tmp_path):
    scoped_kb(curate.workspace)
    curate("import", DATA / "scoped_items.jsonl", "--dataset", "hr", "--source", "human", "--kb", "policies")
    log = _log(tmp_path,
               f"{TRAVEL},thumbs_down,,,,u1",                # no asker, no moment: the defaults, so s-1's question
               f"{TRAVEL},thumbs_down,hr;manager,,,u2")      # its own asker wins; the default moment still applies
    curate("add-failures", log, "--dataset", "hr", "--month", "2026-03", "--no-semantic",
           "--asker-role", "staff", "--as-of", "2026-03-01")
    items = {i.id: i for i in DatasetStore(curate.workspace).items("hr")}
    batch = FailureBatches(curate.workspace, "hr").all()[0]
    assert items["s-1"].production.asked[0].count == 1          # (staff, 2026-03-01): counted on s-1, not added
    (added,) = [items[i] for i in batch.added]
    assert (added.asker_groups, added.as_of) == (["hr", "manager"], "2026-03-01")
    assert batch.asker == {"asker_role": "staff", "as_of": "2026-03-01"}
    again = curate("add-failures", log, "--dataset", "hr", "--month", "2026-03", "--no-semantic",
                   "--asker-role", "staff", "--as-of", "2026-03-01")
    assert "nothing added" in again.stdout
    bad = curate("add-failures", log, "--dataset", "hr", "--month", "2026-03", "--asker-role", "ceo", code=2)
    assert bad.stderr.startswith("error: field '--asker-role': unknown role 'ceo'")
