"""`python -m curate` is the `curate` command line: the same commands, output and exit codes."""

import subprocess
import sys
from pathlib import Path

import curate

ROOT = Path(__file__).resolve().parents[2]


def _curate(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "curate", *args], capture_output=True, text=True, cwd=cwd,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_python_m_curate_runs_the_command_line(tmp_path):
    assert _curate("--version", cwd=tmp_path).stdout.strip() == f"curate, version {curate.__version__}"
    made = _curate("init", "ws", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines()[0] == f"created workspace {(tmp_path / 'ws').resolve()} (curate.toml)"
    assert curate.open_workspace(tmp_path / "ws").root == (tmp_path / "ws").resolve()


def test_python_m_curate_says_an_error_in_one_line_and_exits_2(tmp_path):
    done = _curate("kb", "list", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: no curate.toml in {tmp_path.resolve()} or above; run `curate init` or pass --workspace"]
