"""The generation layer, through a scripted judge: every value here can be worked out by hand."""

import json

import pytest

from curate.judge.client import Judge
from curate.judge.config import JudgeConfig
from curate.records import EvalItem, KeyPoint
from evalrun.scoring.claims import split_claims
from evalrun.scoring.generation import prompt, score_generation
from evalrun.scoring.generation_prompts import GENERATION
from evalrun.records import Trace

from tests.support.servers import ScriptedServer
from tests.support.processes import PATIENCE   # a busy machine answers slowly: a safety net, not a limit

CHUNKS = {"kb#1": "LG-4031 means the session token expired.", "kb#2": "Tokens last one hour.",
          "kb#3": "Admins can reset passwords in the console.", "kb#9": "Unrelated passage about billing."}


def _reply(messages):
    """Scripted verdicts keyed on words of the statement asked about."""
    text = messages[-1]["content"]
    if "BOOM" in text:
        return 500
    if "Key point:" in text or "要点：" in text:
        point = text.split("Key point:" if "Key point:" in text else "要点：")[1]
        verdict = "covered" if "expired" in point or "过期" in point else (
            "contradicted" if "daily" in point else "missing")
        return json.dumps({"verdict": verdict, "reason": "scripted"})
    if "Statement from its answer:" in text or "回答中的一句陈述：" in text:
        claim = text.split("陈述：" if "回答中的一句陈述：" in text else "answer:")[1].split("\n\n")[0]
        return json.dumps({"verdict": "not_supported" if "moon" in claim or "月亮" in claim else "supported",
                           "reason": "scripted"})
    if "Statements that cite" in text or "引用了这个片段的陈述" in text:
        passage = text.split("\n\n")[0]
        return json.dumps({"verdict": "does_not_support" if "billing" in passage else "supports", "reason": "scripted"})
    if "address the question" in text or "是否针对所问的问题" in text:
        return json.dumps({"verdict": "partly" if "moon" in text else "yes", "reason": "scripted"})
    return "not json"


@pytest.fixture
def server():
    scripted = ScriptedServer(_reply)
    yield scripted
    scripted.close()


def _judge(server, tmp_path, **kwargs):
    return Judge(JudgeConfig(base_url=server.base_url, model="judge", **kwargs), tmp_path / "cache")


def _item(item_id, points=(), language="en", answerable=True):
    return EvalItem(id=item_id, question="What does LG-4031 mean?", language=language, source="human",
                    answerable=answerable, reference_answer="x", key_points=[KeyPoint(text=p) for p in points])


def _trace(item_id, answer, context=("kb#1", "kb#2"), citations=(), **kwargs):
    return Trace(item_id=item_id, question="q", answer=answer, context=list(context), citations=list(citations),
                 **kwargs)


def test_key_points_and_claims_give_hand_computed_values(server, tmp_path):
    items = {"a": _item("a", ["The token expired.", "Contact the admin."])}
    traces = {"a": _trace("a", "LG-4031 means the token expired. Tokens last one hour. It is made on the moon.")}
    result = score_generation(items, traces, CHUNKS, _judge(server, tmp_path), evidence_in_context={"a"})["a"]
    values = result["values"]
    assert values["generation/completeness"] == 1 / 2                                       # 1 of 2 covered
    assert values["generation/correctness"] == 0.0                                          # not all covered
    assert values["generation/key_points_contradicted"] == 0.0
    assert values["generation/faithfulness"] == pytest.approx(2 / 3)                        # 3 claims, 1 unsupported
    assert values["generation/hallucination_rate"] == pytest.approx(1 / 3)
    assert values["generation/answer_relevance"] == 0.5                                     # "partly"
    assert "generation/citation_accuracy" not in values and result["unscored"] == {}
    assert result["attribution"] == ["generation_miss", "hallucination"]
    assert server.requests == 2 + 1 + 3


