"""The retrieval layer's question to the judge, in English and Chinese: grade each passage 0/1/2 for the
question, under the relevance guideline annotators follow (its grading sections are in the prompt)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from curate import PromptSet


BATCH = 8
"""Passages asked about in one request at most (the grades of eight, with reasons, fit in 800 answer tokens)."""


class PassageGrade(BaseModel):
    """The judge's grade of one numbered passage."""

    passage: int = Field(ge=1, le=BATCH)
    grade: Literal[0, 1, 2]
    reason: str = Field("", max_length=300)   # one sentence; with json_schema the endpoint holds it to this


class PassageGrades(BaseModel):
    """The judge's grades of the passages of one request, one entry per passage."""

    grades: list[PassageGrade] = Field(min_length=1, max_length=BATCH)


SYSTEM = {
    "en": ("You grade how relevant retrieved passages are to a question, under the relevance guideline you are "
           "given, as a careful annotator would. Reply with one JSON object and nothing else."),
    "zh": "你按照给定的相关性标注规范，像一位细心的标注员那样，判断检索到的片段与问题的相关程度。只输出一个 JSON 对象，不要输出其他内容。",
}

RETRIEVAL = PromptSet(SYSTEM, {
    "ret_grade": (PassageGrades, {
        "en": ("Relevance guideline (the rules annotators follow):\n{guideline}\n\n---\n\n"
               "Question: {question}\n{reference}\nPassages:\n{passages}\n\n"
               "Grade every passage 0, 1 or 2 for the question under the guideline: 2 states a fact the answer "
               "needs; 1 is part of such a fact or context needed to read it; 0 is anything else (same topic that "
               "does not help answer is 0). Grade each passage by its own text, not by the others.\n"
               'Reply as JSON: {{"grades": [{{"passage": 1, "grade": 0, 1 or 2, "reason": "one sentence"}}, ...]}} '
               "with one entry for every passage, in order."),
        "zh": ("相关性标注规范（标注员遵循的规则）：\n{guideline}\n\n---\n\n"
               "问题：{question}\n{reference}\n片段：\n{passages}\n\n"
               "按照规范给每个片段打 0、1 或 2 分：2 表示写明了回答所需的事实；1 表示只含该事实的一部分，或是读懂它所需的上下文；"
               "0 表示其他情况（主题相同但无助于回答的也是 0）。每个片段只按它自己的文字判断，不参考其他片段。\n"
               '按 JSON 输出：{{"grades": [{{"passage": 1, "grade": 0、1 或 2, "reason": "一句话理由"}}, ...]}}，'
               "每个片段一项，按顺序。")}),
})
