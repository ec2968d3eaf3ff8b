"""What both command lines share: the root group that turns every error into one line, the
--workspace and --debug options, and the exit codes.

Exit codes: 0 clean, 1 findings (something for a person to look at), 2 an error the user can fix
(bad input, a missing file, a server that cannot be reached), 3 an internal error (a bug: one
line, and the traceback with --debug or CURATE_DEBUG=1).
"""

from __future__ import annotations

import difflib
import os
import sys
from pathlib import Path

import click

from curate.errors import CurateError, InvalidRecords
from curate.workspace import Workspace, find_workspace

EXIT_FINDINGS = 1
EXIT_ERROR = 2
EXIT_INTERNAL = 3
MAX_ERRORS_SHOWN = 50
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
# the commands that run work over a KB in shards (check-dups, check-leakage, grade, generate)
ENGINE_OPTION = click.option(
    "--engine", metavar="ENGINE", help="Where the work over a KB in many shards (10,000 chunks or more) runs: local (processes "
    "on this machine), ray (a Ray started here), or a Ray cluster's address (ray://HOST:10001, HOST:PORT, auto) "
    "[default: [engine] in curate.toml, else local].")


def debug_enabled(ctx: click.Context) -> bool:
    """Return whether tracebacks are wanted: --debug on the root command, or CURATE_DEBUG=1."""
    return bool((ctx.find_root().params or {}).get("debug")) or os.environ.get("CURATE_DEBUG") == "1"


def _one_line(text: str) -> str:
    return " ".join(str(text).split("\n")).strip()


class CommandGroup(click.Group):
    """A group of commands that answers a mistyped command with the names it is close to."""

    def resolve_command(self, ctx: click.Context, args: list[str]):
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            close = difflib.get_close_matches(name, self.list_commands(ctx), n=3, cutoff=0.6)
            if close:
                ctx.fail(f"No such command '{name}'. Did you mean {' or '.join(repr(c) for c in close)}?")
        return super().resolve_command(ctx, args)


def _to_root(ctx: click.Context, param: click.Parameter, value):
    """Hand a root option given after a subcommand to the root command (where it is read)."""
    if value not in (None, False):
        ctx.find_root().params[param.name] = value
    return value


def _spread_root_options(group: click.Group, root_params: list[click.Parameter]) -> None:
    """Let every command under `group` take the root's options too (hidden: the root's --help says
    so), unless it has an option of that name itself."""
    for command in group.commands.values():
        taken = {opt for p in command.params for opt in getattr(p, "opts", [])}
        for param in root_params:
            if isinstance(param, click.Option) and not taken & set(param.opts):
                command.params.append(click.Option(
                    param.opts, type=param.type, is_flag=param.is_flag, hidden=True, expose_value=False,
                    callback=_to_root, **({"default": False} if param.is_flag else {}),
                    help=param.help))
        if isinstance(command, click.Group):
            _spread_root_options(command, root_params)


