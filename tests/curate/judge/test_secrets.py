"""Secrets stay secret: a key given where its variable's NAME goes, or written into curate.toml, is
refused in one line that never repeats it; URLs with credentials are refused; what a server echoes
of the key is masked before it reaches a file or the output."""

import json
import threading
from http.server import BaseHTTPRequestHandler

import pytest

from curate.annotate import state
from curate.errors import CurateError, InputError
from curate.judge.client import Judge, JudgeFailure
from curate.judge.config import JudgeConfig, resolve
from curate.judge.prompts import Prompt
from curate.credentials import check_base_url, check_key_env_name, looks_like_secret, mask
from curate.checks.consistency import CONSISTENCY

from tests.support.servers import ThreadingHTTPServer, free_port

KEY = "sk-live-4fQ9zX2pL7mN3vB8kR1tY6wE"


def _one_line_without(result, *secrets):
    """Assert the command said one line on stderr and repeated none of `secrets` anywhere."""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
    for secret in secrets:
        assert secret not in result.stdout and secret not in result.stderr
    return result.stderr


def _add_to_judge(workspace, line: str) -> int:
    """Add `line` to curate.toml right after [judge]'s api_key_env setting; return its line number."""
    lines = workspace.config_path.read_text(encoding="utf-8").splitlines()
    at = next(n for n, text in enumerate(lines) if text.startswith("api_key_env = ")) + 1
    lines.insert(at, line)
    workspace.config_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return at + 1


# -- the functions --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "MY_JUDGE_KEY", "DASHSCOPE_API_KEY", "HF_TOKEN",
                                  "AZURE_OPENAI_API_KEY_2", "qwen2_5_72b_instruct_key", "GroqKey"])
def test_ordinary_names_are_names(name):
    assert not looks_like_secret(name)
    assert check_key_env_name(name, field="--judge-api-key-env") == name


@pytest.mark.parametrize("key", [KEY, "sk-proj-abc123def456", "sk_live_51Habc123XYZ", "hf_aBcDeFgHiJkLmNoPqRsTuV",
                                 "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "github_pat_11ABCDEFG0123456789",
                                 "xoxb-1234-5678-abcdef", "AKIAIOSFODNN7EXAMPLE", "AIzaSyD-9tSrke72PouQMnMX",
                                 "glpat-xxxxxxxxxxxxxxxxxxxx", "gsk_8fJ2kL9mN4pQ7rS1tU3v", "xai-AbC123dEf456",
                                 "eyJhbGciOiJIUzI1NiJ9", "c10c0baf8d795b953641edb64e714c48", "my key", "$OPENAI_API_KEY"])
def test_keys_and_non_names_are_refused_without_being_repeated(key):
    assert looks_like_secret(key)
    with pytest.raises(InputError) as caught:
        check_key_env_name(key, field="--judge-api-key-env", file="curate.toml", line=7)
    assert str(caught.value) == ("curate.toml:7: field '--judge-api-key-env': looks like a key, not the NAME of an "
                                 "environment variable: put the key in the environment (export OPENAI_API_KEY=...) "
                                 "and give its name here")
    assert key not in str(caught.value)


def test_mask_hides_the_key_and_its_truncated_echoes():
    said = f"Incorrect API key provided: {KEY}. Also seen as {KEY[:12]}****{KEY[-4:]} and {KEY[:9]}..."
    masked = mask(said, [KEY, None, ""])
    assert masked == "Incorrect API key provided: ***. Also seen as *** and ***..."
    assert KEY[:8] not in masked


@pytest.mark.parametrize("url", ["https://user:Zq7secret@judge.example/v1", "https://judge.example/v1?api_key=Zq7secret",
                                 "https://judge.example/v1?region=eu&Access-Token=Zq7secret",
                                 "https://Zq7secret@judge.example/v1"])
def test_urls_with_credentials_are_refused_naming_only_the_host(url):
    with pytest.raises(InputError, match=r"^field 'base_url': the URL of judge\.example carries credentials") as caught:
        check_base_url(url, field="base_url")
    assert "Zq7secret" not in str(caught.value)
    assert check_base_url("https://judge.example/v1?region=eu", field="base_url") == "https://judge.example/v1?region=eu"


def test_public_settings_mask_credentials_that_slipped_through():
    config = JudgeConfig(base_url="https://user:Zq7secret@judge.example/v1?key=Zq7secret", model="m", api_key_env=KEY)
    public = json.dumps(config.public())
    assert "Zq7secret" not in public and KEY not in public
    assert config.public()["base_url"] == "https://user:***@judge.example/v1?key=%2A%2A%2A"


# -- where keys are refused -----------------------------------------------------------------------

