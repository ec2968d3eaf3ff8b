"""Questions written by a model from seed chunks: seeds spread over the bundled handbook and a Chinese
slice of CMRC 2018, the prompts in both languages, the model's quotes located in their chunks (or the
question refused, with why), a scripted endpoint end to end with its cache, the real local model's
HTTP path, and the estimate of what it costs."""

import json
import string
from collections import Counter
from pathlib import Path

import pytest
from pydantic import ValidationError

from curate.formats.squad import read_squad
from curate.generate.estimate import EXPECTED_QUESTION, Step, closed_book_expected, cost, estimate
from curate.generate.filters import closed_book_verdicts
from curate.generate.passages import chunk_passages
from curate.generate.prompts import (
    GENERATION,
    MAX_TOKENS,
    KeyPoint,
    PassageKeyPoint,
    TwoPassageQuestion,
    WrittenQuestion,
)
from curate.generate.written import (
    NO_CONDITION,
    SHORT,
    TAKEN,
    THIN,
    Seed,
    body,
    candidate_from,
    candidates_from,
    closed_book_answers,
    closed_book_requests,
    has_condition,
    locate,
    prompt_of,
    requests,
    seeds,
    thin,
    wanted,
)
from curate.judge.budget import messages_tokens
from curate.judge.client import Judge
from curate.judge.config import JudgeConfig
from curate.kb import chunk_documents, read_documents, sha256_text
from curate.records import Chunk, ChunkerSettings
from curate.records.generated import Candidate
from curate.text.normalize import language_of

from tests.support.processes import PATIENCE   # a busy machine answers slowly: a safety net, not a limit
from tests.support.servers import ScriptedServer

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
ALL = ("single", "multi_evidence", "conditional")


def chunk(chunk_id, text, doc=None, start=0, **metadata):
    return Chunk(chunk_id=chunk_id, doc_id=doc or chunk_id.split("#")[0], text=text, start=start,
                 end=start + len(text), text_sha256=sha256_text(text), metadata=metadata)


@pytest.fixture(scope="module")
def handbook():
    documents = read_documents(sorted((EXAMPLES / "handbook" / "docs").glob("*.md")))
    return chunk_documents(documents, ChunkerSettings(kind="structure", size=500))


@pytest.fixture(scope="module")
def handbook_texts():
    return {d.doc_id: d.text for d in read_documents(sorted((EXAMPLES / "handbook" / "docs").glob("*.md")))}


@pytest.fixture(scope="module")
def cmrc():
    documents, _ = read_squad(EXAMPLES / "cmrc2018" / "cmrc2018_sample.json")
    return chunk_documents(documents[:60], ChunkerSettings(kind="structure", size=200))


def _by_id(chunks):
    return {c.chunk_id: c for c in chunks}


# -- seeds -------------------------------------------------------------------------------------------

def test_handbook_seeds_go_round_the_documents_then_round_each_documents_sections(handbook):
    found, _ = seeds(handbook, ["single"], {"single": 30}, seed=0)
    assert len(found) == wanted(30) == 45
    docs = [s.chunks[0].doc_id for s in found]
    every = set(docs)
    assert len(every) == 8
    assert len(set(docs[:8])) == 8       # no document gives a second seed before each gave one
    for doc in every:
        sections = [s.chunks[0].metadata["section"] for s in found if s.chunks[0].doc_id == doc]
        has = {c.metadata["section"] for c in handbook if c.doc_id == doc and not thin(c.text)}
        first = sections[:len(has)]
        assert len(set(first)) == len(first), (doc, sections)   # no section gives a second before the others
    again, _ = seeds(handbook, ["single"], {"single": 30}, seed=0)
    other, _ = seeds(handbook, ["single"], {"single": 30}, seed=1)
    assert [s.chunk_ids for s in again] == [s.chunk_ids for s in found]
    assert [s.chunk_ids for s in other] != [s.chunk_ids for s in found]


