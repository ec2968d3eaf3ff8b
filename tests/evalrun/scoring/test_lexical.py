"""Lexical answer metrics: hand-worked values, the numbers the official SQuAD v2.0 and CMRC2018
scripts give on the same inputs, and refusal phrases on answers as systems write them."""

import pytest

from evalrun.scoring.lexical import (METRICS, cmrc_tokens, exact_match, f1, key_point_token_coverage,
                                     lexical_scores, refusal_phrase, tokens)


def f1_of(common, predicted, reference):
    precision, recall = common / predicted, common / reference
    return 2 * precision * recall / (precision + recall)


# -- values worked by hand ------------------------------------------------------------------------

def test_english_f1_is_the_token_bag_overlap():
    # "it takes five days" against "five business days": five and days shared
    assert f1("It takes five days.", ["five business days"], "en") == pytest.approx(f1_of(2, 4, 3))
    # a repeated token counts as often as both sides have it: broncos once in the reference
    assert f1("Denver Broncos Broncos", ["Denver Broncos"], "en") == pytest.approx(f1_of(2, 3, 2))
    # articles and punctuation go before tokens are counted
    assert tokens("The U.S. Office, (an) HQ!", "en") == ["us", "office", "hq"]


def test_chinese_f1_is_the_longest_common_contiguous_run():
    # 令牌已经过期 / 令牌过期: the longest shared run is 令牌 (2), not the four characters both hold
    assert f1("令牌已经过期", ["令牌过期"], "zh") == pytest.approx(f1_of(2, 6, 4))
    # English words and numbers are one token each inside Chinese text; "-" goes without a cut
    assert cmrc_tokens("错误码 LG-4031 表示 token 过期") == ["错", "误", "码", "lg4031", "表", "示", "token", "过", "期"]
    assert f1("Token 在 1 小时后过期", ["1小时"], "zh") == pytest.approx(f1_of(3, 8, 3))


def test_the_best_of_several_accepted_answers_counts():
    # against 上海 nothing is shared; against 北京市 the run 北京 is: P = 2/2, R = 2/3
    assert f1("北京", ["上海", "北京市"], "zh") == pytest.approx(f1_of(2, 2, 3))
    assert exact_match("北京", ["上海", "北京"], "zh") == 1.0
    # "after 24 hours" shares three of the answer's six tokens, "24 hours" two
    assert f1("The reset link expires after 24 hours.", ["24 hours", "after 24 hours"], "en") == \
        pytest.approx(f1_of(3, 6, 3))


def test_full_width_punctuation_goes_and_language_codes_with_a_region_are_chinese():
    assert exact_match("《三体》：刘慈欣。", ["三体刘慈欣"], "zh-CN") == 1.0
    assert cmrc_tokens("（见 v2.0.1）、“令牌”！") == ["见", "v2.0.1", "令", "牌"]
    assert f1("令牌有效期：一小时；", ["一小时"], "zh_Hans") == pytest.approx(f1_of(3, 8, 3))


def test_an_empty_answer_scores_zero_and_an_answer_without_tokens_too():
    for answer in (None, "", "   ", "The."):
        values, unscored = lexical_scores(answer, language="en", answers=["24 hours"], key_points=["24 hours"],
                                          answerable=True)
        assert values == {"lexical/exact_match": 0.0, "lexical/f1": 0.0, "lexical/key_point_coverage": 0.0}
        assert unscored == {}


def test_nothing_to_compare_is_unscored_with_its_reason():
    values, unscored = lexical_scores("24 hours", language="en", answers=["!!!", ""], key_points=[],
                                      answerable=True)
    assert values == {}
    assert unscored == {"lexical/exact_match": "no reference answer", "lexical/f1": "no reference answer",
                        "lexical/key_point_coverage": "no key points"}
    # an accepted answer that normalises to nothing is skipped, the others still count
    assert exact_match("Nine", ["!!!", "nine"], "en") == 1.0
    assert set(METRICS) == {"lexical/exact_match", "lexical/f1", "lexical/key_point_coverage"}


def test_unanswerable_items_get_no_lexical_scores():
    assert lexical_scores("I don't know.", language="en", answers=[], key_points=[], answerable=False) == ({}, {})


def test_inline_citations_of_known_chunks_are_not_part_of_the_answer():
    values, _ = lexical_scores("24 hours [kb.md#2].", language="en", answers=["24 hours"], key_points=[],
                               answerable=True, known_ids={"kb.md#2"})
    assert values == {"lexical/exact_match": 1.0, "lexical/f1": 1.0}


def test_key_point_coverage_is_the_mean_share_of_each_key_points_tokens():
    answer = "The token expired after one hour; log in again."
    # "token expired": 2 of 2; "contact the admin" -> contact, admin: 0 of 2; "one hour hour": 2 of 3
    assert key_point_token_coverage(answer, ["token expired", "contact the admin", "one hour hour"], "en") == \
        pytest.approx((2 / 2 + 0 / 2 + 2 / 3) / 3)
    # Chinese: character by character, in any order (lexical, not semantic)
    assert key_point_token_coverage("令牌一小时后过期", ["令牌过期", "过期令牌", "联系管理员"], "zh") == \
        pytest.approx((4 / 4 + 4 / 4 + 0 / 5) / 3)
    # key points without a token are left out of the mean
    assert key_point_token_coverage("LG-4031", ["lg4031", "。"], "zh") == 1.0
    assert key_point_token_coverage("x", ["!!!", "the"], "en") is None


