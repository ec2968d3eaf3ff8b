"""Documents and chunks carry scope (access groups, version, validity, what they supersede), read from
JSONL metadata or top-level fields, Markdown front matter, production chunk files and curate.toml path
rules; each bad value is one line naming file, line and field; the manifest counts chunks per group and
version."""

import json
from pathlib import Path

import pytest

from curate.errors import InputError, InvalidRecords
from curate.kb import SnapshotStore, import_chunks, ingest
from curate.records import Scope

from tests.support import EXAMPLES

SCOPE_TOML = """
[scope]
versions = ["2025", "2026"]
groups = ["人事部", "经理", "员工"]
"""


def _declare(workspace, extra: str = "") -> None:
    """Add a [scope] table (versions 2025 and 2026; groups 人事部, 经理, 员工) to curate.toml."""
    with workspace.config_path.open("a", encoding="utf-8") as handle:
        handle.write(SCOPE_TOML + extra)


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _longest_cmrc_paragraph() -> str:
    cmrc = json.loads((EXAMPLES / "cmrc2018" / "cmrc2018_sample.json").read_text(encoding="utf-8"))
    return max((p["context"] for a in cmrc["data"] for p in a["paragraphs"]), key=len)


# -- Markdown front matter ----------------------------------------------------------------------------

