"""The judge client and check-consistency: the real HTTP path through a real small model, and
the logic through a scripted server (a 135M model's verdicts mean nothing)."""

import json
import threading

import pytest

from curate.checks.consistency import CONSISTENCY, check_consistency
from curate.dataset import DatasetStore
from curate.errors import InputError
from curate.judge.client import Judge, openai_transport, reason_kind
from curate.judge.config import JudgeConfig, resolve
from curate.release import release

from tests.support.processes import PATIENCE, wait_until   # PATIENCE: a busy machine answers slowly
from tests.support.servers import LlamaServer, ScriptedServer


def _verdict_for(messages):
    """Scripted judge: negative verdicts where the item text asks for them."""
    text = messages[-1]["content"]
    if "sentence-transformers" in text:
        return "not json"
    if '"yes" or "no"' in text or '"yes" 或 "no"' in text:
        return json.dumps({"verdict": "no" if "SAML" in text or "CSV" in text else "yes", "reason": "scripted"})
    if "not_supported" in text:
        return json.dumps({"verdict": "not_supported" if "重新登录" in text else "supported", "reason": "scripted"})
    if "contradicts" in text:
        return json.dumps({"verdict": "consistent", "reason": "scripted"})
    return json.dumps({"verdict": "answerable" if "SAML" in text else "unanswerable", "chunk": None,
                       "reason": "the passage covers it"})


@pytest.fixture
def scripted():
    server = ScriptedServer(_verdict_for)
    yield server
    server.close()


def _config(server, **kwargs) -> JudgeConfig:
    return JudgeConfig(base_url=server.base_url, model=kwargs.pop("model", "judge"), **kwargs)


# -- logic, through the scripted server ------------------------------------------------------------

def test_flagged_items_get_needs_rewrite_with_the_judges_reasons(handbook, scripted):
    report = check_consistency(handbook.workspace, dataset="faq", config=_config(scripted, concurrency=4))
    assert report.flagged == {"t-1": ["key_point_supported (key point 2): scripted"],
                              "t-5": ["unanswerable_check (answerability): the passage covers it"]}
    items = {i.id: i for i in DatasetStore(handbook.workspace).items("faq")}
    assert items["t-1"].status == items["t-5"].status == "needs_rewrite"
    assert items["t-1"].status_history[-1].reason == "consistency: key_point_supported (key point 2): scripted"
    assert items["t-2"].status == "draft"
    # 4 answers x 2 checks + t-1's 2 key points + t-5's unanswerable check
    assert report.record.tasks == 11 and scripted.requests == 11
    assert report.record.judge["model"] == "judge" and "answers_question/zh" in report.record.prompt_versions


def test_second_run_is_served_from_the_cache(handbook, scripted):
    config = _config(scripted)
    check_consistency(handbook.workspace, dataset="faq", config=config)
    before = scripted.requests
    again = check_consistency(handbook.workspace, dataset="faq", config=config)
    assert scripted.requests == before and again.judge.stats.requests == 0 and again.judge.stats.cache_hits == 11


def test_cli_exit_code_and_release_manifest_record(handbook, scripted, tmp_path):
    path = tmp_path / "consistency.json"
    result = handbook("check-consistency", "--dataset", "faq", "--judge-base-url", scripted.base_url,
                      "--judge-model", "judge", "--report", path, code=1)
    assert result.stdout.startswith("faq: 5 items, 11 checks x 1: 2 items flagged, 0 unstable, 0 checks unscored")
    assert "t-5" in result.stdout and "needs_rewrite" in result.stdout
    assert json.loads(path.read_text())["flagged"] == ["t-1", "t-5"]
    manifest = release(handbook.workspace, dataset="faq", message="checked")
    assert manifest.checks.consistency.judge["base_url"] == scripted.base_url
    assert manifest.checks.consistency.current is True


def test_repeat_reports_verdicts_that_flip(handbook):
    calls = {"n": 0}
    lock = threading.Lock()

    def flaky(messages):
        with lock:
            calls["n"] += 1
            n = calls["n"]
        if "Who can run the upgrade command?" in messages[-1]["content"] and '"yes" or "no"' in messages[-1]["content"]:
            return json.dumps({"verdict": "yes" if n % 2 else "no", "reason": "coin"})
        return _verdict_for(messages)

    server = ScriptedServer(flaky)
    try:
        report = check_consistency(handbook.workspace, dataset="faq", config=_config(server, concurrency=1), repeat=3)
    finally:
        server.close()
    assert report.unstable == {"t-4": ["answers_question (answer)"]}
    assert server.requests == 33 and report.record.outcome == "findings"


