"""A local Argilla for a team without a deployment: argilla-server on SQLite, in a subprocess.

`start_server(data_dir, port)` starts `python -m curate.annotate.server` (the bootstrap at the end
of this module, run by the package's __main__) with argilla-server configured for `DATA_DIR/argilla.db`. The bootstrap, inside
the server process and before argilla-server is imported, replaces Redis with an in-process
`fakeredis` (the server pings Redis at start-up and enqueues rq jobs; a small task in the server's
event loop runs those jobs) and registers the `curate-sqlite` search engine (no Elasticsearch).
It then migrates the database, creates the owner user once (idempotent across restarts) and runs
`argilla_server:app` with uvicorn. The owner's password and API key reach the bootstrap through a
pipe, never through the command line, the environment or a file; the only copy on disk is the one
argilla-server keeps in its own database. The secret that signs the web UI's login tokens is made
once and kept in `DATA_DIR/auth_secret` (mode 0600 from its creation), so that the annotators'
sessions survive a restart; it reaches the bootstrap through the same pipe. DATA_DIR is made
readable by its owner only (the database holds API keys) and ignored by git. Server logs go to
`DATA_DIR/server.log`. The server stops when its parent process goes away, and it reuses one
pydantic TypeAdapter for question settings, which halves the time argilla-server 2.8 takes to log
records with suggestions.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from curate.errors import CurateError
from curate.fileio import create_private

ENGINE_NAME = "curate-sqlite"
LOG_NAME = "server.log"
DB_NAME = "argilla.db"
TMP_NAME = "tmp"  # argilla-server copies its 14 MB web app to a temp dir at every start; keep it here
AUTH_SECRET_NAME = "auth_secret"
SIGN_IN_PATH = "/sign-in"  # the page of Argilla's web UI where a user logs in
MIN_SECRET_LENGTH = 8
_STATUS_PREFIX = "CURATE-ARGILLA-STATUS "


class ArgillaServerError(CurateError, RuntimeError):
    """The local Argilla server could not be started; `log_tail` holds the end of its log."""

    def __init__(self, message: str, log_tail: str = ""):
        super().__init__(message)
        self.log_tail = log_tail


@dataclass
class ArgillaServer:
    """A running local argilla-server: its URL, the owner's login, and `stop()`."""

    url: str
    username: str
    api_key: str = field(repr=False)
    password: str | None = field(repr=False)
    created: bool
    data_dir: Path
    process: subprocess.Popen = field(repr=False)
    started_in: float = 0.0
    workspace_created: bool = False

    @property
    def login_url(self) -> str:
        """Returns the address of the web UI's sign-in page."""
        return self.url + SIGN_IN_PATH

    @property
    def log_path(self) -> Path:
        """Returns the path of the server's log file."""
        return self.data_dir / LOG_NAME

    def is_running(self) -> bool:
        """Returns True while the server process is alive."""
        return self.process.poll() is None

    def stop(self, timeout: float = 15.0) -> int | None:
        """Returns the server process's exit code after stopping it (SIGINT, then SIGTERM, then SIGKILL)."""
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
            if self.process.poll() is not None:
                break
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                continue
        if self.process.stdout:
            self.process.stdout.close()
        return self.process.poll()

    def __enter__(self) -> "ArgillaServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def database_url(data_dir: Path) -> str:
    """Returns the SQLAlchemy URL of the server's SQLite database inside `data_dir`."""
    return f"sqlite+aiosqlite:///{Path(data_dir).resolve() / DB_NAME}"


