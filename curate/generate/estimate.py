"""What the model's part of `curate generate` will cost, said before a call is sent: per step (writing
the questions, the closed-book check), the calls, their prompt tokens estimated from the texts
(`curate.judge.budget.messages_tokens`: one per CJK character, one per three other characters), the
most answer tokens (`max_tokens` per call), and the calls the cache answers (free, counted apart).

The closed-book step asks one question per candidate the model writes, which is not known before it
writes them: it is estimated as one call per seed (every seed making a candidate, the most), each
question EXPECTED_QUESTION characters long (`closed_book_expected`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from curate.generate.prompts import GENERATION
from curate.generate.written import Seed
from curate.judge.budget import messages_tokens
from curate.judge.client import Judge
from curate.judge.prompts import Prompt

EXPECTED_QUESTION = {"en": "q" * 90, "zh": "问" * 30}
"""A question as long as a written one usually is (about 30 tokens: 15-20 English words, 30 Chinese characters)."""


@dataclass(frozen=True)
class Step:
    """One step's calls: those to send, with their estimated prompt tokens and most answer tokens, and
    those the cache answers."""

    name: str
    calls: int
    input_tokens: int
    output_tokens: int
    cached: int = 0


def estimate(requests_by_step: Mapping[str, Sequence[tuple[Prompt, dict]]], *, max_tokens: int,
             judge: Judge | None) -> list[Step]:
    """Return each step's calls and tokens, in the order given: a request `judge` has in its cache is
    counted in `cached` and costs nothing (no judge: none is cached).

    >>> ask = (GENERATION.get("closed_book", "en"), {"question": "How long is the trial?"})
    >>> estimate({"closed_book": [ask, ask]}, max_tokens=400, judge=None)[0].output_tokens
    800
    """
    steps = []
    for name, requests in requests_by_step.items():
        asking = [(p, payload) for p, payload in requests if judge is None or not judge.cached(p, payload)]
        steps.append(Step(name=name, calls=len(asking),
                          input_tokens=sum(messages_tokens(p.messages(payload)) for p, payload in asking),
                          output_tokens=len(asking) * max_tokens, cached=len(requests) - len(asking)))
    return steps


def closed_book_expected(seeds: Sequence[Seed]) -> list[tuple[Prompt, dict]]:
    """Return the closed-book requests expected of `seeds`, before any question is written: one per
    seed, in its language, its question EXPECTED_QUESTION long (none is in a cache)."""
    return [(GENERATION.get("closed_book", s.language), {"question": EXPECTED_QUESTION[s.language]}) for s in seeds]


def cost(steps: Sequence[Step], prices: tuple[float, float] | None) -> float | None:
    """Return the most the steps cost in USD at `prices` (USD per million input and output tokens: the
    judge's `JudgeConfig.prices[model]`), or None when no price is known (never 0 for unknown).

    cost = (sum input_tokens x input price + sum output_tokens x output price) / 1,000,000

    >>> steps = [Step("gen", calls=2, input_tokens=1000, output_tokens=800), Step("cb", 1, 100, 400, cached=3)]
    >>> cost(steps, (1.0, 4.0)) == (1100 * 1.0 + 1200 * 4.0) / 1e6
    True
    >>> print(cost(steps, None))
    None
    """
    if prices is None:
        return None
    price_in, price_out = prices
    return (sum(s.input_tokens for s in steps) * price_in + sum(s.output_tokens for s in steps) * price_out) / 1e6