def test_failures_are_unscored_with_their_reason_never_a_verdict(handbook):
    state = {"n": 0}

    def troubled(messages):
        text = messages[-1]["content"]
        state["n"] += 1
        if "could not be read" in text:      # the repair request
            return "still not json"
        if "upstream timeout" in text:
            return 500
        if "LG-4031" in text:
            return "I cannot help with that."
        return _verdict_for(messages)

    server = ScriptedServer(troubled)
    try:
        report = check_consistency(handbook.workspace, dataset="faq",
                                   config=_config(server, max_retries=2, backoff=0.01))
    finally:
        server.close()
    reasons = {o.task.item_id + "/" + o.task.check: o.unscored for o in report.outcomes if o.unscored}
    assert reasons["t-1/answers_question"].startswith("unparsable answer")
    assert reasons["t-2/answer_against_evidence"] == reasons["t-2/answers_question"] == \
        "HTTP 500 from the judge (after 3 attempts)"
    assert report.judge.stats.retries == 2 * 2 and report.judge.stats.repairs >= 1
    assert "t-1" not in report.flagged  # an unparsable answer decides nothing
    assert report.unscored["unparsable answer"] >= 1 and report.unscored["HTTP 500 from the judge"] == 2


def test_timeouts_are_retried_then_unscored(handbook):
    server = ScriptedServer(_verdict_for, delay=0.5)
    try:
        judge = Judge(_config(server, timeout=0.1, max_retries=1, backoff=0.01), handbook.workspace.root / "c")
        verdict = judge.ask(CONSISTENCY.get("answers_question", "en"), {"question": "q", "answer": "a"})
    finally:
        server.close()
    assert verdict.output is None and verdict.unscored == "timeout after 0.1 s (after 2 attempts)"
    assert judge.stats.retries == 1 and judge.stats.requests == 2


def test_concurrency_stays_within_its_bound(handbook):
    """The judge's first requests are held until three are in flight together (then all answer at
    once): the bound is reached whatever the machine's speed, and never passed."""
    def together(messages):
        wait_until(lambda: server.max_in_flight >= 3, "three requests in flight", every=0.01)
        return _verdict_for(messages)

    server = ScriptedServer(together)
    try:
        report = check_consistency(handbook.workspace, dataset="faq", config=_config(server, concurrency=3))
    finally:
        server.close()
    assert server.max_in_flight == 3 and report.judge.stats.max_in_flight == 3


def test_chinese_items_get_the_chinese_prompt(handbook, scripted):
    check_consistency(handbook.workspace, dataset="faq", config=_config(scripted))
    judge = Judge(_config(scripted), handbook.workspace.root / "cache" / "judge")
    messages = CONSISTENCY.get("answers_question", "zh").messages({"question": "LG-4031 是什么意思？", "answer": "x"})
    assert messages[-1]["content"].startswith("问题：LG-4031 是什么意思？") and judge.config.model == "judge"


def test_cost_comes_from_the_price_table(handbook, scripted):
    config = _config(scripted, prices={"judge": (1.0, 2.0)})
    report = check_consistency(handbook.workspace, dataset="faq", config=config)
    assert report.judge.stats.cost == pytest.approx((11 * 10 * 1.0 + 11 * 5 * 2.0) / 1_000_000)


def test_settings_flags_beat_environment_beat_toml(workspace, monkeypatch):
    text = workspace.config_path.read_text(encoding="utf-8")
    workspace.config_path.write_text(text.replace('# base_url = "http://127.0.0.1:8080/v1"',
                                                  'base_url = "http://127.0.0.1:8080/v1"'), encoding="utf-8")
    monkeypatch.setenv("CURATE_JUDGE_MODEL", "from-env")
    monkeypatch.setenv("CURATE_JUDGE_TIMEOUT", "7")
    config = resolve(workspace)
    assert (config.base_url, config.model, config.timeout) == ("http://127.0.0.1:8080/v1", "from-env", 7.0)
    assert resolve(workspace, model="from-flag").model == "from-flag"
    monkeypatch.setenv("CURATE_JUDGE_TIMEOUT", "soon")
    with pytest.raises(InputError, match="not a number"):
        resolve(workspace)


