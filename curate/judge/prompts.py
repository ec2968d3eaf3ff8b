"""Judge prompts: each task written natively in English and in Chinese, with the model its JSON
verdict must fit, and a version that is a hash of the texts and that model.

A `PromptSet` is one family of tasks (the consistency checks, the generation metrics): it is
built from a system text per language and, per task, a verdict model and a template per language.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

LANGUAGES = ("en", "zh")
REPAIR = {
    "en": "Your reply could not be read ({problem}). Reply again with only the JSON object in the format asked.",
    "zh": "无法解析你的回复（{problem}）。请只按要求的格式重新输出一个 JSON 对象。",
}


class VerdictOutput(BaseModel):
    verdict: str
    reason: str = Field(max_length=2000)


def verdict_model(name: str, choices: tuple[str, ...], **extra: tuple[Any, Any]) -> type[VerdictOutput]:
    """Return the model of a verdict that is one of `choices`, with a reason, and `extra` fields
    given as name=(type, default).

    >>> YesNo = verdict_model("YesNo", ("yes", "no"))
    >>> YesNo.model_validate({"verdict": "yes", "reason": "it says so"}).verdict
    'yes'
    """
    return create_model(name, __base__=VerdictOutput, verdict=(Literal[choices], ...), **extra)


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


class PromptSet:
    """One family of judge tasks, each in English and Chinese with its verdict model."""

    def __init__(self, systems: Mapping[str, str],
                 tasks: Mapping[str, tuple[type[VerdictOutput], Mapping[str, str]]]):
        """`systems`: the system text per language; `tasks`: name -> (verdict model, template per language)."""
        self.prompts: dict[tuple[str, str], Prompt] = {
            (name, language): Prompt(name, language, systems[language], templates[language], model, REPAIR[language])
            for name, (model, templates) in tasks.items() for language in LANGUAGES}

    def get(self, name: str, language: str) -> Prompt:
        """Return the prompt `name` in an item's language (English for any language but Chinese)."""
        return self.prompts[(name, "zh" if language == "zh" else "en")]

    def versions(self) -> dict[str, str]:
        """Return every prompt's version, by 'name/language'."""
        return {f"{p.name}/{p.language}": p.version for p in self.prompts.values()}