def test_contradicted_key_point_and_no_attribution_without_evidence_in_context(server, tmp_path):
    items = {"b": _item("b", ["It expired.", "Tokens reset daily."])}
    traces = {"b": _trace("b", "The token expired. Tokens last one hour.")}
    result = score_generation(items, traces, CHUNKS, _judge(server, tmp_path))["b"]
    assert result["values"]["generation/completeness"] == 1 / 2
    assert result["values"]["generation/correctness"] == 0.0          # one key point contradicted
    assert result["values"]["generation/key_points_contradicted"] == 1 / 2
    assert result["values"]["generation/faithfulness"] == 1.0 and result["attribution"] == []


def test_correctness_is_all_or_nothing_and_a_correct_answer_is_no_generation_miss(server, tmp_path):
    items = {"all": _item("all", ["The token expired.", "It expired at noon."]),
             "most": _item("most", ["The token expired.", "It expired at noon.", "Contact the admin."])}
    traces = {"all": _trace("all", "The token expired at noon."), "most": _trace("most", "The token expired at noon.")}
    results = score_generation(items, traces, CHUNKS, _judge(server, tmp_path), evidence_in_context={"all", "most"})
    assert results["all"]["values"]["generation/completeness"] == 2 / 2
    assert results["all"]["values"]["generation/correctness"] == 1.0
    assert "generation_miss" not in results["all"]["attribution"]
    assert results["most"]["values"]["generation/completeness"] == 2 / 3   # 2 of 3 covered, none contradicted
    assert results["most"]["values"]["generation/correctness"] == 0.0
    assert results["most"]["values"]["generation/key_points_contradicted"] == 0.0
    assert "generation_miss" in results["most"]["attribution"]             # evidence in the context, incomplete


def test_a_500_from_the_judge_makes_that_metric_unscored_with_its_reason(server, tmp_path):
    items = {"c": _item("c", ["The token expired.", "BOOM point"])}
    traces = {"c": _trace("c", "The token expired. It is made on the moon.")}
    result = score_generation(items, traces, CHUNKS, _judge(server, tmp_path, max_retries=1, backoff=0.01))["c"]
    reason = "HTTP 500 from the judge (after 2 attempts)"
    for name in ("correctness", "completeness", "key_points_contradicted"):
        assert result["unscored"][f"generation/{name}"] == reason
        assert f"generation/{name}" not in result["values"]          # never 0, never 1
    assert result["values"]["generation/faithfulness"] == 0.5        # the other metrics still score
    assert "hallucination" in result["attribution"]


def test_an_unscored_claim_leaves_faithfulness_unscored_but_a_judged_unsupported_one_still_counts(server, tmp_path):
    items = {"d": _item("d")}
    traces = {"d": _trace("d", "It is made on the moon. BOOM goes the claim.")}
    result = score_generation(items, traces, CHUNKS, _judge(server, tmp_path, max_retries=0))["d"]
    assert result["unscored"]["generation/faithfulness"] == "HTTP 500 from the judge"
    assert result["unscored"]["generation/hallucination_rate"] == "HTTP 500 from the judge"
    assert result["unscored"]["generation/correctness"] == "no key points labelled"
    assert result["attribution"] == ["hallucination"]


def test_citations_outside_the_context_are_flagged_and_wrong(server, tmp_path):
    items = {"e": _item("e")}
    answer = "LG-4031 means the token expired [kb#1]. Tokens last one hour. [kb#9] Admins reset passwords [kb#3]."
    traces = {"e": _trace("e", answer, context=("kb#1", "kb#2", "kb#9"), citations=["kb#1", "kb#9", "kb#3", "kb#2"])}
    result = score_generation(items, traces, CHUNKS, _judge(server, tmp_path))["e"]
    details = result["details"]
    assert details["claims"] == ["LG-4031 means the token expired.", "Tokens last one hour.", "Admins reset passwords."]
    assert details["citations_outside_context"] == ["kb#3"]
    # kb#1 supports its claim; kb#9 (billing) does not support "Tokens last one hour."; kb#3 is not in the
    # context; kb#2 is only listed and supports one of the claims: 2 of 4.
    assert [(c["chunk_id"], c["correct"]) for c in details["citation_verdicts"]] == [
        ("kb#1", True), ("kb#9", False), ("kb#3", False), ("kb#2", True)]
    assert result["values"]["generation/citation_accuracy"] == 0.5
    assert result["values"]["generation/faithfulness"] == 1.0


