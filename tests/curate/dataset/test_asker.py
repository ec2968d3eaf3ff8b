"""Import carries who asks and when (asker_groups, asker_role, as_of) from JSONL, CSV and curate's own
records, under common names and --map; every bad value is one line naming file, line and field, and
nothing is imported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curate.dataset import DatasetStore, import_items
from curate.errors import InvalidRecords
from tests.support.scoped import scoped_kb

DATA = Path(__file__).parent / "data"


@pytest.fixture
def scoped(curate):
    """The workspace with the scoped KB 'policies' and its [scope] settings."""
    scoped_kb(curate.workspace)
    return curate


def _items(workspace, name):
    return {i.id: i for i in DatasetStore(workspace).items(name)}


def _asker(item):
    return item.asker_groups, item.asker_role, item.as_of


def test_jsonl_and_csv_carry_the_asker_and_the_moment(scoped):
    workspace = scoped.workspace
    import_items(workspace, DATA / "scoped_items.jsonl", dataset="hr", source="human", kb="policies")
    import_items(workspace, DATA / "scoped_items.csv", dataset="hr", source="production", mapping=["ticket=id"])
    items = _items(workspace, "hr")
    assert _asker(items["s-1"]) == (["staff"], "staff", "2026-03-01")          # the role gives the groups
    assert _asker(items["s-2"]) == (["staff"], None, "2025")                  # user_groups, kb_version
    assert _asker(items["s-3"]) == (["staff"], None, None)                    # latest
    assert _asker(items["s-4"]) == ([], None, None)                           # sees only what everyone may
    assert _asker(items["s-5"]) == (["manager", "staff"], "manager", None)
    assert _asker(items["s-6"]) == (["hr", "staff"], "hr", "2026-03-01")      # user_role, asked_at 2026年3月1日
    assert _asker(items["s-7"]) == (None, None, None)                         # not known: not checked
    assert _asker(items["T-1"]) == (["hr", "manager"], None, "2026-03-01")    # a `hr;manager` cell, 2026/3/1
    assert _asker(items["T-2"]) == (["hr", "staff"], "hr", None)              # a JSON array cell with its role
    assert _asker(items["T-3"]) == ([], "intern", "2026")                     # a role of no group, a version
    assert _asker(items["T-4"]) == (None, None, None)                         # empty cells: not given
    assert items["T-1"].question == "年终奖怎么发？" and items["T-2"].evidence[0].doc_id == "salary-bands"


def test_map_reads_any_column_as_the_asker_or_the_moment(scoped, tmp_path):
    path = tmp_path / "persona.jsonl"
    path.write_text(json.dumps({"question": "年终奖怎么发？", "persona": "hr", "wann": "2026-01-05",
                                "evidence": ["年终奖为三个月工资"]}, ensure_ascii=False) + "\n", encoding="utf-8")
    import_items(scoped.workspace, path, dataset="hr", source="human", kb="policies",
                 mapping=["persona=asker_role", "wann=as_of"])
    (item,) = _items(scoped.workspace, "hr").values()
    assert _asker(item) == (["hr", "staff"], "hr", "2026-01-05")


BAD = [
    ({"asker_role": "ceo"}, "asker_role", "unknown role 'ceo' (roles of curate.toml [scope.roles]: hr, intern, "
                                          "manager, staff)"),
    ({"user_role": "manager", "user_groups": "hr"}, "user_groups",
     "hr are not the groups of role 'manager' (manager, staff): give the role or the groups"),
    ({"asker_groups": ["staff", "finance"]}, "asker_groups",
     "undeclared group 'finance' (groups of curate.toml [scope]: hr, manager, staff)"),
    ({"as_of": "2026-02-30"}, "as_of", "'2026-02-30' is not a date: day is out of range for month (as_of is a "
                                       "date, YYYY-MM-DD, or a KB version label)"),
    ({"kb_version": "2027"}, "kb_version", "version '2027' is not among the versions of curate.toml [scope] "
                                           "(2025, 2026)"),
    ({"asker_role": ""}, "asker_role", "empty: leave asker_role out"),
    ({"asked_at": " "}, "asked_at", "empty: leave as_of out for the latest"),
    ({"asker_groups": ["hr", ""]}, "asker_groups[1]", "an empty group name"),
    ({"asker_groups": {"hr": True}}, "asker_groups", "must be a list of group names, got dict"),
]


def _bad_file(tmp_path):
    rows = [{"question": "How many days of paid annual leave do employees get?", "answerable": False}]
    rows += [{"question": f"坏的第 {n} 行？", "answerable": False, **fields} for n, (fields, _, _) in enumerate(BAD)]
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_each_bad_asker_or_moment_is_one_line_and_nothing_is_imported(scoped, tmp_path):
    path = _bad_file(tmp_path)
    result = scoped("import", path, "--dataset", "hr", "--source", "human", "--kb", "policies", code=2)
    lines = result.stderr.strip().splitlines()
    assert lines[:-1] == [f"error: {path}:{n + 2}: field '{field}': {message}" for n, (_, field, message) in
                          enumerate(BAD)]
    assert lines[-1] == f"error: {len(BAD)} invalid records; nothing was written (--skip-invalid imports the valid ones)"
    assert "Traceback" not in result.stderr and not DatasetStore(scoped.workspace).exists("hr")
    scoped("import", path, "--dataset", "hr", "--source", "human", "--kb", "policies", "--skip-invalid")
    assert len(_items(scoped.workspace, "hr")) == 1


def test_the_python_api_names_the_same_file_line_and_field(scoped, tmp_path):
    path = _bad_file(tmp_path)
    with pytest.raises(InvalidRecords) as info:
        import_items(scoped.workspace, path, dataset="hr", source="human", kb="policies")
    assert [(e.file, e.line, e.field) for e in info.value.errors] == [
        (str(path), n + 2, field) for n, (_, field, _) in enumerate(BAD)]


def test_a_csv_cell_out_of_place_is_named_by_its_column(scoped, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("question,user_groups,user_role,asked_at\n"
                    "年终奖怎么发？,hr;finance,,\n"
                    "年假几天？,,,2026-13-01\n", encoding="utf-8")
    result = scoped("import", path, "--dataset", "hr", "--source", "human", "--kb", "policies", code=2)
    assert result.stderr.splitlines()[:2] == [
        f"error: {path}:2: field 'user_groups': undeclared group 'finance' (groups of curate.toml [scope]: hr, "
        f"manager, staff)",
        f"error: {path}:3: field 'asked_at': '2026-13-01' is not a date: month must be in 1..12 (as_of is a date, "
        f"YYYY-MM-DD, or a KB version label)"]


def test_without_scope_settings_groups_and_labels_are_free_but_roles_unknown(curate, tmp_path):
    scoped_kb(curate.workspace, settings=False)
    path = tmp_path / "free.jsonl"
    path.write_text(json.dumps({"question": "年终奖怎么发？", "asker_groups": "finance, 财务", "as_of": "Q3"},
                               ensure_ascii=False) + "\n"
                    + json.dumps({"question": "年假几天？", "asker_role": "staff"}, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    result = curate("import", path, "--dataset", "hr", "--source", "human", "--kb", "policies", code=2)
    assert result.stderr.splitlines()[0] == (f"error: {path}:2: field 'asker_role': unknown role 'staff' "
                                             f"(curate.toml defines no [scope.roles]) (nothing was written; "
                                             f"--skip-invalid imports the valid records)")
    path.write_text(path.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    curate("import", path, "--dataset", "hr", "--source", "human", "--kb", "policies")
    (item,) = _items(curate.workspace, "hr").values()
    assert _asker(item) == (["finance", "财务"], None, "Q3")


def test_curate_records_keep_the_asker_and_are_checked_the_same_way(scoped, tmp_path):
    import_items(scoped.workspace, DATA / "scoped_items.jsonl", dataset="hr", source="human", kb="policies")
    out = tmp_path / "hr.jsonl"
    scoped("export", "hr", "--format", "jsonl", "--out", out)
    import_items(scoped.workspace, out, dataset="copy", source="human", kb="policies")
    before, after = _items(scoped.workspace, "hr"), _items(scoped.workspace, "copy")
    assert {i: _asker(item) for i, item in after.items()} == {i: _asker(item) for i, item in before.items()}
    lines = out.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[2])
    record.update(asker_role="ceo")
    lines[2] = json.dumps(record, ensure_ascii=False)
    record = json.loads(lines[4])
    record.update(as_of="2026/7/1")     # a date written otherwise is brought to YYYY-MM-DD
    lines[4] = json.dumps(record, ensure_ascii=False)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = scoped("import", out, "--dataset", "again", "--source", "human", "--kb", "policies", code=2)
    assert result.stderr.splitlines()[0].startswith(f"error: {out}:3: field 'asker_role': unknown role 'ceo'")
    scoped("import", out, "--dataset", "again", "--source", "human", "--kb", "policies", "--skip-invalid")
    assert _items(scoped.workspace, "again")["s-5"].as_of == "2026-07-01"


def test_a_beir_export_carries_the_asker_and_the_moment_back(scoped, tmp_path):
    import_items(scoped.workspace, DATA / "scoped_items.jsonl", dataset="hr", source="human", kb="policies")
    out = tmp_path / "beir"
    scoped("export", "hr", "--format", "beir", "--out", out)
    scoped("import", out, "--format", "beir", "--dataset", "back", "--source", "human")
    before, after = _items(scoped.workspace, "hr"), _items(scoped.workspace, "back")
    assert {i: _asker(item) for i, item in after.items()} == {i: _asker(item) for i, item in before.items()}
    assert _asker(after["s-4"]) == ([], None, None) and _asker(after["s-2"]) == (["staff"], None, "2025")


def test_import_gives_a_default_asker_and_moment_to_the_records_that_name_none(scoped, tmp_path):
    path = tmp_path / "asked.jsonl"
    rows = [{"id": "d-1", "question": "What does level L5 pay?", "evidence": ["level L5 pays 42,000 to 58,000 EUR a year"]},
            {"id": "d-2", "question": "What does level L5 pay?", "evidence": ["level L5 pays 42,000 to 58,000 EUR a year"],
             "asker_role": "hr", "as_of": "2025"},
            {"id": "d-3", "question": "年终奖怎么发？", "evidence": ["年终奖为三个月工资"], "asker_groups": []}]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    result = scoped("import", path, "--dataset", "hr", "--source", "human", "--kb", "policies",
                    "--asker-role", "staff", "--as-of", "2026年3月1日")
    assert "imported 3 items" in result.stdout
    items = _items(scoped.workspace, "hr")
    assert _asker(items["d-1"]) == (["staff"], "staff", "2026-03-01")   # both defaults
    assert _asker(items["d-2"]) == (["hr", "staff"], "hr", "2025")      # its own asker and moment win
    assert _asker(items["d-3"]) == ([], None, "2026-03-01")             # its own asker of no group wins


def test_a_bad_default_asker_is_one_line_naming_its_option_and_nothing_is_imported(scoped, tmp_path):
    path = tmp_path / "asked.jsonl"
    path.write_text(json.dumps({"question": "年终奖怎么发？", "evidence": ["年终奖为三个月工资"]}, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    for option, value, message in (("--asker-role", "ceo", "field '--asker-role': unknown role 'ceo'"),
                                   ("--asker-groups", "hr,board", "field '--asker-groups': undeclared group 'board'"),
                                   ("--as-of", "2026-13-01", "field '--as-of': '2026-13-01' is not a date")):
        result = scoped("import", path, "--dataset", "hr", "--source", "human", "--kb", "policies", option, value,
                        code=2)
        assert result.stderr.startswith(f"error: ") and message in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    assert not DatasetStore(scoped.workspace).exists("hr")
