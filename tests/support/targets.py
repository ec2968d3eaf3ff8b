"""Systems under test for the evalrun tests; the test fills GOLD with question -> evidence chunks."""

import time

GOLD: dict[str, list[str]] = {}
DISTRACTOR = "upgrade.en.md#0"
CALLS: list[str] = []


def perfect(question: str) -> dict:
    CALLS.append(question)
    gold = GOLD.get(question, [])
    return {"candidates": [DISTRACTOR] + gold, "context": gold, "answer": "an answer" if gold else None,
            "refused": not gold, "latency_ms": {"retrieval": 5.0, "generation": 20.0, "total": 25.0},
            "usage": {"prompt_tokens": 100, "completion_tokens": 10}}


def cut(question: str) -> dict:
    gold = GOLD.get(question, [])
    return {"candidates": gold + [DISTRACTOR], "context": [DISTRACTOR], "answer": "something"}


def troubled(question: str) -> dict:
    if "LG-4031" in question:
        raise RuntimeError("index offline")
    if "3.2" in question:
        return ["not", "a", "dict"]
    if "默认" in question:
        return {"candidates": "not-a-list-of-chunks", "context": []}
    if "Who can" in question:
        return {"candidates": ["no-such-chunk"], "context": ["no-such-chunk"], "answer": "x"}
    if "SAML" in question:
        time.sleep(2)
    return perfect(question)


def generate(question: str, context: list[dict]) -> dict:
    return {"context": context, "answer": "from the evidence", "candidates": context}


def one_of(question: str) -> dict:
    """Retrieves only the last of the gold chunks (one alternative), first in both layers."""
    gold = GOLD.get(question, [])[-1:]
    return {"candidates": gold + [DISTRACTOR], "context": gold, "answer": "an answer" if gold else None}


RANKINGS: dict[str, list[str]] = {}


def ranked(question: str) -> dict:
    """Returns the ranking the test put in RANKINGS; the context is its first three."""
    ranking = RANKINGS.get(question, [])
    return {"candidates": ranking, "context": ranking[:3], "answer": "an answer"}


ANSWERS: dict[str, str] = {}
CUT: set[str] = set()


def answering(question: str) -> dict:
    """Retrieves the gold chunks, all of them in the context unless the question is in CUT (then none),
    and answers ANSWERS[question]; refuses a question without gold."""
    gold = GOLD.get(question, [])
    if not gold:
        return {"candidates": [DISTRACTOR], "context": [], "answer": None, "refused": True}
    return {"candidates": gold + [DISTRACTOR], "context": [] if question in CUT else gold,
            "answer": ANSWERS.get(question, "an answer")}


def retrieving(question: str) -> dict:
    """Retrieves as `perfect` does and declines to answer: nothing for a generation judge to judge."""
    found = perfect(question)
    return {**found, "answer": None, "refused": True}
