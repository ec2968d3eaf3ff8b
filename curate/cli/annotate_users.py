"""`curate annotate users ...`: the people who label in Argilla, without the SDK."""

from __future__ import annotations

from pathlib import Path

import click

from curate.annotate.users import ROLES, add_user, list_users, remove_user
from curate.cli.base import CommandGroup
from curate.cli.display import console, table

API_URL = click.option("--api-url", envvar="ARGILLA_API_URL", help="Argilla URL (env ARGILLA_API_URL); an owner's key "
                       "is read from ARGILLA_API_KEY.")


@click.group("users", cls=CommandGroup)
def users() -> None:
    """Add, list and remove the people who label in Argilla (the local server or a deployment)."""


@users.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice(ROLES), default="annotator", show_default=True)
@click.option("--password-file", type=click.Path(dir_okay=False, path_type=Path),
              help="A file whose first line is the password (default: generate one and show it once).")
@click.option("--argilla-workspace", default="curate", show_default=True,
              help="The Argilla workspace the user labels in (created when missing).")
@API_URL
def add_command(name: str, role: str, password_file: Path | None, argilla_workspace: str, api_url: str | None) -> None:
    """Create a user in Argilla and add them to the team's workspace."""
    added = add_user(name, role=role, password_file=password_file, argilla_workspace=argilla_workspace,
                     api_url=api_url)
    space = f"workspace '{added.workspace}'{' (created)' if added.workspace_created else ''}"
    click.echo(f"added {added.username} ({added.role}) to {space}")
    if added.password is not None:
        click.echo(f"password: {added.password}")
        click.echo("This password is shown only this once and is not stored anywhere: pass it on to "
                   f"{added.username} now.")
    click.echo(f"sign in at {added.login_url}")


@users.command("list")
@API_URL
def list_command(api_url: str | None) -> None:
    """Each user's name, role and workspaces (never passwords or keys)."""
    rows = [(user.username, user.role, "all (owner)" if user.role == "owner" else ", ".join(user.workspaces) or "-")
            for user in list_users(api_url=api_url)]
    console().print(table(None, ("user", "role", "workspaces"), rows))


@users.command("remove")
@click.argument("name")
@click.option("--delete-responses", is_flag=True,
              help="Remove the user even if they have responses (Argilla deletes those with them: pull first).")
@API_URL
def remove_command(name: str, delete_responses: bool, api_url: str | None) -> None:
    """Delete a user from Argilla; one with responses only with --delete-responses."""
    role = remove_user(name, delete_responses=delete_responses, api_url=api_url)
    click.echo(f"removed {name} ({role})")