def test_init_refuses_a_key_for_the_variable_name_and_writes_nothing(curate, tmp_path):
    target = tmp_path / "new"
    result = curate("init", target, "--judge-api-key-env", KEY, code=2)
    assert _one_line_without(result, KEY) == (
        "error: field '--judge-api-key-env': looks like a key, not the NAME of an environment variable: "
        "put the key in the environment (export OPENAI_API_KEY=...) and give its name here\n")
    assert not target.exists()


def test_init_refuses_credentials_in_the_base_url_and_writes_nothing(curate, tmp_path):
    target = tmp_path / "new"
    result = curate("init", target, "--judge-base-url", "https://user:s3cret-pass@judge.example/v1", code=2)
    assert "carries credentials (user:password@)" in _one_line_without(result, "s3cret-pass")
    assert not target.exists()


def test_init_into_an_existing_folder_changes_nothing(curate, tmp_path):
    target = tmp_path / "existing"
    target.mkdir()
    curate("init", target, "--judge-api-key-env", KEY, code=2)
    assert list(target.iterdir()) == []


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "MY_JUDGE_KEY", "DASHSCOPE_API_KEY"])
def test_ordinary_names_are_accepted_by_init_and_resolve(curate, tmp_path, monkeypatch, name):
    curate("init", tmp_path / name, "--judge-api-key-env", name)
    assert f'api_key_env = "{name}"' in (tmp_path / name / "curate.toml").read_text(encoding="utf-8")
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", "http://127.0.0.1:8080/v1")   # a new workspace has no judge
    monkeypatch.setenv("CURATE_JUDGE_MODEL", "judge")
    assert resolve(curate.workspace, api_key_env=name).api_key_env == name
    monkeypatch.setenv("CURATE_JUDGE_API_KEY_ENV", name)
    assert resolve(curate.workspace).api_key_env == name


def test_a_key_in_curate_toml_is_refused_with_file_and_line(handbook):
    line = _add_to_judge(handbook.workspace, f'api_key = "{KEY}"')
    result = handbook("check-consistency", "--dataset", "faq", code=2)
    assert _one_line_without(result, KEY) == (
        f"error: {handbook.workspace.config_path}:{line}: field 'judge.api_key': keys belong in the environment, "
        "not in curate.toml; name the variable with api_key_env\n")
    assert KEY not in handbook("kb", "list", code=2).stderr  # every command in the workspace refuses it


@pytest.mark.parametrize("setting", ["token", "password", "secret", "key"])
def test_any_setting_named_like_a_credential_is_refused(workspace, setting):
    text = workspace.config_path.read_text(encoding="utf-8")
    workspace.config_path.write_text(text + f'\n[argilla]\n{setting} = "abc123"\n', encoding="utf-8")
    line = len(text.splitlines()) + 3
    with pytest.raises(InputError) as caught:
        workspace.config()
    assert str(caught.value) == (f"{workspace.config_path}:{line}: field 'argilla.{setting}': keys belong in the "
                                 "environment, not in curate.toml")


def test_a_key_as_api_key_env_in_curate_toml_is_refused_with_its_line(workspace):
    text = workspace.config_path.read_text(encoding="utf-8")
    workspace.config_path.write_text(text.replace('api_key_env = "OPENAI_API_KEY"', f'api_key_env = "{KEY}"'),
                                     encoding="utf-8")
    line = next(n for n, t in enumerate(text.splitlines(), start=1) if t.startswith("api_key_env"))
    with pytest.raises(InputError, match=rf"curate\.toml:{line}: field 'judge\.api_key_env': looks like a key") as caught:
        resolve(workspace)
    assert KEY not in str(caught.value)


def test_credentials_in_the_base_url_of_curate_toml_are_refused_with_its_line(workspace):
    text = workspace.config_path.read_text(encoding="utf-8")
    workspace.config_path.write_text(text.replace('# base_url = "http://127.0.0.1:8080/v1"',
                                                  'base_url = "https://user:pass@judge.example/v1"'), encoding="utf-8")
    line = next(n for n, t in enumerate(text.splitlines(), start=1) if t.startswith("# base_url"))
    with pytest.raises(InputError, match=rf"curate\.toml:{line}: field 'judge\.base_url': the URL of judge\.example"):
        workspace.config()


def test_the_variable_naming_the_key_variable_is_checked_too(handbook, monkeypatch):
    monkeypatch.setenv("CURATE_JUDGE_API_KEY_ENV", KEY)
    result = handbook("check-consistency", "--dataset", "faq", code=2)
    assert _one_line_without(result, KEY).startswith(
        "error: field 'CURATE_JUDGE_API_KEY_ENV': looks like a key, not the NAME of an environment variable")


