"""The people who label in Argilla, managed without the SDK's Python: add one (with a password from a
file or generated), list them with their role and workspaces, remove one.

Works against the local server (`curate annotate serve`) or any deployment, connected as
`curate.annotate.state.connect` does (URL from --api-url or ARGILLA_API_URL, an owner's key from
ARGILLA_API_KEY). A password is sent to Argilla and, when generated, returned once to be shown;
it is never written anywhere by this module.
"""

from __future__ import annotations

import secrets
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from curate.annotate.server.process import SIGN_IN_PATH
from curate.annotate.state import argilla_sdk, connect
from curate.credentials import mask_url
from curate.errors import CurateError, InputError, NotFound

ROLES = ("annotator", "admin", "owner")
# argilla-server's rule for passwords (argilla_server.api.schemas.v1.users.USER_PASSWORD_*_LENGTH)
MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 100


class UserExists(CurateError):
    """A user of that name is already in Argilla (nothing was changed)."""


@dataclass
class AddedUser:
    """A user just created in Argilla, and where they sign in."""

    username: str
    role: str
    workspace: str
    workspace_created: bool
    login_url: str
    password: str | None = field(default=None, repr=False)
    """The generated password, to be shown once; None when it came from a file."""


@dataclass(frozen=True)
class UserEntry:
    """One Argilla user as listed: name, role and the workspaces they label in (never a key)."""

    username: str
    role: str
    workspaces: tuple[str, ...]
    """Names of their workspaces; an owner sees every workspace."""


def login_url(api_url: str) -> str:
    """Returns the sign-in page of the Argilla web UI served at `api_url`.

    >>> login_url("http://127.0.0.1:6900/")
    'http://127.0.0.1:6900/sign-in'
    """
    return api_url.rstrip("/") + SIGN_IN_PATH


def check_password(password: str, source: str | None = None) -> str:
    """Returns `password` if Argilla accepts its length, else raises InputError naming `source`."""
    if len(password) < MIN_PASSWORD_LENGTH:
        what = "is empty" if not password else f"is shorter than Argilla's minimum of {MIN_PASSWORD_LENGTH} characters"
        raise InputError(f"the password {what}", file=source)
    if len(password) > MAX_PASSWORD_LENGTH:
        raise InputError(f"the password is longer than Argilla's maximum of {MAX_PASSWORD_LENGTH} characters",
                         file=source)
    return password


