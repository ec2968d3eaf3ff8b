"""What both command lines share: the root group that turns every error into one line, the
--workspace and --debug options, and the exit codes.

Exit codes: 0 clean, 1 findings (something for a person to look at), 2 an error the user can fix
(bad input, a missing file, a server that cannot be reached), 3 an internal error (a bug: one
line, and the traceback with --debug or CURATE_DEBUG=1).
"""

from __future__ import annotations

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


def debug_enabled(ctx: click.Context) -> bool:
    """Return whether tracebacks are wanted: --debug on the root command, or CURATE_DEBUG=1."""
    return bool((ctx.find_root().params or {}).get("debug")) or os.environ.get("CURATE_DEBUG") == "1"


def _one_line(text: str) -> str:
    return " ".join(str(text).split("\n")).strip()


class ToolGroup(click.Group):
    """A root command group whose errors reach the user as one line each (traceback with --debug)."""

    def main(self, *args, **kwargs):
        """Run the command line; click's own errors (a missing option, a bad value) are one line too."""
        kwargs.pop("standalone_mode", None)
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
                click.echo(f"error: {_one_line(exc.errors[0].located())} (nothing was written; --skip-invalid "
                           f"imports the valid records)", err=True)
                ctx.exit(EXIT_ERROR)
            for error in exc.errors[:MAX_ERRORS_SHOWN]:
                click.echo(f"error: {_one_line(error.located())}", err=True)
            if len(exc.errors) > MAX_ERRORS_SHOWN:
                click.echo(f"error: ... and {len(exc.errors) - MAX_ERRORS_SHOWN} more", err=True)
            click.echo(f"error: {len(exc.errors)} invalid records; nothing was written "
                       f"(--skip-invalid imports the valid ones)", err=True)
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


def root_options(command):
    """Add the options every root command takes: --workspace and --debug."""
    command = click.option("--debug", is_flag=True, help="Show tracebacks (also CURATE_DEBUG=1).")(command)
    return click.option("--workspace", "-w", type=click.Path(file_okay=False, path_type=Path),
                        envvar="CURATE_WORKSPACE",
                        help="Workspace folder (default: the nearest folder with curate.toml, from here up).")(command)


def workspace_of(ctx: click.Context, explicit: Path | None = None) -> Workspace:
    """Return the workspace a command works in: `explicit`, else the root's --workspace, else found
    from the current folder upwards."""
    return find_workspace(explicit=explicit or ctx.find_root().params.get("workspace"))
