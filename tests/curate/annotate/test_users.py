"""`curate annotate users add / list / remove` through the CLI against the real local argilla-server:
a generated password shown once that signs in, a password from a file, the list, removal, and every
refusal as one line with exit 2."""

from __future__ import annotations

import importlib.util
import re
import uuid
from pathlib import Path

import pytest

if importlib.util.find_spec("argilla_server") is None:  # the `argilla` extra
    pytest.skip("argilla-server is not installed", allow_module_level=True)
httpx = pytest.importorskip("httpx")

from tests.support.servers import free_port  # noqa: E402


@pytest.fixture
def users(curate, argilla_server, monkeypatch):
    """The CLI, pointed at the session's local Argilla with the owner's key."""
    monkeypatch.setenv("ARGILLA_API_URL", argilla_server.url)
    monkeypatch.setenv("ARGILLA_API_KEY", argilla_server.api_key)
    return curate


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def sign_in(server, username: str, password: str) -> httpx.Response:
    """Returns the answer of the login endpoint the web UI uses."""
    return httpx.post(f"{server.url}/api/v1/token", data={"username": username, "password": password})


def as_user(server, token: str, path: str) -> dict:
    response = httpx.get(f"{server.url}/api/v1/{path}", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    return response.json()


def listed(cli) -> dict[str, list[str]]:
    """Returns {user: [role, workspaces]} from `curate annotate users list`."""
    lines = cli("annotate", "users", "list").stdout.splitlines()[1:]
    rows = [line.rstrip().split(None, 2) for line in lines if line.strip()]
    return {row[0]: row[1:] for row in rows}


def files_containing(folder: Path, text: str) -> list[Path]:
    return [path for path in folder.rglob("*") if path.is_file() and text.encode() in path.read_bytes()]


def test_add_with_a_generated_password_shown_once_that_signs_in(users, argilla_server):
    name, space = unique("ann"), unique("space")
    result = users("annotate", "users", "add", name, "--role", "annotator", "--argilla-workspace", space)
    out = result.stdout
    passwords = re.findall(r"^password: (\S+)$", out, flags=re.MULTILINE)
    assert len(passwords) == 1 and len(passwords[0]) >= 8
    password = passwords[0]
    assert out.count(password) == 1 and result.stderr == ""
    assert f"added {name} (annotator) to workspace '{space}' (created)" in out
    assert re.search(r"shown only this once and is not stored anywhere", out)
    assert f"sign in at {argilla_server.url}/sign-in" in out
    assert httpx.get(f"{argilla_server.url}/sign-in").status_code == 200  # the web UI's login page

    token = sign_in(argilla_server, name, password)
    assert token.status_code == 201, token.text
    token = token.json()["access_token"]
    assert (as_user(argilla_server, token, "me")["role"]) == "annotator"
    assert [w["name"] for w in as_user(argilla_server, token, "me/workspaces")["items"]] == [space]
    assert sign_in(argilla_server, name, password + "x").status_code == 401
    assert files_containing(users.workspace.root, password) == []
    assert files_containing(argilla_server.data_dir, password) == []


def test_add_from_a_file_list_and_remove(users, argilla_server, tmp_path: Path):
    admin, annotator, space = unique("adm"), unique("ann"), unique("space")
    secret = tmp_path / "password.txt"
    secret.write_text("  a-password-from-a-file \nnot this line\n", encoding="utf-8")
    added = users("annotate", "users", "add", admin, "--role", "admin", "--password-file", secret,
                  "--argilla-workspace", space).stdout
    assert "password" not in added.replace("--password-file", "")  # nothing to show: the team chose it
    assert f"added {admin} (admin) to workspace '{space}' (created)" in added
    users("annotate", "users", "add", annotator, "--role", "annotator", "--password-file", secret,
          "--argilla-workspace", space)
    assert sign_in(argilla_server, admin, "a-password-from-a-file").status_code == 201
    assert sign_in(argilla_server, annotator, "  a-password-from-a-file ").status_code == 401  # stripped

    before = listed(users)
    assert before[admin] == ["admin", space] and before[annotator] == ["annotator", space]
    assert before["owner"] == ["owner", "all (owner)"]
    text = users("annotate", "users", "list").stdout
    assert argilla_server.api_key not in text and "a-password-from-a-file" not in text

    assert users("annotate", "users", "remove", annotator).stdout.strip() == f"removed {annotator} (annotator)"
    after = listed(users)
    assert annotator not in after and admin in after
    assert sign_in(argilla_server, annotator, "a-password-from-a-file").status_code == 401
    assert users("annotate", "users", "remove", admin).stdout.strip() == f"removed {admin} (admin)"
    assert admin not in listed(users)
    assert files_containing(users.workspace.root, "a-password-from-a-file") == []


def test_adding_an_existing_user_is_one_line_and_changes_nothing(users, argilla_server, tmp_path: Path):
    name = unique("ann")
    first = users("annotate", "users", "add", name, "--role", "annotator").stdout
    password = re.search(r"^password: (\S+)$", first, flags=re.MULTILINE).group(1)
    assert "workspace 'curate'" in first  # the default workspace, as push uses
    other = tmp_path / "other.txt"
    other.write_text("another-password\n", encoding="utf-8")
    again = users("annotate", "users", "add", name, "--role", "admin", "--password-file", other, code=2)
    assert again.stdout == ""
    assert again.stderr.splitlines() == [
        f"error: user '{name}' already exists in Argilla (role annotator); nothing was changed"]
    assert sign_in(argilla_server, name, password).status_code == 201
    assert sign_in(argilla_server, name, "another-password").status_code == 401
    assert listed(users)[name][0] == "annotator"


@pytest.mark.parametrize("content, says", [
    (None, "password file not found"),
    ("", "the password is empty"),
    ("\n\n", "the password is empty"),
    ("short77\n", "shorter than Argilla's minimum of 8 characters"),
])
def test_a_bad_password_file_is_one_line_and_adds_no_one(users, tmp_path: Path, content, says):
    name, path = unique("ann"), tmp_path / "password.txt"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    result = users("annotate", "users", "add", name, "--role", "annotator", "--password-file", path, code=2)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: ") and says in lines[0], lines
    assert name not in listed(users)


def test_removing_an_unknown_user_is_one_line(users):
    name = unique("nobody")
    result = users("annotate", "users", "remove", name, code=2)
    assert result.stderr.splitlines() == [f"error: no user '{name}' in Argilla; nothing was removed"]


def test_the_owner_cannot_remove_themselves(users):
    result = users("annotate", "users", "remove", "owner", code=2)
    assert len(result.stderr.splitlines()) == 1 and "ARGILLA_API_KEY" in result.stderr
    assert "owner" in listed(users)


@pytest.mark.parametrize("command", [("list",), ("add", "someone", "--role", "annotator"), ("remove", "someone")])
def test_an_unreachable_server_is_one_line(users, command):
    url = f"http://127.0.0.1:{free_port()}"
    result = users("annotate", "users", *command, "--api-url", url, code=2)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot reach Argilla at {url}"), lines


def test_a_key_argilla_refuses_is_one_line_that_says_so(users, argilla_server, monkeypatch):
    monkeypatch.setenv("ARGILLA_API_KEY", "not-the-owners-key")
    result = users("annotate", "users", "list", code=2)
    assert result.stderr.splitlines() == [f"error: Argilla at {argilla_server.url} does not accept the API key "
                                          f"in ARGILLA_API_KEY"]


def test_a_role_defaults_to_annotator(users):
    name = unique("dee")
    result = users("annotate", "users", "add", name)
    assert result.stdout.startswith(f"added {name} (annotator) to workspace 'curate'")


def test_a_user_with_responses_is_removed_only_when_asked(users, argilla_server, tmp_path: Path):
    import argilla as rg

    name, space = unique("ann"), unique("space")
    secret = tmp_path / "password.txt"
    secret.write_text("annotator-password\n", encoding="utf-8")
    users("annotate", "users", "add", name, "--role", "annotator", "--password-file", secret,
          "--argilla-workspace", space)
    client = rg.Argilla(api_url=argilla_server.url, api_key=argilla_server.api_key)
    settings = rg.Settings(fields=[rg.TextField(name="chunk")],
                           questions=[rg.RatingQuestion(name="relevance", values=[0, 1, 2])])
    dataset = rg.Dataset(name=unique("ds"), workspace=space, settings=settings, client=client).create()
    dataset.records.log([rg.Record(id="r1", fields={"chunk": "a chunk"})])
    record_id = next(iter(dataset.records))._server_id
    token = sign_in(argilla_server, name, "annotator-password").json()["access_token"]
    answered = httpx.post(f"{argilla_server.url}/api/v1/records/{record_id}/responses",
                          headers={"Authorization": f"Bearer {token}"},
                          json={"status": "submitted", "values": {"relevance": {"value": 2}}})
    assert answered.status_code == 201, answered.text

    refused = users("annotate", "users", "remove", name, code=2)
    lines = refused.stderr.splitlines()
    assert len(lines) == 1 and f"has 1 response(s) in Argilla ({dataset.name} (1))" in lines[0], lines
    assert "--delete-responses" in lines[0] and name in listed(users)
    users("annotate", "users", "remove", name, "--delete-responses")
    assert name not in listed(users)
