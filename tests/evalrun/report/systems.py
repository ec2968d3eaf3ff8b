"""A scripted system under test for the report tests: SCRIPT maps a question to the trace it returns."""

SCRIPT: dict[str, dict] = {}


def scripted(question: str) -> dict:
    return SCRIPT.get(question, {"candidates": [], "context": [], "answer": None, "refused": True})


def broken(question: str) -> dict:
    raise RuntimeError("index offline")
