"""`curate generate` with a model: the cost said before any call (--dry-run writes nothing), questions
written from seed chunks and asked closed-book, a budget that stops calls before it is exceeded, a
run started again answered from the cache; the logic against a scripted endpoint, the HTTP path
against the real local model server."""

import json
import re
from pathlib import Path

import pytest

from curate.dataset import DatasetStore
from curate.records.generated import GenerateRun
from tests.support.servers import ScriptedServer

HANDBOOK = Path(__file__).resolve().parents[3] / "examples" / "handbook"
PASSAGE = re.compile(r"(?:Passage|片段)(?: 1)?(?: \(source: [^)]*\))?[:：]\n(.+?)\n\n(?:Write|请|Passage 2|片段 2)", re.S)


def first_sentence(passage: str) -> str:
    body = "\n".join(line for line in passage.splitlines() if line.strip() and not line.startswith("#"))
    return re.split(r"(?<=[.。])\s*", body.strip())[0].lstrip("- ")


def writer(knows: str = "nothing"):
    """A scripted model: a question quoting the passage's first sentence; closed-book, it knows `knows`."""
    def reply(messages):
        text = messages[1]["content"]
        if text.startswith(("Question:", "问题：")):
            return json.dumps({"answer": knows})
        quote = first_sentence(PASSAGE.search(text).group(1))
        chinese = "片段" in text[:40]
        question = f"{quote[:20]} 是什么情况？" if chinese else f"What does the handbook say about {quote[:30]}?"
        return json.dumps({"question": question, "answer": quote,
                           "key_points": [{"point": quote[:60], "quote": quote}]})
    return reply


@pytest.fixture
def scripted(curate):
    server = ScriptedServer(writer(), usage={"prompt_tokens": 300, "completion_tokens": 60, "total_tokens": 360})
    with open(curate.workspace.config_path, "a", encoding="utf-8") as config:
        config.write(f'\n[generator]\nbase_url = "{server.base_url}"\nmodel = "writer"\n'
                     '[generator.prices.writer]\ninput = 2.0\noutput = 8.0\n')
    curate("kb", "ingest", HANDBOOK / "docs", "--name", "handbook")
    yield curate, server
    server.close()


def test_dry_run_says_calls_tokens_and_cost_and_writes_nothing(scripted):
    curate, server = scripted
    out = curate("generate", "--dataset", "gen", "--kb", "handbook", "--n", "6", "--types", "single,confusable",
                 "--dry-run").stdout
    assert "write questions" in out and "closed-book check (mined questions)" in out
    assert re.search(r"cost at most: \$\d+\.\d{4} \(writer, prices from curate.toml\)", out)
    assert server.requests == 0
    assert not (curate.workspace.datasets_dir / "gen").exists()


def test_written_questions_are_filtered_kept_and_a_second_run_pays_nothing(scripted):
    curate, server = scripted
    result = curate("generate", "--dataset", "gen", "--kb", "handbook", "--n", "6", "--types", "single,confusable")
    items = DatasetStore(curate.workspace).items("gen")
    written = [i for i in items if i.generation.method == "llm"]
    assert written and all(i.qtype == "single" and i.generation.model == "writer" for i in written)
    assert all(i.generation.prompt_version and i.generation.seed_chunks for i in written)
    assert all(i.evidence[0].chunk_ids and i.evidence[0].text in i.reference_answer for i in written)
    record = GenerateRun.read(next((curate.workspace.datasets_dir / "gen" / "generated").iterdir()) / "run.json")
    assert record.calls["requests"] == server.requests > 0 and record.cost == pytest.approx(
        server.requests * (300 * 2.0 + 60 * 8.0) / 1e6)
    assert "model writer:" in result.stdout and "closed-book check: asked writer without context" in result.stdout
    sent = server.requests
    again = curate("generate", "--dataset", "gen", "--kb", "handbook", "--n", "6", "--types", "single,confusable")
    assert server.requests == sent and "added 0 items" in again.stdout   # every answer from the cache


def test_a_question_the_model_answers_closed_book_is_dropped_unless_kept(curate):
    # a model that has read the handbook: asked about LG-4031 alone, it states the handbook's facts
    line = ("LG-4031: route scope not granted; the key does not include the route's scope, the request is never "
            "forwarded; new scopes take effect within 60 seconds, no restart.")
    server = ScriptedServer(writer(knows="I do not know."))
    try:
        def knowing(messages):
            text = messages[1]["content"]
            if text.startswith("Question:") and "LG-4031" in text:
                return json.dumps({"answer": line})
            return writer(knows="I do not know.")(messages)
        server.reply = knowing
        with open(curate.workspace.config_path, "a", encoding="utf-8") as config:
            config.write(f'\n[generator]\nbase_url = "{server.base_url}"\nmodel = "writer"\n')
        curate("kb", "ingest", HANDBOOK / "docs", "--name", "handbook")
        curate("generate", "--dataset", "gen", "--kb", "handbook", "--n", "30", "--types", "confusable")
        folder = next((curate.workspace.datasets_dir / "gen" / "generated").iterdir())
        lines = [json.loads(line) for line in (folder / "candidates.jsonl").read_text(encoding="utf-8").splitlines()]
        known = [c for c in lines if c["question"] == "What does LG-4031 mean?"][0]
        assert known["filters"]["closed_book"]["passed"] is False and not known["kept"]
        kept = curate("generate", "--dataset", "kept", "--kb", "handbook", "--n", "30", "--types", "confusable",
                      "--keep-closed-book")
        by_question = {i.question: i for i in DatasetStore(curate.workspace).items("kept")}
        assert "added" in kept.stdout and by_question["What does LG-4031 mean?"].tags == ["closed-book"]
        assert all(i.tags == [] for q, i in by_question.items() if q != "What does LG-4031 mean?")
    finally:
        server.close()


