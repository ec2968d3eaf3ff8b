"""The rewrite probe's llm rule: a model's rephrasing is a variant only when it keeps every number, date, code
and negation, in the question's language; without a model each item says why; the real local model server
carries the requests (what a tiny model writes is not judged)."""

from __future__ import annotations

import json
import re

import evalrun
from curate import EvalItem
from evalrun.probes.paraphrase import NO_JUDGE, NO_MODEL, rephrase
from tests.support.servers import ScriptedServer

ITEMS = [EvalItem(id="q1", question="What does LG-4031 mean?", language="en", source="human"),
         EvalItem(id="q2", question="年付套餐购买后多少天内可以全额退款？", language="zh", source="human"),
         EvalItem(id="q3", question="Which error does LG-4032 stand for?", language="en", source="human")]
REPLIES = {"What does LG-4031 mean?": "Could you explain the error code LG-4031?",
           "年付套餐购买后多少天内可以全额退款？": "买了年付套餐以后，几天之内能全额退款？",
           "Which error does LG-4032 stand for?": "Which error is this code?"}    # drops LG-4032


def _configure(workspace, base_url: str, *extra: str) -> None:
    text = workspace.config_path.read_text(encoding="utf-8")
    text = text.replace('# base_url = "http://127.0.0.1:8080/v1"', f'base_url = "{base_url}"')
    text = text.replace('# model = "judge"', "\n".join(['model = "judge"', *extra]))
    workspace.config_path.write_text(text, encoding="utf-8")


def _reply(messages) -> str:
    asked = re.search(r"(?:Question|问题)：?:? ?(.*)\n", messages[-1]["content"]).group(1).strip()
    return json.dumps({"question": REPLIES[asked]}, ensure_ascii=False)


def test_a_rephrasing_is_kept_only_when_it_asks_the_same(workspace):
    server = ScriptedServer(_reply)
    try:
        _configure(workspace, server.base_url)
        found, usage = rephrase(workspace, ITEMS)
        assert found["q1"] == ("Could you explain the error code LG-4031?", "rephrased by the model")
        assert found["q2"][0] == "买了年付套餐以后，几天之内能全额退款？"
        assert found["q3"] == (None, "llm: the rephrasing dropped 4032")
        assert server.requests == 3 and usage.startswith("the model rephrased questions: 3 requests")
        again, usage = rephrase(workspace, ITEMS)            # cached: the model is asked nothing
        assert again == found and server.requests == 3 and "3 from the cache" in usage
    finally:
        server.close()


def test_without_a_model_every_item_says_why_and_nothing_is_sent(workspace):
    assert rephrase(workspace, ITEMS) == ({i.id: (None, NO_MODEL) for i in ITEMS}, None)
    server = ScriptedServer(_reply)
    try:
        _configure(workspace, server.base_url)
        assert rephrase(workspace, ITEMS, no_judge=True) == ({i.id: (None, NO_JUDGE) for i in ITEMS}, None)
        assert server.requests == 0
    finally:
        server.close()


def test_the_rephrasings_become_rewrite_variants_and_the_rest_skips(cmrc_release, tmp_path):
    run = evalrun.probe("cmrc@v1", target=lambda question, context: {"answer": "?"}, workspace=cmrc_release, limit=3,
                        probes="rewrite", rewrite_rules=["typo", "llm"], no_judge=True, out=tmp_path / "probe")
    assert not [v for v in run.variants if v.rule == "llm"]
    skips = [s for s in run.skips if s.variant_id.startswith("rewrite:") and ":llm:" in s.variant_id]
    assert len(skips) == 3 and {s.reason for s in skips} == {NO_JUDGE}
    assert run.summary.skipped["rewrite"][NO_JUDGE] == 3


def test_the_real_local_model_rephrases_through_the_generator_path(workspace, llama):
    from tests.support.processes import PATIENCE
    _configure(workspace, llama.base_url, 'response_format = "json_schema"', f"timeout = {PATIENCE}")
    found, usage = rephrase(workspace, ITEMS[:2])
    assert set(found) == {"q1", "q2"}
    asked = int(re.match(r"the model rephrased questions: (\d+) requests", usage).group(1))
    assert 2 <= asked <= 4     # one each, and an unreadable answer asked once more with the repair
    for question, why in found.values():
        assert (question is None) == (why != "rephrased by the model")
        assert question is not None or why.startswith("llm: ")