def server_environment(data_dir: Path) -> dict[str, str]:
    """Returns the environment for the server process (no secrets in it)."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("ARGILLA_API_KEY", "ARGILLA_BASE_URL", "ARGILLA_DATABASE_URL", "ARGILLA_AUTH_SECRET_KEY")}
    root = str(Path(__file__).resolve().parents[3])  # the folder holding the curate package
    env.update({
        "ARGILLA_HOME_PATH": str(Path(data_dir).resolve()),
        "ARGILLA_DATABASE_URL": database_url(data_dir),
        "ARGILLA_SEARCH_ENGINE": ENGINE_NAME,
        "ARGILLA_REDIS_URL": "redis://in-process-fakeredis/0",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "TMPDIR": str(Path(data_dir).resolve() / TMP_NAME),
        "PYTHONPATH": os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")])),
        "PYTHONUNBUFFERED": "1",
    })
    return env


def auth_secret(data_dir: Path) -> str:
    """Returns the secret that signs the server's login tokens, creating `DATA_DIR/auth_secret` on first use.

    The file is written under a temporary name opened with mode 0600 (never readable by others, not
    even for an instant), then linked to its name, which fails if another start made it meanwhile:
    then that one is used. Raises ArgillaServerError when the file is readable by others or damaged.
    """
    path = Path(data_dir) / AUTH_SECRET_NAME
    if not path.exists():
        create_private(path, secrets.token_urlsafe(48) + "\n")
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise ArgillaServerError(f"{path} is readable by others (mode {mode:o}): remove it (everyone then signs "
                                 f"in again) or make it private with chmod 600")
    secret = path.read_text(encoding="ascii", errors="replace").strip()
    if len(secret) < 32:
        raise ArgillaServerError(f"{path} is damaged (too short): remove it (everyone then signs in again)")
    return secret


def _keep_private(data_dir: Path) -> None:
    """Returns None after making `data_dir` readable by its owner only and ignored by git.

    The database holds the users' API keys and password hashes and `auth_secret` signs every login:
    no other user of the machine may read them, and none belongs in the repository a team may keep
    its workspace in.
    """
    try:
        data_dir.chmod(0o700)
    except OSError:  # a file system without Unix modes: nothing to tighten
        pass
    path = data_dir / ".gitignore"
    if path.exists():
        return
    temporary = path.with_name(f".gitignore.{os.getpid()}.tmp")
    temporary.write_text("# the local Argilla's database, signing secret and logs: never commit them\n*\n",
                         encoding="utf-8")
    os.replace(temporary, path)


def _log_tail(data_dir: Path, lines: int = 25) -> list[str]:
    """Returns the last lines of the server log, for error messages."""
    try:
        return (data_dir / LOG_NAME).read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
    except OSError:
        return []


def _read_status(process: subprocess.Popen, deadline: float) -> dict:
    """Returns the bootstrap's status line (owner created? key) once it has migrated the database."""
    buffer = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.2)
        if ready:
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:
                break
            buffer += chunk
            if b"\n" in buffer:
                line = buffer.split(b"\n", 1)[0].decode()
                if line.startswith(_STATUS_PREFIX):
                    return json.loads(line[len(_STATUS_PREFIX):])
                break
        elif process.poll() is not None:
            break
    return {"error": "the server process exited or timed out before it was ready"}


def _wait_until_up(url: str, process: subprocess.Popen, deadline: float) -> bool:
    """Returns True once GET /api/v1/status answers 200, False if the process died or time ran out."""
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(f"{url}/api/v1/status", timeout=2) as response:
                if response.status == 200:
                    return True
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        time.sleep(0.1)
    return False