def test_the_flag_is_checked_and_named(handbook):
    result = handbook("check-consistency", "--dataset", "faq", "--judge-api-key-env", KEY, code=2)
    assert _one_line_without(result, KEY).startswith("error: field '--judge-api-key-env': looks like a key")


def test_a_base_url_with_credentials_is_refused_from_flag_and_environment(handbook, monkeypatch):
    result = handbook("check-consistency", "--dataset", "faq", "--judge-base-url", "https://user:Zq7secret@host/v1",
                      code=2)
    assert _one_line_without(result, "Zq7secret").startswith(
        "error: field '--judge-base-url': the URL of host carries credentials (user:password@)")
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", "https://host/v1?token=Zq7secret")
    with pytest.raises(InputError, match=r"^field 'CURATE_JUDGE_BASE_URL': .*\(query parameter token\)"):
        resolve(handbook.workspace)


# -- what servers echo ----------------------------------------------------------------------------

class EchoingServer:
    """A judge that refuses every request with HTTP 401, quoting the key it was sent, whole and cut."""

    def __init__(self):
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                sent = self.headers["Authorization"].removeprefix("Bearer ")
                body = json.dumps({"error": {
                    "message": f"Incorrect API key provided: {sent} (shown as {sent[:12]}****{sent[-4:]}).",
                    "type": "invalid_request_error", "code": "invalid_api_key"}}).encode("utf-8")
                self.send_response(401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._http = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self._http.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._http.server_address[1]}/v1"
        threading.Thread(target=self._http.serve_forever, daemon=True).start()

    def close(self):
        self._http.shutdown()
        self._http.server_close()


@pytest.fixture
def echoing():
    server = EchoingServer()
    yield server
    server.close()


def test_a_key_echoed_by_the_judge_reaches_no_file_and_no_output(handbook, echoing, monkeypatch, tmp_path):
    monkeypatch.setenv("MY_JUDGE_KEY", KEY)
    report_path = handbook.workspace.root / "consistency.json"
    result = handbook("check-consistency", "--dataset", "faq", "--judge-base-url", echoing.base_url,
                      "--judge-model", "judge", "--judge-api-key-env", "MY_JUDGE_KEY", "--report", report_path, code=1)
    assert "11 checks unscored" in result.stdout and "11 HTTP 401 from the judge" in result.stdout
    outcomes = json.loads(report_path.read_text(encoding="utf-8"))["outcomes"]
    assert {o["unscored"] for o in outcomes} == {"HTTP 401 from the judge (Incorrect API key provided: *** "
                                                 "(shown as ***).)"}
    texts = [result.stdout, result.stderr] + [p.read_text(encoding="utf-8", errors="replace")
                                              for p in handbook.workspace.root.rglob("*") if p.is_file()]
    for text in texts:
        assert KEY not in text and KEY[:12] not in text


def test_the_judge_masks_reasons_from_any_transport(workspace, monkeypatch):
    monkeypatch.setenv("MY_JUDGE_KEY", KEY)

    def leaky(messages):
        raise JudgeFailure(f"proxy said: bad key {KEY}")

    judge = Judge(JudgeConfig(base_url="http://unused/v1", model="m", api_key_env="MY_JUDGE_KEY"),
                  workspace.root / "cache", transport=leaky)
    prompt: Prompt = CONSISTENCY.get("answers_question", "en")
    assert judge.ask(prompt, {"question": "q", "answer": "a"}).unscored == "proxy said: bad key ***"


def test_argilla_errors_are_masked_of_the_key(monkeypatch):
    class FakeArgillaModule:
        class Argilla:
            def __init__(self, api_url, api_key, timeout):
                raise ConnectionError(f"401 Unauthorized for key {api_key}")

    monkeypatch.setattr(state, "argilla_sdk", lambda: FakeArgillaModule)
    monkeypatch.setenv("ARGILLA_API_KEY", KEY)
    with pytest.raises(CurateError) as caught:
        state.connect("http://127.0.0.1:9")
    assert str(caught.value) == ("cannot reach Argilla at http://127.0.0.1:9: ConnectionError: "
                                 "401 Unauthorized for key ***")


# -- keys in URLs, and judges that echo the Authorization header in a verdict ---------------------

@pytest.mark.parametrize(("url", "says"), [
    (f"https://judge.example/v1#{KEY}", "a #fragment, which an API URL never has"),
    (f"https://judge.example/v1?x-api-key={KEY}", "query parameter x-api-key"),
    ("https://judge.example/v1?Subscription-Key=Zq7secret", "query parameter Subscription-Key"),
    (f"https://judge.example/v1?auth={KEY}", "query parameter auth"),
    (f"https://judge.example/v1?{KEY}", "a query parameter"),
    (f"https://judge.example/{KEY}/v1", "a part of its path that looks like a key"),
    (f"https://{KEY}@judge.example/v1", "user:password@")])
