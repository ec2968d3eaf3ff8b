"""The judge client: JSON verdicts from an OpenAI-compatible endpoint, cached, bounded, retried,
and every failure returned as an unscored verdict with its reason."""

from __future__ import annotations

import functools

import hashlib
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from curate.errors import CurateError
from curate.fileio import dumps_json, loads_json
from curate.judge.budget import Budget, messages_tokens
from curate.judge.config import JudgeConfig
from curate.judge.prompts import Prompt
from curate.progress import progress
from curate.records import JudgeCacheEntry, TokenUsage, now
from curate.credentials import mask
from curate.usage import checked_tokens


DETERMINISTIC = ("unparsable answer", "refusal")
RESPONSE_FORMAT = {"type": "json_object"}


class JudgeFailure(Exception):
    """A request that cannot give a verdict; `reason` says why, `retry` whether trying again may help."""

    def __init__(self, reason: str, retry: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.retry = retry


@dataclass
class Verdict:
    """One judge answer: the parsed output, or `unscored` with the reason."""

    output: BaseModel | None
    unscored: str | None = None
    cached: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usage_problem: str | None = None
    """Why the usage the judge reported with this answer was left out of its tokens (negative, NaN, text)."""


@dataclass
class JudgeStats:
    """What the judge did in one run."""

    requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    repairs: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    unscored: Counter = field(default_factory=Counter)
    max_in_flight: int = 0
    scrubbed: int = 0
    """Answers that quoted the judge's key (an echoed Authorization header): cached and used with the key
    replaced by ***."""
    usage_left_out: int = 0
    """Replies whose usage was no token count (negative, NaN, text): left out of the tokens and the cost."""


# A transport sends chat messages and returns (content, refusal, prompt tokens, completion tokens), the
# token counts as the endpoint reported them: the judge checks them (curate.usage) before adding them up.
Transport = Callable[[list[dict]], tuple[str | None, str | None, Any, Any]]


@functools.cache
def _build_response_models() -> int:
    """Build the pydantic schemas of openai's chat response models now, in one thread, and return how
    many: openai builds them on first use, which is not thread-safe under pydantic 2.9 (the version
    argilla-server pins): judge threads parsing their first responses at once can fail with
    "BaseModel cannot be instantiated directly"."""
    import typing

    import pydantic
    from openai.types.chat import ChatCompletion

    def models_in(annotation) -> list[type]:
        if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
            return [annotation]
        return [m for arg in typing.get_args(annotation) for m in models_in(arg)]

    seen: set[type] = set()
    todo: list[type] = [ChatCompletion]
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen.add(model)
        model.__pydantic_core_schema__["type"]   # a lazily built schema is built on first access
        todo += [m for f in model.model_fields.values() for m in models_in(f.annotation)]
    return len(seen)


def openai_transport(config: JudgeConfig) -> Transport:
    """Return a transport over the openai client; the key is read from the environment now, and
    masked out of every failure's reason (a server may echo it back)."""
    import openai
    _build_response_models()
    key = config.api_key()
    client = openai.OpenAI(base_url=config.base_url, api_key=key or "no-key-needed",
                           timeout=config.timeout, max_retries=0)

    def send(messages: list[dict], schema: type[BaseModel] | None = None) -> tuple[str | None, str | None, int, int]:
        try:
            response = client.chat.completions.create(
                model=config.model, messages=messages, temperature=0, max_tokens=config.max_tokens,
                response_format=RESPONSE_FORMAT if schema is None else schema_format(schema))
        except openai.APITimeoutError:
            raise JudgeFailure(f"timeout after {config.timeout:g} s", retry=True) from None
        except openai.APIConnectionError as exc:
            raise JudgeFailure(f"connection failed ({type(exc.__cause__ or exc).__name__})", retry=True) from None
        except openai.RateLimitError:
            raise JudgeFailure("rate limited (HTTP 429)", retry=True) from None
        except openai.APIStatusError as exc:
            said = mask(" ".join(str(getattr(exc, "message", "") or "").split()), [key])
            said = re.sub(r"^Error code: \d+( - )?", "", said)[:160]  # the server's own words, if any
            raise JudgeFailure(f"HTTP {exc.status_code} from the judge" + (f" ({said})" if said else ""),
                               retry=exc.status_code >= 500) from None
        if not response.choices:
            raise JudgeFailure("empty response (no choices)")
        message = response.choices[0].message
        usage = response.usage   # built without validation: whatever the server sent, NaN and text included
        if usage is not None and not isinstance(usage, BaseModel):
            return message.content, getattr(message, "refusal", None), usage, usage   # not an object: no counts
        return (message.content, getattr(message, "refusal", None),
                getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None))

    return send