def _url_host(host: str) -> str:
    """Returns the host part of a URL that reaches a server bound to `host` from this machine."""
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def start_server(data_dir: Path, port: int, host: str = "127.0.0.1", api_key: str | None = None,
                 username: str = "owner", password: str | None = None, workspace: str | None = None,
                 timeout: float = 60.0) -> ArgillaServer:
    """Returns a running local argilla-server on `host:port` whose data lives in `data_dir`.

    Login tokens are signed with the secret in `DATA_DIR/auth_secret` (see `auth_secret`), so a token
    issued before a restart still works after it. The Argilla `workspace`, when given, is created if
    missing (then `workspace_created` is True).

    The owner `username` is created on the first start, with `api_key` and `password`, or with
    generated ones when they are None (then `created` is True and both are returned once). On a
    later start the owner already exists: `password` is None, `api_key` is the owner's key, and a
    given `api_key` different from the stored one replaces it. Raises ArgillaServerError (one line
    naming the cause and the log file) when the server does not come up within `timeout` seconds.
    """
    for name, secret in (("API key", api_key), ("password", password)):
        if secret is not None and len(secret) < MIN_SECRET_LENGTH:
            raise ArgillaServerError(f"the owner's {name} must have at least {MIN_SECRET_LENGTH} characters")
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    _keep_private(data_dir)
    request = {"username": username, "api_key": api_key, "password": password, "workspace": workspace,
               "auth_secret": auth_secret(data_dir)}
    started = time.monotonic()
    deadline = started + timeout
    with open(data_dir / LOG_NAME, "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "curate.annotate.server", str(data_dir.resolve()), host, str(port),
             str(os.getpid())],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=server_environment(data_dir),
            cwd=str(data_dir), start_new_session=True)
    try:
        process.stdin.write((json.dumps(request) + "\n").encode())
        process.stdin.close()
        status = _read_status(process, deadline)
        url = f"http://{_url_host(host)}:{port}"
        if "error" in status or not _wait_until_up(url, process, deadline):
            tail = _log_tail(data_dir)
            errors = [line.strip() for line in tail if "error" in line.lower() and line.strip()]
            reason = status.get("error") or (errors[-1] if errors else "it did not answer /api/v1/status")
            raise ArgillaServerError(f"the Argilla server on {host}:{port} did not start: {reason} "
                                     f"(log: {data_dir / LOG_NAME})", "\n".join(tail))
    except BaseException:
        ArgillaServer("", username, "", None, False, data_dir, process).stop(timeout=5)
        raise
    return ArgillaServer(url=url, username=username, api_key=status["api_key"], password=status["password"],
                         created=status["created"], data_dir=data_dir, process=process,
                         started_in=time.monotonic() - started,
                         workspace_created=status.get("workspace_created", False))


def run_forever(server: ArgillaServer, poll: float = 0.5) -> int | None:
    """Returns the server's exit code after blocking until Ctrl-C (then stopping it) or until it exits."""
    try:
        while server.is_running():
            time.sleep(poll)
    except KeyboardInterrupt:
        pass
    return server.stop()


def serve(data_dir: Path, port: int, host: str = "127.0.0.1", api_key: str | None = None,
          workspace: str | None = None, echo: Callable[[str], None] = print) -> int | None:
    """Returns the server's exit code after running it until Ctrl-C, printing its URL and the owner's login.

    A generated API key and password are printed only on the first start, when the owner is created;
    later starts print the username and where the key comes from, never the key. The Argilla
    `workspace` the team labels in is created when missing.
    """
    server = start_server(data_dir, port, host=host, api_key=api_key, workspace=workspace)
    echo(f"Argilla is running at {server.url} (data in {server.data_dir}, log {server.log_path.name}; "
         f"started in {server.started_in:.1f} s)")
    echo(f"sign in at {server.login_url}")
    if host not in ("127.0.0.1", "localhost", "::1"):
        import socket

        echo(f"from other machines: http://{socket.gethostname()}:{port}{SIGN_IN_PATH} (or this machine's address)")
    if workspace:
        echo(f"Argilla workspace '{workspace}' {'created' if server.workspace_created else 'ready'}; "
             f"add annotators with `curate annotate users add NAME --role annotator`")
    if server.created:
        echo(f"owner created: username {server.username}, password {server.password}")
        if api_key is None:
            echo(f"owner API key (shown only this once; set ARGILLA_API_KEY to it): {server.api_key}")
        else:
            echo("owner API key: the one given (ARGILLA_API_KEY)")
    else:
        source = "the one given (ARGILLA_API_KEY)" if api_key else "unchanged since it was first printed"
        echo(f"owner: username {server.username}; API key: {source}")
    echo("Press Ctrl-C to stop.")
    code = run_forever(server)
    echo("Argilla stopped.")
    return code