def test_a_key_anywhere_in_the_url_is_refused_without_being_repeated(url, says):
    with pytest.raises(InputError) as caught:
        check_base_url(url, field="base_url")
    assert str(caught.value).startswith(f"field 'base_url': the URL of judge.example carries credentials ({says})")
    assert KEY not in str(caught.value) and "Zq7secret" not in str(caught.value)
    public = json.dumps(JudgeConfig(base_url=url, model="m").public())
    assert KEY not in public and "Zq7secret" not in public


@pytest.mark.parametrize("url", ["https://judge.example/v1?api-version=2024-02-15-preview",
                                 "https://x.openai.azure.com/openai/deployments/gpt-4o-mini-2024-07-18",
                                 "https://dashscope.aliyuncs.com/compatible-mode/v1", "http://127.0.0.1:8080/v1#"])
def test_ordinary_api_urls_are_accepted(url):
    assert check_base_url(url, field="base_url") == url


def test_a_fragment_key_from_the_environment_is_refused_before_anything_is_written(handbook, monkeypatch):
    monkeypatch.setenv("CURATE_JUDGE_BASE_URL", f"https://judge.example/v1#{KEY}")
    before = sorted(p for p in handbook.workspace.root.rglob("*"))
    result = handbook("check-consistency", "--dataset", "faq", code=2)
    assert _one_line_without(result, KEY).startswith("error: field 'CURATE_JUDGE_BASE_URL': the URL of judge.example "
                                                     "carries credentials (a #fragment")
    assert sorted(p for p in handbook.workspace.root.rglob("*")) == before


def _echo_authorization(messages, headers):
    """A judge that answers every check, quoting the Authorization header it was sent in its reason."""
    sent = next(value for name, value in headers.items() if name.lower() == "authorization")
    text = messages[-1]["content"]
    answer = ({"verdict": "yes"} if '"yes" or "no"' in text or '"yes" 或 "no"' in text else
              {"verdict": "supported"} if "not_supported" in text else
              {"verdict": "consistent"} if "contradicts" in text else {"verdict": "unanswerable", "chunk": None})
    return json.dumps({**answer, "reason": f"received {sent}; key {sent.removeprefix('Bearer ')[:12]}..."})


def test_a_verdict_that_echoes_the_authorization_header_is_cached_without_the_key(handbook, monkeypatch):
    from tests.support.servers import ScriptedServer

    server = ScriptedServer(_echo_authorization, with_headers=True)
    try:
        monkeypatch.setenv("MY_JUDGE_KEY", KEY)
        report_path = handbook.workspace.root / "consistency.json"
        result = handbook("check-consistency", "--dataset", "faq", "--judge-base-url", server.base_url,
                          "--judge-model", "judge", "--judge-api-key-env", "MY_JUDGE_KEY", "--report", report_path)
        assert server.headers and all({n.lower(): v for n, v in h.items()}["authorization"] == f"Bearer {KEY}"
                                      for h in server.headers)
        assert result.stderr.splitlines() == [
            "warning: 11 answers of the judge quoted its API key (an echoed Authorization header?): the key was "
            "replaced by *** before they were cached or used"]
        cached = [json.loads(p.read_text(encoding="utf-8")) for p in (handbook.workspace.root / "cache").rglob("*.json")]
        assert len(cached) == 11 and {c["output"]["reason"] for c in cached} == {"received Bearer ***; key ***..."}
        texts = [result.stdout, result.stderr] + [p.read_text(encoding="utf-8", errors="replace")
                                                  for p in handbook.workspace.root.rglob("*") if p.is_file()]
        assert not [t for t in texts if KEY in t or KEY[:12] in t]
        again = handbook("check-consistency", "--dataset", "faq", "--judge-base-url", server.base_url,
                         "--judge-model", "judge", "--judge-api-key-env", "MY_JUDGE_KEY")
        assert again.stderr == "" and "11 from cache" in again.stdout   # the cache holds no key to scrub
    finally:
        server.close()


def test_a_verdict_with_a_key_given_twice_is_unparsable_not_the_last_value(workspace):
    judge = Judge(JudgeConfig(base_url="http://unused/v1", model="m"), workspace.root / "cache",
                  transport=lambda messages: ('{"verdict": "yes", "verdict": "no", "reason": "r"}', None, 1, 1))
    verdict = judge.ask(CONSISTENCY.get("answers_question", "en"), {"question": "q", "answer": "a"})
    assert verdict.output is None and verdict.unscored.startswith("unparsable answer: key 'verdict' given twice")