class ToolGroup(CommandGroup):
    """A root command group whose errors reach the user as one line each (traceback with --debug), and
    whose options (--workspace, --debug) may also follow the subcommand: `curate kb show X --debug`."""

    def main(self, *args, **kwargs):
        """Run the command line; click's own errors (a missing option, a bad value) are one line too."""
        kwargs.pop("standalone_mode", None)
        if not getattr(self, "_spread", False):
            _spread_root_options(self, [p for p in self.params if p.name in ROOT_OPTIONS])
            self._spread = True
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except click.exceptions.Exit as exc:
            code = exc.exit_code
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx is not None else self.name
            click.echo(f"error: {_one_line(exc.format_message())} (see `{where} --help`)", err=True)
            code = EXIT_ERROR
        except click.ClickException as exc:
            click.echo(f"error: {_one_line(exc.format_message())}", err=True)
            code = exc.exit_code
        except (click.Abort, KeyboardInterrupt):
            click.echo("interrupted", err=True)
            code = 130
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KeyboardInterrupt as exc:
            if not str(exc):  # a bare Ctrl-C: main says "interrupted"
                raise
            # one that says how to go on (an interrupted run names the command that finishes it)
            click.echo(f"interrupted: {_one_line(exc)}", err=True)
            ctx.exit(getattr(exc, "exit_code", 130))
        except InvalidRecords as exc:
            if debug_enabled(ctx):
                raise
            if len(exc.errors) == 1:  # one bad record: one line
                hint = "; --skip-invalid imports the valid records" if exc.skippable else ""
                click.echo(f"error: {_one_line(exc.errors[0].located())} (nothing was written{hint})", err=True)
                ctx.exit(EXIT_ERROR)
            for error in exc.errors[:MAX_ERRORS_SHOWN]:
                click.echo(f"error: {_one_line(error.located())}", err=True)
            if len(exc.errors) > MAX_ERRORS_SHOWN:
                click.echo(f"error: ... and {len(exc.errors) - MAX_ERRORS_SHOWN} more", err=True)
            hint = " (--skip-invalid imports the valid ones)" if exc.skippable else ""
            click.echo(f"error: {len(exc.errors)} invalid records; nothing was written{hint}", err=True)
            ctx.exit(EXIT_ERROR)
        except (CurateError, OSError) as exc:
            if debug_enabled(ctx):
                raise
            click.echo(f"error: {_one_line(exc)}", err=True)
            ctx.exit(EXIT_ERROR)
        except Exception as exc:  # a bug: say so in one line, never a bare traceback
            if debug_enabled(ctx):
                raise
            click.echo(f"internal error: {type(exc).__name__}: {_one_line(exc)[:300]}; run with --debug "
                       f"(or CURATE_DEBUG=1) for the traceback", err=True)
            ctx.exit(EXIT_INTERNAL)


ROOT_OPTIONS = ("workspace", "debug")


def root_options(command):
    """Add the options every root command takes, before or after its subcommand: --workspace and --debug."""
    command = click.option("--debug", is_flag=True, help="Show tracebacks (also CURATE_DEBUG=1); before or "
                           "after the subcommand.")(command)
    return click.option("--workspace", "-w", type=click.Path(file_okay=False, path_type=Path),
                        envvar="CURATE_WORKSPACE",
                        help="Workspace folder (default: the nearest folder with curate.toml, from here up); "
                        "before or after the subcommand.")(command)


def workspace_of(ctx: click.Context, explicit: Path | None = None) -> Workspace:
    """Return the workspace a command works in: `explicit`, else the root's --workspace, else found
    from the current folder upwards."""
    return find_workspace(explicit=explicit or ctx.find_root().params.get("workspace"))


def push_options(command):
    """Add --pool-k, --argilla-workspace and --api-url to a command whose --push sends the items it added to
    Argilla (`curate.annotate.push.push` takes them)."""
    for option in reversed([
            click.option("--pool-k", type=click.IntRange(1, 50), default=8, show_default=True,
                         help="With --push: candidate chunks per question."),
            click.option("--argilla-workspace", default="curate", show_default=True),
            click.option("--api-url", envvar="ARGILLA_API_URL", help="With --push: Argilla URL (env ARGILLA_API_URL); "
                         "the key is read from ARGILLA_API_KEY.")]):
        command = option(command)
    return command


def asker_options(command):
    """Add --asker-role, --asker-groups and --as-of to a command that reads records of questions: who asks
    and when, for the records that do not say (`asker_defaults` turns them into the library's `asker`)."""
    for option in reversed([
            click.option("--asker-role", metavar="ROLE", help="Who asks the records that name no asker: a role of "
                         "curate.toml [scope.roles]."),
            click.option("--asker-groups", metavar="G1,G2", help="Who asks the records that name no asker: their "
                         "access groups (\"\" for an asker who may see only what everyone may)."),
            click.option("--as-of", metavar="DATE|VERSION", help="When the records that give no moment are asked: "
                         "a date (YYYY-MM-DD) or a KB version label.")]):
        command = option(command)
    return command


def asker_defaults(asker_role: str | None, asker_groups: str | None, as_of: str | None) -> dict[str, object]:
    """Return the `asker` the library functions take from --asker-role, --asker-groups and --as-of.

    >>> asker_defaults(None, "hr, staff", "2026")
    {'asker_groups': ['hr', 'staff'], 'as_of': '2026'}
    >>> asker_defaults(None, "", None)
    {'asker_groups': []}
    """
    groups = None if asker_groups is None else [g.strip() for g in asker_groups.split(",") if g.strip()]
    given = {"asker_role": asker_role, "asker_groups": groups, "as_of": as_of}
    return {key: value for key, value in given.items() if value is not None}