def test_cmrc_seeds_spread_over_its_documents_in_chinese(cmrc):
    found, skipped = seeds(cmrc, list(ALL), {"single": 20, "multi_evidence": 6, "conditional": 4}, seed=3)
    by_type = {kind: [s for s in found if s.qtype == kind] for kind in ALL}
    assert [s.qtype for s in found] == sorted((s.qtype for s in found), key=ALL.index)   # in the order of types
    assert len(by_type["single"]) == 30
    assert len({s.chunks[0].doc_id for s in by_type["single"]}) == 30      # 60 documents: none gives two
    assert all(s.language == "zh" and s.chunks[0].metadata.get("title") for s in found)
    for pair in by_type["multi_evidence"]:
        a, b = pair.chunks
        assert a.doc_id == b.doc_id and a.chunk_id != b.chunk_id
        # CMRC paragraphs have no sections: the two chunks are next to each other
        assert abs(int(a.chunk_id.split("#")[1]) - int(b.chunk_id.split("#")[1])) == 1
    assert len(by_type["multi_evidence"]) == 9
    assert by_type["conditional"] and all(
        any(word in s.chunks[0].text for word in ("如果", "若", "除非", "只有", "只要", "一旦", "否则", "当", "情况下"))
        for s in by_type["conditional"])
    assert skipped[NO_CONDITION] > 50
    used = [s.chunk_ids[0] for s in found if s.qtype != "multi_evidence"]
    assert len(used) == len(set(used))                 # a chunk seeds one single or conditional question


def test_multi_evidence_pairs_are_related_and_never_copies(handbook):
    neighbours = {}
    for a, b in zip(handbook, handbook[1:]):
        if a.doc_id == b.doc_id:
            neighbours.setdefault(a.chunk_id, [a.chunk_id]).append(b.chunk_id)
            neighbours.setdefault(b.chunk_id, [b.chunk_id]).append(a.chunk_id)
    found, _ = seeds(handbook, ["multi_evidence"], {"multi_evidence": 20}, seed=0, copies=neighbours)
    assert len(found) >= 8
    for pair in found:
        a, b = pair.chunks
        assert b.chunk_id not in neighbours.get(a.chunk_id, []), pair.chunk_ids
        assert a.doc_id == b.doc_id and a.metadata["section"] != b.metadata["section"]   # consecutive ones are copies here
    in_pairs = Counter(c for s in found for c in s.chunk_ids)
    assert max(in_pairs.values()) == 1


def test_copies_and_identical_text_never_pair_nor_seed_twice():
    same = "退款申请须在收货后30天内通过订单页面提交，逾期不予受理，运费由买家承担。"
    other = "退货商品须保持完好，附带原包装和全部配件，否则仓库有权拒收并退回给买家。"
    chunks = [chunk("a#0", same, section="售后"), chunk("a#1", same, section="退款", start=60),
              chunk("a#2", same, section="运费", start=120), chunk("a#3", other, section="退货", start=180)]
    copies = {"a#0": ["a#0", "a#1"], "a#1": ["a#0", "a#1"]}     # a#2 is a copy nobody declared
    pairs, skipped = seeds(chunks, ["multi_evidence"], {"multi_evidence": 4}, seed=0, copies=copies)
    assert [sorted(p.chunk_ids)[1] for p in pairs] == ["a#3"]         # each pair takes a#3: the only other text
    assert skipped[SHORT.format(qtype="multi_evidence")] == 5
    singles, skipped = seeds(chunks, ["single"], {"single": 4}, seed=0, copies=copies)
    ids = [s.chunk_ids[0] for s in singles]
    assert len(ids) == 2 and "a#3" in ids                  # one of the three same texts, and the other one
    assert skipped[TAKEN.format(qtype="single")] == 2


def test_thin_chunks_are_skipped_and_counted(handbook):
    little = [chunk("t#0", "# Trial\n\nSee the billing page.", section="Trial"),
              chunk("t#1", "## 试用\n\n请见计费页面。", doc="u", section="试用")]
    assert all(thin(c.text) for c in little)
    found, skipped = seeds([*little, *handbook], list(ALL), {"single": 40, "multi_evidence": 20, "conditional": 20}, 0)
    assert skipped[THIN] == 2 + 1          # the handbook's own: upgrade.zh.md#0, "当前版本为 3.4"
    assert not {"t#0", "t#1", "upgrade.zh.md#0"} & {c for s in found for c in s.chunk_ids}


