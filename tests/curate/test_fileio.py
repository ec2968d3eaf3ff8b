"""Reading users' files and writing our own: only "\\n" ends a JSONL line, what JSON cannot hold is
refused naming its field, a CSV quote left open names the line it opened on."""

from __future__ import annotations

import json

import pytest

from curate.csvfile import iter_csv
from curate.errors import InputError
from curate.fileio import (
    MAX_DEPTH,
    JSONValueError,
    atomic_write_json,
    atomic_write_text,
    dumps_json,
    iter_json_objects,
    iter_jsonl,
    jsonl_bytes,
    loads_json,
)

ODD = "\u2028\u2029\u0085"


def _refusal(text: str) -> tuple[str, str | None]:
    with pytest.raises(JSONValueError) as caught:
        loads_json(text)
    return caught.value.message, caught.value.field


def test_line_separators_are_text_in_json_and_jsonl(tmp_path):
    value = {"question": f"a{ODD}b", f"key{ODD}": [f"{ODD}"]}
    assert loads_json(dumps_json(value)) == value
    path = tmp_path / "rows.jsonl"
    path.write_bytes(jsonl_bytes([value, {"n": 2}]))
    assert path.read_bytes().count(b"\n") == 2
    assert list(iter_jsonl(path)) == [(1, value), (2, {"n": 2})]