# -- the official scripts' numbers ------------------------------------------------------------------
# Each expected (EM, F1) below was produced by running the official script on the same strings:
# SQuAD's evaluate-v2.0.py (normalize_answer, compute_exact, compute_f1, the max over gold answers
# that normalise to something) and CMRC2018's cmrc2018_evaluate.py (squad-style-data, v5; ported to
# Python 3 by dropping .decode/ur''/reload, with nltk.word_tokenize(preserve_line=True) because its
# sentence-splitting data cannot be downloaded here, which changes nothing for these one-sentence
# runs).

SQUAD_OFFICIAL = [
    ("It takes five days.", ["five business days"], 0, 0.5714285714285715),
    ("The reset link expires after 24 hours.", ["24 hours", "after 24 hours"], 0, 0.6666666666666666),
    ("24 hours", ["24 hours"], 1, 1.0),
    ("The U.S. office.", ["US office"], 1, 1.0),
    ("An apple a day", ["apple"], 0, 0.6666666666666666),
    ("", ["Paris"], 0, 0),
    ("Paris, France!", ["Paris", "Paris, France"], 1, 1.0),
    ("the the the", ["the cat"], 0, 0),
    ("Denver Broncos Broncos", ["Denver Broncos"], 0, 0.8),
    ("It’s version 3.5", ["version 3.5"], 0, 0.8),        # ’ is not in string.punctuation
    ("don't", ["dont"], 1, 1.0),
    ("Ｐａｒｉｓ", ["Paris"], 0, 0),                       # no width folding in the script
    ("9 a.m.", ["9 a.m."], 1, 1.0),
    ("Nine", ["!!!", "nine"], 1, 1.0),
    ("Tokens last one hour; renew them daily.", ["one hour", "tokens last one hour"], 0, 0.7272727272727273),
]

CMRC_OFFICIAL = [
    ("错误码 LG-4031 表示令牌过期。", ["令牌过期"], 0, 0.5714285714285715),
    ("LG-4031 表示令牌过期", ["LG-4031表示令牌过期"], 0, 1.0),     # EM keeps the space, F1 does not see it
    ("版本 3.5 修复了它", ["3.5版本", "修复"], 0, 0.4444444444444445),
    ("答案是 v2.0.1 版", ["v2.0.1"], 0, 0.33333333333333337),
    ("北京。", ["北京"], 1, 1.0),
    ("“北京”", ["北京"], 1, 1.0),
    ("（北京）", ["北京"], 1, 1.0),
    ("北京", ["上海", "北京市"], 0, 0.8),
    ("大桥于2018年10月23日正式开通", ["2018年10月", "2018年10月23日"], 0, 0.631578947368421),
    ("iPhone 15 Pro 售价 7999 元", ["7999元"], 0, 0.4444444444444445),
    ("GPT-4 模型", ["gpt4模型"], 0, 1.0),
    ("", ["北京"], 0, 0),
    ("《三体》的作者是刘慈欣。", ["刘慈欣", "《三体》作者刘慈欣"], 0, 0.5),
    ("令牌有效期：一小时；过期后需重新登录！", ["一小时"], 0, 0.3157894736842105),
    ("Token 在 1 小时后过期", ["1小时"], 0, 0.5454545454545454),
    ("它位于北京市海淀区", ["北京海淀"], 0, 0.30769230769230765),
    ("北 京", ["北京"], 0, 1.0),
    ("大约 55 公里", ["55公里"], 0, 0.7499999999999999),
    ("TCP/IP 协议", ["tcpip协议"], 0, 1.0),
    ("１２３ 元", ["123元"], 0, 0.5),                      # no width folding in the script
]


@pytest.mark.parametrize("answer, references, em, expected_f1", SQUAD_OFFICIAL)
def test_english_equals_the_official_squad_v2_script(answer, references, em, expected_f1):
    assert exact_match(answer, references, "en") == em
    assert f1(answer, references, "en") == pytest.approx(expected_f1, abs=1e-12)


@pytest.mark.parametrize("answer, references, em, expected_f1", CMRC_OFFICIAL)
def test_chinese_equals_the_official_cmrc2018_script(answer, references, em, expected_f1):
    assert exact_match(answer, references, "zh") == em
    assert f1(answer, references, "zh") == pytest.approx(expected_f1, abs=1e-12)


@pytest.mark.parametrize("answer, official, ours", [
    # the script keeps punctuation outside its list as tokens (nltk cuts them off): "北京 ." is 3 tokens there
    ("北京.", 0.8, 1.0),
    ("【北京】", 0.6666666666666666, 1.0),
    ("北京…", 0.8, 1.0),
    ("在北京, 中国", 0.5, f1_of(2, 5, 2)),
    # nltk cuts "don't" into "do n't"; here it is one word, as in SQuAD
    ("don't know 北京", 0.5714285714285715, f1_of(2, 4, 2)),
])
def test_where_chinese_f1_differs_from_the_script_punctuation_is_dropped(answer, official, ours):
    assert f1(answer, ["北京"], "zh") == pytest.approx(ours)
    assert ours > official


