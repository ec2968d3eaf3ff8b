"""The judge's prompts, written natively in Chinese and in English, each versioned by a hash of
its text and output schema."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, Field


class AnswersQuestion(BaseModel):
    verdict: Literal["yes", "no"]
    reason: str = Field(max_length=2000)


class KeyPointSupported(BaseModel):
    verdict: Literal["supported", "not_supported"]
    reason: str = Field(max_length=2000)


class AnswerAgainstEvidence(BaseModel):
    verdict: Literal["consistent", "contradicts"]
    reason: str = Field(max_length=2000)


class UnanswerableCheck(BaseModel):
    verdict: Literal["answerable", "unanswerable"]
    chunk: str | None = None
    reason: str = Field(max_length=2000)


def cut(text: str, limit: int) -> str:
    """Return `text` cut to `limit` characters (marked with an ellipsis), so a long passage cannot
    overflow a judge's context.

    >>> cut("abcdef", 3)
    'abc …'
    """
    return text if len(text) <= limit else text[:limit] + " …"


@dataclass(frozen=True)
class Prompt:
    """One judge task in one language."""

    name: str
    language: str
    system: str
    template: str          # str.format fields: the payload's keys
    schema: type[BaseModel]
    repair_text: str

    @cached_property
    def version(self) -> str:
        """Return 12 hex digits of the sha256 of the texts and the output schema."""
        material = json.dumps([self.name, self.language, self.system, self.template, self.repair_text,
                               self.schema.model_json_schema()], ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(material.encode("utf-8")).hexdigest()[:12]

    def messages(self, payload: dict) -> list[dict]:
        """Return the chat messages asking this prompt of `payload`."""
        return [{"role": "system", "content": self.system},
                {"role": "user", "content": self.template.format(**payload)}]

    def repair(self, problem: str) -> str:
        """Return the follow-up asking for valid JSON after an unparsable answer."""
        return self.repair_text.format(problem=problem)


SYSTEM_EN = ("You review an evaluation set for a question-answering assistant. You are strict and brief. "
             "Reply with one JSON object and nothing else.")
SYSTEM_ZH = "你负责审核问答助手的评测集，判断严格、表述简洁。只输出一个 JSON 对象，不要输出其他内容。"
REPAIR_EN = "Your reply could not be read ({problem}). Reply again with only the JSON object in the format asked."
REPAIR_ZH = "无法解析你的回复（{problem}）。请只按要求的格式重新输出一个 JSON 对象。"

_EN = {
    "answers_question": (
        "Question: {question}\nReference answer: {answer}\n\n"
        "Does the reference answer respond to this question - the same subject, the thing asked - rather than to "
        "another question? Do not judge whether it is true.\n"
        'Reply as JSON: {{"verdict": "yes" or "no", "reason": "one sentence"}}', AnswersQuestion),
    "key_point_supported": (
        "Evidence:\n{evidence}\n\nKey point: {key_point}\n\n"
        "Is the key point stated or directly implied by the evidence above? Use only the evidence.\n"
        'Reply as JSON: {{"verdict": "supported" or "not_supported", "reason": "one sentence"}}', KeyPointSupported),
    "answer_against_evidence": (
        "Evidence:\n{evidence}\n\nQuestion: {question}\nReference answer: {answer}\n\n"
        "Does the reference answer contradict the evidence? Missing details are not a contradiction.\n"
        'Reply as JSON: {{"verdict": "consistent" or "contradicts", "reason": "one sentence"}}',
        AnswerAgainstEvidence),
    "unanswerable_check": (
        "Question: {question}\n\nPassages from the knowledge base:\n{chunks}\n\n"
        "The question is marked as not answerable from the knowledge base. Does any passage above answer it?\n"
        'Reply as JSON: {{"verdict": "answerable" or "unanswerable", "chunk": "id of the passage that answers it, '
        'or null", "reason": "one sentence"}}', UnanswerableCheck),
}
_ZH = {
    "answers_question": (
        "问题：{question}\n参考答案：{answer}\n\n"
        "这个参考答案是否在回答这个问题（同一个对象、问的是同一件事），而不是在回答别的问题？不需要判断答案是否正确。\n"
        '按 JSON 输出：{{"verdict": "yes" 或 "no", "reason": "一句话理由"}}', AnswersQuestion),
    "key_point_supported": (
        "证据：\n{evidence}\n\n要点：{key_point}\n\n"
        "上面的证据是否写明或直接蕴含这个要点？只依据证据判断。\n"
        '按 JSON 输出：{{"verdict": "supported" 或 "not_supported", "reason": "一句话理由"}}', KeyPointSupported),
    "answer_against_evidence": (
        "证据：\n{evidence}\n\n问题：{question}\n参考答案：{answer}\n\n"
        "参考答案是否与证据相矛盾？缺少细节不算矛盾。\n"
        '按 JSON 输出：{{"verdict": "consistent" 或 "contradicts", "reason": "一句话理由"}}', AnswerAgainstEvidence),
    "unanswerable_check": (
        "问题：{question}\n\n知识库中的片段：\n{chunks}\n\n"
        "这个问题被标注为知识库无法回答。上面是否有片段能回答它？\n"
        '按 JSON 输出：{{"verdict": "answerable" 或 "unanswerable", "chunk": "能回答的片段编号，没有则为 null", '
        '"reason": "一句话理由"}}', UnanswerableCheck),
}

def prompt_set(tables: dict[str, dict], systems: dict[str, str]) -> dict[tuple[str, str], Prompt]:
    """Return {(name, language): Prompt} from {language: {name: (template, schema)}} and a system text
    per language ("en", "zh")."""
    repairs = {"en": REPAIR_EN, "zh": REPAIR_ZH}
    return {(name, language): Prompt(name, language, systems[language], template, schema, repairs[language])
            for language, table in tables.items() for name, (template, schema) in table.items()}


def pick(prompts: dict[tuple[str, str], Prompt], name: str, language: str) -> Prompt:
    """Return the prompt `name` in the item's language (English for any language but Chinese)."""
    return prompts[(name, "zh" if language == "zh" else "en")]


def versions_of(prompts: dict[tuple[str, str], Prompt]) -> dict[str, str]:
    """Return every prompt's version, by 'name/language'."""
    return {f"{p.name}/{p.language}": p.version for p in prompts.values()}


PROMPTS = prompt_set({"en": _EN, "zh": _ZH}, {"en": SYSTEM_EN, "zh": SYSTEM_ZH})


def prompt(name: str, language: str) -> Prompt:
    """Return the consistency prompt `name` in the item's language."""
    return pick(PROMPTS, name, language)


def versions() -> dict[str, str]:
    """Return every consistency prompt's version, by 'name/language'."""
    return versions_of(PROMPTS)