def test_an_unlisted_inline_citation_of_a_kb_chunk_outside_the_context_is_flagged(server, tmp_path):
    items = {"g": _item("g")}
    traces = {"g": _trace("g", "The token expired [kb#1]. Admins reset passwords [kb#3][not-a-chunk].")}
    result = score_generation(items, traces, CHUNKS, _judge(server, tmp_path))["g"]
    assert result["details"]["claims"] == ["The token expired.", "Admins reset passwords [not-a-chunk]."]
    assert result["details"]["citations_outside_context"] == ["kb#3"]
    assert result["values"]["generation/citation_accuracy"] == 0.5


def test_chinese_answers_are_split_into_claims_and_asked_in_chinese(server, tmp_path):
    items = {"z": _item("z", ["令牌过期"], language="zh")}
    traces = {"z": _trace("z", "LG-4031 表示令牌已过期[kb#1]。令牌有效期一小时；它产自月亮！是的。", citations=["kb#1"])}
    result = score_generation(items, traces, CHUNKS, _judge(server, tmp_path))["z"]
    assert result["details"]["claims"] == ["LG-4031 表示令牌已过期。", "令牌有效期一小时；", "它产自月亮！"]
    assert result["values"]["generation/faithfulness"] == pytest.approx(2 / 3)
    assert result["values"]["generation/correctness"] == result["values"]["generation/completeness"] == 1.0
    assert result["values"]["generation/citation_accuracy"] == 1.0
    asked = prompt("gen_claim_supported", "zh").messages({"context": "c", "claim": "x"})[-1]["content"]
    assert asked.startswith("提供给助手的上下文")


def test_zh_sentence_rules():
    claims = split_claims("第一句话说完了。第二句话呢？第三句话！第四句话；The fifth one. 好。")
    assert [c.text for c in claims] == ["第一句话说完了。", "第二句话呢？", "第三句话！", "第四句话；", "The fifth one."]


def test_empty_context_supports_nothing_without_asking(server, tmp_path):
    items = {"f": _item("f")}
    traces = {"f": _trace("f", "The token expired. Tokens last an hour.", context=())}
    result = score_generation(items, traces, CHUNKS, _judge(server, tmp_path))["f"]
    assert result["values"]["generation/faithfulness"] == 0.0
    assert result["values"]["generation/hallucination_rate"] == 1.0
    assert server.requests == 1   # only answer relevance


def test_a_context_the_trace_does_not_report_leaves_faithfulness_and_citations_unscored(server, tmp_path):
    items = {"n": _item("n", ["The token expired."])}
    traces = {"n": Trace(item_id="n", question="q", answer="The token expired [kb#1]. It lasts an hour.",
                         context=None, citations=["kb#1"])}
    result = score_generation(items, traces, CHUNKS, _judge(server, tmp_path))["n"]
    reason = "the trace reports no context (no 'context' key)"
    for name in ("faithfulness", "hallucination_rate", "citation_accuracy"):
        assert result["unscored"][f"generation/{name}"] == reason
    assert result["values"]["generation/correctness"] == 1.0 and result["details"]["citations_outside_context"] == []
    assert server.requests == 1 + 1   # the key point and answer relevance only


def test_refusals_errors_and_unanswerable_items_are_not_judged(server, tmp_path):
    items = {"r": _item("r", ["x"]), "s": _item("s", ["x"]), "u": _item("u", answerable=False), "v": _item("v")}
    traces = {"r": _trace("r", "Sorry, I cannot say.", refused=True), "s": _trace("s", "", ),
              "u": _trace("u", "An answer to the unanswerable."), "v": _trace("v", "The token expired.", error="boom")}
    assert score_generation(items, traces, CHUNKS, _judge(server, tmp_path)) == {}
    assert server.requests == 0


