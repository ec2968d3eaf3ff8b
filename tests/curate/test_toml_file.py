"""TOML files users write: one located line for bad bytes, bad syntax and absurd nesting; a byte order
mark read past; brackets inside strings and comments are text, not nesting."""

import pytest

from curate.errors import InputError
from curate.toml_file import loads_toml, read_toml


def test_a_byte_order_mark_is_not_text(tmp_path):
    path = tmp_path / "g.toml"
    path.write_bytes("\ufeff[gate]\nalpha = 0.1\n".encode("utf-8"))
    assert read_toml(path)[1] == {"gate": {"alpha": 0.1}}
    assert loads_toml("\ufeff[a]\nb = 1\n", "x.toml") == {"a": {"b": 1}}


def test_bytes_that_are_not_utf8_name_their_line(tmp_path):
    path = tmp_path / "g.toml"
    path.write_bytes(b'[gate]\n\nguard = ["\xe9"]\n')
    with pytest.raises(InputError) as raised:
        read_toml(path)
    assert str(raised.value) == f"{path}:3: not valid utf-8 text at byte 18 (TOML files are UTF-8: save it as UTF-8)"


@pytest.mark.parametrize("value", ["[" * 3000 + "]" * 3000, "{a = " * 3000 + "1" + "}" * 3000,
                                   "[\n" * 150 + "]" * 150])
def test_nesting_deeper_than_100_levels_is_one_located_line(value):
    with pytest.raises(InputError) as raised:
        loads_toml(f"[t]\nok = 1\nx = {value}\n", "x.toml")
    assert str(raised.value).startswith("x.toml:")
    assert str(raised.value).endswith("nested too deeply (more than 100 levels of tables and arrays)")
    assert raised.value.line == (3 if "\n" not in value else 3 + 100)


@pytest.mark.parametrize("text", ["[t]\nok = 1\n[" + ".".join(["a"] * 3000) + "]\nx = 1\n",
                                  "[t]\nok = 1\n" + ".".join(["a"] * 3000) + " = 1\n"])
def test_dotted_keys_that_nest_too_deep_are_one_located_line(text):
    with pytest.raises(InputError) as raised:
        loads_toml(text, "x.toml")
    assert str(raised.value) == "x.toml:3: nested too deeply (more than 100 levels of tables and arrays)"


def test_brackets_in_strings_and_comments_are_not_nesting():
    text = ('x = "' + "[" * 300 + '"\ny = \'' + "{" * 300 + "'\n# " + "[" * 300 + '\nz = """\n' + "[" * 300
            + '\n"""\nw = [[1], [2]]\n')
    assert loads_toml(text, "x.toml")["w"] == [[1], [2]]


def test_bad_syntax_names_its_line():
    with pytest.raises(InputError) as raised:
        loads_toml("[a]\nb = = 1\n", "x.toml")
    assert str(raised.value).startswith("x.toml:2: not valid TOML: ")
