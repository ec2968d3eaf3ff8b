"""Questions rewritten by rule (typos, colloquial forms, word order) in Chinese and English: every salient
token kept, a rule that cannot apply saying why."""

from __future__ import annotations

import random

import pytest

from curate import InputError, salient
from curate.records import EvalItem
from evalrun.probes import ProbeSkip, ProbeVariant, rewrite_variants
from evalrun.probes.rewrites import ZH_TYPOS, rewrite


def item(question, language):
    return EvalItem(id="q1", question=question, language=language, source="human")


def test_rewrites_of_real_questions_keep_every_salient_token(cmrc, handbook):
    made = {"typo": 0, "colloquial": 0, "word_order": 0}
    for one in cmrc.items[:120] + handbook.items:
        for variant in rewrite_variants(one, seed=0):
            if isinstance(variant, ProbeSkip):
                assert variant.reason.startswith(variant.variant_id.split(":")[2] + ": ")
                continue
            made[variant.rule] += 1
            assert variant.question != one.question
            assert salient(variant.question) == salient(one.question), (one.question, variant.question)
            assert variant.expected == "same_answer" and variant.context == []
    assert made["typo"] >= 100 and made["colloquial"] == 120 + len(handbook.items) and made["word_order"] >= 15


def test_an_english_typo_swaps_or_drops_a_letter_of_one_word_never_in_a_code_or_number():
    question = "Does error LG-4031 expire after 3600 seconds when the route scope changes?"
    for seed in range(30):
        (variant,) = rewrite_variants(item(question, "en"), rules=("typo",), seed=seed)
        words, typoed = question.rstrip("?").split(), variant.question.rstrip("?").split()
        changed = [(a, b) for a, b in zip(words, typoed) if a != b]
        assert len(words) == len(typoed) and len(changed) == 1
        (before, after), = changed
        assert len(before) >= 4 and before.isalpha() and before[0] == after[0]
        assert sorted(after) == sorted(before) or len(after) == len(before) - 1
        assert "LG-4031" in variant.question and "3600" in variant.question


def test_a_chinese_typo_swaps_a_character_of_the_table_or_drops_a_particle():
    question = "在 2025 年，账号的密码需要多久更换一次？"
    seen = set()
    for seed in range(30):
        (variant,) = rewrite_variants(item(question, "zh"), rules=("typo",), seed=seed)
        new = variant.question
        if len(new) == len(question):
            (at,) = [i for i, (a, b) in enumerate(zip(question, new)) if a != b]
            assert ZH_TYPOS[question[at]] == new[at]
            seen.add(question[at])
        else:
            dropped = [question[i] for i in range(len(question)) if question[:i] + question[i + 1:] == new]
            assert len(new) == len(question) - 1 and dropped and set(dropped) <= set("的了呢吧")
        assert "2025" in new
    assert len(seen) >= 3


def test_colloquial_forms_open_the_question_in_its_language():
    en = rewrite("How many custom roles can a single workspace define?", "en", "colloquial", random.Random(0))[0]
    zh = rewrite("团队版每月多少钱？", "zh", "colloquial", random.Random(0))[0]
    assert en.startswith(("hey, quick question: how", "so, how", "um, how", "quick one: how"))
    assert "how many custom roles can a single workspace define?" in en
    assert zh.startswith(("请问一下，团队版", "我想知道团队版", "问一下，团队版", "想请教一下，团队版"))


@pytest.mark.parametrize("question, language, expected", [
    ("How many nodes does a cluster need for a rolling upgrade?", "en",
     "For a rolling upgrade, how many nodes does a cluster need?"),
    ("How long are access logs kept on a gateway node by default?", "en",
     "By default, how long are access logs kept on a gateway node?"),
    ("If a key is revoked, what happens to running requests?", "en",
     "What happens to running requests if a key is revoked?"),
    ("锣鼓经运用的程式是什么？", "zh", "什么是锣鼓经运用的程式？"),
    ("莱昂德罗·内托的国籍是哪个国家？", "zh", "哪个国家是莱昂德罗·内托的国籍？"),
    ("滚动升级时，lumenctl node drain 最多会等待多久？", "zh", "lumenctl node drain 最多会等待多久，滚动升级时？"),
])
def test_word_order_moves_a_phrase(question, language, expected):
    (variant,) = rewrite_variants(item(question, language), rules=("word_order",), seed=0)
    assert variant.question == expected


def test_a_rule_that_cannot_apply_says_so():
    (en,) = rewrite_variants(item("What does LG-4031 mean?", "en"), rules=("word_order",), seed=0)
    (zh,) = rewrite_variants(item("广茂铁路全长多少公里？", "zh"), rules=("typo", "word_order"), seed=0)[:1]
    (order,) = rewrite_variants(item("广茂铁路全长多少公里？", "zh"), rules=("word_order",), seed=0)
    assert isinstance(en, ProbeSkip) and en.reason == "word_order: no trailing phrase or leading clause to move"
    assert isinstance(zh, ProbeSkip)
    assert zh.reason == "typo: no character of the typo table and no particle in the question"
    assert isinstance(order, ProbeSkip)
    assert order.reason == "word_order: no 是什么/谁/哪 to move and no leading clause"
    (short,) = rewrite_variants(item("Is API v2.0.1 GA?", "en"), rules=("typo",), seed=0)
    assert isinstance(short, ProbeSkip)
    assert short.reason == "typo: no word of 4 letters or more outside codes and numbers"
    with pytest.raises(InputError, match="unknown rewrite rule 'slang'"):
        rewrite_variants(item("x?", "en"), rules=("slang",), seed=0)


def test_a_typo_that_would_make_a_negation_is_never_returned():
    # dropping the e of "note" makes "not": a negation the question did not have
    typos = {rewrite_variants(item("A note?", "en"), rules=("typo",), seed=seed)[0].question for seed in range(40)}
    assert typos == {"A ntoe?", "A noet?", "A nte?", "A noe?"}
