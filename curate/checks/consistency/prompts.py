"""The consistency check's questions to the judge, in English and Chinese, with their verdicts."""

from __future__ import annotations

from curate.judge.prompts import PromptSet, verdict_model

AnswersQuestion = verdict_model("AnswersQuestion", ("yes", "no"))
KeyPointSupported = verdict_model("KeyPointSupported", ("supported", "not_supported"))
AnswerAgainstEvidence = verdict_model("AnswerAgainstEvidence", ("consistent", "contradicts"))
UnanswerableCheck = verdict_model("UnanswerableCheck", ("answerable", "unanswerable"), chunk=(str | None, None))

# The verdict that flags an item, per check.
NEGATIVE = {"answers_question": "no", "key_point_supported": "not_supported",
            "answer_against_evidence": "contradicts", "unanswerable_check": "answerable"}

SYSTEM = {
    "en": ("You review an evaluation set for a question-answering assistant. You are strict and brief. "
           "Reply with one JSON object and nothing else."),
    "zh": "你负责审核问答助手的评测集，判断严格、表述简洁。只输出一个 JSON 对象，不要输出其他内容。",
}

CONSISTENCY = PromptSet(SYSTEM, {
    "answers_question": (AnswersQuestion, {
        "en": ("Question: {question}\nReference answer: {answer}\n\n"
               "Does the reference answer respond to this question - the same subject, the thing asked - rather "
               "than to another question? Do not judge whether it is true.\n"
               'Reply as JSON: {{"verdict": "yes" or "no", "reason": "one sentence"}}'),
        "zh": ("问题：{question}\n参考答案：{answer}\n\n"
               "这个参考答案是否在回答这个问题（同一个对象、问的是同一件事），而不是在回答别的问题？不需要判断答案是否正确。\n"
               '按 JSON 输出：{{"verdict": "yes" 或 "no", "reason": "一句话理由"}}')}),
    "key_point_supported": (KeyPointSupported, {
        "en": ("Evidence:\n{evidence}\n\nKey point: {key_point}\n\n"
               "Is the key point stated or directly implied by the evidence above? Use only the evidence.\n"
               'Reply as JSON: {{"verdict": "supported" or "not_supported", "reason": "one sentence"}}'),
        "zh": ("证据：\n{evidence}\n\n要点：{key_point}\n\n"
               "上面的证据是否写明或直接蕴含这个要点？只依据证据判断。\n"
               '按 JSON 输出：{{"verdict": "supported" 或 "not_supported", "reason": "一句话理由"}}')}),
    "answer_against_evidence": (AnswerAgainstEvidence, {
        "en": ("Evidence:\n{evidence}\n\nQuestion: {question}\nReference answer: {answer}\n\n"
               "Does the reference answer contradict the evidence? Missing details are not a contradiction.\n"
               'Reply as JSON: {{"verdict": "consistent" or "contradicts", "reason": "one sentence"}}'),
        "zh": ("证据：\n{evidence}\n\n问题：{question}\n参考答案：{answer}\n\n"
               "参考答案是否与证据相矛盾？缺少细节不算矛盾。\n"
               '按 JSON 输出：{{"verdict": "consistent" 或 "contradicts", "reason": "一句话理由"}}')}),
    "unanswerable_check": (UnanswerableCheck, {
        "en": ("Question: {question}\n\nPassages from the knowledge base:\n{chunks}\n\n"
               "The question is marked as not answerable from the knowledge base. Does any passage above answer it?\n"
               'Reply as JSON: {{"verdict": "answerable" or "unanswerable", "chunk": "id of the passage that '
               'answers it, or null", "reason": "one sentence"}}'),
        "zh": ("问题：{question}\n\n知识库中的片段：\n{chunks}\n\n"
               "这个问题被标注为知识库无法回答。上面是否有片段能回答它？\n"
               '按 JSON 输出：{{"verdict": "answerable" 或 "unanswerable", "chunk": "能回答的片段编号，没有则为 null", '
               '"reason": "一句话理由"}}')}),
})