def test_conditional_seeds_hold_a_condition_and_look_alikes_are_no_condition(handbook):
    found, skipped = seeds(handbook, ["conditional"], {"conditional": 40}, seed=0)
    assert len(found) >= 15 and skipped[SHORT.format(qtype="conditional")] == 60 - len(found)
    for s in found:
        assert has_condition(s.chunks[0].text), s.chunk_ids
        assert any(w in body(s.chunks[0].text) for w in ("If ", " if ", "unless", "When ", "Once ", "only when",
                                                         "如果", "除非", "一旦", "否则", "当", "只有", "若"))
    for text in ("Quotas reset unless the Owner buys a pack.", "只有所有者才能删除工作区。", "一旦运行迁移，就不能降级。",
                 "请先停用节点，否则降级会被推迟。", "当用量达到配额的 80% 时，会发送提醒。", "Only if both are set, the first wins."):
        assert has_condition(text), text
    for text in ("Check if the key is valid.", "It behaves as if nothing happened.", "Even if it fails, nothing is lost.",
                 "该镇有若干座寺庙。", "当时他住在北京。", "价格相当便宜。", "在麦当劳于1975年进入香港市场时，", "Tokens are shown only once."):
        assert not has_condition(text), text


# -- prompts -----------------------------------------------------------------------------------------

def _fields(template):
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_task_is_written_in_english_and_in_chinese_with_every_payload_field_used(handbook, cmrc):
    tasks = {"gen_single", "gen_multi", "gen_conditional", "closed_book"}
    assert {name for name, _ in GENERATION.prompts} == tasks
    for task in tasks:
        en, zh = GENERATION.get(task, "en"), GENERATION.get(task, "zh")
        assert language_of(en.template) == "en" and language_of(zh.template) == "zh"
        assert language_of(zh.system) == "zh" and en.version != zh.version
        assert "according to the passage" not in zh.template
    found, _ = seeds(handbook, list(ALL), {"single": 1, "multi_evidence": 1, "conditional": 1}, seed=0)
    zh, _ = seeds(cmrc, list(ALL), {"single": 1, "multi_evidence": 1, "conditional": 1}, seed=0)
    asked = requests([*found, *zh])
    assert {p.name for p, _ in asked} == tasks - {"closed_book"} and {p.language for p, _ in asked} == {"en", "zh"}
    for (prompt, payload), s in zip(asked, [*found, *zh]):
        assert prompt.language == s.language and set(payload) == _fields(prompt.template)
        text = prompt.messages(payload)[1]["content"]
        assert all(c.text.strip()[:40] in text for c in s.chunks)
    prompt, payload = closed_book_requests([_candidate("x", "zh")])[0]
    assert set(payload) == _fields(prompt.template) == {"question"} and prompt.language == "zh"


def test_the_output_schemas_are_strict():
    with pytest.raises(ValidationError):
        WrittenQuestion(question="q" * 151, answer="a", key_points=[KeyPoint(point="p", quote="q")])
    with pytest.raises(ValidationError):
        WrittenQuestion(question="q", answer="a", key_points=[])
    with pytest.raises(ValidationError):
        TwoPassageQuestion(question="q", answer="a", key_points=[PassageKeyPoint(passage=1, point="p", quote="q")])
    with pytest.raises(ValidationError):
        PassageKeyPoint(passage=3, point="p", quote="q")


# -- the model's answer as a candidate ----------------------------------------------------------------

def _candidate(candidate_id, language):
    from curate.records.generated import Generation
    return Candidate(candidate_id=candidate_id, qtype="single", language=language, question="年假有几天？",
                     reference_answer="15 天", generation=Generation(method="llm", run="r", candidate_id=candidate_id))


def _single(quote, point="fact", question="How long is the trial of a new workspace?"):
    return WrittenQuestion(question=question, answer="30 days.", key_points=[KeyPoint(point=point, quote=quote)])