def test_second_scoring_comes_from_the_cache(server, tmp_path):
    items = {"a": _item("a", ["The token expired."])}
    traces = {"a": _trace("a", "The token expired. Made on the moon.")}
    first = score_generation(items, traces, CHUNKS, _judge(server, tmp_path))
    asked = server.requests
    judge = _judge(server, tmp_path)
    assert score_generation(items, traces, CHUNKS, judge) == first
    assert server.requests == asked and judge.stats.cache_hits == asked
    assert set(GENERATION.versions()) >= {"gen_key_point/en", "gen_claim_supported/zh", "gen_citation/en"}


def test_judge_repeats_ask_again_and_measure_how_often_the_judge_changes_its_mind(tmp_path):
    from evalrun.records import ItemScores
    from evalrun.scoring.generation import judge_agreement
    asked: dict[str, int] = {}

    def flaky(messages):
        """A judge that changes its mind on every second question about the "flaky" key point."""
        text = messages[-1]["content"]
        if "flaky" in text:
            asked["flaky"] = asked.get("flaky", 0) + 1
            return json.dumps({"verdict": "covered" if asked["flaky"] % 2 else "missing", "reason": "scripted"})
        return _reply(messages)

    scripted = ScriptedServer(flaky)
    try:
        items = {"a": _item("a", ["The token expired."]), "b": _item("b", ["A flaky point."])}
        traces = {"a": _trace("a", "The token expired."), "b": _trace("b", "Tokens last one hour.")}
        once = score_generation(items, traces, CHUNKS, _judge(scripted, tmp_path / "1"))
        per_answer = scripted.requests
        judge = _judge(scripted, tmp_path / "2", concurrency=1)   # one at a time: the flaky answers in order
        twice = score_generation(items, traces, CHUNKS, judge, repeats=3)
        assert per_answer == 6                                        # per item: a key point, relevance, a claim
        assert scripted.requests - per_answer == 3 * per_answer      # every question asked anew on each repeat
        assert "repeats" not in once["a"]["details"]                  # a single judgement stores no repeats
        assert twice["a"]["details"]["repeats"] == [twice["a"]["values"]] * 2
        first, repeats = twice["b"]["values"], twice["b"]["details"]["repeats"]
        assert [first["generation/correctness"]] + [r["generation/correctness"] for r in repeats] == [0.0, 1.0, 0.0]
        rows = [ItemScores(item_id=i, answerable=True, values=r["values"], generation=r["details"])
                for i, r in twice.items()]
        agreement = judge_agreement(rows)["generation/correctness"]
        assert (agreement.items, agreement.unstable, agreement.compared, agreement.changed) == (2, 1, 4, 1)
        assert agreement.rate == 0.25
        assert judge_agreement(rows)["generation/answer_relevance"].changed == 0
        again = _judge(scripted, tmp_path / "2")
        assert score_generation(items, traces, CHUNKS, again, repeats=3) == twice    # each repeat cached apart
        assert again.stats.cache_hits == 3 * per_answer
    finally:
        scripted.close()


def test_repeats_through_a_real_model_are_asked_anew_and_measured(tmp_path, llama):
    """The real HTTP path (llama.cpp with SmolLM2): each repeat is its own request, and the agreement is
    counted over whatever the model said (at temperature 0 a local server may well agree with itself)."""
    from evalrun.records import ItemScores
    from evalrun.scoring.generation import judge_agreement
    config = JudgeConfig(base_url=llama.base_url, model="smollm2", max_tokens=80, timeout=PATIENCE, concurrency=2)
    items = {"a": _item("a", ["The token expired."])}
    traces = {"a": _trace("a", "LG-4031 means the token expired.")}
    judge = Judge(config, tmp_path / "cache")
    result = score_generation(items, traces, CHUNKS, judge, repeats=2)["a"]
    assert judge.stats.requests - judge.stats.repairs == 2 * 3    # key point, relevance, one claim; twice
    assert judge.stats.cache_hits == 0
    assert len(result["details"]["repeats"]) == 1
    row = ItemScores(item_id="a", answerable=True, values=result["values"], generation=result["details"])
    for name, agreement in judge_agreement([row]).items():
        assert agreement.items == 1 and agreement.compared == 1
        assert agreement.changed == (result["details"]["repeats"][0][name] != result["values"][name])
