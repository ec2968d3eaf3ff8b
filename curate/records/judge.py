"""The judge's disk cache: one file per question asked, cache/judge/XX/KEY.json."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from curate.records.base import Record, VersionedRecord


class TokenUsage(Record):
    """Tokens one judge answer cost."""

    prompt_tokens: int = Field(0, description="Prompt tokens reported by the endpoint.")
    completion_tokens: int = Field(0, description="Completion tokens reported by the endpoint.")


class JudgeCacheEntry(VersionedRecord):
    """One answer of the judge, kept so the same question is never asked twice."""

    prompt: str = Field(description="Prompt name.")
    prompt_version: str = Field(description="Version hash of the prompt's texts and verdict model.")
    language: str = Field(description="Prompt language (en or zh).")
    model: str = Field(description="Judge model that answered.")
    repeat: int = Field(0, description="Which repeat of the question this answers (check-consistency --repeat).")
    at: str = Field(description="When it answered (UTC).")
    output: dict[str, Any] | None = Field(None, description="The parsed verdict, or None when it gave none.")
    unscored: str | None = Field(None, description="Why no verdict (an unreadable answer, a refusal), else None.")
    usage: TokenUsage = Field(default_factory=TokenUsage, description="Tokens the answer cost.")