def test_an_exact_quote_is_the_evidence_with_its_document_offsets(handbook, handbook_texts):
    trial = _by_id(handbook)["billing.en.md#6"]
    seed = Seed("single", (trial,), "en")
    quote = "Every new workspace starts with a 30-day trial of the Enterprise plan."
    made = candidate_from(seed, _single(quote), run="g-1", model="m", prompt=prompt_of(seed))
    assert isinstance(made, Candidate)
    (evidence,) = made.evidence
    assert evidence.evidence_id == "e1" and evidence.grade == 2 and evidence.passage.text == quote
    assert handbook_texts["billing.en.md"][evidence.passage.start:evidence.passage.end] == quote
    assert evidence.passage.chunk_id == "billing.en.md#6" and evidence.passage.title == "Plans and billing"
    assert evidence.passage.section == "Plans and billing > Trial"
    assert made.key_points[0].evidence_ids == ["e1"] and made.language == "en" and made.qtype == "single"
    assert made.candidate_id == seed.candidate_id and made.candidate_id.startswith("single-")
    gen = made.generation
    assert (gen.method, gen.run, gen.model, gen.seed_chunks) == ("llm", "g-1", "m", ["billing.en.md#6"])
    assert gen.prompt_version == GENERATION.get("gen_single", "en").version


def test_a_quote_with_other_spacing_or_width_is_located_at_its_own_words():
    document = "前言。\n该马场共养马十 万 匹，为全国之最，年产值１２０万元。The Trial   lasts 30 days."
    text = document[4:]
    c = chunk("d#1", text, doc="d", start=4)
    seed = Seed("single", (c,), "zh")
    output = WrittenQuestion(question="该马场养马多少匹？", answer="十万匹，年产值120万元。", key_points=[
        KeyPoint(point="养马十万匹", quote="该马场共养马十万匹"),         # the corpus's segmentation spaces
        KeyPoint(point="年产值120万元", quote="年产值120万元"),           # full-width digits in the chunk
        KeyPoint(point="30 days", quote="the trial lasts 30 days")])    # case and white space
    made = candidate_from(seed, output, run="r", model="m", prompt=prompt_of(seed))
    assert isinstance(made, Candidate)
    assert [e.passage.text for e in made.evidence] == ["该马场共养马十 万 匹", "年产值１２０万元", "The Trial   lasts 30 days"]
    for e in made.evidence:
        assert document[e.passage.start:e.passage.end] == e.passage.text
    assert [k.evidence_ids for k in made.key_points] == [["e1"], ["e2"], ["e3"]]
    a, b = locate("该马场共养马……为全国之最", text)          # an ellipsis joins two parts found in order
    assert text[a:b] == "该马场共养马十 万 匹，为全国之最"


def test_a_made_up_or_too_short_quote_is_refused_with_why(handbook):
    seed = Seed("single", (_by_id(handbook)["billing.en.md#6"],), "en")
    made = candidate_from(seed, _single("Every new workspace starts with a 60-day trial."), run="r", model="m",
                          prompt=prompt_of(seed))
    assert made == "quote not in the seed chunk: 'Every new workspace starts with a 60-day trial.'"
    assert candidate_from(seed, _single("30"), run="r", model="m",
                          prompt=prompt_of(seed)) == "quote too short to be evidence: '30'"


def test_a_multi_evidence_answer_must_cite_both_chunks(handbook):
    chunks = _by_id(handbook)
    seed = Seed("multi_evidence", (chunks["billing.en.md#4"], chunks["billing.en.md#6"]), "en")
    one = "When the monthly quota is used up, the gateway answers with LG-4292 by default."
    two = "Every new workspace starts with a 30-day trial of the Enterprise plan."
    twice = TwoPassageQuestion(question="q?", answer="a", key_points=[
        PassageKeyPoint(passage=1, point="p", quote=one),
        PassageKeyPoint(passage=2, point="p", quote="The Owner can buy add-on packs of 20 million requests")])
    made = candidate_from(seed, twice, run="r", model="m", prompt=prompt_of(seed))
    assert made == "multi-evidence question built from one chunk"   # passage 2 cited, but both quotes are in 1
    both = TwoPassageQuestion(question="q?", answer="a", key_points=[
        PassageKeyPoint(passage=1, point="p", quote=one), PassageKeyPoint(passage=2, point="p", quote=two),
        PassageKeyPoint(passage=1, point="again", quote=one)])
    made = candidate_from(seed, both, run="r", model="m", prompt=prompt_of(seed))
    assert [e.passage.chunk_id for e in made.evidence] == ["billing.en.md#4", "billing.en.md#6"]
    assert [k.evidence_ids for k in made.key_points] == [["e1"], ["e2"], ["e1"]]
    assert made.generation.seed_chunks == ["billing.en.md#4", "billing.en.md#6"]


