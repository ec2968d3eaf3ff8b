"""Fixtures of the runner tests: a release of six unanswerable items, target modules written into
tmp_path, and a real local HTTP server answering as the test says."""

from __future__ import annotations

import json
import textwrap
import threading
import uuid
from http.server import BaseHTTPRequestHandler

import pytest

from curate.checks.leakage import check_leakage
from curate.release import release
from tests.support.servers import ThreadingHTTPServer

SIX = [f"u-{n}" for n in range(1, 7)]


@pytest.fixture
def six(handbook, tmp_path):
    """six@v1: six unanswerable items u-1..u-6 (question "Question u-N?"), checked for leakage."""
    source = tmp_path / "six.jsonl"
    source.write_text("".join(json.dumps({"id": i, "question": f"Question {i}?", "answerable": False}) + "\n"
                              for i in SIX))
    handbook("import", source, "--dataset", "six", "--source", "human", "--kb", "docs")
    check_leakage(handbook.workspace, ref="six", semantic=False)
    release(handbook.workspace, dataset="six", message="v1")
    return handbook.workspace


@pytest.fixture
def target_module(tmp_path, monkeypatch):
    """Write a target module into tmp_path (importable, a fresh name each time); return its name."""
    folder = tmp_path / "targets"
    folder.mkdir(exist_ok=True)
    monkeypatch.syspath_prepend(str(folder))

    def write(source: str) -> str:
        name = f"target_{uuid.uuid4().hex[:10]}"
        (folder / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        return name
    return write


class Server:
    """A real HTTP server on 127.0.0.1 whose POST handler is `answer(handler, body)`."""

    def __init__(self, answer):
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                try:
                    answer(self, body)
                except (BrokenPipeError, ConnectionResetError):  # the client stopped reading: as it should
                    pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}/rag"
        threading.Thread(target=self._http.serve_forever, args=(0.05,), daemon=True).start()

    def close(self):
        self._http.shutdown()
        self._http.server_close()


@pytest.fixture
def http_server():
    """Start Server(answer) for the test; every one started is closed after it."""
    started = []

    def start(answer) -> Server:
        started.append(Server(answer))
        return started[-1]
    yield start
    for server in started:
        server.close()


def send(handler, data: bytes, status: int = 200, headers: dict | None = None) -> None:
    """Answer with `data` and a Content-Length."""
    handler.send_response(status)
    for key, value in {"Content-Length": str(len(data)), **(headers or {})}.items():
        handler.send_header(key, value)
    handler.end_headers()
    handler.wfile.write(data)