def test_the_key_never_reaches_a_file(handbook, scripted, monkeypatch, tmp_path):
    secret = "sk-test-0123456789-secret"
    monkeypatch.setenv("MY_JUDGE_KEY", secret)
    report_path = tmp_path / "report.json"
    handbook("check-consistency", "--dataset", "faq", "--judge-base-url", scripted.base_url, "--judge-model", "judge",
             "--judge-api-key-env", "MY_JUDGE_KEY", "--report", report_path, code=1)
    sent = {k.lower(): v for k, v in scripted.headers[0].items()}
    assert sent["authorization"] == f"Bearer {secret}"                   # it was sent...
    release(handbook.workspace, dataset="faq", message="v1")
    files = [p for p in handbook.workspace.root.rglob("*") if p.is_file()] + [report_path]
    for path in files:                                                   # ...and written nowhere
        data = path.read_bytes().lower()
        assert secret.encode() not in data and b"bearer" not in data, path
        assert b'"authorization"' not in data and b"authorization:" not in data, path
    assert DatasetStore(handbook.workspace).meta("faq").checks.consistency.judge["api_key_env"] == "MY_JUDGE_KEY"


# -- the real HTTP path: llama.cpp's server with SmolLM2 -------------------------------------------

def _small(server, **kwargs) -> JudgeConfig:
    return JudgeConfig(base_url=server.base_url, model="smollm2", max_tokens=80, timeout=PATIENCE, **kwargs)


def test_real_server_answers_in_json_mode_then_the_cache_answers(handbook, llama):
    config = _small(llama, concurrency=2)
    first = check_consistency(handbook.workspace, dataset="faq", config=config)
    stats = first.judge.stats
    assert stats.requests >= 11 and stats.prompt_tokens > 0 and stats.completion_tokens > 0
    parsed = [o for o in first.outcomes if o.scored]
    assert parsed, "no answer of the real model could be parsed"
    for outcome in first.outcomes:  # each outcome is a verdict of its schema or unscored with a reason
        assert outcome.scored or reason_kind(outcome.unscored) in ("unparsable answer", "refusal")
    assert 1 <= stats.max_in_flight <= 2
    second = check_consistency(handbook.workspace, dataset="faq", config=config)
    assert second.judge.stats.requests == 0 and second.judge.stats.cache_hits == 11
    assert [o.scored for o in second.outcomes] == [o.scored for o in first.outcomes]


def test_server_killed_mid_run_leaves_unscored_items_and_no_crash(handbook):
    server = LlamaServer(parallel=1)
    config = _small(server, concurrency=1, max_retries=1)
    config = JudgeConfig(**{**config.__dict__, "backoff": 0.01})
    real = openai_transport(config)
    sent = {"n": 0}

    def killing_after_two(messages):
        sent["n"] += 1
        if sent["n"] == 3:
            server.close()
        return real(messages)

    report = check_consistency(handbook.workspace, dataset="faq", config=config, transport=killing_after_two)
    lost = [o for o in report.outcomes if o.unscored and o.unscored.startswith("connection failed")]
    assert len(lost) >= 8 and all(o.unscored.endswith("(after 2 attempts)") for o in lost)
    assert report.unscored["connection failed"] == len(lost)
    assert len([o for o in report.outcomes if o.verdicts[0].prompt_tokens]) <= 2


# -- honest outcomes ---------------------------------------------------------------------------------

def test_a_judge_that_answers_nothing_makes_the_check_incomplete_never_clean(handbook):
    from curate.release import release as make_release
    server = ScriptedServer(lambda messages: 401)          # every request: HTTP 401
    try:
        report = check_consistency(handbook.workspace, dataset="faq", config=_config(server, max_retries=0))
    finally:
        server.close()
    record = report.record
    assert record.outcome == "incomplete" and not record.clean
    assert record.counts["unscored"] == record.tasks == 11 and record.flagged == []
    manifest = make_release(handbook.workspace, dataset="faq", message="judge down")
    assert manifest.checks.consistency.outcome == "incomplete"
    result = handbook("check-consistency", "--dataset", "faq", "--judge-base-url", "http://127.0.0.1:9/v1",
                      "--judge-model", "judge", code=1)      # nothing answers there: not clean, exit 1
    assert "11 checks unscored" in result.stdout