# -- a scripted endpoint, end to end -----------------------------------------------------------------

def _first_sentence(c):
    found = chunk_passages([c])[0]
    return c.text[found.start:found.end]


def _scripted(plan):
    """A scripted model: for the seed whose chunk texts the request holds (the one with the most chunks),
    its answer in `plan` (seed, answer); for a closed-book question, that it does not know."""
    def reply(messages):
        text = messages[1]["content"]          # the task (a repair follows it as the last message)
        if text.startswith(("Question:", "问题：")):
            return json.dumps({"answer": "I do not know." if text.startswith("Q") else "不知道。"})
        held = [(len(s.chunks), answer) for s, answer in plan if all(c.text in text for c in s.chunks)]
        return max(held)[1]
    return reply


def _answer(seed):
    if seed.qtype == "conditional" and seed.language == "zh":
        return "not json"                      # unparsable twice (the answer, then the repair)
    points = [{"passage": k, "point": "fact", "quote": _first_sentence(c)} for k, c in enumerate(seed.chunks, 1)]
    question = (f"{seed.candidate_id} 的工作区试用期有多长？" if seed.language == "zh"    # one question per seed
                else f"How long is the trial of {seed.candidate_id}?")
    return json.dumps({"question": question, "answer": "fact", "key_points": points})


def test_requests_answers_and_candidates_end_to_end_then_the_cache_answers(handbook, tmp_path):
    found, _ = seeds(handbook, list(ALL), {"single": 2, "multi_evidence": 1, "conditional": 2}, seed=0)
    plan = [(s, _answer(s)) for s in found]
    server = ScriptedServer(_scripted(plan))
    try:
        config = JudgeConfig(base_url=server.base_url, model="writer", max_tokens=MAX_TOKENS, concurrency=2)
        first = Judge(config, tmp_path / "cache")
        verdicts = first.ask_many([(p, payload, 0) for p, payload in requests(found)])
        candidates, failed = candidates_from(found, verdicts, run="g-1", model="writer")
        broken = [s for s, answer in plan if answer == "not json"]
        assert len(found) == 3 + 2 + 3 and broken
        assert {s.candidate_id for s in broken} == set(failed)
        assert all(why.startswith("no answer from the model: unparsable answer") for why in failed.values())
        assert len(candidates) == len(found) - len(broken)
        for candidate in candidates:
            chunks = {c.chunk_id: c for c in handbook}
            assert all(chunks[e.passage.chunk_id].text.count(e.passage.text) for e in candidate.evidence)
            assert len({e.passage.chunk_id for e in candidate.evidence}) == (2 if candidate.qtype == "multi_evidence"
                                                                            else 1)
        asked = closed_book_requests(candidates)
        answers, why = closed_book_answers(candidates, first.ask_many([(p, payload, 0) for p, payload in asked]))
        assert set(answers) == {c.candidate_id for c in candidates} and why == {}
        checked = closed_book_verdicts(candidates, answers, keep=False, why=why)
        assert all(c.filters["closed_book"].passed is True for c in checked)
        sent = server.requests
        assert sent == first.stats.requests == len(found) + len(broken) + len(candidates)   # a repair each broken one

        second = Judge(config, tmp_path / "cache")
        again = second.ask_many([(p, payload, 0) for p, payload in requests(found) + asked])
        assert server.requests == sent and second.stats.requests == 0
        assert second.stats.cache_hits == len(found) + len(candidates)
        assert [v.unscored for v in again[:len(found)]] == [v.unscored for v in verdicts]
        steps = estimate({"write": requests(found), "closed_book": asked}, max_tokens=MAX_TOKENS, judge=second)
        assert [(s.calls, s.cached, s.input_tokens) for s in steps] == [(0, len(found), 0), (0, len(candidates), 0)]
        assert cost(steps, (1.0, 2.0)) == 0.0 and cost(steps, None) is None
    finally:
        server.close()


