"""The command-line reference in docs/cli.md, generated from every command's --help."""

from __future__ import annotations

import click

WIDTH = 100


def _walk(command: click.Command, path: list[str], parent: click.Context | None):
    # as the command line builds it (help option names, widths), but parsing no argument
    context = command.make_context(path[-1], [], parent=parent, resilient_parsing=True, terminal_width=WIDTH)
    yield " ".join(path), context
    if isinstance(command, click.Group):
        for name in command.list_commands(context):
            yield from _walk(command.get_command(context, name), path + [name], context)


def markdown(*roots: tuple[str, click.Command]) -> str:
    """Return one Markdown section per command of each (program name, root command), its --help
    text in a code block; groups come before their commands."""
    out = []
    for program, root in roots:
        for path, context in _walk(root, [program], None):
            out.append(f"{'#' * min(len(path.split()) + 1, 4)} `{path}`\n\n```\n{context.get_help()}\n```\n")
    return "\n".join(out)
