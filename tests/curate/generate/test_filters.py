"""The filters of `curate generate` on candidates in memory: Chinese and English, segmentation spaces,
facts the evidence lacks, unseen texts, duplicates of items and of candidates, BM25 ranks on a small KB,
closed-book answers; nothing read or written."""

import numpy as np
import pytest

from curate.errors import CurateError
from curate.generate.filters import (
    APPLIED,
    apply_filters,
    closed_book_verdicts,
    decide,
    dropped_by,
    duplicates,
    grounded,
    language,
    standalone,
    tally,
)
from curate.index.embeddings import SemanticPass
from curate.index.kb_index import KBIndex
from curate.kb import sha256_text
from curate.records import Chunk, EvalItem
from curate.records.generated import (
    Candidate,
    CandidateEvidence,
    CandidateKeyPoint,
    FilterVerdict,
    Generation,
    Passage,
)

# A travel policy segmented with spaces (as some Chinese corpora are), full-width digits included.
POLICY_ZH = "报销 申请 须 在 差旅 结束 后 ３０ 日 内 提交 ， 逾期 不 予 受理 。"
HOTEL_2025 = "2025年 起 ， 苏黎世 住宿 标准 为 每晚 500 元 。"
REFUNDS_EN = "Refunds can be requested within 30 days of purchase."


def _candidate(question, *, cid="c1", lang="zh", answer=None, points=(), evidence=(), answerable=True,
               qtype="single"):
    """A candidate; `evidence` is (chunk id, text, grade) triples (e1, e2, ...), `points` (text, cited ids)."""
    return Candidate(
        candidate_id=cid, qtype=qtype, language=lang, question=question, reference_answer=answer,
        answerable=answerable,
        key_points=[CandidateKeyPoint(text=text, evidence_ids=list(cited)) for text, cited in points],
        evidence=[CandidateEvidence(evidence_id=f"e{n}", grade=grade,
                                    passage=Passage(chunk_id=chunk, doc_id=chunk.split("#")[0], text=text))
                  for n, (chunk, text, grade) in enumerate(evidence, 1)],
        generation=Generation(method="llm", run="r1", candidate_id=cid))


def _item(item_id, question, lang="zh", status="draft", groups=None):
    return EvalItem(id=item_id, question=question, language=lang, source="human", status=status,
                    asker_groups=groups)


# -- grounded --------------------------------------------------------------------------------------

def test_a_chinese_fact_is_found_through_segmentation_spaces_and_full_width_digits():
    candidate = _candidate("差旅报销申请最晚什么时候提交？", answer="出差结束后30日内提交，逾期不予受理。",
                           points=[("差旅结束后30日内提交报销申请", ["e1"]), ("逾期不予受理", ["e1"])],
                           evidence=[("policy.zh#2", POLICY_ZH, 2)])
    assert grounded(candidate) == FilterVerdict(passed=True, reason="3 claims found in chunk policy.zh#2")
    horses = _candidate("马场有多少匹马？", answer="马场共有十万匹马",
                        evidence=[("farm#0", "该 马场 共 有 马 十 万 匹 ， 为 全国 之 最 。", 2)])
    assert grounded(horses).passed is True


def test_a_reworded_and_reordered_answer_is_grounded_in_chinese_and_english():
    zh = _candidate("差旅报销的期限是多久？", answer="员工需在出差结束后30天内提交报销申请",
                    evidence=[("policy.zh#2", POLICY_ZH, 2)])
    en = _candidate("How long do I have to ask for a refund?", lang="en",
                    answer="A refund can be requested within 30 days", evidence=[("errors.en#3", REFUNDS_EN, 2)])
    assert (grounded(zh).passed, grounded(en).passed) == (True, True)


def test_a_key_fact_missing_from_the_evidence_fails_naming_it_and_the_chunk():
    candidate = _candidate("How long do refunds take?", lang="en", answer="Refunds within 60 days",
                           evidence=[("errors.en#3", REFUNDS_EN, 2)])
    assert grounded(candidate) == FilterVerdict(
        passed=False, reason="the reference answer: key fact '60' not found in chunk errors.en#3")


