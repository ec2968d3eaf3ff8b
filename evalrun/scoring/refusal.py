"""Whether an answer is a refusal: the system's own flag when it gives one, else an empty answer or
a refusal phrase (a lexical rule, `evalrun.scoring.lexical.refusal_phrase`)."""

from __future__ import annotations

from evalrun.records import Trace
from evalrun.scoring.lexical import refusal_phrase


def refusal_of(trace: Trace, language: str) -> str | None:
    """Return how the trace's answer was taken for a refusal, or None when it is an answer.

    An empty answer is a refusal; otherwise the trace's `refused` flag decides when the system sets
    it (true or false), and without it a refusal phrase makes a refusal.

    >>> refusal_of(Trace(item_id="q", question="?", answer="", refused=None), "en")
    'empty answer'
    >>> refusal_of(Trace(item_id="q", question="?", answer="I don't know.", refused=False), "en") is None
    True
    >>> refusal_of(Trace(item_id="q", question="?", answer="Paris.", refused=True), "en")
    'refused flag'
    """
    if not (trace.answer or "").strip():
        return "empty answer"
    if trace.refused is not None:
        return "refused flag" if trace.refused else None
    phrase = refusal_phrase(trace.answer, language)
    return None if phrase is None else f"refusal phrase: {phrase}"
