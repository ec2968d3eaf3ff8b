"""Counterfactual changes, Chinese and English: a number with its unit, a year, a date, a code, a
percentage, an amount; the changed chunk differs from the original in that token alone."""

from __future__ import annotations

import re

import pytest

from curate.kb import sha256_text
from curate.records import Chunk, EvalItem, KeyPoint
from curate.text.salient import salient, salient_difference
from evalrun.probes import ProbeSkip, counterfactual_variant
from evalrun.probes.facts import find_facts, keys_in


ZH_NUMERALS = "[零〇一二两三四五六七八九十百千]+"


def chunk(chunk_id, text):
    return Chunk(chunk_id=chunk_id, doc_id=chunk_id.split("#")[0], text=text, text_sha256=sha256_text(text))


def item(question, answer, language, key_points=()):
    return EvalItem(id="q1", question=question, reference_answer=answer, answers=[answer], language=language,
                    source="human", key_points=[KeyPoint(text=k) for k in key_points])


def the_change(variant):
    (planted,) = [c for c in variant.context if c.role == "counterfactual"]
    return planted, planted.change["from"], planted.change["to"]


def pieces(text: str, token: str) -> list[str]:
    """Return the text around every place the token stands whole (not inside a longer number or a code)."""
    return re.split(rf"(?<![0-9A-Za-z]){re.escape(token)}(?![0-9])", text)


def assert_only_that_token_changed(original: str, planted_text: str, old: str, new: str):
    assert old != new and len(pieces(planted_text, new)) > 1
    assert pieces(original, old) == pieces(planted_text, new)     # the same text around every place it was stated


@pytest.mark.parametrize("text, answer, question, language, kind, old", [
    ("轮换后，旧密钥还有 24 小时的重叠有效期。", "24 小时", "旧密钥还能用多久？", "zh", "number", "24"),
    ("每个加量包包含 2000 万个请求，价格为 40 美元。", "40 美元", "加量包多少钱？", "zh", "number", "40"),
    ("试用期为三十天，到期后自动转为社区版。", "三十天", "试用期多长？", "zh", "zh_number", "三十"),
    ("该站于2010年10月26日正式启用。", "2010年10月26日", "该站何时启用？", "zh", "date", "2010年10月26日"),
    ("该站于2010年10月26日正式启用。", "2010年", "该站哪一年启用？", "zh", "date", "2010年10月26日"),
    ("路德维希·普朗特生于1875年。", "1875年", "普朗特生于哪年？", "zh", "year", "1875"),
    ("The offline licence was issued on March 1, 2026 to the Owner.", "March 1, 2026", "When was it issued?", "en",
     "date", "March 1, 2026"),
    ("When the monthly usage reaches 80% of the quota, the Owner gets an email.", "80%", "When is the Owner warned?",
     "en", "percent", "80%"),
    ("An annual Team subscription costs $4,500, the price of 10 months.", "$4,500", "What does a year cost?", "en",
     "amount", "$4,500"),
    ("Quota exhausted: the gateway answers with LG-4292 by default.", "LG-4292", "What does the gateway answer?", "en",
     "code", "LG-4292"),
    ("额度用完后，网关默认返回 LG-4292。", "LG-4292", "额度用完后网关返回什么？", "zh", "code", "LG-4292"),
])
def test_the_fact_the_answer_states_is_changed_in_its_own_format(text, answer, question, language, kind, old):
    variant = counterfactual_variant(item(question, answer, language), [chunk("kb#0", text)], seed=0)
    planted, was, now = the_change(variant)
    assert (variant.rule, was) == (kind, old)
    assert planted.chunk_id == "probe:counterfactual:0" and planted.source_chunk == "kb#0"
    assert variant.expected == "follow_context" and variant.probe == "counterfactual"
    assert_only_that_token_changed(text, planted.text, was, now)
    assert len(now) == len(was) or kind in ("date", "zh_number")        # width kept: 24 -> 2 digits
    assert re.sub(r"\d", "0", now) == re.sub(r"\d", "0", was) or kind in ("date", "zh_number")
    (fact,) = [f for f in find_facts(planted.text) if f.text == now]      # still a fact of the same kind
    assert fact.kind == kind


def test_a_date_whose_year_the_answer_states_moves_its_year():
    variant = counterfactual_variant(item("该站哪一年启用？", "2010年", "zh"), [chunk("kb#0", "该站于2010年10月26日正式启用。")],
                                     seed=0)
    _, _, now = the_change(variant)
    assert now.endswith("年10月26日") and now[:4] != "2010" and abs(int(now[:4]) - 2010) <= 3


