"""README documents every command, every command's --help runs, and docs/cli.md is the --help of
every command as it is now."""

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from curate.cli.main import cli as curate_cli
from evalrun.cli.main import cli as evalrun_cli

README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")


def _commands(group: click.Group, prefix: str):
    for name, command in group.commands.items():
        path = f"{prefix} {name}"
        if isinstance(command, click.Group):
            yield from _commands(command, path)
        else:
            yield path, command


ALL = list(_commands(curate_cli, "curate")) + list(_commands(evalrun_cli, "evalrun"))


@pytest.mark.parametrize("path", [p for p, _ in ALL])
def test_every_command_is_in_the_readme_with_its_help(path):
    assert re.search(re.escape(path) + r"[ \n]", README), f"README has no example of `{path}`"
    root = curate_cli if path.startswith("curate") else evalrun_cli
    result = CliRunner().invoke(root, path.split()[1:] + ["--help"])
    assert result.exit_code == 0 and "Usage:" in result.output


def test_readme_opens_with_the_two_commands():
    first_block = README.split("```")[1]
    assert [line.split("#")[0].strip() for line in first_block.strip().splitlines()] == ["make demo", "make test"]


def test_the_cli_reference_is_generated_from_the_commands_as_they_are():
    from cogapp import Cog
    reference = Path(__file__).parent.parent / "docs" / "cli.md"
    assert Cog().main(["cog", "--check", str(reference)]) == 0, "docs/cli.md is stale: run `make docs`"
    text = reference.read_text(encoding="utf-8")
    for path, command in ALL:
        assert f"`{path}`" in text and (command.help or "").split("\n")[0][:40] in text


def test_readme_links_the_cli_reference():
    assert "docs/cli.md" in README
