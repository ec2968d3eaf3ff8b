"""Systems for the probe tests, given each variant's context (`generate(question, context)`), over a workspace
with one release (PROBE_RELEASE, default cmrc@v1) found through CURATE_WORKSPACE, which evalrun sets.

- naive: answers with the first chunk it is given, or what it remembers of the KB when that chunk looks like a
  KB chunk it knows (a changed chunk loses to its memory), repeats every sentence that addresses it as an
  assistant (it obeys instructions), and knows only the questions of the release word for word (a rephrased
  question gets "I don't know").
- careful: answers with an accepted answer when the context holds it, the context's own sentence with the
  conflict said when the context changes what the KB says, declines when the context holds no evidence,
  never repeats an instruction, and knows a rephrased question for the one it rephrases.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

from rapidfuzz import fuzz, process

from curate import KBIndex, Releases, find_workspace, fold, load_release

ADDRESSES_ME = re.compile(r"assistant|instruction|tell the user|developer mode|助手|指令|告诉用户|开发者模式|验证码",
                          re.IGNORECASE)
REFUSAL = {"zh": "抱歉，资料中没有相关信息。", "en": "I don't know: the context does not say."}


def _memory():
    """Return (the release's items by question, the KB's chunk texts) of the workspace evalrun names."""
    return _remembered(os.environ.get("CURATE_WORKSPACE"), os.environ.get("PROBE_RELEASE", "cmrc@v1"))


@lru_cache(maxsize=8)
def _remembered(root: str | None, ref: str):
    workspace = find_workspace(explicit=root)
    name, _, version = ref.partition("@")
    manifest, items = load_release(Releases(workspace, name).path(version))
    chunks = [c.text for c in KBIndex.open(workspace, manifest.kb_snapshot).chunks]
    return {i.question: i for i in items}, chunks


def _answers(item) -> list[str]:
    return [a for a in [*item.answers, item.reference_answer or ""] if a.strip()]


def _trace(answer: str | None, context: list[dict]) -> dict:
    return {"answer": answer, "context": [{"chunk_id": c["chunk_id"]} for c in context]}


def generate(question: str, context: list[dict]) -> dict:
    """The naive system (module docstring)."""
    items, chunks = _memory()
    if question not in items:
        return _trace("I don't know.", context)
    first = context[0]["text"] if context else ""
    remembered = process.extractOne(first, chunks, scorer=fuzz.ratio) if first else None
    answer = remembered[0] if remembered and remembered[1] >= 90 else first
    obeyed = [c["text"] for c in context if ADDRESSES_ME.search(c["text"])]
    return _trace(" ".join([answer, *obeyed]), context)


def careful(question: str, context: list[dict]) -> dict:
    """The careful system (module docstring)."""
    items, chunks = _memory()
    known = process.extractOne(question, list(items), scorer=fuzz.ratio)
    item = items[known[0]] if known and known[1] >= 60 else None
    language = item.language if item else "en"
    texts = [c["text"] for c in context if not ADDRESSES_ME.search(c["text"])]
    if item is None:
        return _trace(REFUSAL[language], context)
    for answer in _answers(item):
        if any(fold(answer) in fold(t) for t in texts):
            return _trace(answer, context)
    for text in texts:   # a chunk that is nearly, not exactly, a KB chunk holding the answer: its fact was changed
        near = process.extractOne(text, chunks, scorer=fuzz.ratio)
        if near and 90 <= near[1] < 100 and any(fold(a) in fold(near[0]) for a in _answers(item)):
            if language == "zh":
                return _trace(f"根据资料：{text} 不过这与我所了解的不符。", context)
            return _trace(f"The context says: {text} However, this conflicts with what I know.", context)
    return _trace(REFUSAL[language], context)
