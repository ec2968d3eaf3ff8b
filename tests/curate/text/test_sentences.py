"""One sentence splitter for the chunker, the SQuAD reader, the leakage check's context and evalrun's
claims: Chinese 。！？； (closing quotes and brackets kept) and line breaks end a sentence; abbreviations,
initials, decimals, versions, URLs and e-mail addresses do not."""

import json
import re
from pathlib import Path

import pytest

from curate.text.sentences import sentence_spans

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = "The U.S. team, e.g. Dr. Li, fixed v2.0.1 at 9 a.m. today."


def sentences(text):
    return [text[a:b] for a, b in sentence_spans(text)]


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
    spans = sentence_spans(text)
    assert spans == [(2, 10), (11, 34), (38, 47)]
    assert [text[a:b] for a, b in spans] == ["错误码表示过期。", "The U.S. team fixed it.", "Done now."]


def test_the_issue_example_is_one_sentence():
    assert sentences(EXAMPLE) == [EXAMPLE]
    assert sentences("前言。" + EXAMPLE + " 然后重新登录！") == ["前言。", EXAMPLE, "然后重新登录！"]


# CMRC 2018-like paragraphs: quotes closing after the end mark, brackets, Latin names, numbers, spaces.
CMRC_LIKE = ("《战国无双3》（）是由光荣和ω-force开发的战国无双系列的正统第三续作。本作以三大故事为主轴，分别是以武田信玄"
             "等人为主的《关东三国志》。他曾说：“我会回来的。”随后离开。她问道：“你去哪里？”无人回答。"
             "（注：前方加☆者为猛将传新增关卡及地图。）合并本篇和猛将传的内容。Dr. Smith于1993年加入（Leandro Netto "
             "de Souza，1985年生）。版本3.2.1于2018年10月23日发布；次年停止支持！官网为http://www.example.com/a.b。"
             "生于1985年（一说1986年；另说1987年），后移居北京。")


def test_chinese_text_with_quotes_brackets_and_latin_names():
    assert sentences(CMRC_LIKE) == [
        "《战国无双3》（）是由光荣和ω-force开发的战国无双系列的正统第三续作。",
        "本作以三大故事为主轴，分别是以武田信玄等人为主的《关东三国志》。",
        "他曾说：“我会回来的。”", "随后离开。", "她问道：“你去哪里？”", "无人回答。",
        "（注：前方加☆者为猛将传新增关卡及地图。）", "合并本篇和猛将传的内容。",
        "Dr. Smith于1993年加入（Leandro Netto de Souza，1985年生）。",
        "版本3.2.1于2018年10月23日发布；", "次年停止支持！", "官网为http://www.example.com/a.b。",
        "生于1985年（一说1986年；另说1987年），后移居北京。"]


SCIFACT_LIKE = ("Alterations of the architecture of cerebral white matter were measured, as described by Huppi et al. "
                "in 1998. Relative anisotropy, i.e. the degree of directionality, was higher in the central white "
                "matter (Fig. 2) than in the periphery (approx. 0.4 vs. 0.3; P < 0.001). We used Eq. 3 of ref. 12, "
                "cf. Suppl. Table 1. Mean diffusivity decreased by 3.5 µm²/ms (95% CI, 2.1-4.9). Data are "
                "at https://doi.org/10.1000/xyz.123 and from j.doe@uni.edu. Conclusions: it matures early.")


def test_an_abstract_with_et_al_ie_fig_and_numbers():
    assert sentences(SCIFACT_LIKE) == [
        "Alterations of the architecture of cerebral white matter were measured, as described by Huppi et al. in 1998.",
        "Relative anisotropy, i.e. the degree of directionality, was higher in the central white matter (Fig. 2) "
        "than in the periphery (approx. 0.4 vs. 0.3; P < 0.001).",
        "We used Eq. 3 of ref. 12, cf. Suppl. Table 1.",
        "Mean diffusivity decreased by 3.5 µm²/ms (95% CI, 2.1-4.9).",
        "Data are at https://doi.org/10.1000/xyz.123 and from j.doe@uni.edu.",
        "Conclusions: it matures early."]


def test_a_range_is_split_as_the_text_alone_would_be():
    text = "前言。" + EXAMPLE + " Next one."
    start = text.index("The")
    assert [text[a:b] for a, b in sentence_spans(text, start)] == [EXAMPLE, "Next one."]
    assert sentence_spans(text, start, start + 8) == [(start, start + 8)]


# -- every consumer splits with it ----------------------------------------------------------------

def test_the_chunker_never_cuts_inside_the_example_sentence():
    from curate.kb.chunking import structure_spans
    text = "A short one. " + EXAMPLE + " Another one."
    spans = structure_spans(text, size=len(EXAMPLE) + 2)
    assert [text[s.start:s.end] for s in spans] == ["A short one.", EXAMPLE, "Another one."]


def test_the_squad_reader_takes_the_whole_sentence_as_evidence(tmp_path):
    from curate.formats.squad import read_squad
    context = "前言。" + EXAMPLE + " Next one."
    path = tmp_path / "squad.json"
    path.write_text(json.dumps({"data": [{"title": "t", "paragraphs": [{"id": "p", "context": context, "qas": [
        {"id": "q", "question": "When?", "answers": [{"text": "9 a.m.", "answer_start": context.index("9 a.m.")}]}]}]}]}),
        encoding="utf-8")
    _, raws = read_squad(path)
    assert raws[0].fields["evidence"][0]["text"] == EXAMPLE


def test_the_leakage_context_sees_a_phrase_inside_the_sentence_as_part_of_it():
    from curate.checks.leakage.context import standing
    from curate.text.normalize import fold
    copy = "Li, fixed v2.0.1 at 9 a.m."
    start = EXAMPLE.index(copy)
    assert standing(EXAMPLE, start, start + len(copy), len(fold(copy))).whole is False


def test_claims_are_its_sentences():
    from evalrun.scoring.claims import split_claims
    assert [c.text for c in split_claims(EXAMPLE + " 令牌已过期。")] == [EXAMPLE, "令牌已过期。"]


@pytest.mark.parametrize("module", ["curate.kb.chunking", "curate.formats.squad", "curate.checks.leakage.context",
                                    "evalrun.scoring.claims", "evalrun.scoring.lexical"])
def test_each_consumer_holds_the_one_function(module):
    import importlib
    assert importlib.import_module(module).sentence_spans is sentence_spans


def test_nothing_else_splits_sentences_its_own_way():
    """No other module or benchmark imports sentencex or keeps a sentence-end pattern of its own."""
    own = ROOT / "curate" / "text" / "sentences.py"
    pattern = re.compile(r"import sentencex|from sentencex|_SENTENCE_END|_HARD_END|compile\(r?[\"']\[。")
    offenders = [str(p.relative_to(ROOT)) for folder in ("curate", "evalrun", "benchmarks", "examples")
                 for p in (ROOT / folder).rglob("*.py") if p != own and pattern.search(p.read_text(encoding="utf-8"))]
    assert offenders == []