def schema_format(schema: type[BaseModel]) -> dict:
    """Return the response_format that holds an answer to a verdict's JSON schema (`[judge] response_format =
    "json_schema"`)."""
    return {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()}}


def reason_kind(reason: str) -> str:
    """Return the kind of an unscored reason, without its details.

    >>> reason_kind("HTTP 500 from the judge (after 3 attempts)"), reason_kind("unparsable answer: bad JSON")
    ('HTTP 500 from the judge', 'unparsable answer')
    """
    return reason.split(":")[0].split(" (")[0]


def _parse(content: str, schema: type[BaseModel]) -> BaseModel:
    # loads_json: a verdict holding NaN, or a key given twice ({"verdict": "yes", "verdict": "no"}), is
    # unparsable, not whichever value json keeps
    data = loads_json(content)
    if isinstance(data, dict) and isinstance(data.get("verdict"), str):
        data["verdict"] = data["verdict"].strip().lower().replace(" ", "_")
    return schema.model_validate(data)


def _mask_texts(value, key: str):
    """Return a copy of a JSON value with `key` masked out of every string in it (keys of objects too)."""
    if isinstance(value, str):
        return mask(value, [key])
    if isinstance(value, list):
        return [_mask_texts(v, key) for v in value]
    if isinstance(value, dict):
        return {mask(k, [key]): _mask_texts(v, key) for k, v in value.items()}
    return value


