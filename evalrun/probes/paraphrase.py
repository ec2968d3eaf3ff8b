"""The rewrite probe's `llm` rule: the question rephrased by a model, when one is configured (curate.toml's
`[generator]`, else `[judge]`, as `curate generate` uses them), in the question's language.

A model's rephrasing is kept only when it is another question that asks the same: every number, date,
code and negation of the original is in it (`curate.salient`, the rule the other rewrite rules keep), it
is in the question's language, and it differs from the question. Anything else is a skip with its reason,
never a variant: a rephrasing that dropped LG-4031 asks about something else. Answers are cached as the
judge's are, so a second probe run of the same release asks the model nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from pydantic import BaseModel, Field

from curate import EvalItem, Judge, PromptSet, Workspace, generator_config, language_of, salient
from evalrun.probes.judged import usage_line

NO_MODEL = ("llm: no model configured ([generator] or [judge] base_url and model in curate.toml): the rule asks "
            "a model")
NO_JUDGE = "llm: --no-judge asks no model"
MAX_TOKENS = 160   # one question, in JSON


class Rephrased(BaseModel):
    """The question asked another way."""

    question: str = Field(max_length=400)


SYSTEM = {
    "en": "You rephrase questions users ask a knowledge-base assistant. Reply with one JSON object and nothing else.",
    "zh": "你负责改写用户向知识库助手提出的问题。只输出一个 JSON 对象，不要输出其他内容。",
}

PARAPHRASE = PromptSet(SYSTEM, {
    "probe_paraphrase": (Rephrased, {
        "en": ("Question: {question}\n\nAsk the same question in other words, as another user might: change the "
               "wording and the order, keep its meaning. Keep every name, number, date, code and negation exactly "
               "as written. Write it in English.\n"
               'Reply as JSON: {{"question": "..."}}'),
        "zh": ("问题：{question}\n\n换一种说法问同一个问题，像另一位用户会问的那样：改变措辞和语序，意思不变。"
               "问题中的名称、数字、日期、编号和否定词必须原样保留。用中文提问。\n"
               '按 JSON 输出：{{"question": "……"}}')}),
})


def check(question: str, rephrased: str, language: str) -> str | None:
    """Return why a model's rephrasing is no rewrite of the question, or None when it is one.

    >>> check("LG-4031 是什么意思？", "错误码 LG-4031 代表什么？", "zh") is None
    True
    >>> check("What does LG-4031 mean?", "What does this error code mean?", "en")
    'llm: the rephrasing dropped 4031'
    """
    text = " ".join(rephrased.split())
    if not text or text == " ".join(question.split()):
        return "llm: the model gave the question back unchanged"
    if language_of(text) != language:
        return f"llm: the rephrasing is not in {language}"
    lost = salient(question) - salient(text)
    if lost:
        return f"llm: the rephrasing dropped {', '.join(sorted(lost))}"
    return None


def rephrase(workspace: Workspace, items: Sequence[EvalItem], *, no_judge: bool = False
             ) -> tuple[dict[str, tuple[str | None, str]], str | None]:
    """Return {item id: (the rephrased question, or None, and why not)} and what the model did (one line,
    or None when no model was asked); without a model every item says why."""
    if no_judge:
        return {item.id: (None, NO_JUDGE) for item in items}, None
    config = generator_config(workspace)
    if config is None:
        return {item.id: (None, NO_MODEL) for item in items}, None
    judge = Judge(dataclasses.replace(config, max_tokens=MAX_TOKENS), workspace.root / "cache" / "judge")
    asked = [(PARAPHRASE.get("probe_paraphrase", item.language), {"question": item.question}, 0) for item in items]
    replies = judge.ask_many(asked, "rephrasing questions (rewrite: llm)", at_least=1) if asked else []
    found: dict[str, tuple[str | None, str]] = {}
    for item, reply in zip(items, replies):
        if reply.output is None:
            found[item.id] = (None, f"llm: no rephrasing from the model ({reply.unscored})")
            continue
        why = check(item.question, reply.output.question, item.language)
        found[item.id] = (None, why) if why else (" ".join(reply.output.question.split()), "rephrased by the model")
    return found, f"the model rephrased questions: {usage_line(judge.stats)}"
