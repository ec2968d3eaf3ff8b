"""Logins that survive a restart of the local Argilla: the signing secret kept private in the data
folder (mode 0600 from its creation), passed to the server through its pipe and found in no log,
command line or environment; and `curate annotate serve` creating the team's workspace and saying
where to sign in."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

if importlib.util.find_spec("argilla_server") is None:  # the `argilla` extra
    pytest.skip("argilla-server is not installed", allow_module_level=True)
httpx = pytest.importorskip("httpx")

from curate.annotate.server.process import (  # noqa: E402
    AUTH_SECRET_NAME,
    ArgillaServerError,
    auth_secret,
    server_environment,
    start_server,
)

from tests.support.processes import PATIENCE  # noqa: E402
from tests.support.servers import free_port  # noqa: E402

OWNER_KEY = "curate-test-restart-owner-key"
PASSWORD = "annotator-password"


def sign_in(url: str, username: str, password: str) -> str:
    """Returns the web UI's login token for the user."""
    response = httpx.post(f"{url}/api/v1/token", data={"username": username, "password": password})
    assert response.status_code == 201, response.text
    return response.json()["access_token"]


def me(url: str, token: str) -> httpx.Response:
    return httpx.get(f"{url}/api/v1/me", headers={"Authorization": f"Bearer {token}"})


def test_the_secret_is_private_from_its_creation(tmp_path: Path):
    previous = os.umask(0)  # even when the user's umask would let everyone read new files
    try:
        secret = auth_secret(tmp_path)
    finally:
        os.umask(previous)
    path = tmp_path / AUTH_SECRET_NAME
    assert path.stat().st_mode & 0o777 == 0o600
    assert len(secret) >= 32 and auth_secret(tmp_path) == secret  # made once, then read
    assert sorted(p.name for p in tmp_path.iterdir()) == [AUTH_SECRET_NAME]  # no temporary file left


def test_a_secret_readable_by_others_is_refused(tmp_path: Path):
    auth_secret(tmp_path)
    path = tmp_path / AUTH_SECRET_NAME
    path.chmod(0o644)
    with pytest.raises(ArgillaServerError, match="readable by others.*chmod 600"):
        auth_secret(tmp_path)
    with pytest.raises(ArgillaServerError, match="readable by others"):
        start_server(tmp_path, free_port())


def test_a_login_survives_a_restart(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("ARGILLA_AUTH_SECRET_KEY", "a-secret-from-the-environment")  # kept from the server
    data_dir, port = tmp_path / "argilla", free_port()
    first = start_server(data_dir, port, api_key=OWNER_KEY, workspace="curate", timeout=PATIENCE)
    try:
        assert first.workspace_created
        owner = {"X-Argilla-Api-Key": OWNER_KEY}
        created = httpx.post(f"{first.url}/api/v1/users", headers=owner, json={
            "first_name": "ann", "username": "ann", "role": "annotator", "password": PASSWORD})
        assert created.status_code == 201, created.text
        token = sign_in(first.url, "ann", PASSWORD)
        assert me(first.url, token).json()["username"] == "ann"
        secret = (data_dir / AUTH_SECRET_NAME).read_text().strip()
        for name in ("cmdline", "environ"):  # of the server process itself
            content = Path(f"/proc/{first.process.pid}/{name}").read_bytes()
            assert secret.encode() not in content and b"ARGILLA_AUTH_SECRET_KEY" not in content, name
    finally:
        first.stop()
    assert "ARGILLA_AUTH_SECRET_KEY" not in server_environment(data_dir)

    second = start_server(data_dir, port, api_key=OWNER_KEY, workspace="curate", timeout=PATIENCE)
    try:
        assert not second.workspace_created
        assert me(second.url, token).status_code == 200  # the annotator is still signed in
        assert me(second.url, token + "x").status_code == 401
    finally:
        second.stop()
    assert (data_dir / AUTH_SECRET_NAME).stat().st_mode & 0o777 == 0o600
    assert (data_dir / AUTH_SECRET_NAME).read_text().strip() == secret
    assert "*" in (data_dir / ".gitignore").read_text().splitlines()  # nothing here belongs in a repository
    assert data_dir.stat().st_mode & 0o777 == 0o700  # the database holds API keys: no one else reads it
    for path in data_dir.rglob("*"):
        if path.is_file() and path.name != AUTH_SECRET_NAME:
            assert secret.encode() not in path.read_bytes(), path

    (data_dir / AUTH_SECRET_NAME).unlink()  # the file is what keeps the sessions: without it they end
    third = start_server(data_dir, port, api_key=OWNER_KEY, timeout=PATIENCE)
    try:
        assert me(third.url, token).status_code == 401
        assert me(third.url, sign_in(third.url, "ann", PASSWORD)).status_code == 200
    finally:
        third.stop()


def _serve(workspace: Path, data_dir: Path, port: int) -> tuple[subprocess.Popen, list[str]]:
    """Returns `curate annotate serve` running in a subprocess, and its output up to "Press Ctrl-C"."""
    env = {**os.environ, "ARGILLA_API_KEY": OWNER_KEY, "PYTHONPATH": str(Path(__file__).resolve().parents[4])}
    process = subprocess.Popen(
        [sys.executable, "-c", "from curate.cli.main import main; main()", "--workspace", str(workspace),
         "annotate", "serve", "--port", str(port), "--data", str(data_dir)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines = []
    while True:   # until it says it is up or ends (it gives up by itself after 60 s)
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if line.startswith("Press Ctrl-C"):
            return process, lines
    process.kill()
    raise AssertionError(f"serve did not come up: {lines}")


def _stop(process: subprocess.Popen) -> str:
    process.send_signal(signal.SIGINT)
    rest, _ = process.communicate(timeout=PATIENCE)
    return rest


def test_serve_creates_the_workspace_and_says_where_to_sign_in(curate, tmp_path: Path):
    data_dir, port = tmp_path / "argilla", free_port()
    process, lines = _serve(curate.workspace.root, data_dir, port)
    try:
        assert f"sign in at http://127.0.0.1:{port}/sign-in" in lines
        assert any(line.startswith("Argilla workspace 'curate' created") for line in lines), lines
        page = httpx.get(f"http://127.0.0.1:{port}/sign-in")
        assert page.status_code == 200 and "<html" in page.text.lower()
        spaces = httpx.get(f"http://127.0.0.1:{port}/api/v1/me/workspaces", headers={"X-Argilla-Api-Key": OWNER_KEY})
        assert [w["name"] for w in spaces.json()["items"]] == ["curate"]
    finally:
        assert "Argilla stopped." in _stop(process)
    process, lines = _serve(curate.workspace.root, data_dir, port)
    try:
        assert any(line.startswith("Argilla workspace 'curate' ready") for line in lines), lines
    finally:
        _stop(process)
    secret = (data_dir / AUTH_SECRET_NAME).read_text().strip()
    assert all(secret not in line for line in lines)