def test_a_copy_of_the_evidence_with_another_year_is_not_grounded():
    candidate = _candidate("2026年苏黎世住宿标准是多少？", answer="2026年起苏黎世住宿标准为每晚500元",
                           points=[("2026年起每晚500元", ["e1"])], evidence=[("hotel#1", HOTEL_2025, 2)])
    verdict = grounded(candidate)
    assert verdict.passed is False
    assert verdict.reason == "key point 1: key fact '2026' not found in chunk hotel#1"


def test_a_date_is_found_in_another_format_and_a_number_never_inside_a_longer_one():
    start = [("policy.zh#0", "本 制度 自 2026年3月1日 起 施行 ， 每 人 每年 限额 300 元 。", 2)]
    assert grounded(_candidate("差旅制度何时施行？", answer="2026-03-01起施行", evidence=start)).passed is True
    assert grounded(_candidate("每人每年限额多少？", answer="每人每年限额30元", evidence=start)).reason == \
        "the reference answer: key fact '30' not found in chunk policy.zh#0"


@pytest.mark.parametrize("lang, answer, evidence", [
    ("en", "Managers must approve all travel abroad", ("errors.en#3", REFUNDS_EN, 2)),
    ("zh", "需要部门经理审批", ("policy.zh#2", POLICY_ZH, 2)),
])
def test_a_fact_the_evidence_does_not_state_fails_without_any_number(lang, answer, evidence):
    verdict = grounded(_candidate("Who approves it?" if lang == "en" else "谁来审批？", lang=lang, answer=answer,
                                  evidence=[evidence]))
    assert verdict.passed is False
    assert "barely in chunk" in verdict.reason and "needs 50%" in verdict.reason


def test_a_key_point_is_checked_against_the_evidence_it_cites_only():
    evidence = [("policy.zh#2", POLICY_ZH, 2), ("hotel#1", HOTEL_2025, 2)]
    right = _candidate("苏黎世住宿标准是多少？", points=[("每晚500元", ["e2"])], evidence=evidence)
    wrong = _candidate("苏黎世住宿标准是多少？", points=[("每晚500元", ["e1"])], evidence=evidence)
    assert grounded(right).passed is True
    assert grounded(wrong).reason == "key point 1: key fact '500' not found in chunk policy.zh#2"


def test_unanswerable_nothing_to_ground_and_a_near_miss_as_citation():
    probe = _candidate("LG-4034 是什么意思？", answerable=False, qtype="unanswerable",
                       evidence=[("errors#1", "LG-4031 表示访问令牌已过期。", 0)])
    assert grounded(probe).passed is True                               # a near miss is no evidence
    cited = probe.model_copy(update={"evidence": [probe.evidence[0].model_copy(update={"grade": 2})]})
    assert grounded(cited) == FilterVerdict(passed=False, reason="unanswerable, yet cites grade-2 evidence e1")
    empty = _candidate("LG-4031 是什么意思？", evidence=[("errors#1", "LG-4031 表示访问令牌已过期。", 2)])
    assert grounded(empty).reason == "nothing to ground: no key points and no reference answer"
    near_miss = _candidate("LG-4031 是什么意思？", points=[("访问令牌已过期", ["e1"])],
                           evidence=[("errors#1", "LG-4031 表示访问令牌已过期。", 0)])
    assert grounded(near_miss) == FilterVerdict(passed=False, reason="no grade-2 evidence to ground the answer in")


# -- standalone ------------------------------------------------------------------------------------

