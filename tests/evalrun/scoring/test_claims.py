"""Claims end where sentences end: abbreviations, decimals, initials, versions, URLs and chunk ids do
not cut a claim; Chinese 。！？； still do; citation markers keep their owners."""

import pytest

from evalrun.scoring.claims import answer_sentence_spans, split_claims


def sentences(text):
    return [text[a:b] for a, b in answer_sentence_spans(text)]


@pytest.mark.parametrize("text, expected", [
    ("The U.S. office handles LG-4031. Call them today.", ["The U.S. office handles LG-4031.", "Call them today."]),
    ("Use a proxy, e.g. nginx, in front of it. It works.", ["Use a proxy, e.g. nginx, in front of it.", "It works."]),
    ("Rotate the key, i.e. create a new one. Then log in.", ["Rotate the key, i.e. create a new one.", "Then log in."]),
    ("Dr. Smith reset the password. It worked.", ["Dr. Smith reset the password.", "It worked."]),
    ("Version 3.5 fixed it. Upgrade from 3.4 now.", ["Version 3.5 fixed it.", "Upgrade from 3.4 now."]),
    ("See No. 5 in the list. It explains the limit.", ["See No. 5 in the list.", "It explains the limit."]),
    ("The job runs at 9 a.m. every day. Check the logs.", ["The job runs at 9 a.m. every day.", "Check the logs."]),
    ("Mr. Lee called at 5 p.m. on Monday. He left a note.", ["Mr. Lee called at 5 p.m. on Monday.", "He left a note."]),
    ("J. R. R. Tolkien wrote it. He was British.", ["J. R. R. Tolkien wrote it.", "He was British."]),
    ('He said "Reset it." Then he left.', ['He said "Reset it."', "Then he left."]),
    ("He said “Reset it.” Then he left.", ["He said “Reset it.”", "Then he left."]),
    ("The upload stalled... then resumed. Check the log.", ["The upload stalled... then resumed.", "Check the log."]),
    ("It stalled... Then it resumed.", ["It stalled...", "Then it resumed."]),
    ("Visit https://example.com/docs/v2.html?lang=en for details. Then log in.",
     ["Visit https://example.com/docs/v2.html?lang=en for details.", "Then log in."]),
    ("Upgrade to v2.0.1 today. It fixes LG-4031.", ["Upgrade to v2.0.1 today.", "It fixes LG-4031."]),
    ("Install Python 3.11.2. Then run it.", ["Install Python 3.11.2.", "Then run it."]),
    ("Connect to 10.0.0.1 first. Then log in.", ["Connect to 10.0.0.1 first.", "Then log in."]),
    ("He moved to the U.S. He liked it there.", ["He moved to the U.S.", "He liked it there."]),
    ("The price is 3.5. It rose later.", ["The price is 3.5.", "It rose later."]),
    ("Edit config.yaml and restart. Then test it.", ["Edit config.yaml and restart.", "Then test it."]),
    ("Is it expired? Yes, it is! Log in again.", ["Is it expired?", "Yes, it is!", "Log in again."]),
    ("1. Open the console. 2. Reset the password.", ["1. Open the console.", "2. Reset the password."]),
    # kept from the rules before: a semicolon and a line break end a claim
    ("The token expired; log in again.\nThen retry", ["The token expired;", "log in again.", "Then retry"]),
])
def test_english_sentence_ends(text, expected):
    assert sentences(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("错误码 LG-4031 表示令牌过期。Use e.g. the console to reset it. 然后重新登录！",
     ["错误码 LG-4031 表示令牌过期。", "Use e.g. the console to reset it.", "然后重新登录！"]),
    ("版本 3.5 修复了这个问题。请升级到 v2.0.1 版本。", ["版本 3.5 修复了这个问题。", "请升级到 v2.0.1 版本。"]),
    ("该团队位于 U.S. 东部。Dr. Wang 负责。", ["该团队位于 U.S. 东部。", "Dr. Wang 负责。"]),
    ("第一句话说完了；第二句话呢？“第三句！”第四句", ["第一句话说完了；", "第二句话呢？", "“第三句！”", "第四句"]),
    ("令牌已过期!请重新登录?好的", ["令牌已过期!", "请重新登录?", "好的"]),   # ASCII !? before Chinese
    ("令牌已过期. 请重新登录。", ["令牌已过期.", "请重新登录。"]),
])
def test_chinese_ends_still_split_and_english_inside_chinese_follows_the_english_rules(text, expected):
    assert sentences(text) == expected


def test_spans_are_exact_character_offsets():
    text = "  错误码表示过期。 The U.S. team fixed it.\n\n  Done now.  "
    spans = answer_sentence_spans(text)
    assert spans == [(2, 10), (11, 34), (38, 47)]
    assert [text[a:b] for a, b in spans] == ["错误码表示过期。", "The U.S. team fixed it.", "Done now."]


def test_a_chunk_id_with_dots_never_ends_a_claim_and_markers_keep_their_owner():
    ids = {"kb.md#2", "faq.v2.md#3", "手册.md#1"}
    answer = ("Reset it [kb.md#2]. The U.S. team, e.g. Dr. Li, owns v2.0.1 [faq.v2.md#3]. "
              "[手册.md#1] 令牌一小时后过期[kb.md#2]。Yes.")
    claims = split_claims(answer, ids)
    assert [(c.text, c.citations) for c in claims] == [
        ("Reset it.", ["kb.md#2"]),
        ("The U.S. team, e.g. Dr. Li, owns v2.0.1.", ["faq.v2.md#3", "手册.md#1"]),   # leading marker: claim before
        ("令牌一小时后过期。", ["kb.md#2"]),
    ]


def test_an_unknown_bracketed_text_stays_text_and_can_hold_dots():
    claims = split_claims("See [Fig. 2] for the U.S. limits. Done it.", ["kb#1"])
    assert [c.text for c in claims] == ["See [Fig. 2] for the U.S. limits.", "Done it."]
