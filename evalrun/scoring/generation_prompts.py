"""The generation layer's questions to the judge, in English and Chinese, with their verdicts."""

from __future__ import annotations

from curate import PromptSet, verdict_model

KeyPointCovered = verdict_model("KeyPointCovered", ("covered", "missing", "contradicted"))
ClaimSupported = verdict_model("ClaimSupported", ("supported", "not_supported"))
AnswerRelevant = verdict_model("AnswerRelevant", ("yes", "partly", "no"))
CitationSupports = verdict_model("CitationSupports", ("supports", "does_not_support"))

SYSTEM = {
    "en": ("You grade the answers of a question-answering assistant. You are strict and brief. "
           "Reply with one JSON object and nothing else."),
    "zh": "你负责评判问答助手的回答，判断严格、表述简洁。只输出一个 JSON 对象，不要输出其他内容。",
}

GENERATION = PromptSet(SYSTEM, {
    "gen_key_point": (KeyPointCovered, {
        "en": ("Question: {question}\nAnswer to grade: {answer}\n\nKey point: {key_point}\n\n"
               "Does the answer state this key point (covered), leave it out (missing), or say something that "
               "conflicts with it (contradicted)? Wording may differ; judge the meaning.\n"
               'Reply as JSON: {{"verdict": "covered", "missing" or "contradicted", "reason": "one sentence"}}'),
        "zh": ("问题：{question}\n待评回答：{answer}\n\n要点：{key_point}\n\n"
               "这个回答是写到了该要点（covered）、没有提到（missing），还是说了与之相矛盾的内容（contradicted）？"
               "措辞可以不同，按意思判断。\n"
               '按 JSON 输出：{{"verdict": "covered"、"missing" 或 "contradicted", "reason": "一句话理由"}}')}),
    "gen_claim_supported": (ClaimSupported, {
        "en": ("Context given to the assistant:\n{context}\n\nStatement from its answer: {claim}\n\n"
               "Is the statement supported by the context above - stated there or directly implied? Use only the "
               "context, not what you know.\n"
               'Reply as JSON: {{"verdict": "supported" or "not_supported", "reason": "one sentence"}}'),
        "zh": ("提供给助手的上下文：\n{context}\n\n回答中的一句陈述：{claim}\n\n"
               "上面的上下文是否支持这句陈述（写明或直接蕴含）？只依据上下文，不要用你自己的知识。\n"
               '按 JSON 输出：{{"verdict": "supported" 或 "not_supported", "reason": "一句话理由"}}')}),
    "gen_answer_relevance": (AnswerRelevant, {
        "en": ("Question: {question}\nAnswer: {answer}\n\n"
               "Does the answer address the question asked? Do not judge whether it is true. "
               '"partly" when it addresses only part of the question or mostly talks about something else.\n'
               'Reply as JSON: {{"verdict": "yes", "partly" or "no", "reason": "one sentence"}}'),
        "zh": ("问题：{question}\n回答：{answer}\n\n"
               "这个回答是否针对所问的问题？不需要判断是否正确。只回答了问题的一部分，或大部分在说别的事，选 \"partly\"。\n"
               '按 JSON 输出：{{"verdict": "yes"、"partly" 或 "no", "reason": "一句话理由"}}')}),
    "gen_citation": (CitationSupports, {
        "en": ("Passage [{chunk_id}]:\n{passage}\n\nStatements that cite this passage:\n{claims}\n\n"
               "Does the passage support at least one of these statements - state it or directly imply it?\n"
               'Reply as JSON: {{"verdict": "supports" or "does_not_support", "reason": "one sentence"}}'),
        "zh": ("片段 [{chunk_id}]：\n{passage}\n\n引用了这个片段的陈述：\n{claims}\n\n"
               "这个片段是否至少支持其中一句陈述（写明或直接蕴含）？\n"
               '按 JSON 输出：{{"verdict": "supports" 或 "does_not_support", "reason": "一句话理由"}}')}),
})