# ---------------------------------------------------------------- the bootstrap (server process) --

def _patch_redis() -> None:
    """Returns None after making every `redis.from_url` connection an in-process fakeredis."""
    import fakeredis
    import redis

    fake_server = fakeredis.FakeServer()
    redis.from_url = lambda url, **kwargs: fakeredis.FakeRedis(server=fake_server)


def _cache_settings_adapters() -> None:
    """Returns None after making `parsed_settings` of questions and metadata properties reuse one TypeAdapter.

    argilla-server 2.8 builds a new pydantic TypeAdapter at every call (about 3 ms), and a bulk upsert
    calls it once per suggestion: with 8 suggestions a record this was half the time of logging records.
    """
    from pydantic import TypeAdapter

    from argilla_server.models import database as models

    for model, settings_type in ((models.Question, models.QuestionSettings),
                                 (models.MetadataProperty, models.MetadataPropertySettings)):
        adapter = TypeAdapter(settings_type)
        model.parsed_settings = property(lambda self, adapter=adapter: adapter.validate_python(self.settings))


def _skip_record_events_without_webhooks() -> None:
    """Returns None after making record events cost nothing while no webhook is enabled.

    argilla-server 2.8 builds a webhook event for every record it upserts (reloading the dataset
    and its relations, serialising the record) even with no webhook configured: half of a push.
    """
    from sqlalchemy import func, select

    import argilla_server.bulk.records_bulk as records_bulk
    import argilla_server.contexts.distribution as distribution
    from argilla_server.models import Webhook

    original = records_bulk.notify_record_event_v1

    async def notify(db, record_event, record):
        enabled = (await db.execute(select(func.count()).select_from(Webhook).where(Webhook.enabled))).scalar()
        return await original(db, record_event, record) if enabled else []

    records_bulk.notify_record_event_v1 = notify
    distribution.notify_record_event_v1 = notify


def _use_auth_secret(secret: str) -> None:
    """Returns None after making argilla-server sign and check login tokens with `secret`.

    Set on the imported settings rather than through ARGILLA_AUTH_SECRET_KEY, so that it is in no
    process's environment; `JWT` copied the setting when its module was imported.
    """
    from argilla_server.security.authentication.jwt import JWT
    from argilla_server.security.settings import settings

    settings.secret_key = secret
    JWT.secret = secret


async def _ensure_workspace(name: str) -> bool:
    """Returns True after creating the Argilla workspace `name`, False when it already existed."""
    from argilla_server.contexts import accounts
    from argilla_server.database import AsyncSessionLocal, async_engine
    from argilla_server.models import Workspace

    try:
        async with AsyncSessionLocal() as db:
            if await Workspace.get_by(db, name=name) is not None:
                return False
            await accounts.create_workspace(db, {"name": name})
            return True
    finally:
        await async_engine.dispose()


async def _ensure_owner(username: str, api_key: str | None, password: str | None) -> dict:
    """Returns {"created", "api_key", "password"} after creating the owner if missing (or updating its key)."""
    from argilla_server.contexts import accounts
    from argilla_server.database import AsyncSessionLocal, async_engine
    from argilla_server.models import User, UserRole

    try:
        async with AsyncSessionLocal() as db:
            user = await accounts.get_user_by_username(db, username)
            holder = await accounts.get_user_by_api_key(db, api_key) if api_key else None
            if holder is not None and holder.username != username:
                return {"error": f"the API key given belongs to another user ({holder.username})"}
            if user is None:
                api_key = api_key or secrets.token_urlsafe(32)
                password = password or secrets.token_urlsafe(12)
                await User.create(db, first_name=username, username=username, role=UserRole.owner,
                                  password_hash=accounts.hash_password(password), api_key=api_key)
                return {"created": True, "api_key": api_key, "password": password}
            if user.role != UserRole.owner:
                return {"error": f"user {username!r} exists but is not an owner (role {user.role.value})"}
            if api_key and user.api_key != api_key:
                user.api_key = api_key
                await user.save(db)
            return {"created": False, "api_key": user.api_key, "password": None}
    finally:
        await async_engine.dispose()