def read_password_file(path: Path) -> str:
    """Returns the password in the first line of `path` (stripped); raises InputError if missing or too short."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("password file not found", file=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the password file: {type(exc).__name__}", file=str(path)) from None
    lines = text.splitlines()
    return check_password(lines[0].strip() if lines else "", str(path))


def generate_password() -> str:
    """Returns a new random password (16 URL-safe characters, about 96 bits)."""
    return secrets.token_urlsafe(12)


@contextmanager
def _asking_argilla(doing: str, url: str):
    """Runs the block, turning the SDK's and the network's errors into one-line CurateErrors."""
    import httpx
    from argilla._exceptions import ArgillaError, ConflictError, ForbiddenError

    try:
        yield
    except ForbiddenError:
        raise CurateError(f"Argilla refused {doing}: managing users needs an owner's API key in ARGILLA_API_KEY"
                          ) from None
    except ConflictError:
        raise UserExists(f"Argilla refused {doing}: the name is taken; nothing was changed") from None
    except ArgillaError as exc:
        detail = " ".join(str(exc.args[0] if exc.args else type(exc).__name__).split())[:200]
        raise CurateError(f"Argilla refused {doing}: {detail}") from None
    except httpx.HTTPError as exc:
        raise CurateError(f"cannot reach Argilla at {mask_url(url)} while {doing}: {type(exc).__name__}") from None


def _role(user) -> str:
    """Returns the role of an SDK user as a plain string."""
    return str(getattr(user.role, "value", user.role))


def _find_user(client, username: str):
    """Returns the Argilla user called `username`, or None."""
    with warnings.catch_warnings():  # the SDK warns when there is none
        warnings.simplefilter("ignore")
        return client.users(username=username)


def ensure_workspace(client, name: str) -> tuple[object, bool]:
    """Returns the Argilla workspace `name` and whether it was created now."""
    rg = argilla_sdk()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        existing = client.workspaces(name=name)
    if existing is not None:
        return existing, False
    return rg.Workspace(name=name, client=client).create(), True


def add_user(username: str, *, role: str = "annotator", password_file: Path | None = None,
             argilla_workspace: str = "curate", api_url: str | None = None) -> AddedUser:
    """Returns the user created in Argilla, member of `argilla_workspace` (created when missing).

    The password is the first line of `password_file`, or generated (returned in `password`, to be
    shown once). Raises UserExists when the name is taken (nothing is changed), InputError for a bad
    role, name or password file, CurateError when Argilla cannot be reached or refuses.
    """
    if role not in ROLES:
        raise InputError(f"unknown role {role!r}; one of {', '.join(ROLES)}", field="role")
    if not username.strip() or username != username.strip():
        raise InputError(f"user name {username!r} is empty or has spaces around it", field="name")
    password = read_password_file(password_file) if password_file is not None else None
    rg = argilla_sdk()
    client = connect(api_url)
    with _asking_argilla(f"adding user {username!r}", client.api_url):
        existing = _find_user(client, username)
    if existing is not None:
        raise UserExists(f"user {username!r} already exists in Argilla (role {_role(existing)}); nothing was changed")
    generated = generate_password() if password is None else None
    with _asking_argilla(f"adding user {username!r}", client.api_url):
        space, created = ensure_workspace(client, argilla_workspace)
        user = rg.User(username=username, role=role, password=password or generated, client=client).create()
        user.add_to_workspace(space)
    return AddedUser(username=username, role=role, workspace=argilla_workspace, workspace_created=created,
                     login_url=login_url(client.api_url), password=generated)


def list_users(*, api_url: str | None = None) -> list[UserEntry]:
    """Returns every Argilla user with role and workspaces, sorted by name."""
    client = connect(api_url)
    entries = []
    with _asking_argilla("listing users", client.api_url):
        for user in client.users.list():
            spaces = client.api.workspaces.list_by_user_id(user.id)
            entries.append(UserEntry(username=user.username, role=_role(user),
                                     workspaces=tuple(sorted(space.name for space in spaces))))
    return sorted(entries, key=lambda entry: entry.username)


def responses_of(client, username: str) -> dict[str, int]:
    """Returns {dataset name: number of responses} of `username` in every dataset the key can see."""
    counts = {}
    for dataset in client.api.datasets.list():
        for progress in client.api.datasets.list_users_progress(dataset.id):
            if progress.username == username:
                total = sum(getattr(part, status) for part in (progress.completed, progress.pending)
                            for status in ("submitted", "draft", "discarded"))
                if total:
                    counts[dataset.name] = total
    return counts


def remove_user(username: str, *, delete_responses: bool = False, api_url: str | None = None) -> str:
    """Returns the role of the user removed from Argilla; raises NotFound for an unknown name.

    Argilla deletes a user's responses with the user, so labels not yet pulled would be lost: a user
    with responses is removed only with `delete_responses`, else InputError says how many and where.
    """
    client = connect(api_url)
    with _asking_argilla(f"removing user {username!r}", client.api_url):
        user = _find_user(client, username)
        if user is None:
            raise NotFound(f"no user {username!r} in Argilla; nothing was removed")
        if user.id == client.me.id:
            raise InputError("refusing to remove the user whose API key is in ARGILLA_API_KEY", field="name")
        answered = {} if delete_responses else responses_of(client, username)
        if answered:
            where = ", ".join(f"{name} ({n})" for name, n in sorted(answered.items()))
            raise InputError(f"user {username!r} has {sum(answered.values())} response(s) in Argilla ({where}), "
                             f"which Argilla deletes with the user: run `curate annotate pull` first, then "
                             f"remove with --delete-responses; nothing was removed", field="name")
        role = _role(user)  # the SDK forgets it on delete
        user.delete()
    return role
