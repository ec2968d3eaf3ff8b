"""No key reaches a run: an HTTP target whose URL carries one is refused before anything is written, and a
judge that echoes its Authorization header in its verdicts has the key masked out of the cache and the run."""

import json

from click.testing import CliRunner

from evalrun.cli.main import cli as evalrun_cli
from tests.evalrun.scoring.test_generation import _reply
from tests.support.servers import ScriptedServer

KEY = "sk-live-4fQ9zX2pL7mN3vB8kR1tY6wE"


def _files(root):
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_an_http_target_whose_url_carries_a_key_is_refused_and_nothing_is_written(released, tmp_path):
    root = released.workspace.root
    before = _files(root)
    for url in (f"https://rag.example/ask#{KEY}", f"https://rag.example/ask?api_key={KEY}",
                f"https://user:{KEY}@rag.example/ask"):
        result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
            "--workspace", str(root), "run", "--dataset", "faq@v1", "--target", url, "--out", str(tmp_path / "run")])
        assert result.exit_code == 2, result.stderr
        assert result.stderr.startswith("error: field 'target': the URL of rag.example carries credentials (")
        assert result.stderr.count("\n") == 1 and KEY not in result.stderr + result.stdout
    assert _files(root) == before and not (tmp_path / "run").exists()


def test_a_judge_echoing_its_authorization_header_leaves_no_key_in_the_run(released, tmp_path, monkeypatch):
    def echo(messages, headers):
        sent = next(value for name, value in headers.items() if name.lower() == "authorization")
        verdict = _reply(messages)
        if isinstance(verdict, str) and verdict.startswith("{"):
            verdict = json.dumps({**json.loads(verdict), "reason": f"checked with {sent}"})
        return verdict

    server = ScriptedServer(echo, with_headers=True)
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", server.base_url)
    monkeypatch.setenv("CURATE_JUDGE_API_KEY_ENV", "MY_JUDGE_KEY")
    monkeypatch.setenv("MY_JUDGE_KEY", KEY)
    try:
        result = CliRunner(mix_stderr=False).invoke(evalrun_cli, [
            "--workspace", str(released.workspace.root), "run", "--dataset", "faq@v1",
            "--target", "tests.support.targets:perfect", "--out", str(tmp_path / "run")])
    finally:
        server.close()
    assert result.exit_code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "quoted its API key" in line]
    assert len(warnings) == 1 and warnings[0].startswith("evalrun: warning: ")
    scrubbed = int(warnings[0].split("warning: ")[1].split()[0])
    cached = [json.loads(p.read_text(encoding="utf-8"))
              for p in (released.workspace.root / "cache" / "judge").rglob("*.json")]
    reasons = [c["output"]["reason"] for c in cached if c["output"]]
    assert scrubbed == len(reasons) > 0 and set(reasons) == {"checked with Bearer ***"}
    for path, data in {**_files(released.workspace.root), **_files(tmp_path / "run")}.items():
        assert KEY.encode() not in data and KEY[:12].encode() not in data, path