def test_without_a_stated_fact_the_first_fact_the_question_does_not_name_is_changed():
    text = "LG-4031 表示未授予路由权限范围；新的权限范围在 60 秒内生效。"
    variant = counterfactual_variant(item("LG-4031 是什么意思？", "未授予路由权限范围", "zh"), [chunk("errors#3", text)],
                                     seed=0)
    planted, was, now = the_change(variant)
    assert was == "60" and "LG-4031" in planted.text        # the code the question asks about stays
    assert salient_difference(text, planted.text) == f"60 ≠ {now}"


def test_every_place_a_gold_chunk_states_the_fact_changes_and_the_other_gold_stays():
    first = chunk("a#0", "发票开具后 30 天内到期；逾期 30 天后暂停。")
    second = chunk("a#1", "暂停后配置和密钥都会保留。")
    third = chunk("b#0", "账单在 30 天内到期。")
    variant = counterfactual_variant(item("账单多久到期？", "30 天", "zh"), [first, second, third], seed=0)
    roles = [(c.chunk_id, c.role, c.source_chunk) for c in variant.context]
    assert roles == [("probe:counterfactual:0", "counterfactual", "a#0"), ("a#1", "gold", None),
                     ("probe:counterfactual:1", "counterfactual", "b#0")]
    new = variant.context[0].change["to"]
    assert variant.context[0].text.count(new) == 2 and "30" not in variant.context[0].text
    assert variant.context[1].text == second.text


def test_the_new_value_is_none_the_context_states_already():
    text = "旧密钥还有 24 小时的有效期；新密钥立即生效，最多 25 个，另可申请 34 个、44 个、54 个、64 个、74 个、84 个或 94 个。"
    for seed in range(10):
        variant = counterfactual_variant(item("旧密钥多久失效？", "24 小时", "zh"), [chunk("kb#0", text)], seed=seed)
        _, was, now = the_change(variant)
        assert was == "24" and now not in {"25", "34", "44", "54", "64", "74", "84", "94"}
        assert f"num:{now}" not in keys_in(text)


def test_a_chunk_with_nothing_to_change_says_so():
    nothing = counterfactual_variant(item("锣鼓经是什么？", "打击乐记谱方法", "zh"),
                                     [chunk("kb#0", "锣鼓经是大陆传统器乐及戏曲里面常用的打击乐记谱方法。")], seed=0)
    assert isinstance(nothing, ProbeSkip)
    assert nothing.reason == "no number, date, code or name in the gold chunks that the question does not name"
    named = counterfactual_variant(item("What does LG-4031 mean?", "route scope not granted", "en"),
                                   [chunk("kb#0", "LG-4031 means the route scope was not granted.")], seed=0)
    assert isinstance(named, ProbeSkip) and named.variant_id == "counterfactual:q1:s0"


def test_real_gold_chunks_change_in_one_token(cmrc, handbook):
    built = names = 0
    for corpus in (cmrc, handbook):
        for one in corpus.items:
            gold = corpus.gold(one)
            variant = counterfactual_variant(one, gold, seed=7)
            if isinstance(variant, ProbeSkip):
                continue
            built += 1
            names += variant.rule == "name"
            by_id = {c.chunk_id: c for c in gold}
            for planted in variant.context:
                if planted.role == "counterfactual":
                    original, old, new = by_id[planted.source_chunk].text, planted.change["from"], planted.change["to"]
                    lost, gained = salient(original) - salient(planted.text), salient(planted.text) - salient(original)
                    if variant.rule == "name":          # the name is changed in every place, nothing else
                        assert planted.text == original.replace(old, new) and old in original
                        assert new not in original
                    elif variant.rule == "zh_number":     # 三十 is salient only beside its unit: 三十天
                        assert sum(lost.values()) == sum(gained.values()) >= 1
                        assert re.sub(ZH_NUMERALS, "#", original) == re.sub(ZH_NUMERALS, "#", planted.text)
                    else:   # what is salient lost and gained is the token's alone; nothing but digits moved
                        assert set(lost) == set(salient(old) - salient(new)) and lost.total() == gained.total()
                        assert set(gained) == set(salient(new) - salient(old))      # each place it is stated
                        assert re.sub(r"\d+", "#", original) == re.sub(r"\d+", "#", planted.text)
                else:
                    assert planted.text == by_id[planted.chunk_id].text
    assert built >= 150
    assert names >= 20     # CMRC2018's answers are often names: their counterfactual changes the name