def test_a_budget_stops_calls_before_it_is_exceeded_and_says_so(scripted):
    curate, server = scripted
    result = curate("generate", "--dataset", "gen", "--kb", "handbook", "--n", "8", "--types", "single",
                    "--budget-tokens", "1500")
    assert "seeds gave no question" in result.stderr and "budget" in result.stderr
    record = GenerateRun.read(next((curate.workspace.datasets_dir / "gen" / "generated").iterdir()) / "run.json")
    assert sum(record.tokens.values()) == server.requests * 360 <= 1500 < (server.requests + 1) * 360 + 600
    assert record.budget and server.requests < record.seeds
    assert any("budget" in why for why in record.not_written.values())


def test_a_usd_budget_without_a_price_is_one_line(curate):
    server = ScriptedServer(writer())
    try:
        with open(curate.workspace.config_path, "a", encoding="utf-8") as config:
            config.write(f'\n[generator]\nbase_url = "{server.base_url}"\nmodel = "unpriced"\n')
        curate("kb", "ingest", HANDBOOK / "docs", "--name", "handbook")
        bad = curate("generate", "--dataset", "gen", "--types", "single", "--budget", "0.5", code=2)
        assert len(bad.stderr.strip().splitlines()) == 1 and "price" in bad.stderr
        assert server.requests == 0
    finally:
        server.close()


def test_the_real_local_model_writes_through_the_http_path(curate, llama):
    with open(curate.workspace.config_path, "a", encoding="utf-8") as config:
        config.write(f'\n[generator]\nbase_url = "{llama.base_url}"\nmodel = "smollm2"\n'
                     'response_format = "json_schema"\nmax_tokens = 300\n')
    curate("kb", "ingest", HANDBOOK / "docs", "--name", "handbook")
    result = curate("generate", "--dataset", "gen", "--kb", "handbook", "--n", "2", "--types", "single")
    record = GenerateRun.read(next((curate.workspace.datasets_dir / "gen" / "generated").iterdir()) / "run.json")
    assert record.state == "complete" and record.model == "smollm2" and record.calls["requests"] >= 3
    # the 135M model writes poorly: each seed either became a candidate, filtered with reasons, or says why not
    assert record.seeds == 3 and len(record.not_written) + sum(
        row.get("candidates", 0) for row in record.by_type.values()) == 3
    assert "model smollm2:" in result.stdout


def test_killed_mid_generation_and_started_again_it_pays_for_no_answer_twice(scripted):
    import sys
    from tests.support.processes import Watched, wait_until
    curate, server = scripted
    server.delay = 0.2
    text = curate.workspace.config_path.read_text(encoding="utf-8")
    curate.workspace.config_path.write_text(text.replace('model = "writer"\n', 'model = "writer"\nconcurrency = 1\n', 1),
                                            encoding="utf-8")
    args = [sys.executable, "-c", "from curate.cli.main import main; main()", "--workspace",
            str(curate.workspace.root), "generate", "--dataset", "gen", "--kb", "handbook", "--n", "6",
            "--types", "single"]
    first = Watched(args)
    wait_until(lambda: server.requests >= 3, "three answers written")
    first.kill()                                      # SIGKILL, one request perhaps in flight
    answered = server.requests
    assert not (curate.workspace.datasets_dir / "gen" / "items.jsonl").exists()   # nothing half-added
    server.delay = 0.0

    def record():
        return GenerateRun.read(next((curate.workspace.datasets_dir / "gen" / "generated").iterdir()) / "run.json")
    curate("generate", "--dataset", "gen", "--kb", "handbook", "--n", "6", "--types", "single")
    resumed = record()
    curate("generate", "--dataset", "gen", "--kb", "handbook", "--n", "6", "--types", "single")
    needed = record().calls["from the cache"]         # a third run: every answer the run needs, all cached
    assert record().calls["requests"] == 0 and resumed.state == "complete"
    # the killed run's answers came from the cache (but the one in flight when it died): none paid twice
    assert resumed.calls["from the cache"] >= answered - 1
    assert resumed.calls["requests"] + resumed.calls["from the cache"] == needed
    assert server.requests <= needed + 1


def test_two_runs_at_once_add_no_question_twice(scripted):
    # both ask the model at the same time (no lock held); each decides duplicates under the dataset's lock
    import sys
    from tests.support.processes import Watched
    curate, server = scripted
    server.delay = 0.05
    runs = [Watched([sys.executable, "-c", "from curate.cli.main import main; main()", "--workspace",
                     str(curate.workspace.root), "generate", "--dataset", "gen", "--kb", "handbook", "--n", "10",
                     "--types", "single,confusable", "--seed", str(seed)]) for seed in (1, 2)]
    for run in runs:
        out, err = run.communicate()
        assert run.returncode == 0, err
    items = DatasetStore(curate.workspace).items("gen")
    assert len(items) > 10 and len({i.question for i in items}) == len(items) == len({i.id for i in items})
