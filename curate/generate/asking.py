"""Asking the model of `curate generate`: questions written from seed chunks, questions answered closed-book,
and what that will cost before the first call. Every answer is cached as the judge's are (by prompt
version, model, input), so a run killed and started again pays only for what it had not asked; a
budget stops calls before it is exceeded, and a refused call is said, never a silent gap.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from curate.generate.estimate import Step, closed_book_expected, estimate
from curate.generate.filters import closed_book_verdicts, decide
from curate.generate.written import Seed, candidates_from, closed_book_answers, closed_book_requests, requests
from curate.judge.budget import Budget
from curate.judge.client import Judge, Verdict, reason_kind
from curate.judge.config import JudgeConfig
from curate.judge.prompts import Prompt
from curate.records.generated import Candidate

NO_ENDPOINT = ("no model: set [generator] (or [judge]) base_url and model in curate.toml, or "
               "CURATE_JUDGE_BASE_URL and CURATE_JUDGE_MODEL")


def why_kind(why: str) -> str:
    """Return the kind of reason a seed gave no question, without its details: the model's failure
    (`reason_kind`; a budget refusal says so: 'not asked: the budget would be exceeded'), or the check
    its answer failed ('quote not in the seed chunk').

    >>> why_kind("no answer from the model: not asked: the judge budget ($0.50) would be exceeded")
    'not asked: the budget would be exceeded'
    >>> why_kind("quote not in the seed chunk: 'The trial lasts'")
    'quote not in the seed chunk'
    """
    why = why.removeprefix("no answer from the model: ")
    if "budget" in why and "would be exceeded" in why:
        return "not asked: the budget would be exceeded"
    return reason_kind(why)


def make_judge(config: JudgeConfig, cache_dir: Path, budget_usd: float | None = None,
               budget_tokens: int | None = None) -> Judge:
    """Return the client of the model, with its cache and, when given, its budget (a USD budget needs a
    price for the model: refused otherwise, in one line)."""
    budget = Budget(usd=budget_usd, tokens=budget_tokens) if budget_usd is not None or budget_tokens is not None \
        else None
    return Judge(config, cache_dir, budget=budget)


def running(judge: Judge) -> str:
    """Return what the model has cost so far, for a progress bar: '$0.0123, 4,500 tokens'."""
    stats = judge.stats
    tokens = f"{stats.prompt_tokens + stats.completion_tokens:,} tokens"
    return tokens if stats.cost is None else f"${stats.cost:,.4f}, {tokens}"


def ask(judge: Judge, asked: Sequence[tuple[Prompt, dict]], description: str) -> list[Verdict]:
    """Return the model's answers to `asked`, in order, a progress bar with the running cost on a
    terminal however few they are (each takes seconds)."""
    return judge.ask_many([(prompt, payload, 0) for prompt, payload in asked], description,
                          status=lambda: running(judge), at_least=1)


def write_questions(judge: Judge, seeds: Sequence[Seed], run: str) -> tuple[list[Candidate], dict[str, str]]:
    """Return the candidates the model wrote from `seeds`, and {candidate id: why none} for the others."""
    if not seeds:
        return [], {}
    verdicts = ask(judge, requests(seeds), "writing questions")
    return candidates_from(seeds, verdicts, run=run, model=judge.config.model)


def check_closed_book(judge: Judge, candidates: list[Candidate], keep: bool) -> list[Candidate]:
    """Return the candidates with the closed_book verdict: the model asked each answerable one that every
    other filter passed, without context (the others are not asked: said in their verdict)."""
    asked = [c for c in candidates if c.answerable and decide(c, keep_closed_book=True)]
    verdicts = ask(judge, closed_book_requests(asked), "asking closed-book") if asked else []
    answers, why = closed_book_answers(asked, verdicts) if asked else ({}, {})
    ids = {c.candidate_id for c in asked}
    for candidate in candidates:
        if candidate.answerable and candidate.candidate_id not in ids:
            why[candidate.candidate_id] = "not asked: another filter dropped it"
    return closed_book_verdicts(candidates, answers, keep=keep, why=why)


def plan(judge: Judge, seeds: Sequence[Seed], mined: Sequence[Candidate]) -> list[Step]:
    """Return what a run will ask at most, step by step, before any call: the questions to write, and
    the closed-book check of every question (the written ones' are estimated, one per seed; the mined
    ones' are known); what the cache holds costs nothing and is counted apart."""
    answerable = [c for c in mined if c.answerable]
    return estimate({"write questions": requests(seeds),
                     "closed-book check (written questions, estimated)": closed_book_expected(seeds),
                     "closed-book check (mined questions)": closed_book_requests(answerable)},
                    max_tokens=judge.config.max_tokens, judge=judge)