@pytest.mark.parametrize("question, words", [
    ("According to the passage, when does the access token expire?", "According to the passage"),
    ("According to the text, who approves travel?", "According to the text"),
    ("In this passage, which error means the token expired?", "In this passage"),
    ("What does the author think about remote work?", "the author"),
    ("Which deadline is mentioned above?", "mentioned above"),
    ("这段文字提到的报销期限是多久？", "这段文字"),
    ("这段话中年假有几天？", "这段话"),
    ("本文介绍的报销流程是什么？", "本文"),
    ("文中提到的错误码是什么意思？", "文中提到"),
    ("根据上文，住宿标准是多少？", "上文"),
    ("以上内容说的审批人是谁？", "以上内容"),
    ("根据材料，年假有几天？", "材料"),
    ("该段落中的期限是多久？", "该段落"),
    ("文章中提到的审批流程是什么？", "文章中提到"),
    ("根据上述规定，逾期报销怎么处理？", "上述"),
    ("Which of the following errors means the token expired?", "Which of the following"),
    ("下列哪项不属于差旅费用？", "下列"),
])
def test_a_question_that_points_to_an_unseen_text_is_rejected(question, words):
    verdict = standalone(_candidate(question))
    assert verdict == FilterVerdict(passed=False, reason=f"refers to a text the asker has not seen: '{words}'")


@pytest.mark.parametrize("question", [
    "According to the 2026 travel policy, what is the hotel limit in Zurich?",
    "What does LG-4031 mean in the context of single sign-on?",
    "Who is the author of the travel policy?",
    "《员工手册》中年假有几天？",
    "根据《2026年差旅制度》，苏黎世住宿标准是多少？",
    "日本文化中鞠躬代表什么？",
    "这段时间内提交的报销单由谁审批？",
    "建筑材料中哪些需要送检？",
])
def test_a_question_naming_a_real_document_or_using_those_characters_otherwise_stands_alone(question):
    assert standalone(_candidate(question)) == FilterVerdict(passed=True, reason="reads without the passage")


@pytest.mark.parametrize("question, reason", [
    ("", "empty question"),
    ("  ", "empty question"),
    ("年假？", "too short to stand alone (2 Chinese characters and words, needs 4)"),
    ("Hotel limit?", "too short to stand alone (2 words, needs 3)"),
])
def test_an_empty_or_too_short_question_does_not_stand_alone(question, reason):
    assert standalone(_candidate(question)) == FilterVerdict(passed=False, reason=reason)


def test_a_short_question_with_a_code_stands_alone():
    assert standalone(_candidate("LG-4031 是什么？")).passed is True       # 3 characters and a code


# -- language --------------------------------------------------------------------------------------

@pytest.mark.parametrize("question, lang", [
    ("LG-4031 是什么意思？", "zh"),                                       # a Chinese question quoting a code
    ("iPhone 15 怎么设置 Face ID？", "zh"),
    ("What does 《差旅报销管理办法》 say about taxi fares?", "en"),       # an English question naming a title
    ("What is 差旅报销管理办法?", "en"),                                   # ... even without the brackets
    ("How many days of annual leave does “员工手册” grant?", "en"),
])
def test_a_question_in_its_evidence_language_passes_mixed_ones_included(question, lang):
    other = {"zh": "en", "en": "zh"}[lang]
    assert language(_candidate(question, lang=lang)).passed is True
    assert language(_candidate(question, lang=other)).passed is False


def test_a_question_without_words_has_no_language_to_judge():
    assert language(_candidate("？？", lang="zh")) == FilterVerdict(passed=None, reason="no words to tell its language by")


def test_the_language_reason_names_both_languages():
    assert language(_candidate("What does LG-4031 mean?", lang="zh")) == FilterVerdict(
        passed=False, reason="asks in English; its evidence is Chinese")
    assert language(_candidate("LG-4031 是什么意思？", lang="en")).reason == "asks in Chinese; its evidence is English"


# -- duplicate -------------------------------------------------------------------------------------

def _duplicates(questions, existing, eligible=None, embed=None):
    candidates = [_candidate(q, cid=f"c{n}") for n, q in enumerate(questions, 1)]
    return duplicates(candidates, existing, eligible=eligible or [True] * len(candidates), embed=embed)


def test_a_copy_of_a_dataset_question_is_a_duplicate_exact_or_by_form():
    existing = [_item("t-1", "LG-4031 是什么意思？")]
    exact, form = _duplicates(["ＬＧ-4031是什么意思", "请问LG-4031是什么意思呢"], existing)
    assert exact == FilterVerdict(passed=False, reason="duplicate of item t-1 (exact 100)")
    assert form == FilterVerdict(passed=False, reason="duplicate of item t-1 (form 100)")