def test_a_long_chinese_page_with_front_matter(workspace, tmp_path):
    _declare(workspace)
    body = "# 王处直\n\n" + _longest_cmrc_paragraph() + "\n\n## 附注\n\n本文摘自公开资料，仅供内部培训使用。\n"
    front = ("---\n"
             "title: 王处直生平（节选）\n"
             "groups: 人事部，经理\n"          # one string, a full-width comma: two groups
             "version: 2026\n"
             "valid_from: 2026年1月1日\n"
             "owner: 档案室\n"
             "tags: [历史, 人物]\n"
             "---\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "wang.md").write_text(front + body, encoding="utf-8")
    manifest = ingest(workspace, [docs], name="zh", chunk_size=200)
    store = SnapshotStore(workspace)
    (doc,) = store.documents(manifest.snapshot_id)
    chunks = store.chunks(manifest.snapshot_id)
    assert doc.text == body                     # the front matter is not text of the document
    assert doc.title == "王处直生平（节选）"
    assert doc.scope == Scope(groups=["人事部", "经理"], version="2026", valid_from="2026-01-01")
    assert doc.metadata == {"owner": "档案室", "tags": '["历史","人物"]'}
    assert len(chunks) >= 5
    for chunk in chunks:                        # offsets index into the text after the front matter
        assert doc.text[chunk.start:chunk.end] == chunk.text
        assert chunk.scope == doc.scope
        assert chunk.metadata["title"] == "王处直生平（节选）"
        assert not {"groups", "version", "valid_from"} & set(chunk.metadata)
    assert manifest.scope.everyone == 0
    assert [(g.name, g.chunks) for g in manifest.scope.groups] == [
        ("人事部", len(chunks)), ("经理", len(chunks)), ("员工", 0)]
    assert [(v.name, v.chunks) for v in manifest.scope.versions] == [("2026", len(chunks))]
    assert (manifest.scope.dated, manifest.scope.unversioned) == (len(chunks), 0)


def test_a_dashed_block_that_is_not_a_mapping_is_text(workspace, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    text = "---\n这是一段引言，不是元数据。\n---\n正文：报销须在30日内提交。\n"
    (docs / "intro.md").write_text(text, encoding="utf-8")
    (docs / "open.md").write_text("---\n没有结束的分隔线\n正文。\n", encoding="utf-8")
    manifest = ingest(workspace, [docs], name="plain")
    documents = {d.doc_id: d for d in SnapshotStore(workspace).documents(manifest.snapshot_id)}
    assert documents["intro.md"].text == text and documents["intro.md"].scope is None
    assert documents["open.md"].text.startswith("---\n没有结束的分隔线")
    assert manifest.scope is None


def test_front_matter_saved_by_a_windows_editor(workspace, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    page = "\ufeff---\r\ntitle: 年假规定\r\ngroups: 人事部、员工\r\n---\r\n# 年假\r\n\r\n入职满一年的员工每年享有5天带薪年假。\r\n"
    (docs / "leave.md").write_bytes(page.encode("utf-8"))
    manifest = ingest(workspace, [docs], name="win")
    (doc,) = SnapshotStore(workspace).documents(manifest.snapshot_id)
    assert (doc.title, doc.scope.groups) == ("年假规定", ["人事部", "员工"])
    assert doc.text == "# 年假\r\n\r\n入职满一年的员工每年享有5天带薪年假。\r\n"


def test_invalid_front_matter_yaml_is_one_error_naming_the_file_and_line(workspace, tmp_path, curate):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.md").write_text("# 好\n\n正文。\n", encoding="utf-8")
    (docs / "bad.md").write_text("---\ntitle: 差旅\ngroups: [人事部, 经理\nversion: 2026\n---\n正文\n", encoding="utf-8")
    with pytest.raises(InvalidRecords) as info:
        ingest(workspace, [docs], name="bad")
    (error,) = info.value.errors
    # YAML notices on line 4 that the list opened on line 3 is not closed
    assert error.located() == (f"{docs / 'bad.md'}:4: field 'front matter': front matter is not valid YAML: did not "
                               "find expected ',' or ']', while parsing a flow sequence on line 3 (a Markdown file "
                               "opening with --- holds YAML up to the next --- line)")
    result = curate("kb", "ingest", docs, "--name", "bad", code=2)
    assert result.stderr == f"error: {error.located()} (nothing was written)\n"
    assert SnapshotStore(workspace).all_ids() == []


# -- precedence: chunk metadata over the document's over the path rule, field by field -----------------

RULES = """
[[scope.rules]]
path = "hr/**"
groups = ["人事部"]
version = "2025"
"""


def test_front_matter_over_path_rule_field_by_field(workspace, tmp_path):
    _declare(workspace, RULES)
    docs = tmp_path / "docs"
    (docs / "hr").mkdir(parents=True)
    (docs / "policy").mkdir()
    (docs / "hr" / "pay.md").write_text("---\ngroups: [经理]\n---\n# 薪酬\n\nP5 月薪 2 万至 2.6 万元。\n", encoding="utf-8")
    (docs / "hr" / "leave.txt").write_text("年假：入职满一年的员工每年享有5天带薪年假。\n", encoding="utf-8")
    (docs / "policy" / "faq.md").write_text("# 常见问题\n\n报销须在出差结束后30日内提交。\n", encoding="utf-8")
    manifest = ingest(workspace, [docs], name="hb")
    scopes = {c.doc_id: c.scope for c in SnapshotStore(workspace).chunks(manifest.snapshot_id)}
    assert scopes == {"hr/leave.txt": Scope(groups=["人事部"], version="2025"),
                      "hr/pay.md": Scope(groups=["经理"], version="2025"),   # groups its own, version the rule's
                      "policy/faq.md": None}


def test_chunk_metadata_over_path_rule_on_import(workspace, tmp_path):
    _declare(workspace, RULES)
    path = _jsonl(tmp_path / "chunks.jsonl", [
        {"chunk_id": "pay-1", "doc_id": "hr/pay", "text": "P5 月薪 2 万至 2.6 万元。", "metadata": {"groups": ["员工"]}},
        {"chunk_id": "pay-2", "doc_id": "hr/pay", "text": "P6 月薪 2.6 万至 3.4 万元。"},
        {"chunk_id": "pay-3", "doc_id": "hr/pay", "text": "2026 年起 P6 月薪 2.8 万至 3.6 万元。", "version": "2026"},
        {"chunk_id": "faq-1", "doc_id": "faq", "text": "报销须在出差结束后30日内提交。"}])
    manifest, skipped = import_chunks(workspace, path, name="prod")
    scopes = {c.chunk_id: c.scope for c in SnapshotStore(workspace).chunks(manifest.snapshot_id)}
    assert skipped == [] and scopes == {
        "pay-1": Scope(groups=["员工"], version="2025"),
        "pay-2": Scope(groups=["人事部"], version="2025"),
        "pay-3": Scope(groups=["人事部"], version="2026"),
        "faq-1": None}
    counts = manifest.scope
    assert counts.everyone == 1
    assert [(g.name, g.chunks) for g in counts.groups] == [("人事部", 1 + 2), ("经理", 1 + 0), ("员工", 1 + 1)]
    assert [(v.name, v.chunks) for v in counts.versions] == [("2025", 2), ("2026", 1)] and counts.unversioned == 1


def test_version_field_names_where_the_version_is_kept(workspace, tmp_path):
    _declare(workspace, 'version_field = "year"\n')
    path = _jsonl(tmp_path / "docs.jsonl", [
        {"doc_id": "travel", "text": "住宿标准：每晚不超过650元。", "metadata": {"year": 2026, "version": "3.2"}}])
    manifest = ingest(workspace, [path], name="j")
    (chunk,) = SnapshotStore(workspace).chunks(manifest.snapshot_id)
    # `year` is the version now (and leaves metadata); `version` is a document revision, left as it is
    assert chunk.scope == Scope(version="2026") and chunk.metadata == {"version": "3.2"}


# -- snapshot ids ------------------------------------------------------------------------------------

def test_unscoped_snapshots_keep_the_ids_they_had_before_scope(workspace, tmp_path):
    # the ids docs/how-to/kb.md shows, and one computed before scope was read
    assert ingest(workspace, [EXAMPLES / "handbook" / "docs"], name="handbook").snapshot_id == "kb-7535745b0dbef672"
    path = _jsonl(tmp_path / "c.jsonl", [
        {"chunk_id": "p-1", "doc_id": "hr/leave", "text": "年假：入职满一年的员工每年享有5天带薪年假。",
         "metadata": {"owner": "人事部", "acl": "hr"}},
        {"chunk_id": "p-2", "doc_id": "faq", "text": "报销须在出差结束后30日内提交。", "start": 0, "end": 16}])
    manifest, _ = import_chunks(workspace, path, name="prod")
    assert manifest.snapshot_id == "kb-8b998b239c492301" and manifest.scope is None
    # a scope that restricts nothing is no scope: the id stays
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows[0]["metadata"]["supersedes"], rows[1]["groups"] = [], None
    again, _ = import_chunks(workspace, _jsonl(tmp_path / "c2.jsonl", rows), name="prod")
    assert again.snapshot_id == "kb-8b998b239c492301"
    # ... and --map acl=groups makes the same chunks a new snapshot
    mapped, _ = import_chunks(workspace, path, name="prod", mapping={"acl": "groups"})
    assert mapped.snapshot_id != "kb-8b998b239c492301"
    assert [(g.name, g.chunks) for g in mapped.scope.groups] == [("hr", 2)] and mapped.scope.everyone == 1


def test_a_document_revoked_from_a_group_is_a_new_snapshot_and_the_old_one_stays(workspace, tmp_path):
    _declare(workspace)
    docs = tmp_path / "docs"
    docs.mkdir()
    page = docs / "bands.md"
    body = "# 薪酬等级\n\n## P5\n\n月薪 2 万至 2.6 万元。\n\n## P6\n\n月薪 2.6 万至 3.4 万元。\n"
    page.write_text("---\ngroups: [人事部, 经理]\n---\n" + body, encoding="utf-8")
    (docs / "faq.md").write_text("# 常见问题\n\n报销须在出差结束后30日内提交。\n", encoding="utf-8")
    before = ingest(workspace, [docs], name="hr", chunk_size=40)
    page.write_text("---\ngroups: [人事部]\n---\n" + body, encoding="utf-8")     # managers lose access
    after = ingest(workspace, [docs], name="hr", chunk_size=40)
    store = SnapshotStore(workspace)
    assert after.snapshot_id != before.snapshot_id
    assert store.names()["hr"] == [before.snapshot_id, after.snapshot_id]
    old = {c.chunk_id: c.scope.groups for c in store.chunks(before.snapshot_id) if c.scope}
    new = {c.chunk_id: c.scope.groups for c in store.chunks(after.snapshot_id) if c.scope}
    assert set(old) == set(new) and len(old) == 2
    assert set(map(tuple, old.values())) == {("人事部", "经理")} and set(map(tuple, new.values())) == {("人事部",)}
    assert [(g.name, g.chunks) for g in before.scope.groups] == [("人事部", 3), ("经理", 3), ("员工", 1)]
    assert [(g.name, g.chunks) for g in after.scope.groups] == [("人事部", 3), ("经理", 1), ("员工", 1)]
    assert store.manifest(before.snapshot_id) == before          # the old snapshot is untouched
    page.write_text("---\ngroups: [人事部, 经理]\n---\n" + body, encoding="utf-8")
    assert ingest(workspace, [docs], name="hr", chunk_size=40).snapshot_id == before.snapshot_id


def test_each_scope_field_is_part_of_the_snapshot_id(workspace, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    page = docs / "travel.md"
    body = "# 差旅\n\n住宿每晚不超过650元。\n"
    fronts = ["", "groups: [财务部]\n", "version: '2026'\n", "valid_from: 2026-01-01\n", "valid_to: 2026-12-31\n",
              "supersedes: travel-2025.md\n", "owner: 财务部\n"]
    ids = []
    for front in fronts:
        page.write_text((f"---\n{front}---\n" if front else "") + body, encoding="utf-8")
        ids.append(ingest(workspace, [docs], name="t").snapshot_id)
    assert len(set(ids[:6])) == 6           # no scope, then each field alone: six snapshots
    assert ids[6] != ids[0]                 # metadata that is no scope is content too
    page.write_text("---\nvalid_from: 2026年1月1日\n---\n" + body, encoding="utf-8")
    assert ingest(workspace, [docs], name="t").snapshot_id == ids[3]   # one date, however written


# -- bad values: one line each, naming file, line and field -----------------------------------------------

GOOD_DOC = {"doc_id": "faq", "text": "报销须在出差结束后30日内提交。"}
BAD_VALUES = [   # (what the record gives, the field named, the message)
    ({"metadata": {"groups": []}}, "metadata.groups",
     "an empty list of groups says neither who may see it nor that everyone may: leave the field out for everyone"),
    ({"metadata": {"groups": "人事部,,经理"}}, "metadata.groups", "holds an empty group name ('人事部,,经理')"),
    ({"groups": ["财务部"]}, "groups", "group '财务部' is not declared in curate.toml [scope] groups (人事部, 经理, 员工)"),
    ({"metadata": {"valid_from": "2026-13-01"}}, "metadata.valid_from", "'2026-13-01' is not a date: month must be in 1..12"),
    ({"metadata": {"valid_to": "下个月"}}, "metadata.valid_to", "'下个月' is not a date (write YYYY-MM-DD)"),
    ({"valid_from": "2026-03-01", "valid_to": "2026-02-28"}, "valid_to", "2026-02-28 is before valid_from 2026-03-01"),
    ({"metadata": {"version": "2027"}}, "metadata.version",
     "version '2027' is not among curate.toml [scope] versions (2025, 2026)"),
    ({"metadata": {"version": 2025.0}}, "metadata.version",
     "a version label is text: write it in quotes (as a number, 2025.0 may not be what was written: 3.10 reads 3.1)"),
    ({"metadata": {"supersedes": 42}}, "metadata.supersedes", "must be a list of document or chunk ids, got 42"),
    ({"metadata": {"supersedes": ["a", ""]}}, "metadata.supersedes", "must be a list of document or chunk ids, got ['a', '']"),
    ({"groups": ["人事部"], "metadata": {"groups": "经理"}}, "groups",
     "given at the top level (['人事部']) and in metadata (['经理']) differently: keep one"),
]


@pytest.mark.parametrize(("given", "field", "message"), BAD_VALUES, ids=[f for _, f, _ in BAD_VALUES])
def test_a_bad_document_value_is_one_line(workspace, tmp_path, curate, given, field, message):
    _declare(workspace)
    path = _jsonl(tmp_path / "docs.jsonl", [GOOD_DOC, {"doc_id": "bad", "text": "正文。", **given}])
    expected = f"{path}:2: field '{field}': {message}"
    with pytest.raises(InvalidRecords) as info:
        ingest(workspace, [path], name="kb")
    assert [e.located() for e in info.value.errors] == [expected]
    result = curate("kb", "ingest", path, "--name", "kb", code=2)
    assert result.stderr == f"error: {expected} (nothing was written)\n"
    assert SnapshotStore(workspace).all_ids() == []


@pytest.mark.parametrize(("given", "field", "message"), BAD_VALUES, ids=[f for _, f, _ in BAD_VALUES])
def test_a_bad_chunk_value_is_one_line_and_skip_invalid_keeps_the_rest(workspace, tmp_path, curate, given, field,
                                                                       message):
    _declare(workspace)
    path = _jsonl(tmp_path / "chunks.jsonl", [{"chunk_id": "c1", **GOOD_DOC},
                                              {"chunk_id": "c2", "doc_id": "bad", "text": "正文。", **given}])
    expected = f"{path}:2: field '{field}': {message}"
    with pytest.raises(InvalidRecords) as info:
        import_chunks(workspace, path, name="kb")
    assert [e.located() for e in info.value.errors] == [expected]
    result = curate("kb", "import", path, "--name", "kb", code=2)
    assert result.stderr == f"error: {expected} (nothing was written; --skip-invalid imports the valid records)\n"
    assert SnapshotStore(workspace).all_ids() == []
    kept = curate("kb", "import", path, "--name", "kb", "--skip-invalid")
    assert kept.stderr == f"skipped: {expected}\nskipped 1 invalid record(s)\n"
    assert [c.chunk_id for c in SnapshotStore(workspace).chunks(SnapshotStore(workspace).resolve("kb"))] == ["c1"]


@pytest.mark.parametrize(("line", "expected"), [
    ("groups: []", "field 'groups': an empty list of groups says neither who may see it"),
    ("valid_to: 2026-02-30", "field 'valid_to': '2026-02-30' is not a date: day is out of range for month"),
    ("version: 3.10", "field 'version': version '3.10' is not among curate.toml [scope] versions (2025, 2026)"),
    ("supersedes: {old: 1}", "field 'supersedes': must be a list of document or chunk ids, got {'old': '1'}"),
])
def test_a_bad_front_matter_value_names_the_line_of_its_key(workspace, tmp_path, curate, line, expected):
    _declare(workspace)
    docs = tmp_path / "docs"
    docs.mkdir()
    page = docs / "travel.md"
    page.write_text(f"---\ntitle: 差旅报销\nowner: 财务部\n{line}\n---\n# 差旅\n\n住宿每晚不超过650元。\n", encoding="utf-8")
    with pytest.raises(InvalidRecords) as info:
        ingest(workspace, [docs], name="kb")
    (error,) = info.value.errors
    assert error.located().startswith(f"{page}:4: {expected}")
    result = curate("kb", "ingest", docs, "--name", "kb", code=2)
    assert result.stderr.startswith(f"error: {page}:4: {expected}") and len(result.stderr.splitlines()) == 1


def test_two_names_of_one_field_that_disagree_are_an_error(workspace, tmp_path):
    path = _jsonl(tmp_path / "docs.jsonl", [
        {"doc_id": "a", "text": "正文。", "metadata": {"groups": ["hr"], "access_groups": ["it"]}}])
    with pytest.raises(InvalidRecords) as info:
        ingest(workspace, [path], name="kb")
    assert info.value.errors[0].located() == (
        f"{path}:1: field 'metadata.access_groups': 'metadata.groups' and 'metadata.access_groups' both give groups, "
        "differently (['hr'] / ['it'])")


# -- --map --------------------------------------------------------------------------------------------

def test_map_reads_a_teams_own_names(workspace, tmp_path, curate):
    _declare(workspace)
    path = _jsonl(tmp_path / "chunks.jsonl", [
        {"chunk_id": "pay-1", "doc_id": "bands", "text": "P5 月薪 2 万至 2.6 万元。", "acl": ["人事部", "经理"],
         "metadata": {"effective_date": "2026/3/1", "owner": "人事部"}},
        {"chunk_id": "faq-1", "doc_id": "faq", "text": "报销须在出差结束后30日内提交。", "metadata": {"owner": "财务部"}}])
    unmapped, _ = import_chunks(workspace, path, name="plain")
    assert unmapped.scope is None    # acl and effective_date mean nothing to curate unless mapped
    result = curate("kb", "import", path, "--name", "prod", "--map", "acl=groups", "--map", "effective_date=valid_from")
    assert result.stdout.splitlines()[1:] == [
        "scope: 1 chunk for everyone; 人事部 may see 2; 经理 may see 2; 员工 may see 1",
        "scope: 1 with validity dates"]
    chunks = {c.chunk_id: c for c in SnapshotStore(workspace).chunks(SnapshotStore(workspace).resolve("prod"))}
    assert chunks["pay-1"].scope == Scope(groups=["人事部", "经理"], valid_from="2026-03-01")
    assert chunks["pay-1"].metadata == {"owner": "人事部"} and chunks["faq-1"].scope is None
    wrong = curate("kb", "import", path, "--name", "prod", "--map", "acl=group", code=2)
    assert wrong.stderr == ("error: field 'map': --map acl=group: 'group' is not a known field "
                            "(groups, supersedes, valid_from, valid_to, version)\n")
    with pytest.raises(InputError) as info:
        import_chunks(workspace, path, name="prod", mapping={"acl": "group"})
    assert info.value.located() == ("field 'map': acl=group: 'group' is not a scope field "
                                    "(groups, version, valid_from, valid_to, supersedes)")


def test_map_on_ingest_and_an_unmapped_file_is_unscoped(workspace, tmp_path):
    path = _jsonl(tmp_path / "docs.jsonl", [
        {"doc_id": "policy/travel-2026", "text": "住宿标准：每晚不超过650元。",
         "metadata": {"year": "2026", "replaces": "policy/travel-2025"}},
        {"doc_id": "policy/travel-2025", "text": "住宿标准：每晚不超过600元。", "metadata": {"year": "2025"}}])
    manifest = ingest(workspace, [path], name="travel", mapping={"year": "version"})
    store = SnapshotStore(workspace)
    scopes = {d.doc_id: d.scope for d in store.documents(manifest.snapshot_id)}
    assert scopes == {"policy/travel-2026": Scope(version="2026", supersedes=["policy/travel-2025"]),
                      "policy/travel-2025": Scope(version="2025")}
    assert (manifest.scope.superseded, manifest.scope.unknown_superseded) == (1, [])


# -- what the commands print ---------------------------------------------------------------------------

def test_ingest_show_and_chunks_print_scope(curate, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")   # a wide terminal: each row on one line
    _declare(curate.workspace, RULES)
    docs = tmp_path / "docs"
    (docs / "hr").mkdir(parents=True)
    (docs / "policy").mkdir()
    (docs / "hr" / "pay.md").write_text("# 薪酬\n\nP5 月薪 2 万至 2.6 万元。\n", encoding="utf-8")
    (docs / "policy" / "travel-2026.md").write_text(
        "---\nversion: '2026'\nvalid_from: 2026-01-01\nsupersedes: [policy/travel-2025.md, policy/travel-2024.md]\n---\n"
        "# 差旅\n\n住宿每晚不超过650元。\n", encoding="utf-8")
    (docs / "policy" / "travel-2025.md").write_text(
        "---\nversion: '2025'\nvalid_to: 2025-12-31\n---\n# 差旅\n\n住宿每晚不超过600元。\n", encoding="utf-8")
    (docs / "faq.md").write_text("# 常见问题\n\n报销须在出差结束后30日内提交。\n", encoding="utf-8")
    out = curate("kb", "ingest", docs, "--name", "hb").stdout.splitlines()
    assert out[1:] == [
        "scope: 3 chunks for everyone; 人事部 may see 4; 经理 may see 3; 员工 may see 3",
        "scope: version 2025: 2; version 2026: 1; no version: 1; 2 with validity dates; 1 superseded",
        "scope: supersedes names 1 id (policy/travel-2024.md): neither a document nor a chunk of this snapshot"]
    shown = [" ".join(line.split()) for line in curate("kb", "show", "hb").stdout.splitlines()]
    assert shown[-10:] == [
        "everyone may see 3 chunks", "group 人事部 may see 4 chunks (1 of them restricted)",
        "group 经理 may see 3 chunks (0 of them restricted)", "group 员工 may see 3 chunks (0 of them restricted)",
        "version 2025 2 chunks", "version 2026 1 chunk", "no version 1 chunk", "validity dates 2 chunks",
        "superseded 1 chunk", "supersedes unknown ids 1 id (policy/travel-2024.md)"]
    listed = [" ".join(line.split()) for line in curate("kb", "chunks", "hb").stdout.splitlines()]
    assert listed[0] == "chunk doc span length scope text"
    rows = {line.split()[0]: line for line in listed[1:] if "#" in line.split()[0]}
    assert rows["faq.md#0"].startswith("faq.md#0 faq.md 0-24 24 everyone # 常见问题")
    assert rows["hr/pay.md#0"].startswith("hr/pay.md#0 hr/pay.md 0-24 24 人事部 · 2025 # 薪酬")
    assert rows["policy/travel-2026.md#0"].startswith(
        "policy/travel-2026.md#0 policy/travel-2026.md 0-18 18 everyone · 2026 · 2026-01-01.. · supersedes 2 # 差旅")
    whole = curate("kb", "chunks", "hb", "policy/travel-2026.md#0").stdout.splitlines()
    assert whole[1:7] == ["section: 差旅", "title: 差旅", "groups: everyone", "version: 2026", "valid: from 2026-01-01",
                          "supersedes: policy/travel-2025.md, policy/travel-2024.md"]


def test_an_unscoped_snapshot_prints_as_before(curate, data_dir):
    out = curate("kb", "ingest", data_dir / "docs", "--name", "docs").stdout.splitlines()
    assert len(out) == 1 and out[0].startswith("docs: snapshot kb-")
    assert "scope" not in curate("kb", "chunks", "docs").stdout.splitlines()[0]
    assert "everyone may see" not in curate("kb", "show", "docs").stdout
    assert json.loads(curate("kb", "show", "docs", "--json").stdout)["scope"] is None


def test_reader_errors_are_input_errors_for_the_python_api(workspace, tmp_path):
    path = _jsonl(tmp_path / "docs.jsonl", [{"doc_id": "a", "text": "正文。", "metadata": ["not", "an", "object"]}])
    with pytest.raises(InvalidRecords) as info:
        ingest(workspace, [path], name="kb")
    assert isinstance(info.value.errors[0], InputError)
    assert info.value.errors[0].located() == f"{path}:1: field 'metadata': must be an object of key: value"
