"""The model's part of `curate generate`, in English and Chinese: write a question from seed chunks
(`gen_single`, `gen_multi`, `gen_conditional`), and answer a question with no context at all
(`closed_book`, the filter that drops what a model knows without retrieval).

Each task is written natively in both languages and has a strict output schema: strings have length
limits, so an answer fits in MAX_TOKENS (with `response_format = "json_schema"` the endpoint holds the
model to them; otherwise an answer over a limit is unparsable and unscored). Every key point carries
a quote the model must copy word for word from its passage: `curate.generate.written` locates it
there, and a quote it cannot find drops the question.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from curate.judge.prompts import PromptSet

MAX_TOKENS = 400
"""The answer tokens to allow a writing task: a question, a short answer and a few quoted key points take
100-300 (Chinese near one token a character). The schemas' limits bound an answer harder than that (one
at every limit would need about 1,000 tokens); an answer cut short is unparsable, asked again once, and
else unscored with why."""
MAX_PASSAGE = 2000
"""Characters of a passage sent (`curate.judge.prompts.cut`): a longer chunk is cut, so a prompt stays small."""


class KeyPoint(BaseModel):
    """A fact the answer must state, and the words of the passage that state it."""

    point: str = Field(min_length=1, max_length=150)
    quote: str = Field(min_length=1, max_length=200)


class PassageKeyPoint(KeyPoint):
    """A key point of a two-passage question: which passage states it."""

    passage: int = Field(ge=1, le=2)


class WrittenQuestion(BaseModel):
    """A question written from one passage (gen_single, gen_conditional)."""

    question: str = Field(min_length=1, max_length=150)
    answer: str = Field(min_length=1, max_length=250)
    key_points: list[KeyPoint] = Field(min_length=1, max_length=3)


class TwoPassageQuestion(BaseModel):
    """A question written from two passages (gen_multi): key points from both."""

    question: str = Field(min_length=1, max_length=150)
    answer: str = Field(min_length=1, max_length=250)
    key_points: list[PassageKeyPoint] = Field(min_length=2, max_length=4)


class ClosedBookAnswer(BaseModel):
    """An answer given without any context (or a statement that the model does not know)."""

    answer: str = Field(max_length=250)


SYSTEM = {
    "en": ("You help build an evaluation set for an assistant that answers questions from a knowledge base. "
           "Do exactly the task you are given. When you quote a passage, copy its words character for character. "
           "Reply with one JSON object and nothing else."),
    "zh": ("你在为一个依据知识库回答问题的助手编写评测集。严格按照给出的任务去做；引用片段时，逐字照抄原文，一个字也不要改。"
           "只输出一个 JSON 对象，不要输出其他内容。"),
}

_STANDALONE = {
    "en": ("- The person asking has never seen the passage, so the question must make sense on its own: never write "
           '"according to the passage", "in the text", "mentioned above" or the like; name the product, document '
           "or subject when the question needs it.\n"),
    "zh": ("- 提问的人看不到这个片段，问题必须单独就能看懂：不要出现“根据这段文字”“文中”“上文提到”之类的说法；"
           "需要时直接写出产品、文档或事物的名称。\n"),
}
_QUOTES = {
    "en": ("each with a quote copied word for word from the passage that states it (one sentence or less, "
           "no ellipsis, nothing added)"),
    "zh": "每个要点附上片段中写明它的原文，逐字照抄（不超过一句，不加省略号，不增删任何字）",
}

GENERATION = PromptSet(SYSTEM, {
    "gen_single": (WrittenQuestion, {
        "en": ("Source: {source}\nPassage:\n{passage}\n\n"
               "Write one question that a user of this knowledge base could ask and that this passage answers.\n"
               + _STANDALONE["en"] +
               "- Write it in English, the language of the passage.\n"
               "- Ask about a fact the passage states, not about its wording or layout.\n"
               "Then give the answer in one or two sentences, and 1 to 3 key points the answer must state, "
               + _QUOTES["en"] + ".\n"
               'Reply as JSON: {{"question": "...", "answer": "...", '
               '"key_points": [{{"point": "...", "quote": "..."}}]}}'),
        "zh": ("出处：{source}\n片段：\n{passage}\n\n"
               "请写一个知识库的用户可能会问、而这个片段能够回答的问题。\n"
               + _STANDALONE["zh"] +
               "- 用中文提问，与片段的语言一致。\n"
               "- 问片段中写明的事实，不要问措辞或排版。\n"
               "然后用一两句话给出答案，并列出答案必须包含的 1 到 3 个要点，" + _QUOTES["zh"] + "。\n"
               '按 JSON 输出：{{"question": "……", "answer": "……", '
               '"key_points": [{{"point": "……", "quote": "……"}}]}}')}),
    "gen_multi": (TwoPassageQuestion, {
        "en": ("Passage 1 (source: {source_1}):\n{passage_1}\n\nPassage 2 (source: {source_2}):\n{passage_2}\n\n"
               "Write one question that a user of this knowledge base could ask and whose answer needs facts from "
               "BOTH passages: neither passage alone answers it fully.\n"
               "- The person asking has never seen these passages, so the question must make sense on its own: "
               'never write "according to the passages", "passage 1", "both texts" or the like; name the product, '
               "document or subject when the question needs it.\n"
               "- Write it in English, the language of the passages.\n"
               "Then give the answer in one or two sentences, and 2 to 4 key points the answer must state, each "
               "with the number of the passage that states it and a quote copied word for word from that passage "
               "(one sentence or less, no ellipsis, nothing added); at least one key point from each passage.\n"
               'Reply as JSON: {{"question": "...", "answer": "...", "key_points": ['
               '{{"passage": 1, "point": "...", "quote": "..."}}, {{"passage": 2, "point": "...", "quote": "..."}}]}}'),
        "zh": ("片段 1（出处：{source_1}）：\n{passage_1}\n\n片段 2（出处：{source_2}）：\n{passage_2}\n\n"
               "请写一个知识库的用户可能会问的问题，回答它必须同时用到两个片段中的事实：只看其中任何一个片段都答不全。\n"
               "- 提问的人看不到这两个片段，问题必须单独就能看懂：不要出现“根据以上片段”“片段 1”“两段文字”之类的说法；"
               "需要时直接写出产品、文档或事物的名称。\n"
               "- 用中文提问，与片段的语言一致。\n"
               "然后用一两句话给出答案，并列出答案必须包含的 2 到 4 个要点，注明每个要点出自哪个片段，"
               "并附上该片段中写明它的原文，逐字照抄（不超过一句，不加省略号，不增删任何字）；两个片段各至少提供一个要点。\n"
               '按 JSON 输出：{{"question": "……", "answer": "……", "key_points": ['
               '{{"passage": 1, "point": "……", "quote": "……"}}, {{"passage": 2, "point": "……", "quote": "……"}}]}}')}),
    "gen_conditional": (WrittenQuestion, {
        "en": ("Source: {source}\nPassage:\n{passage}\n\n"
               "This passage states a rule that holds only under a condition (if, unless, only when, otherwise ...). "
               "Write one question that a user of this knowledge base could ask whose answer depends on that "
               "condition: the question describes the user's own case, and the condition decides the answer "
               '(for example: "I returned the item after 40 days; can I still get a refund?").\n'
               + _STANDALONE["en"] +
               "- Write it in English, the language of the passage.\n"
               "Then give the answer for that case in one or two sentences, and 1 to 3 key points the answer must "
               "state (the condition among them), " + _QUOTES["en"] + ".\n"
               'Reply as JSON: {{"question": "...", "answer": "...", '
               '"key_points": [{{"point": "...", "quote": "..."}}]}}'),
        "zh": ("出处：{source}\n片段：\n{passage}\n\n"
               "这个片段中有一条带条件的规定（如果、除非、仅当、否则……）。请写一个知识库的用户可能会问的问题，"
               "它的答案取决于这个条件：问题里说清楚提问者自己的情况，由条件决定答案"
               "（例如：“我收货 40 天后才申请退货，还能退款吗？”）。\n"
               + _STANDALONE["zh"] +
               "- 用中文提问，与片段的语言一致。\n"
               "然后用一两句话给出这种情况下的答案，并列出答案必须包含的 1 到 3 个要点（其中要有那个条件），"
               + _QUOTES["zh"] + "。\n"
               '按 JSON 输出：{{"question": "……", "answer": "……", '
               '"key_points": [{{"point": "……", "quote": "……"}}]}}')}),
    "closed_book": (ClosedBookAnswer, {
        "en": ("Question: {question}\n\n"
               "Answer the question briefly from what you know yourself: there is nothing to look up. If you do not "
               "know the answer, say that you do not know; do not guess.\n"
               'Reply as JSON: {{"answer": "..."}}'),
        "zh": ("问题：{question}\n\n"
               "请凭你自己掌握的知识简要回答，不要查阅任何资料。如果不知道答案，就直接说不知道，不要猜。\n"
               '按 JSON 输出：{{"answer": "……"}}')}),
})
"""The generation tasks: `GENERATION.get(task, language)`; `GENERATION.versions()` for a run's manifest."""

TASKS = {"single": "gen_single", "multi_evidence": "gen_multi", "conditional": "gen_conditional"}
"""The task that writes each question type."""
