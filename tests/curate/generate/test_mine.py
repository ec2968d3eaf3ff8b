"""Mining confusable pairs and unanswerable probes from a KB, on the bundled examples and on messy
chunks: copies that differ only in a year, segmentation spaces, overlapping chunks, boilerplate,
rewordings, names told by their documents' titles."""

from pathlib import Path

import pytest

from curate.generate.core import mined_candidates
from curate.generate.mine import classify, differences, mine
from curate.generate.probes import probes
from curate.generate.templates import code_candidates, pair_candidate, pair_question, side_of
from curate.kb import chunk_documents, read_documents, sha256_text
from curate.records import Chunk, ChunkerSettings

HANDBOOK = Path(__file__).resolve().parents[3] / "examples" / "handbook" / "docs"


def chunk(chunk_id, text, doc=None, title=None, start=0):
    metadata = {"title": title} if title else {}
    return Chunk(chunk_id=chunk_id, doc_id=doc or chunk_id.split("#")[0], text=text, start=start,
                 end=start + len(text), text_sha256=sha256_text(text), metadata=metadata)


@pytest.fixture(scope="module")
def handbook():
    documents = read_documents(sorted(HANDBOOK.glob("*.md")))
    return chunk_documents(documents, ChunkerSettings(kind="structure", size=500))


def test_the_handbooks_near_codes_are_paired_within_each_language(handbook):
    mined = mine(handbook)
    pairs = {(p.token_a, p.token_b, p.a.doc_id.split(".")[1]) for p in mined.pairs}
    assert ("LG-4031", "LG-4032", "en") in pairs and ("LG-4031", "LG-4032", "zh") in pairs
    assert ("LG-4011", "LG-4012", "en") in pairs and ("LG-5021", "LG-5022", "zh") in pairs
    # in English, LG-4292 is named only after "Unlike LG-4291" or deep in a billing sentence: in passing
    assert not any("LG-4292" in pair and pair[2] == "en" for pair in pairs)
    assert ("LG-4291", "LG-4292", "zh") in pairs     # 每月配额用完后，网关默认返回 LG-4292。
    assert mined.left_out["codes never stated apart, or only in passing"] == 7
    for pair in mined.pairs:
        assert pair.kind == "near_code" and pair.difference == "code"
        assert pair.a.doc_id.split(".")[1] == pair.b.doc_id.split(".")[1]       # never across languages
        assert pair.token_a in pair.a.text and pair.token_b not in pair.a.text   # each side names only its own
        assert pair.token_b in pair.b.text and pair.token_a not in pair.b.text
    lg4031 = next(p for p in mined.pairs if (p.token_a, p.token_b) == ("LG-4031", "LG-4032")
                  and p.a.doc_id == "errors.en.md")
    assert lg4031.a.text.startswith("- LG-4031 (route scope not granted)")  # the list item that states it, whole
    assert "New scopes take effect within 60 seconds" in lg4031.a.text
    assert lg4031.a.start is not None and lg4031.a.chunk_id.startswith("errors.en.md#")


def test_one_question_per_code_with_every_near_code_as_a_near_miss(handbook):
    candidates = code_candidates(mine(handbook).pairs, "r")
    questions = [c.question for c in candidates]
    assert len(questions) == len(set(questions))
    en = next(c for c in candidates if c.question == "What does LG-4031 mean?")
    zh = next(c for c in candidates if c.question == "LG-4031 是什么意思？")
    assert en.language == "en" and zh.language == "zh"
    assert [e.grade for e in en.evidence][0] == 2 and all(e.grade == 0 for e in en.evidence[1:])
    near = " ".join(e.passage.text for e in en.evidence[1:])
    assert "LG-4032" in near and "LG-4011" in near and "LG-5031" in near
    assert all(e.passage.doc_id.endswith(".zh.md") for e in zh.evidence)
    assert en.generation.near_miss == [e.evidence_id for e in en.evidence[1:]]