def test_questions_that_differ_only_in_a_code_or_a_year_are_not_duplicates():
    existing = [_item("t-1", "LG-4031 是什么意思？"), _item("t-2", "2025年差旅住宿标准是多少？")]
    code, year = _duplicates(["LG-4032 是什么意思？", "2026年差旅住宿标准是多少？"], existing)
    assert code.passed is True and "reads like item t-1 but asks about another number (lg4032 ≠ lg4031)" in code.reason
    assert year.passed is True and "item t-2" in year.reason and "2026 ≠ 2025" in year.reason
    # the same between two candidates of the run
    first, second = _duplicates(["LG-4031 是什么意思？", "LG-4032 是什么意思？"], [])
    assert (first.passed, second.passed) == (True, True)


def test_the_earlier_candidate_wins_unless_another_filter_dropped_it():
    first, second = _duplicates(["年假有几天？", "年假有几天"], [])
    assert first.passed is True
    assert second == FilterVerdict(passed=False, reason="duplicate of candidate c1 of this run (exact 100)")
    first, second = _duplicates(["年假有几天？", "年假有几天"], [], eligible=[False, True])
    assert (first.passed, second.passed) == (True, True)


def test_rejected_items_and_other_askers_questions_are_no_duplicates():
    existing = [_item("t-1", "年假有几天？", status="rejected"), _item("t-2", "年假有几天？", groups=["hr"])]
    (verdict,) = _duplicates(["年假有几天？"], existing)
    assert verdict.passed is True
    assert verdict.reason == "no duplicate among 1 dataset question and 0 other candidates (exact, form, fuzzy >= 90)"
    (quarantined,) = _duplicates(["年假有几天？"], [_item("t-3", "年假有几天？", status="quarantined")])
    assert quarantined.passed is False                                   # as check-dups: only rejected ones leave


def test_with_embeddings_a_paraphrase_is_a_semantic_duplicate():
    vectors = {"How long is an access token valid?": [1.0, 0.0], "What is the lifetime of an access token?": [1.0, 0.0],
               "Who approves travel abroad?": [0.0, 1.0]}

    def embed(questions):
        return SemanticPass("fake", 0.9, np.array([vectors[q] for q in questions], dtype=np.float32),
                            np.ones(len(questions), dtype=bool))
    existing = [_item("t-1", "How long is an access token valid?", lang="en")]
    paraphrase, other = _duplicates(["What is the lifetime of an access token?", "Who approves travel abroad?"],
                                    existing, embed=embed)
    assert paraphrase == FilterVerdict(passed=False, reason="duplicate of item t-1 (semantic 1)")
    assert other.reason.endswith("(exact, form, fuzzy >= 90, semantic >= 0.9)")
    (alone,) = _duplicates(["What is the lifetime of an access token?"], existing)
    assert alone.passed is True and "semantic" not in alone.reason     # no embed: nothing said of meaning


# -- retrievable (BM25 rank) -----------------------------------------------------------------------

def _chunk(chunk_id, text):
    return Chunk(chunk_id=chunk_id, doc_id=chunk_id.split("#")[0], text=text, text_sha256=sha256_text(text))


KB = KBIndex.of_chunks([
    _chunk("errors.en#1", "LG-4031 means the access token has expired; log in again."),
    _chunk("errors.en#2", "LG-4032 means the token signature is invalid."),
    _chunk("travel.en#1", "Hotels in Zurich are limited to CHF 250 a night."),
    _chunk("travel.en#2", "Flights must be booked through the travel portal."),
    _chunk("errors.zh#1", "LG-4031 表示访问令牌已过期，需要重新登录。"),
    _chunk("policy.zh#2", POLICY_ZH),
])
CHUNK_IDS = [c.chunk_id for c in KB.chunks]


def _ranked(candidate):
    (result,) = apply_filters([candidate], existing=[], bm25=KB.bm25, chunk_ids=CHUNK_IDS)
    return result.filters["retrievable"], result.generation.features


