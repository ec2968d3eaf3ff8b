"""A baseline RAG system to run evalrun against: BM25 retrieval (bm25s, jieba for Chinese) over a
curate KB snapshot, and an answer from an OpenAI-compatible endpoint when one is configured,
else the first sentence of the top chunk (an extractive baseline).

    evalrun run --dataset handbook@v2 --target examples.baseline.rag:answer

`generate(question, context)` answers from a context it is given (`evalrun run --oracle-context`, and
`evalrun probe`, which plants hard negatives, changed facts and instructions in it): without an endpoint,
the sentence of the context that shares the most of the question's words, or a refusal when none shares
enough.

Scope: evalrun passes each question's asker (`asker_groups`) and moment (`as_of`) as keyword
arguments; the baseline retrieves only chunks that asker may see and that hold at that moment, as a
production system must. BASELINE_SCOPE=ignore retrieves from every chunk instead: a system that leaks,
for the demo's report to show what a permission leak looks like.

Settings from the environment: CURATE_WORKSPACE (the workspace), BASELINE_KB (KB name or
snapshot; default: the workspace's default KB), BASELINE_CANDIDATES (20), BASELINE_CONTEXT (3),
BASELINE_SCOPE (filter, or ignore), and for generation BASELINE_LLM_BASE_URL, BASELINE_LLM_MODEL,
BASELINE_LLM_API_KEY_ENV.
"""

from __future__ import annotations

import os
import re
import threading
import time
from functools import lru_cache

from curate import ScopeIndex, SnapshotStore
from curate.index.kb_index import KBIndex
from curate.text.sentences import sentence_spans
from curate.workspace import find_workspace

REFUSAL = "I cannot find this in the knowledge base."


_LOADING = threading.Lock()


def _index() -> tuple[KBIndex, ScopeIndex]:
    """Return the KB's BM25 index and the scope of its chunks, loaded once (the first calls of a run
    wait for them: evalrun times them apart as warm-up), with the Chinese tokenizer's dictionary loaded
    too: a system loads what it needs before its first user, not during the first Chinese question."""
    with _LOADING:
        return _load()


@lru_cache(maxsize=1)
def _load() -> tuple[KBIndex, ScopeIndex]:
    workspace = find_workspace(explicit=os.environ.get("CURATE_WORKSPACE"))
    index = KBIndex.open(workspace, os.environ.get("BASELINE_KB"))
    index.bm25.search(["预热 warm-up"], k=1)
    return index, SnapshotStore(workspace).scope_index(index.snapshot_id)


def _allowed(scope: ScopeIndex, chunk_id: str, asker_groups: list[str] | None, as_of: str | None) -> bool:
    """Return whether the asker may be shown the chunk at the moment (BASELINE_SCOPE=ignore: always)."""
    return os.environ.get("BASELINE_SCOPE", "filter") == "ignore" or scope.usable(chunk_id, asker_groups, as_of)


def _generate(question: str, passages: list[str]) -> tuple[str, dict]:
    """Return an answer and its token usage: from the endpoint if configured, else extractive."""
    base_url = os.environ.get("BASELINE_LLM_BASE_URL")
    if not base_url:
        if not passages:
            return REFUSAL, {}
        first = sentence_spans(passages[0])
        return (passages[0][first[0][0]:first[0][1]] if first else passages[0][:200]), {}
    import openai
    key_env = os.environ.get("BASELINE_LLM_API_KEY_ENV")
    client = openai.OpenAI(base_url=base_url, api_key=os.environ.get(key_env, "none") if key_env else "none")
    context = "\n\n".join(f"[{n}] {p}" for n, p in enumerate(passages, start=1))
    response = client.chat.completions.create(
        model=os.environ.get("BASELINE_LLM_MODEL", "model"), temperature=0, max_tokens=300,
        messages=[{"role": "system", "content": f"Answer from the passages only. If they do not say, reply: {REFUSAL}"},
                  {"role": "user", "content": f"{context}\n\nQuestion: {question}"}])
    usage = response.usage
    return response.choices[0].message.content or "", {
        "prompt_tokens": getattr(usage, "prompt_tokens", 0) or 0,
        "completion_tokens": getattr(usage, "completion_tokens", 0) or 0}


def _grams(text: str) -> set[str]:
    """Return a text's words (Latin) and character pairs (CJK), lower-cased: what overlap is counted in."""
    lowered = text.lower()
    words = set(re.findall(r"[a-z0-9][a-z0-9-]+", lowered))
    cjk = re.findall(r"[\u4e00-\u9fff]", lowered)
    return words | {a + b for a, b in zip(cjk, cjk[1:])}


def _best_sentence(question: str, passages: list[str]) -> str | None:
    """Return the sentence of the passages that shares the most of the question's words, or None when
    none shares a third of them (the context does not answer it)."""
    asked = _grams(question)
    best, shared = None, 0.0
    for passage in passages:
        for start, end in sentence_spans(passage):
            sentence = passage[start:end]
            share = len(asked & _grams(sentence)) / max(1, len(asked))
            if share > shared:
                best, shared = sentence, share
    return best if shared >= 1 / 3 else None


def generate(question: str, context: list[dict], **scope) -> dict:
    """Return the trace of answering one question from the context given (chunk ids and texts)."""
    started = time.perf_counter()
    passages = [c.get("text") or "" for c in context]
    if os.environ.get("BASELINE_LLM_BASE_URL"):
        text, usage = _generate(question, passages)
    else:
        text, usage = _best_sentence(question, passages) or REFUSAL, {}
    refused = text.strip() == REFUSAL
    return {"context": [{"chunk_id": c["chunk_id"]} for c in context], "answer": None if refused else text,
            "refused": refused, "usage": usage, "latency_ms": {"generation": (time.perf_counter() - started) * 1000}}


def answer(question: str, *, asker_groups: list[str] | None = None, as_of: str | None = None) -> dict:
    """Return the trace of answering one question for an asker (their access groups; None: unknown) at
    a moment (a date or KB version; None: the latest)."""
    index, scope = _index()
    started = time.perf_counter()
    wanted = int(os.environ.get("BASELINE_CANDIDATES", 20))
    # ranked over the whole KB, then cut to what the asker may see: enough ranks to still fill the list
    positions, scores = index.bm25.search([question], k=min(len(index.chunks), wanted * 5))
    candidates = [{"chunk_id": index.chunks[p].chunk_id, "score": float(s)}
                  for p, s in zip(positions[0], scores[0])
                  if s > 0 and _allowed(scope, index.chunks[p].chunk_id, asker_groups, as_of)][:wanted]
    retrieved = time.perf_counter()
    context = candidates[: int(os.environ.get("BASELINE_CONTEXT", 3))]
    passages = [index.chunks[index.position[c["chunk_id"]]].text for c in context]
    text, usage = _generate(question, passages)
    done = time.perf_counter()
    refused = text.strip() == REFUSAL
    return {"candidates": candidates, "context": context, "answer": None if refused else text, "refused": refused,
            "citations": [c["chunk_id"] for c in context[:1]] if not refused else [],
            "latency_ms": {"retrieval": (retrieved - started) * 1000, "generation": (done - retrieved) * 1000,
                           "total": (done - started) * 1000},
            "usage": usage}
