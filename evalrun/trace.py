"""The trace: what the system under test did for one question."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from curate.errors import InputError

SCHEMA_VERSION = 1


class Passage(BaseModel):
    """A chunk the system retrieved or put in the model's context."""

    model_config = ConfigDict(extra="allow")
    chunk_id: str = Field(description="The chunk's id in the KB snapshot.")
    text: str | None = Field(None, description="Its text, if the system reports it.")
    score: float | None = Field(None, description="Retrieval or rerank score, if any.")


class Usage(BaseModel):
    """Tokens the system spent on this question (and their cost, if it knows it)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None


class Trace(BaseModel):
    """One question's trace: candidates before rerank/filter/truncation, the final context in order,
    the answer, citations, latency per stage, token usage, the run mode and any error."""

    model_config = ConfigDict(extra="ignore")
    schema_version: int = SCHEMA_VERSION
    item_id: str = Field(description="The evaluation item this trace answers.")
    question: str = Field(description="The question as sent.")
    candidates: list[Passage] = Field(default_factory=list, description="Retrieved chunks, best first.")
    context: list[Passage] = Field(default_factory=list, description="Chunks sent to the model, in order.")
    answer: str | None = Field(None, description="The system's answer; None when it produced none.")
    citations: list[str] = Field(default_factory=list, description="Chunk ids the answer cites.")
    latency_ms: dict[str, float] = Field(default_factory=dict, description="Milliseconds per stage; 'total' too.")
    usage: Usage = Field(default_factory=Usage)
    mode: Literal["normal", "degraded", "diagnostic"] = "normal"
    refused: bool | None = Field(None, description="True when the system said it cannot answer.")
    error: str | None = Field(None, description="Why the system failed on this question, if it did.")

    @field_validator("candidates", "context", mode="before")
    @classmethod
    def _passages(cls, value: Any) -> Any:
        """Accept chunk ids as plain strings."""
        if isinstance(value, list):
            return [{"chunk_id": v} if isinstance(v, (str, int)) else v for v in value]
        return value


def trace_from(data: Any, *, item_id: str, question: str, where: str = "trace") -> Trace:
    """Return the trace a system returned, or raise InputError naming the bad field."""
    if not isinstance(data, dict):
        raise InputError(f"must be a JSON object, got {type(data).__name__}", file=where)
    try:
        return Trace.model_validate({"item_id": item_id, "question": question, **data})
    except ValidationError as exc:
        error = exc.errors()[0]
        raise InputError(error["msg"], file=where, field=".".join(map(str, error["loc"]))) from None
