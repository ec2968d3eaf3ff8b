"""A scripted system under test for the report tests: SCRIPT maps a question to the trace it returns."""

SCRIPT: dict[str, dict] = {}


def scripted(question: str) -> dict:
    return SCRIPT.get(question, {"candidates": [], "context": [], "answer": None, "refused": True})


def broken(question: str) -> dict:
    raise RuntimeError("index offline")


FAIL: set[str] = set()   # questions `flaky` fails on


def flaky(question: str) -> dict:
    """Answer as `scripted`, but raise on the questions in FAIL (a target failed on those items)."""
    if question in FAIL:
        raise RuntimeError("index offline")
    return scripted(question)