def test_the_bm25_rank_of_the_first_evidence_chunk_is_a_feature_never_a_drop():
    easy = _candidate("Which error means the token signature is invalid?", lang="en", answer="LG-4032",
                      evidence=[("errors.en#2", KB.chunks[1].text, 2)])
    assert _ranked(easy) == (FilterVerdict(passed=True, reason="BM25 rank 1 of 6 chunks"), {"bm25_rank": 1.0})
    # lg and 4031 are the question's only words in errors.en#1 (11 tokens) and in errors.zh#1 (9
    # tokens): the shorter Chinese chunk ranks first
    second = _candidate("What does LG-4031 mean?", lang="en", answer="The access token has expired",
                        evidence=[("errors.en#1", KB.chunks[0].text, 2)])
    assert _ranked(second) == (FilterVerdict(passed=True, reason="BM25 rank 2 of 6 chunks"), {"bm25_rank": 2.0})
    hard = _candidate("Which company portal must flights go through?", lang="en", answer="The travel portal",
                      evidence=[("errors.en#1", KB.chunks[0].text, 2)])    # no word of it in errors.en#1
    verdict, features = _ranked(hard)
    assert verdict == FilterVerdict(passed=True, reason="not in BM25's top 100: kept, a hard question")
    assert features == {"bm25_rank": 0.0}


def test_bm25_rank_of_a_chinese_question():
    candidate = _candidate("差旅报销申请须在多少日内提交？", answer="30日内", evidence=[("policy.zh#2", POLICY_ZH, 2)])
    assert _ranked(candidate) == (FilterVerdict(passed=True, reason="BM25 rank 1 of 6 chunks"), {"bm25_rank": 1.0})


def test_bm25_rank_when_there_is_nothing_to_rank():
    probe = _candidate("LG-4034 是什么意思？", answerable=False, qtype="unanswerable")
    assert _ranked(probe) == (FilterVerdict(passed=True, reason="unanswerable: no evidence to rank"), {})
    stale = _candidate("LG-4031 是什么意思？", answer="令牌过期", evidence=[("gone#9", "LG-4031 表示令牌过期", 2)])
    assert _ranked(stale)[0] == FilterVerdict(passed=None, reason="evidence chunk gone#9 not in the BM25 index")
    (no_index,) = apply_filters([stale], existing=[], bm25=None, chunk_ids=None)
    assert no_index.filters["retrievable"].passed is None and no_index.generation.features == {}
    with pytest.raises(CurateError, match="holds 6 chunks but 2 chunk ids"):
        apply_filters([stale], existing=[], bm25=KB.bm25, chunk_ids=CHUNK_IDS[:2])


# -- all together ----------------------------------------------------------------------------------

def test_apply_filters_gives_every_candidate_every_verdict_and_changes_nothing_given():
    candidates = [
        _candidate("LG-4031 是什么意思？", answer="访问令牌已过期，需要重新登录",
                   evidence=[("errors.zh#1", KB.chunks[4].text, 2)]),
        _candidate("根据上文，LG-4031 是什么意思？", cid="c2", answer="令牌已过期，需要重新登录", qtype="confusable",
                   evidence=[("errors.zh#1", KB.chunks[4].text, 2)]),
        _candidate("LG-4031是什么意思", cid="c3", answer="令牌已过期", evidence=[("errors.zh#1", KB.chunks[4].text, 2)]),
    ]
    result = apply_filters(candidates, existing=[], bm25=KB.bm25, chunk_ids=CHUNK_IDS)
    assert all(c.filters == {} and c.generation.features == {} for c in candidates)
    assert [list(c.filters) for c in result] == [list(APPLIED)] * 3
    assert [dropped_by(c) for c in result] == [[], ["standalone"], ["duplicate"]]
    assert result[2].filters["duplicate"].reason == "duplicate of candidate c1 of this run (exact 100)"
    assert [decide(c, keep_closed_book=False) for c in result] == [True, False, False]
    counts = tally(result)
    assert (counts.kept, counts.dropped) == (1, 2)
    assert dict(counts.by_filter) == {"standalone": 1, "duplicate": 1}
    assert (dict(counts.kept_by_qtype), dict(counts.dropped_by_qtype)) == ({"single": 1}, {"single": 1, "confusable": 1})