def test_copies_that_differ_only_in_a_year_are_a_pair_and_asked_by_their_title():
    chunks = [chunk("a#0", "差旅补贴说明。2025年起，一线城市每日住宿补贴为 500 元，须凭发票报销。", title="2025年差旅制度"),
              chunk("b#0", "差旅补贴说明。2026 年起，一线城市每日住宿补贴为 650 元，须凭发票报销。", title="2026年差旅制度")]
    pair = mine(chunks).pairs[0]
    assert (pair.kind, pair.difference) == ("near_copy", "date")
    assert {pair.token_a, pair.token_b} == {"2025", "2026"}
    question, _ = pair_question(pair)
    assert question.startswith("根据《") and "何时" in question
    own = pair.a.title
    assert own in question and ({"2025年差旅制度", "2026年差旅制度"} - {own}).pop() not in question


def test_segmentation_spaces_and_overlapping_chunks_make_no_pair():
    text = "该马场共养马十 万 匹，为全国之最，每年向军队输送战马。"
    chunks = [chunk("d#0", text, doc="d"), chunk("d#1", text.replace("十 万 匹", "十万匹"), doc="d", start=3),
              chunk("e#0", "该马场共养马十万匹，为全国之最，每年向军队输送战马。", doc="e")]
    assert mine(chunks).pairs == []   # the same passage, spaced or in two chunks, is one passage


def test_a_wording_change_is_no_pair_and_a_negation_is():
    chunks = [chunk("a#0", "The refund is issued to the original card within ten days.", title="Refunds A"),
              chunk("b#0", "The refund is sent to the original card within ten days.", title="Refunds B"),
              chunk("c#0", "锄骨齿带三角形，其后方无突出部，上下颌具细齿。", title="交叉笛鲷"),
              chunk("d#0", "锄骨齿带三角形，其后方具有突出部，上下颌具细齿。", title="火斑笛鲷")]
    mined = mine(chunks)
    assert [p.difference for p in mined.pairs] == ["negation"]
    assert mined.left_out["differs in wording, not only in a code, number, date, name or negation"] == 1
    question, template = pair_question(mined.pairs[0])
    assert template == "yes_no" and question.endswith("吗？")


def test_names_are_told_by_each_sides_own_title_and_boilerplate_is_left_out():
    chunks = [chunk("s1#0", "安贞门站位于北京市朝阳区，是北京地铁10号线的一个车站。", title="安贞门站"),
              chunk("s2#0", "劲松站位于北京市朝阳区，是北京地铁10号线的一个车站。", title="劲松站")]
    chunks += [chunk(f"p{k}#0", f"本页最后更新于 2024 年 {k} 月 {k + 3} 日，如有疑问请联系管理员。") for k in range(1, 9)]
    mined = mine(chunks)
    names = [p for p in mined.pairs if p.difference == "name"]
    assert len(names) == 1 and {names[0].token_a, names[0].token_b} == {"安贞门站", "劲松站"}
    assert pair_question(names[0])[0] in ("安贞门站是什么？", "劲松站是什么？")
    assert all(p.difference == "name" for p in mined.pairs)
    assert mined.left_out["boilerplate (its shape repeats in many passages)"] > 0


def test_two_sides_only_the_answer_tells_apart_give_no_question():
    chunks = [chunk("d#0", "余杭站设置基本站台和侧式站台各1座，到发线2条。", doc="d", title="余杭站"),
              chunk("d#1", "余杭站设置基本站台和侧式站台各1座，到发线4条。", doc="d", title="余杭站", start=40)]
    pair = mine(chunks).pairs[0]
    assert pair.difference == "number"
    assert pair_candidate(pair, "r") == "nothing but the answer tells the two sides apart"


def test_templated_facts_of_a_few_pages_are_pairs_and_both_sides_get_asked():
    # a dozen fish species of a wiki of 60 pages: each page's fin counts are facts, not boilerplate
    chunks = [chunk(f"f{k}#0", f"背鳍硬棘13枚、背鳍软条14至{k}枚、臀鳍硬棘2枚。", title=f"雀鲷{k}") for k in range(10, 22)]
    chunks += [chunk(f"o{k}#0", f"第{k}篇条目的正文讲述一件完全不同的事情，编号{k * 7919}。", title=f"条目{k}") for k in range(48)]
    pairs = [p for p in mine(chunks).pairs if p.a.doc_id.startswith("f")]
    asked = [side_of(p).a.chunk_id for p in pairs]
    assert len(pairs) > 4 and asked != [p.a.chunk_id for p in pairs]   # some pairs are asked from their b side
    assert all(p.difference == "number" for p in pairs)