# -- the real HTTP path: llama.cpp's server with SmolLM2-135M ---------------------------------------

def test_the_real_local_model_writes_through_the_same_path(handbook, cmrc, tmp_path, llama):
    config = JudgeConfig(base_url=llama.base_url, model="smollm2", max_tokens=MAX_TOKENS, timeout=PATIENCE,
                         concurrency=2, response_format="json_schema")
    judge = Judge(config, tmp_path / "cache")
    chosen = [Seed("single", (_by_id(handbook)["billing.en.md#6"],), "en"), Seed("single", (cmrc[0],), "zh")]
    verdicts = judge.ask_many([(p, payload, 0) for p, payload in requests(chosen)])
    assert judge.stats.requests >= 2 and judge.stats.prompt_tokens > 0
    for seed, verdict in zip(chosen, verdicts):
        assert (verdict.output is None) != (verdict.unscored is None)          # parsed, or unscored with why
        if verdict.output is None:
            assert verdict.unscored.startswith(("unparsable answer", "refusal")), verdict.unscored
            continue
        assert isinstance(verdict.output, WrittenQuestion)
        made = candidate_from(seed, verdict.output, run="r", model="smollm2", prompt=prompt_of(seed))
        assert isinstance(made, (Candidate, str))
        print(seed.language, verdict.output.model_dump(), "->", made if isinstance(made, str) else made.evidence)
    made, failed = candidates_from(chosen, verdicts, run="r", model="smollm2")
    assert len(made) + len(failed) == 2


# -- estimate ----------------------------------------------------------------------------------------

def test_the_estimate_adds_up_and_counts_cached_requests_apart(handbook, tmp_path):
    found, _ = seeds(handbook, list(ALL), {"single": 2, "multi_evidence": 1, "conditional": 1}, seed=0)
    asked = requests(found)
    config = JudgeConfig(base_url="http://127.0.0.1:9/v1", model="writer", prices={"writer": (0.5, 1.5)})
    judge = Judge(config, tmp_path / "cache",
                  transport=lambda messages: ('{"question": "q", "answer": "a", "key_points": []}', None, 1, 1))
    judge.ask(*asked[0])                     # unparsable (no key point): cached all the same
    assert judge.cached(*asked[0]) and not judge.cached(*asked[1])
    expected = closed_book_expected(found)
    assert len(expected) == len(found) and [p.language for p, _ in expected] == [s.language for s in found]
    assert expected[0][1]["question"] == EXPECTED_QUESTION[found[0].language]
    write, closed = estimate({"write": asked, "closed_book": expected}, max_tokens=400, judge=judge)
    assert (write.name, write.calls, write.cached) == ("write", len(asked) - 1, 1)
    assert write.input_tokens == sum(messages_tokens(p.messages(payload)) for p, payload in asked[1:])
    assert write.output_tokens == 400 * (len(asked) - 1)
    assert (closed.calls, closed.cached, closed.output_tokens) == (len(found), 0, 400 * len(found))
    assert closed.input_tokens == sum(messages_tokens(p.messages(payload)) for p, payload in expected)
    price = cost([write, closed], config.prices["writer"])
    assert price == ((write.input_tokens + closed.input_tokens) * 0.5
                     + (write.output_tokens + closed.output_tokens) * 1.5) / 1e6 and price > 0
    assert cost([write, closed], config.prices.get("other")) is None
    unjudged = estimate({"write": asked}, max_tokens=100, judge=None)
    assert unjudged == [Step("write", len(asked), write.input_tokens + messages_tokens(
        asked[0][0].messages(asked[0][1])), 100 * len(asked), 0)]
