"""A spending limit for the judge: no call is sent that could take the spend past it.

Before each call the judge reserves what the call may cost at most: its prompt's estimated tokens
(`estimate_tokens`) and `max_tokens` of answer; a call that does not fit is not sent, and its question
is unscored with the reason. After the call the reservation is replaced by the tokens the endpoint
reported. One budget can be shared by several judges (a run's retrieval grading and its generation
judging), so the limit holds for all of them together; a run keeps what it spent on disk (`on_spend`), so
a run killed and resumed stays within it (cached answers cost nothing again).
"""

from __future__ import annotations

import threading
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field

from curate.errors import InputError

PER_MESSAGE = 4   # tokens of a chat message's framing


def estimate_tokens(text: str) -> int:
    """Return an upper-leaning estimate of the tokens of `text`: one per CJK character, one per three
    other characters (English runs near four per token).

    >>> estimate_tokens("limit"), estimate_tokens("差旅补贴"), estimate_tokens("")
    (2, 4, 0)
    """
    wide = sum(1 for ch in text if unicodedata.east_asian_width(ch) in ("W", "F"))
    return wide + -(-(len(text) - wide) // 3)


def messages_tokens(messages: list[dict]) -> int:
    """Return the estimated prompt tokens of chat messages."""
    return sum(estimate_tokens(m.get("content") or "") + PER_MESSAGE for m in messages)


@dataclass
class Budget:
    """A limit in USD, in tokens, or both; what was spent and what calls in flight have reserved."""

    usd: float | None = None
    tokens: int | None = None
    spent_usd: float = 0.0
    spent_tokens: int = 0
    reserved_usd: float = 0.0
    reserved_tokens: int = 0
    refused: int = 0
    """Calls not sent because they did not fit."""
    on_spend: Callable[[Budget], None] | None = field(default=None, repr=False)
    """Called after every call is settled, the lock held (a run keeps its spend on disk with it, so that a
    run killed and resumed starts from what it spent: it never spends its budget twice)."""
    in_flight: int = 0
    _settled: threading.Condition = field(default_factory=threading.Condition, repr=False)

    def describe(self) -> str:
        """Return the limit in words: "$1.50", "200,000 tokens", or both."""
        parts = ([f"${self.usd:,.2f}"] if self.usd is not None else []) + (
            [f"{self.tokens:,} tokens"] if self.tokens is not None else [])
        return " and ".join(parts)

    def reserve(self, tokens: int, usd: float | None) -> bool:
        """Reserve a call's most tokens and cost (`usd` None: no price known); False when it does not fit.
        While other calls are in flight, wait for them: what they cost may leave room (a reservation is a
        most, and most calls cost less); refused only when it does not fit with nothing in flight."""
        with self._settled:
            while True:
                if self.fits(self.reserved_tokens + tokens, self.reserved_usd + (usd or 0.0)):
                    self.reserved_tokens += tokens
                    self.reserved_usd += usd or 0.0
                    self.in_flight += 1
                    return True
                if not self.in_flight:
                    self.refused += 1
                    return False
                self._settled.wait()

    def settle(self, reserved_tokens: int, reserved_usd: float | None, tokens: int, usd: float | None) -> None:
        """Replace a call's reservation by what it cost (what the endpoint reported)."""
        with self._settled:
            self.reserved_tokens -= reserved_tokens
            self.reserved_usd -= reserved_usd or 0.0
            self.spent_tokens += tokens
            self.spent_usd += usd or 0.0
            self.in_flight -= 1
            if self.on_spend is not None:
                self.on_spend(self)
            self._settled.notify_all()

    def fits(self, tokens: int, usd: float | None) -> bool:
        """Return whether spending `tokens` and `usd` more (nothing in flight) stays within the limit."""
        return not ((self.tokens is not None and self.spent_tokens + tokens > self.tokens)
                    or (self.usd is not None and self.spent_usd + (usd or 0.0) > self.usd))

    def check_priced(self, prices: dict, model: str) -> None:
        """Raise one line when the limit is in USD and the judge's model has no price: it could not hold."""
        if self.usd is not None and prices.get(model) is None:
            raise InputError(f"the budget is in USD, and judge model {model!r} has no price: set [judge.prices] in "
                             f"curate.toml, or give the budget in tokens (--budget-tokens)", field="budget")

    def refusal(self) -> str:
        """Return the reason a question the budget stopped is unscored."""
        return f"not asked: the judge budget ({self.describe()}) would be exceeded"