def test_differences_and_their_kinds():
    assert differences("2003年4月7日起投入服务。", "2005年3月7日起投入服务。") == [("2003年4月7日", "2005年3月7日")]
    assert differences("上颌前端具2犬齿", "上颌前端具2至4犬齿") == [("2", "2至4")]
    assert classify("v2.0.1", "v2.0.2") is None and classify("2.0.1", "2.0.2") == "number"
    assert classify("", "高于候车室6米") is None


def test_probes_are_absent_from_every_chunk_and_shaped_like_the_kbs(handbook):
    found = probes(handbook, mine(handbook))
    codes = [p for p in found if p.kind == "code"]
    assert {p.token for p in codes} == {"LG-5042"} and len(codes) == 2     # one per language
    text = "\n".join(c.text for c in handbook)
    assert all(p.token not in text for p in found)
    assert all(near.text and near.chunk_id for p in found for near in p.near)


def test_a_code_beside_chinese_characters_is_in_the_kb():
    chunks = [chunk("a#0", "- LG-4031：路由权限未授予，请联系管理员处理。"), chunk("b#0", "- LG-4032：来源地址不在白名单中，请添加。"),
              chunk("c#0", "网关返回错误码LG-4033时，工作区已停用。")]
    tokens = {p.token for p in probes(chunks, mine(chunks))}
    assert "LG-4033" not in tokens and tokens == {"LG-4034"}


def test_name_probes_keep_the_kind_of_the_title():
    chunks = [chunk(f"{k}#0", f"{name}是一个车站，位于城市的东部，每日客流约两万人次。", title=name)
              for k, name in enumerate(["大沙东站", "安贞门站", "劲松站"])]
    names = [p for p in probes(chunks, mine(chunks)) if p.kind == "name"]
    assert names and all(p.token.endswith("站") and p.token not in ("大沙东站", "安贞门站", "劲松站") for p in names)
    assert all(p.looks_like[0] in ("大沙东站", "安贞门站", "劲松站") for p in names)


def test_the_same_question_from_several_pairs_is_one_candidate_with_every_near_miss():
    # one species' fin counts beside three others': asked once, the three as near misses
    counts = {"火斑笛鲷": 13, "黄足笛鲷": 14, "银纹笛鲷": 12, "黄鳍紫鱼": 11}
    chunks = [chunk(f"f{k}#0", f"背鳍硬棘10枚，软条{n}枚；", title=name) for k, (name, n) in enumerate(counts.items())]
    made = mined_candidates(chunks, ["confusable"], "r")
    questions = [c.question for c in made.candidates]
    assert len(questions) == len(set(questions)) >= 2
    widest = max(made.candidates, key=lambda c: len(c.evidence))
    assert len(widest.evidence) >= 3 and widest.generation.near_miss == [e.evidence_id for e in widest.evidence[1:]]
    assert len({e.passage.text for e in widest.evidence}) == len(widest.evidence)


def test_the_codes_a_passage_names_are_those_the_search_for_each_finds():
    # named_codes keeps a passage's names without its text: `other` is named where this search finds it
    import random
    import re

    from curate.generate.mine import named_codes

    rng = random.Random(1)
    alphabet = list("ABLGXa-_.0123456789٣４ 、和é")
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14)))
        names = named_codes(text)
        candidates = {text[i:j] for i in range(len(text)) for j in range(i + 3, len(text) + 1)
                      if re.fullmatch(r"[A-Z]{1,8}[-_]?\d{2,8}", text[i:j])}
        assert names <= candidates
        for other in candidates:
            found = re.search(rf"(?<![A-Za-z0-9_-]){re.escape(other)}(?![A-Za-z0-9_])", text)
            assert bool(found) == (other in names), (text, other)