def _install_job_runner(app) -> None:
    """Returns None after adding a task to the app's lifespan that runs the rq jobs the server enqueues."""
    import asyncio
    import contextlib
    import logging

    from rq import Queue
    from rq.job import JobStatus

    from argilla_server.jobs.queues import DEFAULT_QUEUE, HIGH_QUEUE

    logger = logging.getLogger("curate.annotate.jobs")

    async def run_jobs() -> None:
        while True:
            found = Queue.dequeue_any([HIGH_QUEUE, DEFAULT_QUEUE], None, connection=DEFAULT_QUEUE.connection)
            if found is None:
                await asyncio.sleep(0.2)
                continue
            job, _ = found
            try:
                if asyncio.iscoroutinefunction(job.func):
                    await job.func(*job.args, **job.kwargs)
                else:
                    await asyncio.to_thread(job.func, *job.args, **job.kwargs)
                job.set_status(JobStatus.FINISHED)
            except Exception:  # a failed job must not stop the runner
                logger.exception("job %s (%s) failed", job.id, job.func_name)
                job.set_status(JobStatus.FAILED)

    original = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(app_):
        async with original(app_) as state:
            task = asyncio.create_task(run_jobs())
            try:
                yield state
            finally:
                task.cancel()

    app.router.lifespan_context = lifespan


def _exit_with_parent(parent: int) -> None:
    """Returns None after starting a thread that stops this server (SIGINT) once process `parent` is gone."""
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _bootstrap(data_dir: str, host: str, port: int, parent: int) -> int:
    """Returns the exit code of the server process: migrate, ensure the owner, report, serve."""
    import asyncio
    import shutil

    request = json.loads(sys.stdin.readline())
    sys.stdin.close()
    tmp = Path(data_dir) / TMP_NAME
    shutil.rmtree(tmp, ignore_errors=True)  # what a killed server left behind
    tmp.mkdir(parents=True, exist_ok=True)
    status_fd = os.dup(1)
    os.dup2(2, 1)  # everything else printed goes to the log, not the status pipe

    def report(status: dict) -> None:
        os.write(status_fd, (_STATUS_PREFIX + json.dumps(status) + "\n").encode())
        os.close(status_fd)

    try:
        _patch_redis()
        from curate.annotate.server import search_engine

        search_engine.register()
        _cache_settings_adapters()
        _skip_record_events_without_webhooks()
        from argilla_server.cli.database.migrate import migrate_db

        _use_auth_secret(request["auth_secret"])
        migrate_db(revision="head")
        status = asyncio.run(_ensure_owner(request["username"], request["api_key"], request["password"]))
        if request.get("workspace") and "error" not in status:
            status["workspace_created"] = asyncio.run(_ensure_workspace(request["workspace"]))
    except Exception as error:  # reported to the parent, which shows the log
        report({"error": f"{type(error).__name__}: {error}"})
        raise
    report(status)
    if "error" in status:
        return 1

    import uvicorn
    from argilla_server import app

    _install_job_runner(app)
    _exit_with_parent(parent)
    try:
        uvicorn.run(app, host=host, port=port, log_level="info", access_log=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def main(argv: list[str]) -> int:
    """Returns the exit code of `python -m curate.annotate.server DATA_DIR HOST PORT PARENT_PID`."""
    return _bootstrap(argv[0], argv[1], int(argv[2]), int(argv[3]))