def test_a_candidate_failing_several_filters_names_them_in_a_fixed_order():
    candidate = _candidate("According to the passage, 多久？", lang="zh", answer="60天",
                           evidence=[("policy.zh#2", POLICY_ZH, 2)])
    (result,) = apply_filters([candidate], existing=[], bm25=None, chunk_ids=None)
    assert dropped_by(result) == ["grounded", "standalone", "language"]
    with pytest.raises(CurateError, match="has no verdict of grounded, standalone"):
        decide(candidate, keep_closed_book=False)


# -- closed book -----------------------------------------------------------------------------------

def _closed(candidate, answer, keep=False, why=None):
    (result,) = closed_book_verdicts([candidate], {candidate.candidate_id: answer}, keep=keep, why=why)
    return result.filters["closed_book"]


DEADLINE = _candidate("差旅报销申请须在多少日内提交？", answer="差旅结束后30日内", evidence=[("policy.zh#2", POLICY_ZH, 2)])


def test_a_closed_book_answer_stating_the_salient_facts_gets_it_right():
    verdict = _closed(DEADLINE, "一般要求在出差结束后 ３０ 天内提交报销。")
    assert verdict == FilterVerdict(passed=False, reason="answered without retrieval: states 30")
    kept = _closed(DEADLINE, "30天内", keep=True)
    assert kept == FilterVerdict(passed=False, reason="answered without retrieval: states 30; kept by --keep-closed-book")


def test_a_closed_book_answer_with_another_number_is_wrong():
    assert _closed(DEADLINE, "通常是60天。") == FilterVerdict(passed=True, reason="not answered without retrieval: misses 30")


@pytest.mark.parametrize("lang, answer, closed, right", [
    ("en", "Only administrators can run the upgrade command", "Administrators run the upgrade command.", True),
    ("en", "Only administrators can run the upgrade command", "Any user may do it from settings.", False),
    # run, upgrade and command but not who: 3 of 5 content words, under 80%
    ("en", "Only administrators can run the upgrade command", "Run the upgrade command from the settings page.",
     False),
    ("zh", "访问令牌已过期，需要重新登录", "这表示访问令牌过期了，请重新登录。", True),
    ("zh", "访问令牌已过期，需要重新登录", "这是签名无效的意思。", False),
    ("zh", "不可以退款", "可以退款", False),                             # all its characters but the negation
])
def test_without_salient_tokens_a_closed_book_answer_is_right_when_close_to_the_reference(lang, answer, closed, right):
    verdict = _closed(_candidate("x", lang=lang, answer=answer), closed)
    assert verdict.passed is (not right)
    assert verdict.reason.startswith("answered without retrieval" if right else "not answered without retrieval")


def test_an_unavailable_closed_book_answer_is_undecided_and_drops_nothing():
    verdict = _closed(DEADLINE, None, why={"c1": "timeout after 60 s"})
    assert verdict == FilterVerdict(passed=None, reason="closed-book answer unavailable: timeout after 60 s")
    (unasked,) = closed_book_verdicts([DEADLINE], {}, keep=False)
    assert unasked.filters["closed_book"].reason == "closed-book answer unavailable: not asked"
    probe = _candidate("LG-4034 是什么意思？", answerable=False, qtype="unanswerable")
    assert _closed(probe, "LG-4034 表示令牌过期") == FilterVerdict(passed=True, reason="unanswerable: not checked")


def test_keep_closed_book_keeps_a_candidate_the_closed_book_filter_failed():
    (filtered,) = apply_filters([DEADLINE], existing=[], bm25=KB.bm25, chunk_ids=CHUNK_IDS)
    (answered,) = closed_book_verdicts([filtered], {"c1": "30天内"}, keep=True)
    assert (decide(answered, keep_closed_book=True), decide(answered, keep_closed_book=False)) == (True, False)
    assert dropped_by(answered) == ["closed_book"]
    counts = tally([answered], keep_closed_book=True)
    assert (counts.kept, counts.tagged, counts.dropped) == (1, 1, 0)