# -- refusals -------------------------------------------------------------------------------------

@pytest.mark.parametrize("language, answer, phrase", [
    ("en", "I don't know.", "I don't know"),
    ("en", "I don’t know the answer to that.", "I don't know"),               # curly apostrophe
    ("en", "Ｉ ｄｏｎ’ｔ ｋｎｏｗ．", "I don't know"),                             # full-width forms
    ("en", "Sorry, I cannot answer that from the documents.", "cannot answer"),
    ("en", "No information.", "no information"),
    ("en", "I'm sorry, but the provided context does not contain any information about the Tokyo office's "
           "opening hours. You may want to contact the company directly.", "does not contain"),
    ("en", "The context doesn't mention a Tokyo office.", "does not contain"),
    ("en", "I couldn't find anything about LG-9999 in the knowledge base.", "I couldn't find"),
    ("en", "There is not enough information in the context to answer this question.", "not enough information"),
    ("en", "The opening hours are not provided in the context.", "not provided in the context"),
    ("en", "I am unable to answer based on the given passages.", "cannot answer"),
    ("zh", "抱歉，资料中没有提到这个错误码。", "抱歉"),
    ("zh", "根据提供的资料，无法回答该问题。", "无法回答"),
    ("zh", "我不知道。", "不知道"),
    ("zh", "文档中没有相关信息。", "资料中没有"),
    ("zh", "未提及。", "未提及"),
    ("zh", "上下文中没有提到东京办公室的营业时间，建议您联系客服。", "资料中没有"),
    ("zh", "无法确定具体的退款时间。", "无法确定"),
    ("zh", "不清楚！", "不清楚"),
    ("zh", "我没有找到相关内容。", "无法找到"),
    ("zh-CN", "Sorry, I don't know.", "I don't know"),                        # an English refusal to a Chinese item
    # declining for want of access: what a system should say to an asker who may not see the evidence
    ("en", "You do not have access to the salary bands.", "you do not have access"),
    ("en", "Sorry, you don't have the necessary permissions to view this document.", "you do not have access"),
    ("en", "Your role does not have permission to read HR documents.", "you do not have access"),
    ("en", "You are not authorised to view that policy.", "not authorised"),
    ("en", "You're not allowed to see this.", "not authorised"),
    ("en", "Access denied: this document is restricted to HR.", "access denied"),
    ("en", "I cannot share that information with you.", "cannot share"),
    ("zh", "您无权查看该文档。", "无权查看"),
    ("zh", "您没有权限查看薪资标准。", "没有权限"),
    ("zh", "你的权限不足。", "权限不足"),
    ("zh", "该信息不能透露。", "不能透露"),
])
def test_refusal_phrases_in_both_languages(language, answer, phrase):
    assert refusal_phrase(answer, language) == phrase


LONG = ("The context does not contain a full list, but the common codes are LG-4031 (token expired), "
        "LG-4032 (bad signature) and LG-4033 (clock skew). " + "Each is documented in the error handbook with "
        "its cause and its fix, which you should read before you escalate the issue to the on-call team. " * 3)


@pytest.mark.parametrize("language, answer", [
    ("en", "It expires after 24 hours. The cause is not mentioned in the context."),    # not in the opening
    ("en", "Refunds take five business days. I don't know whether weekends count, though."),
    ("en", "The installer does not contain a driver, so install it separately."),       # not about the context
    ("en", "No information is stored on the device; tokens live on the server."),
    ("en", "If you don't know your password, reset it in Settings."),
    ("en", LONG),                                                                        # a long answer
    ("zh", "LG-4031 表示令牌已过期。文档中未提及具体原因，请重新登录。"),
    ("zh", "如果您不知道密码，可以在设置中重置。"),                                      # advice to the user
    ("zh", "抱歉给您带来不便，LG-4031 表示令牌已过期，请重新登录。"),                    # politeness, then an answer
    ("zh", "令牌有效期为一小时，过期后需要重新登录；具体的续期策略未提及。"),
    ("zh", "若不清楚当前版本，可在控制台查看。"),
    ("zh", "如果没有找到文件，请联系管理员。"),
    ("zh", "测量结果存在不确定性，误差约 5%。"),
    ("en", "If you do not have access, ask IT for the HR role."),                       # advice, conditional
    ("en", "Interns have no access to the payroll system."),                             # an answer about access
    ("en", "Unauthorized requests get HTTP 401 and are logged."),
    ("zh", "如果您没有权限，请联系管理员开通。"),
    ("zh", "实习生无法访问薪资系统，需经理审批。"),
    ("en", ""),
    ("en", None),
])
def test_answers_that_only_mention_a_phrase_are_not_refusals(language, answer):
    assert refusal_phrase(answer, language) is None