def test_jsonl_lines_are_numbered_by_newlines_only(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(f'{{"a": "x{ODD}y"}}\r\n\n{{"a": 3}}\n[1]\n{{"a": NaN}}\n', encoding="utf-8")
    rows = list(iter_json_objects(path))
    assert [line for line, _ in rows] == [1, 3, 4, 5]
    assert rows[0][1] == {"a": f"x{ODD}y"} and rows[1][1] == {"a": 3}
    assert str(rows[2][1]) == f"{path}:4: each line must be a JSON object, got list"
    assert str(rows[3][1]) == f"{path}:5: field 'a': NaN is not a number JSON can hold"


@pytest.mark.parametrize("text, message, field", [
    ('{"a": NaN}', "NaN is not a number JSON can hold", "a"),
    ('{"a": [1, Infinity]}', "Infinity is not a number JSON can hold", "a[1]"),
    ('{"a": {"b": -Infinity}}', "-Infinity is not a number JSON can hold", "a.b"),
    ('{"a": [{"b": 1e400}]}', "1e400 is out of range for a number (at most about 1.8e308)", "a[0].b"),
    ('{"a": ' + "9" * 5000 + "}", "a number with more than 4300 digits", "a"),
    ('{"a": -' + "9" * 4301 + "}", "a number with more than 4300 digits", "a"),
    ('{"a": "x", "b": "\\ud800"}', "lone surrogate \\ud800 in a string (not valid Unicode)", "b"),
    ('{"a": ["ok", "\\uDFFF\\uD800"]}', "lone surrogate \\udfff in a string (not valid Unicode)", "a[1]"),
    ('{"\\udc00": 1}', "lone surrogate \\udc00 in a string (not valid Unicode)", "\\udc00"),
    ('["\\ud83d"]', "lone surrogate \\ud83d in a string (not valid Unicode)", "[0]"),
    ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", f"nested too deeply (more than {MAX_DEPTH} levels of [ and {{)",
     "a"),
    ("[" * 100_000, f"nested too deeply (more than {MAX_DEPTH} levels of [ and {{)", None),
])
def test_what_json_cannot_hold_is_refused_naming_the_field(text, message, field):
    assert _refusal(text) == (message, field)


def test_a_refused_number_before_bad_syntax_is_still_refused():
    assert _refusal('{"a": NaN, "b": }') == ("NaN is not a number JSON can hold", None)


def test_what_json_can_hold_is_read():
    assert loads_json('"\\ud83d\\ude00"') == "\U0001F600"  # a surrogate pair is one character
    assert loads_json('"\\\\ud800"') == "\\ud800"  # an escaped backslash, then text
    assert loads_json("9" * 4300) == int("9" * 4300)
    assert loads_json('[1e308, -1e-400, 0.5]') == [1e308, -0.0, 0.5]
    nested = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert json.dumps(loads_json(nested)) == nested
    brackets = json.dumps({"text": "[" * 500 + "{" * 500})  # brackets inside a string are text
    assert loads_json(brackets) == {"text": "[" * 500 + "{" * 500}
    assert loads_json(b'{"a": "\\u2028"}') == {"a": "\u2028"}


def test_bytes_with_an_encoded_surrogate_are_not_utf8():
    with pytest.raises(UnicodeDecodeError):
        loads_json(b'"\xed\xa0\x80"')


@pytest.mark.parametrize("write", [
    dumps_json,
    lambda value: jsonl_bytes([value]),
])
def test_writers_refuse_what_could_not_be_read_back(write):
    with pytest.raises(ValueError, match=r"lone surrogate \\ud800 in a string \(not valid Unicode\)"):
        write({"question": "bad \ud800"})
    with pytest.raises(ValueError, match="Out of range float"):
        write({"score": float("nan")})


def test_atomic_writers_refuse_a_lone_surrogate_and_write_nothing(tmp_path):
    with pytest.raises(ValueError, match=r"lone surrogate \\udfff"):
        atomic_write_text(tmp_path / "a.txt", "x\udfff")
    with pytest.raises(ValueError, match=r"lone surrogate \\ud800"):
        atomic_write_json(tmp_path / "a.json", {"a": "\ud800"})
    with pytest.raises(ValueError, match="Out of range float"):
        atomic_write_json(tmp_path / "a.json", {"a": float("inf")})
    assert list(tmp_path.iterdir()) == []


def _csv(tmp_path, text: str) -> list:
    path = tmp_path / "items.csv"
    path.write_text(text, encoding="utf-8")
    return list(iter_csv(path))


def _csv_refusal(tmp_path, text: str) -> str:
    with pytest.raises(InputError) as caught:
        _csv(tmp_path, text)
    return caught.value.located().removeprefix(str(tmp_path / "items.csv"))


def test_csv_rows_are_numbered_by_the_line_they_start_on(tmp_path):
    rows = _csv(tmp_path, f'id,question,answer\r\na,"two\r\nlines, one ""quote""",x\r\n\r\nb,q{ODD}?\r\n')
    assert rows == [(2, {"id": "a", "question": 'two\r\nlines, one "quote"', "answer": "x"}),
                    (5, {"id": "b", "question": f"q{ODD}?", "answer": None})]


@pytest.mark.parametrize("text, error", [
    ('id,question,answer\na,"open,x\nb,y,z\n',
     ":2: field 'question': unterminated quote: this quoted field runs to the end of the file"),
    ('id,question,answer\na,"fine\nstill",x\nb,y,"open\n',
     ":4: field 'answer': unterminated quote: this quoted field runs to the end of the file"),
    ('id,question,answer\na,"open,x\nb,"y",z\n',
     ":2: field 'question': unterminated quote: this quoted field runs on to line 3, where text follows its "
     'closing quote (a quote inside a quoted field is written "")'),
    ('id,question\na,"5" screen\n',
     ":2: field 'question': text after the closing quote (a quote inside a quoted field is written \"\")"),
    ('id,question\na,b,"open\n', ':2: unterminated quote: this quoted field (column 3) runs to the end of the file'),
    ('id,"question\na,b\n', ':1: unterminated quote: this quoted field (column 2) runs to the end of the file'),
    ("id,question,question\na,b,c\n", ":1: field 'question': named twice in the header"),
    ("id,,answer\na,b,c\n", ":1: column 2 has no name in the header"),
    ("id,question, \na,b,c\n", ":1: column 3 has no name in the header"),
    ("id,question\na,b,c\n", ":2: 1 more cells than the header has"),
    ("", ":1: empty CSV file, a header row was expected"),
    ("\nid,question\n", ":1: blank line where the header row was expected"),
])
def test_bad_csv_is_located(tmp_path, text, error):
    assert _csv_refusal(tmp_path, text) == error


def test_a_quote_inside_an_unquoted_cell_is_text(tmp_path):
    assert _csv(tmp_path, 'id,question\na,a 5" screen\n') == [(2, {"id": "a", "question": 'a 5" screen'})]


@pytest.mark.parametrize(("text", "key", "field"), [
    ('{"grade": 1, "grade": 2}', "grade", "grade"),
    ('{"evidence": [{"text": "a"}, {"text": "b", "doc_id": "d", "text": "c"}]}', "text", "evidence[1].text"),
    ('[{"k": {}}, {"k": {"问题": 1, "问题": 1}}]', "问题", "[1].k.问题")])     # the same value twice is refused too
def test_a_key_given_twice_in_one_object_is_refused_naming_its_path(text, key, field):
    assert _refusal(text) == (f"key {key!r} given twice in one object (which value is meant cannot be told)", field)


def test_the_first_problem_of_a_text_is_the_one_said():
    assert _refusal('{"a": NaN, "b": 1, "b": 2}') == ("NaN is not a number JSON can hold", "a")


def test_the_same_key_in_separate_objects_is_no_repetition():
    assert loads_json('[{"text": "a", "grade": 1}, {"text": "b", "grade": 2}]')[1] == {"text": "b", "grade": 2}