class Judge:
    """Asks prompts of one endpoint; answers are cached on disk by (prompt version, model, input)."""

    def __init__(self, config: JudgeConfig, cache_dir: Path, transport: Transport | None = None,
                 budget: Budget | None = None):
        if budget is not None:
            budget.check_priced(config.prices, config.model)
        self.config = config
        self.budget = budget
        self.cache_dir = Path(cache_dir)
        self.transport = transport or openai_transport(config)
        self.stats = JudgeStats()
        self._lock = threading.Lock()
        self._in_flight = 0

    def key(self, prompt: Prompt, payload: dict, repeat: int = 0) -> str:
        """Return the cache key of one question to the judge: everything that can change its answer (the
        endpoint, the model, max_tokens, the response format, the prompt's version, the input, the
        repeat), so one endpoint's verdicts are never served for another's."""
        material = {"endpoint": self.config.base_url.rstrip("/"), "model": self.config.model,
                    "max_tokens": self.config.max_tokens, "response_format": (
                        RESPONSE_FORMAT if self.config.response_format == "json_object" else "json_schema"),
                    "prompt": prompt.version, "input": payload, "repeat": repeat}
        return hashlib.sha256(dumps_json(material).encode("utf-8")).hexdigest()

    def cached(self, prompt: Prompt, payload: dict, repeat: int = 0) -> bool:
        """Return whether the answer to this question is in the cache (asking it costs nothing)."""
        return self._cache_path(self.key(prompt, payload, repeat)).exists()

    def _cache_path(self, key: str) -> Path:
        return self.cache_dir / key[:2] / f"{key}.json"

    def ask(self, prompt: Prompt, payload: dict, repeat: int = 0) -> Verdict:
        """Return the judge's verdict on one payload (from the cache when it was asked before)."""
        key = self.key(prompt, payload, repeat)
        path = self._cache_path(key)
        if path.exists():
            try:
                stored = JudgeCacheEntry.read(path)
                if stored.unscored:
                    verdict = Verdict(None, stored.unscored, cached=True)
                else:
                    verdict = Verdict(prompt.schema.model_validate(stored.output), cached=True)
                with self._lock:
                    self.stats.cache_hits += 1
                    if verdict.unscored:
                        self.stats.unscored[reason_kind(verdict.unscored)] += 1
                return verdict
            except (CurateError, ValueError, ValidationError):
                pass  # a damaged entry is asked again
        verdict = self._request(prompt, payload)
        if verdict.output is not None:
            try:
                verdict.output = self._scrubbed(prompt, verdict.output)
            except ValidationError:   # the key stood where a verdict belongs: no verdict
                verdict = Verdict(None, "unparsable answer: it quoted the judge's key where its verdict belongs",
                                  False, verdict.prompt_tokens, verdict.completion_tokens)
        if verdict.unscored:
            # Whatever the transport, a reason quoting the server never carries the key to a file.
            verdict.unscored = mask(verdict.unscored, [self.config.api_key()])
            with self._lock:
                self.stats.unscored[reason_kind(verdict.unscored)] += 1
        # An answer, or an answer that cannot be read, is what this judge says at temperature 0:
        # kept. A timeout or a dropped connection says nothing about the input: asked again next time.
        if verdict.output is not None or verdict.unscored.startswith(DETERMINISTIC):
            JudgeCacheEntry(
                prompt=prompt.name, prompt_version=prompt.version, language=prompt.language,
                model=self.config.model, repeat=repeat, at=now(),
                output=None if verdict.output is None else verdict.output.model_dump(mode="json"),
                unscored=verdict.unscored,
                usage=TokenUsage(prompt_tokens=verdict.prompt_tokens, completion_tokens=verdict.completion_tokens),
            ).write(path)
        return verdict

    def _scrubbed(self, prompt: Prompt, output: BaseModel) -> BaseModel:
        """Return `output` with every text that quotes the key (or an echo of its start) masked, counted in
        `stats.scrubbed`: a judge that echoes its Authorization header never puts the key into the cache,
        a score file or a report."""
        key = self.config.api_key()
        if not key:
            return output
        data = output.model_dump(mode="json")
        masked = _mask_texts(data, key)
        if masked == data:
            return output
        with self._lock:
            self.stats.scrubbed += 1
        return prompt.schema.model_validate(masked)

    def ask_many(self, requests: Sequence[tuple[Prompt, dict, int]], description: str = "judging", *,
                 status: Callable[[], str] | None = None, at_least: int = 200) -> list[Verdict]:
        """Return the verdicts of many requests, asked at most `concurrency` at a time, in order, under a
        progress bar (`progress`'s `status` and `at_least`: 1 for requests that take seconds each)."""
        with ThreadPoolExecutor(max_workers=max(1, self.config.concurrency)) as pool:
            futures = [pool.submit(self.ask, *request) for request in requests]
            return [f.result() for f in progress(futures, description, unit="request", total=len(futures),
                                                 status=status, at_least=at_least)]

    def _send(self, messages: list[dict], schema: type[BaseModel] | None = None
              ) -> tuple[str | None, str | None, int, int]:
        with self._lock:
            self._in_flight += 1
            self.stats.requests += 1
            self.stats.max_in_flight = max(self.stats.max_in_flight, self._in_flight)
        try:
            # the verdict's schema goes to the transport only when asked for: a transport of messages alone
            # (a test's, a caller's) works as it always did
            return self.transport(messages) if schema is None else self.transport(messages, schema)
        finally:
            with self._lock:
                self._in_flight -= 1

    def _send_with_retries(self, messages: list[dict], schema: type[BaseModel] | None = None
                           ) -> tuple[str | None, str | None, int, int]:
        for attempt in range(self.config.max_retries + 1):
            try:
                return self._send(messages, schema)
            except JudgeFailure as failure:
                if not failure.retry or attempt == self.config.max_retries:
                    if attempt:
                        raise JudgeFailure(f"{failure.reason} (after {attempt + 1} attempts)") from None
                    raise
                with self._lock:
                    self.stats.retries += 1
                time.sleep(self.config.backoff * (2 ** attempt) * (0.5 + random.random()))
        raise AssertionError("unreachable")

    def _request(self, prompt: Prompt, payload: dict) -> Verdict:
        messages = prompt.messages(payload)
        prompt_tokens = completion_tokens = 0
        problems: list[str] = []

        def verdict(output: BaseModel | None, unscored: str | None) -> Verdict:
            return Verdict(output, unscored, False, prompt_tokens, completion_tokens, "; ".join(problems) or None)

        try:
            for attempt in range(2):  # the answer, then one repair
                content, refusal, used_in, used_out = self._within_budget(
                    messages, prompt.schema if self.config.response_format == "json_schema" else None)
                counted = self._count_tokens(used_in, used_out)
                if isinstance(counted, str):
                    problems.append(counted)
                else:
                    prompt_tokens += counted[0]
                    completion_tokens += counted[1]
                if refusal:
                    return verdict(None, f"refusal: {refusal[:120]}")
                if not content or not content.strip():
                    return verdict(None, "refusal: empty answer")
                try:
                    return verdict(_parse(content, prompt.schema), None)
                except (ValueError, ValidationError) as exc:
                    problem = str(exc).splitlines()[0][:160]
                    if attempt == 1:
                        return verdict(None, f"unparsable answer: {problem}")
                    with self._lock:
                        self.stats.repairs += 1
                    messages = messages + [{"role": "assistant", "content": content},
                                           {"role": "user", "content": prompt.repair(problem)}]
        except JudgeFailure as failure:
            return verdict(None, failure.reason)
        raise AssertionError("unreachable")

    def _within_budget(self, messages: list[dict], schema: type[BaseModel] | None = None
                       ) -> tuple[str | None, str | None, Any, Any]:
        """Send the messages when the call fits the budget (see `curate.judge.budget`), else raise."""
        if self.budget is None:
            return self._send_with_retries(messages, schema)
        most_in, most_out = messages_tokens(messages), self.config.max_tokens
        most_usd = self.config.cost(most_in, most_out)
        if not self.budget.reserve(most_in + most_out, most_usd):
            raise JudgeFailure(self.budget.refusal())
        spent_in, spent_out = most_in, most_out   # a call that fails, or reports no count, is charged its most
        try:
            reply = self._send_with_retries(messages, schema)
            (used_in, bad_in), (used_out, bad_out) = checked_tokens(reply[2], "prompt_tokens"), checked_tokens(
                reply[3], "completion_tokens")
            if not bad_in and not bad_out and reply[2] is not None and reply[3] is not None:
                spent_in, spent_out = used_in, used_out   # what the endpoint counted (unreported: the most)
            return reply
        finally:
            self.budget.settle(most_in + most_out, most_usd, spent_in + spent_out,
                               self.config.cost(spent_in, spent_out))

    def _count_tokens(self, used_in: Any, used_out: Any) -> tuple[int, int] | str:
        """Add one reply's tokens to the stats and return them; a reply whose usage is no token count
        (negative, NaN, text) is counted apart, and why is returned instead: its tokens are never summed."""
        (prompt_tokens, bad_in), (completion_tokens, bad_out) = (checked_tokens(used_in, "prompt_tokens"),
                                                                 checked_tokens(used_out, "completion_tokens"))
        with self._lock:
            if bad_in or bad_out:
                self.stats.usage_left_out += 1
                return "the judge's usage left out: " + "; ".join(p for p in (bad_in, bad_out) if p)
            self.stats.prompt_tokens += prompt_tokens
            self.stats.completion_tokens += completion_tokens
            self.stats.cost = self.config.cost(self.stats.prompt_tokens, self.stats.completion_tokens)
        return prompt_tokens, completion_tokens