def test_another_endpoint_or_model_is_never_served_the_first_ones_verdicts(handbook, scripted):
    check_consistency(handbook.workspace, dataset="faq", config=_config(scripted))
    other = ScriptedServer(_verdict_for)
    try:
        again = check_consistency(handbook.workspace, dataset="faq", config=_config(other))
        assert again.judge.stats.cache_hits == 0 and other.requests == 11
        bigger = check_consistency(handbook.workspace, dataset="faq", config=_config(other, max_tokens=1024))
        assert bigger.judge.stats.cache_hits == 0
        renamed = check_consistency(handbook.workspace, dataset="faq", config=_config(other, model="judge-2"))
        assert renamed.judge.stats.cache_hits == 0
        same = check_consistency(handbook.workspace, dataset="faq", config=_config(other))
        assert same.judge.stats.cache_hits == 11
    finally:
        other.close()


def test_the_response_models_are_built_before_judge_threads_parse_at_once():
    # openai builds its response models' schemas lazily, which is not thread-safe under pydantic 2.9:
    # the transport builds them first (in a fresh process, where nothing built them yet)
    import subprocess
    import sys
    code = ("from openai.types.chat import ChatCompletion, ChatCompletionMessage\n"
            "lazy = lambda: [type(m.__dict__.get('__pydantic_core_schema__')).__name__ for m in "
            "(ChatCompletion, ChatCompletionMessage)]\n"
            "before = lazy()\n"
            "from curate.judge.client import openai_transport\n"
            "from curate.judge.config import JudgeConfig\n"
            "openai_transport(JudgeConfig(base_url='http://127.0.0.1:9/v1', model='m'))\n"
            "print(before, lazy())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-800:]
    assert done.stdout.split() == ["['MockCoreSchema',", "'MockCoreSchema']", "['dict',", "'dict']"]


def test_a_usage_that_is_no_token_count_is_left_out_named_never_summed(handbook):
    # NaN in the judge's usage was an internal error (exit 3): the cache entry could not hold it
    nan = ScriptedServer(_verdict_for, usage={"prompt_tokens": float("nan"), "completion_tokens": 5})
    try:
        result = handbook("check-consistency", "--dataset", "faq", "--judge-base-url", nan.base_url,
                          "--judge-model", "judge", code=1)
    finally:
        nan.close()
    assert result.stdout.startswith("faq: 5 items, 11 checks x 1: 2 items flagged, 0 unstable, 0 checks unscored")
    assert "11 requests, 0 from cache, 0 retries, 0+0 tokens" in result.stdout
    assert ("11 judge replies reported a usage that is no token count, left out of the tokens and cost above (the "
            "verdicts stand): t-1 (answers_question, answer): the judge's usage left out: prompt_tokens nan is not a "
            "whole number;") in " ".join(result.stdout.split())

    def usage(messages):   # the questions about t-2 report a negative count and text; the others are sound
        text = messages[-1]["content"]
        if "upstream timeout" in text:
            return {"prompt_tokens": -25, "completion_tokens": "five"}
        return {"prompt_tokens": 10, "completion_tokens": 5}

    mixed = ScriptedServer(_verdict_for, usage=usage)
    try:
        report = check_consistency(handbook.workspace, dataset="faq", config=_config(mixed, model="other",
                                                                                      prices={"other": (1.0, 2.0)}))
    finally:
        mixed.close()
    stats, usage_record = report.judge.stats, report.record.usage
    t2 = [p for p in usage_record.usage_problems if p.startswith("t-2 ")]
    assert stats.usage_left_out == usage_record.usage_left_out == len(t2) == 2   # t-2's two questions
    assert t2[0] == ("t-2 (answers_question, answer): the judge's usage left out: prompt_tokens -25 is negative; "
                     "completion_tokens 'five' is not a number")
    assert (stats.prompt_tokens, stats.completion_tokens) == (10 * 9, 5 * 9)     # the 9 sound replies only
    assert stats.cost == pytest.approx((90 * 1.0 + 45 * 2.0) / 1_000_000)
