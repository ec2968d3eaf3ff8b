"""Records of a run folder, and `read_run`, the one reader that `evalrun show`, scoring, the tests
and the benchmarks use:

- manifest.json (`RunManifest`): what was run, against which release and KB snapshot, how;
- traces.jsonl (`TraceRecord`, one line per item): the system's `Trace`, or why there is none;
- scores.jsonl (`ItemScores`, one line per item): every metric's value or why it is unscored;
- summary.json (`RunSummary`): the aggregates, end to end, attribution, the judge's own usage.

The scope parts of each (what the target was given, leaks and stale chunks per item and per layer) are
in `evalrun.scope_records`.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from curate import InputError, NotFound, Record, VersionedRecord, checked_cost, checked_tokens, read_jsonl
from evalrun.judged_records import GradeAgreement, JudgedRetrieval, JudgeEstimate, JudgeSpend  # noqa: F401
from evalrun.scope_records import ItemScope, ScopeSummary, TargetScope

MANIFEST, TRACES, SCORES, SUMMARY = "manifest.json", "traces.jsonl", "scores.jsonl", "summary.json"
JUDGE_SPEND = "judge_spend.json"
MAX_JUDGE_REPEATS = 10
MAX_K = 1000  # retrieval arrays are (items, K): a larger cutoff is a typo, not a measurement


# -- what the system under test returns -----------------------------------------------------------

class Passage(BaseModel):
    """A chunk the system retrieved or put in the model's context."""

    model_config = ConfigDict(extra="allow")
    chunk_id: str = Field(description="The chunk's id in the KB snapshot.")
    text: str | None = Field(None, description="Its text, if the system reports it.")
    score: float | None = Field(None, description="Retrieval or rerank score, if any.")


class Usage(BaseModel):
    """Tokens the system spent on this question (and their cost, if it knows it). A usage that is no
    count or cost (negative, NaN, infinite, text, not an object) is not refused with the trace: it is
    kept as `problem`, zero tokens and no cost, so that the item still scores and its usage is left
    out of every sum, named."""

    prompt_tokens: int = Field(0, description="Prompt tokens.")
    completion_tokens: int = Field(0, description="Completion tokens.")
    cost: float | None = Field(None, description="USD, if the system knows it.")
    problem: str | None = Field(None, description="Why the usage the trace reports cannot be counted (its field "
                                "and value); its tokens and cost are then in no sum.")
    reported: bool = Field(False, description="Whether the trace reported token counts at all (a trace without "
                           "them has unknown tokens, not 0).")

    @model_validator(mode="before")
    @classmethod
    def _checked(cls, data: Any) -> Any:
        """Return the fields of a usage a trace reports, or only the problem when any is no count or cost."""
        if data is None:
            return {}
        if not isinstance(data, dict):
            return {"problem": f"usage must be an object, got {type(data).__name__}"}
        prompt, bad_prompt = checked_tokens(data.get("prompt_tokens"), "usage.prompt_tokens")
        completion, bad_completion = checked_tokens(data.get("completion_tokens"), "usage.completion_tokens")
        cost, bad_cost = checked_cost(data.get("cost"), "usage.cost")
        problems = [p for p in (bad_prompt, bad_completion, bad_cost) if p]
        if problems:
            return {"problem": "; ".join(problems)}
        reported = (data["reported"] if isinstance(data.get("reported"), bool)
                    else data.get("prompt_tokens") is not None or data.get("completion_tokens") is not None)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "cost": cost, "reported": reported}


class Trace(BaseModel):
    """One question's trace: candidates before rerank/filter/truncation, the final context in order,
    the answer, citations, latency per stage, token usage, the run mode and any error.

    Keys a trace may not hold are not dropped here: `trace_from` reports them (`unknown_keys`)."""

    model_config = ConfigDict(extra="ignore")
    schema_version: int = Field(1, description="Version of the trace schema.")
    item_id: str = Field(description="The evaluation item this trace answers.")
    question: str = Field(description="The question as sent.")
    candidates: list[Passage] | None = Field(None, description="Retrieved chunks, best first, before rerank, "
                                             "filtering and truncation; None (the key left out) when the system "
                                             "does not report them, which is not the same as retrieving none.")
    context: list[Passage] | None = Field(None, description="Chunks sent to the model, in order; None (the key "
                                          "left out) when the system does not report its context, which is "
                                          "not the same as an empty context.")
    answer: str | None = Field(None, description="The system's answer; None when it produced none.")
    citations: list[str] = Field(default_factory=list, description="Chunk ids the answer cites.")
    latency_ms: dict[str, float] = Field(default_factory=dict, description="Milliseconds per stage; 'total' too.")
    usage: Usage = Field(default_factory=Usage, description="Tokens and cost of this question.")
    mode: Literal["normal", "degraded", "diagnostic"] = Field("normal", description="How the system ran.")
    refused: bool | None = Field(None, description="True when the system said it cannot answer.")
    error: str | None = Field(None, description="Why the system failed on this question, if it did.")

    @field_validator("candidates", "context", mode="before")
    @classmethod
    def _passages(cls, value: Any) -> Any:
        """Accept chunk ids as plain strings."""
        if isinstance(value, list):
            return [{"chunk_id": v} if isinstance(v, (str, int)) else v for v in value]
        return value

    def is_refusal(self) -> bool:
        """Return whether the system gave no answer: it said it cannot answer, or its answer is empty."""
        return bool(self.refused) or not (self.answer or "").strip()


TRACE_KEYS = frozenset(Trace.model_fields)

# What other tools call a trace's fields (LangChain, LlamaIndex, ragas, Haystack, plain habit): a key
# that is one of these is named with the field it stands for, whether or not it is spelled alike.
_RETRIEVED = "candidates or context"   # retrieved chunks: before rerank (candidates) or sent to the model
KEY_ALIASES = {
    **dict.fromkeys(("retrieved", "retrieval", "retrieved_docs", "retrieved_documents", "retrieved_chunks",
                     "retrieved_ids", "hits", "results", "ranking", "ranked", "docs", "documents", "doc_ids",
                     "chunk_ids", "nodes", "source_nodes"), "candidates"),
    **dict.fromkeys(("contexts", "retrieved_contexts", "context_docs", "context_ids", "prompt_context",
                     "source_documents"), "context"),
    **dict.fromkeys(("passages", "chunks", "sources", "evidence"), _RETRIEVED),
    **dict.fromkeys(("response", "output", "outputs", "result", "reply", "completion", "generation", "generated",
                     "generated_answer", "prediction", "predicted", "text", "answer_text", "final_answer"), "answer"),
    **dict.fromkeys(("cited", "cites", "citation", "references", "refs", "cited_ids"), "citations"),
    **dict.fromkeys(("latency", "latencies", "timings", "timing", "elapsed", "elapsed_ms", "duration",
                     "duration_ms", "time_ms"), "latency_ms"),
    **dict.fromkeys(("tokens", "token_usage", "usage_tokens", "cost"), "usage"),
    **dict.fromkeys(("refusal", "abstained", "abstain", "declined", "no_answer", "unanswerable"), "refused"),
    **dict.fromkeys(("exception", "errors", "err", "failure"), "error"),
    **dict.fromkeys(("query", "input", "user_input", "prompt", "question_text"), "question"),
    **dict.fromkeys(("id", "qid", "query_id", "question_id"), "item_id"),
}


def unknown_keys(data: dict) -> list[str]:
    """Return a trace's keys that are no field of a trace, each with the field it was probably meant
    to be: another tool's name for it (`KEY_ALIASES`), else a field spelled alike.

    >>> unknown_keys({"answer": "x", "contexts": [], "latency": 3, "zzz": 1})
    ['contexts (did you mean context?)', 'latency (did you mean latency_ms?)', 'zzz']
    >>> unknown_keys({"retrieved": [], "response": "x", "chunks": []})
    ['retrieved (did you mean candidates?)', 'response (did you mean answer?)', 'chunks (did you mean candidates or context?)']
    """
    found = []
    for key in data:
        if key in TRACE_KEYS:
            continue
        text = str(key)
        lowered = text.lower().replace("-", "_").replace(" ", "_")
        close = [KEY_ALIASES[lowered]] if lowered in KEY_ALIASES else []
        if not close:
            close = difflib.get_close_matches(lowered, sorted(TRACE_KEYS), n=1, cutoff=0.6)
        if not close:
            close = [k for k in sorted(TRACE_KEYS) if len(text) >= 4 and k.startswith(lowered)][:1]
        found.append(f"{text} (did you mean {close[0]}?)" if close else text)
    return found


def not_a_trace(value: Any) -> str:
    """Return what a value that is no trace is, and what the trace holding it would look like.

    >>> not_a_trace("Paris.")
    'a string (an answer alone is {"answer": "..."}; a trace also names its candidates and context)'
    >>> not_a_trace(["c1", "c2"])
    'a list (chunk ids alone are {"candidates": [...]}, or {"context": [...]})'
    """
    if isinstance(value, str):
        return 'a string (an answer alone is {"answer": "..."}; a trace also names its candidates and context)'
    if isinstance(value, (list, tuple)):
        return 'a list (chunk ids alone are {"candidates": [...]}, or {"context": [...]})'
    if value is None:
        return 'null (the function returned nothing: return a dict such as {"candidates": [...], "answer": "..."})'
    return f'{type(value).__name__} (a trace is a dict such as {{"candidates": [...], "answer": "..."}})'


def trace_from(data: Any, *, item_id: str, question: str, where: str = "trace") -> Trace:
    """Return the trace a system returned, or raise InputError naming the bad field. Unknown keys
    are left for the caller to report (`unknown_keys`)."""
    if not isinstance(data, dict):
        raise InputError(f"must be a JSON object, got {not_a_trace(data)}", file=where)
    try:
        return Trace.model_validate({**data, "item_id": item_id, "question": question})
    except ValidationError as exc:
        raise InputError.from_validation(exc, file=where) from None


# -- the run folder -------------------------------------------------------------------------------

class TraceRecord(VersionedRecord):
    """One line of traces.jsonl: what the system returned for one item, or why it returned nothing."""

    SCHEMA = 3  # 3: warmup
    item_id: str = Field(description="The item.")
    kind: Literal["trace", "trec"] = Field("trace", description="trace: a system's trace; trec: one query of a "
                                           "TREC run (candidates only: no context, no answer).")
    trace: Any = Field(None, description="The system's trace as it returned it (checked when scored: a value that "
                       "is not a trace is that item's problem, not the run's).")
    error: str | None = Field(None, description="Why there is no trace: the target raised, timed out, ...")
    elapsed_ms: float | None = Field(None, description="How long the failed call took.")
    warmup: bool = Field(False, description="A warm-up call: one of the first --warmup calls per worker that this "
                         "process started (imports, model loading, connections): its latency is kept out of "
                         "the system's (counted apart), its tokens and cost still count. Never for --traces "
                         "(no call is made).")

    @classmethod
    def upgrade(cls, data: dict) -> dict:
        """Schema 1 marked a TREC line inside the trace ("trec": true)."""
        trace = data.get("trace")
        if isinstance(trace, dict) and trace.get("trec") is True:
            trace = {k: v for k, v in trace.items() if k != "trec"}
            return {**data, "trace": trace, "kind": "trec"}
        return data


class RunSettings(Record):
    """How a run is made and scored."""

    ks: list[Annotated[int, Field(ge=1, le=MAX_K)]] = Field(default_factory=lambda: [1, 3, 5, 10], min_length=1,
                                                  description="Cutoffs K of the retrieval metrics.")
    concurrency: int = Field(4, ge=1, description="Calls to the target at once.")
    warmup: int = Field(1, ge=0, description="Calls per worker timed apart as warm-up: the first warmup x "
                        "concurrency calls each start of the run makes (a --resume too) are marked `warmup` and "
                        "left out of the latency percentiles; 0: none. 0 for --traces, which makes no call.")
    timeout: float = Field(60.0, gt=0, allow_inf_nan=False, description="Seconds per call to the target.")
    precision_denominator: Literal["k", "returned"] = Field(
        "k", description="Precision@K divides by K, or by the number returned when fewer.")
    price_input: float | None = Field(None, ge=0, allow_inf_nan=False,
                                      description="USD per million prompt tokens of the system.")
    price_output: float | None = Field(None, ge=0, allow_inf_nan=False,
                                       description="USD per million completion tokens of the system.")
    oracle_context: bool = Field(False, description="Diagnostic: the verified evidence given as the context.")
    allow_unchecked: bool = Field(False, description="Run although the leakage check is missing or failed.")
    exclude_errors: bool = Field(False, description="Leave items whose target failed out of the metrics (listed "
                                 "as unscored) instead of scoring them as a system that returned nothing.")
    max_response_bytes: int = Field(10_000_000, ge=1, description="Largest HTTP response body a target may send.")
    judge_repeats: int = Field(1, ge=1, le=MAX_JUDGE_REPEATS, description="Times the judge judges each answer: "
                               "the first verdicts score, the others measure how often the judge changes its mind.")
    no_judge: bool = Field(False, description="--no-judge: no judge is asked (none is contacted); the judged "
                           "metrics are not computed and counted as unscored, not 0.")
    judge_retrieval: bool = Field(False, description="--judge-retrieval: the judge grades each item's top K "
                                  "candidates and its context 0/1/2 (metrics under judged/).")
    judge_retrieval_k: int | None = Field(None, ge=1, le=MAX_K, description="Candidates graded per item; None: the "
                                          "largest K of `ks`.")
    budget_usd: float | None = Field(None, gt=0, allow_inf_nan=False, description="--budget: the most the judge "
                                     "may cost in this run, USD (needs [judge.prices]).")
    budget_tokens: int | None = Field(None, gt=0, description="--budget-tokens: the most tokens the judge may use "
                                      "in this run.")


class LeakageGate(Record):
    """Whether the release was cleared for evaluation against the KB snapshot, and by which check."""

    status: Literal["clean", "unchecked"] = Field(description="clean, or unchecked (--allow-unchecked).")
    kb_snapshot: str | None = Field(None, description="The snapshot evaluated against.")
    source: str | None = Field(None, description="Where the clearing check was found.")
    at: str | None = Field(None, description="When that check ran.")
    excluded_docs: list[str] = Field(default_factory=list, description="Documents left out of the traces.")
    accepted: int = Field(0, description="Findings of the clearing check a person accepted (reviewed, not leaks).")
    quarantined: int = Field(0, description="Findings of the clearing check whose items were quarantined (not in "
                             "the release).")
    problem: str | None = Field(None, description="Why it was not cleared, when unchecked.")


class RunManifest(VersionedRecord):
    """manifest.json: what was run, against which release and snapshot, and how."""

    SCHEMA = 6  # 3: settings.warmup; 4: target_scope; 5: rejudged_from; 6: settings.judge_retrieval, budget
    dataset: str = Field(description="Dataset name.")
    version: str = Field(description="Release version (vN).")
    content_sha256: str = Field(description="The release's content hash.")
    ref: str = Field(description="NAME@vN as given.")
    kb_snapshot: str | None = Field(None, description="KB snapshot the release's evidence refers to.")
    target: str = Field(description="The system under test, in one line.")
    target_scope: TargetScope | None = Field(None, description="What the target is given of each item's asker "
                                             "and moment; None: started before this was recorded.")
    diagnostic: bool = Field(False, description="True for an --oracle-context run.")
    settings: RunSettings = Field(default_factory=RunSettings, description="How the run was made.")
    judge: dict[str, Any] = Field(default_factory=dict, description="The judge's configuration, or why none.")
    prompt_versions: dict[str, str] = Field(default_factory=dict, description="Generation prompt versions.")
    leakage_gate: LeakageGate = Field(description="The leakage gate's decision.")
    rejudged_from: str | None = Field(None, description="`evalrun rejudge`: the run folder whose answers this run "
                                      "judges again (its traces, copied; the system was not called).")
    packages: dict[str, str] = Field(default_factory=dict, description="Versions of the packages that ran.")
    started_at: str = Field(description="When the run started (UTC).")

    @classmethod
    def upgrade(cls, data: dict) -> dict:
        """Schema 1 kept K as settings.k and the prices under settings.price_per_million_tokens; before
        schema 3 no call was timed apart as warm-up (settings.warmup 0)."""
        old = dict(data.get("settings") or {})
        prices = old.pop("price_per_million_tokens", None) or {}
        settings = {"ks": old.pop("k", [1, 3, 5, 10]), "price_input": prices.get("input"),
                    "price_output": prices.get("output"), "oracle_context": bool(data.get("diagnostic")),
                    "warmup": 0, **old}
        return {**data, "settings": settings}


def _judge_named(judge: dict[str, Any]) -> str:
    if "unavailable" in judge or not judge.get("model"):
        return f"no judge ({judge.get('unavailable', 'none configured')})"
    return f"model {judge.get('model')} at {judge.get('base_url')}"


def judge_difference(started: dict[str, Any], now: dict[str, Any]) -> str | None:
    """Return how the judge configured `now` differs from the one a run `started` with (manifest.judge), both
    as `JudgeConfig.public()` gives them or {"unavailable": why}; None when it is the same judge: the same
    endpoint and model (a timeout, a concurrency or the key's variable does not change a verdict).

    >>> print(judge_difference({"base_url": "http://a/v1", "model": "m"}, {"base_url": "http://a/v1/", "model": "m"}))
    None
    >>> judge_difference({"base_url": "http://a/v1", "model": "m"}, {"unavailable": "no judge configured"})
    'started with model m at http://a/v1; now no judge (no judge configured)'
    """
    def key(judge: dict[str, Any]) -> tuple | None:
        if "unavailable" in judge or not judge.get("model"):
            return None
        return str(judge.get("base_url") or "").rstrip("/"), judge.get("model")

    if key(started) == key(now):
        return None
    return f"started with {_judge_named(started)}; now {_judge_named(now)}"


class ItemEndToEnd(Record):
    """One item's latency, tokens and cost, as the run's end to end sums them; None where unknown
    (never 0 for unknown)."""

    latency_ms: float | None = Field(None, description="The call's total milliseconds: the trace's latency_ms.total, "
                                     "or how long a failed call took; None when neither is known.")
    warmup: bool = Field(False, description="A warm-up call (its trace record's `warmup`): left out of the run's "
                         "latency percentiles.")
    tokens: int | None = Field(None, description="Prompt plus completion tokens; None when the trace reported no "
                               "token counts, its usage is no count (a problem), or the call failed.")
    cost: float | None = Field(None, description="USD: the trace's cost, else its tokens at --price-input/"
                               "--price-output; None when unknown (no cost, no tokens or no prices, a problem "
                               "usage, a failed call).")


class ItemScores(VersionedRecord):
    """One line of scores.jsonl: one item's metrics, each a value or unscored with the reason."""

    SCHEMA = 5  # 2: failed, apart; 3: lexical_attribution; 4: end_to_end; 5: scope

    item_id: str = Field(description="The item.")
    answerable: bool = Field(description="Whether the item is answerable.")
    values: dict[str, float] = Field(default_factory=dict, description="Metric -> value.")
    unscored: dict[str, str] = Field(default_factory=dict, description="Metric -> why it has no value.")
    attribution: list[str] = Field(default_factory=list, description="Where the item failed: retrieval_miss, ...")
    lexical_attribution: dict[str, str] = Field(default_factory=dict, description="The attributions made from "
                                                "string match, not a judge's verdict (no judge scored the item): "
                                                "attribution -> why (the accepted answers, the key points missed).")
    problems: list[str] = Field(default_factory=list, description="What went wrong with its trace.")
    generation: dict[str, Any] | None = Field(None, description="The judge's details: claims, citations.")
    failed: str | None = Field(None, description="Why the target failed on this item (no trace, an error, a bad "
                               "trace); its metrics then score a system that returned nothing, or are unscored "
                               "with --exclude-errors.")
    refusal: str | None = Field(None, description="How the answer was taken for a refusal: the trace's refused "
                                "flag, an empty answer, or a refusal phrase (lexical).")
    apart: str | None = Field(None, description="Why this item is scored apart from every subset (its evidence "
                              "is in documents the leakage check excluded).")
    end_to_end: ItemEndToEnd | None = Field(None, description="Its latency, tokens and cost, for pairing items "
                                            "across runs; None for a TREC run's line or an item with no trace "
                                            "record (or scored before this was recorded).")
    scope: ItemScope | None = Field(None, description="Its permission leaks and stale chunks per layer, and the "
                                    "evidence its asker may not use; None when the KB snapshot has no scope (or "
                                    "the run was scored before scope was checked).")


class MetricSummary(Record):
    """One metric over a set of items."""

    n: int = Field(description="Items with a value.")
    mean: float | None = Field(description="Mean of the values; None when no item has one.")
    ci95: tuple[float, float] | None = Field(None, description="95% interval of the mean (see ci_method).")
    ci_method: Literal["bootstrap", "wilson"] | None = Field(
        None, description="bootstrap: percentile interval over the subset's shared resamples; wilson: Wilson "
        "score interval, for 0/1 values on small subsets or when all values are equal.")
    failed: int = Field(0, description="Of the n items, those whose target failed (scored as returning nothing).")
    unscored: dict[str, int] = Field(default_factory=dict, description="Items without a value, by reason.")


class LatencySummary(Record):
    """Latency of one stage over the traces that report it."""

    n: int = Field(description="Traces reporting the stage.")
    p50: float = Field(description="Median, in milliseconds.")
    p95: float = Field(description="95th percentile, in milliseconds.")
    max: float = Field(description="Slowest, in milliseconds.")


class EndToEnd(Record):
    """Latency, tokens and cost of the system under test."""

    latency_ms: dict[str, LatencySummary | None] = Field(default_factory=dict, description="Per stage (and "
                                                         "'failed calls'), warm-up calls left out.")
    system_tokens: dict[str, int] = Field(default_factory=dict, description="Prompt and completion tokens.")
    system_cost: float | None = Field(None, description="USD, from the traces or --price-input/--price-output.")
    usage_left_out: int = Field(0, description="Items whose trace reported a usage that is no count or cost "
                                "(negative, NaN, text): in neither the tokens nor the cost (each named in its "
                                "item's problems).")
    usage_reported: int | None = Field(None, description="Items whose trace reported token counts: the tokens "
                                       "are theirs; 0 means the system reported none, so its tokens are unknown, "
                                       "not 0 (None: scored before this was counted).")
    warmup_calls: int = Field(0, description="Warm-up calls (failed ones too): in no stage of `latency_ms`, "
                              "in the tokens and cost (a warm-up call is paid). When every call was one, "
                              "`latency_ms` is empty.")
    warmup_ms: LatencySummary | None = Field(None, description="The warm-up calls' total latency (a failed "
                                             "one's elapsed time); None when there were none.")


class JudgeAgreement(Record):
    """How often the judge gave one metric a different value when asked again about the same answer."""

    items: int = Field(description="Items with a value on every repeat.")
    unstable: int = Field(description="Of those, items whose value differed between repeats.")
    compared: int = Field(description="Pairs (first verdict, a repeat) compared: items x (repeats - 1).")
    changed: int = Field(description="Of those pairs, the ones whose values differed.")
    rate: float | None = Field(None, description="changed / compared: how often two judgements of the same answer "
                               "differ; for a 0/1 metric, the judge's own flip rate.")


class JudgeReport(Record):
    """What the judge did for the generation layer, apart from the system's own usage."""

    status: str = Field(description="'scored', or 'unscored: <why>'.")
    absent: Literal["no-judge", "not-configured", "unreachable", "misconfigured"] | None = Field(
        None, description="Why no judge scored the run: --no-judge; none configured; its endpoint did not answer; "
        "its settings are wrong. None when a judge scored it.")
    config: dict[str, Any] | None = Field(None, description="The judge's configuration (no key).")
    prompt_versions: dict[str, str] = Field(default_factory=dict, description="Generation prompt versions.")
    requests: int = Field(0, description="Requests sent.")
    cache_hits: int = Field(0, description="Verdicts from the disk cache.")
    prompt_tokens: int = Field(0, description="Judge prompt tokens.")
    completion_tokens: int = Field(0, description="Judge completion tokens.")
    cost: float | None = Field(None, description="Judge cost in USD, when priced.")
    unscored: dict[str, int] = Field(default_factory=dict, description="Questions without a verdict, by reason.")
    unscored_examples: dict[str, str] = Field(default_factory=dict, description="One example of each reason in "
                                              "`unscored`: an item, its metric and the reason in full.")
    usage_left_out: int = Field(0, description="Judge replies whose usage was no token count (negative, NaN, "
                                "text): in neither the tokens nor the cost (each named in its item's problems).")
    repeats: int = Field(1, description="Times each answer was judged (--judge-repeats).")
    agreement: dict[str, JudgeAgreement] = Field(default_factory=dict, description="With repeats > 1: per "
                                                 "generation metric, how often the repeats disagreed.")


class RunRef(Record):
    """Which run a summary belongs to."""

    dataset: str = Field(description="Dataset name.")
    version: str = Field(description="Release version.")
    content_sha256: str = Field(description="The release's content hash.")
    kb_snapshot: str | None = Field(None, description="KB snapshot.")
    target: str = Field(description="The system under test.")
    diagnostic: bool = Field(False, description="An --oracle-context run.")


class RunSummary(VersionedRecord):
    """summary.json: every metric overall and per subset, losses, end to end, attribution."""

    SCHEMA = 6  # 2: failed_items, apart; MetricSummary.ci_method and failed; values at full precision;
    # 3: attribution_lexical, end_to_end.usage_left_out, judge.usage_left_out (then
    # end_to_end.usage_reported, None when absent); 4: end_to_end.warmup_calls and warmup_ms; 5: scope;
    # 6: judged_retrieval

    run: RunRef = Field(description="Which run.")
    scored_at: str = Field(description="When it was scored (UTC).")
    items: int = Field(description="Items in the release.")
    answerable: int = Field(description="Answerable items.")
    unanswerable: int = Field(description="Unanswerable items.")
    leakage_gate: LeakageGate = Field(description="The leakage gate's decision.")
    problems: dict[str, int] = Field(default_factory=dict, description="Trace problems, by kind.")
    problem_examples: dict[str, str] = Field(default_factory=dict, description="One example of each kind of "
                                             "problem: the first item that has it, and the problem in full.")
    unscored_items: int = Field(0, description="Items with at least one unscored metric.")
    failed_items: dict[str, int] = Field(default_factory=dict, description="Items whose target failed, by reason.")
    apart: dict[str, list[str]] = Field(default_factory=dict, description="Items scored apart (metrics under "
                                        "'apart: <reason>', not in 'all' or any subset), by reason.")
    metrics: dict[str, dict[str, MetricSummary]] = Field(
        default_factory=dict, description="Subset label ('all', 'qtype=single', ...) -> metric -> summary.")
    context_loss: dict[str, float] = Field(default_factory=dict, description="Candidates minus context, per metric@K: the mean "
                                        "over the items that have both values.")
    end_to_end: EndToEnd = Field(default_factory=EndToEnd, description="Latency, tokens, cost.")
    attribution: dict[str, int] = Field(default_factory=dict, description="Items per failure attribution.")
    attribution_lexical: dict[str, int] = Field(default_factory=dict, description="Of those, the items attributed "
                                                "from string match, not a judge's verdict (no judge scored them).")
    layers: dict[str, str | None] = Field(default_factory=dict, description="Each layer: scored, or why not.")
    judge: JudgeReport | None = Field(None, description="What the judge did.")
    judged_retrieval: JudgedRetrieval | None = Field(None, description="What the judge did for retrieval "
                                                     "(--judge-retrieval); None without it.")
    scope: ScopeSummary | None = Field(None, description="Permission leaks and stale chunks per layer, askers "
                                       "checked and not, items declined for want of usable evidence; None: scored "
                                       "before scope was checked.")


@dataclass
class Run:
    """A run folder as read: its manifest, traces, and (once scored) its scores and summary."""

    folder: Path
    manifest: RunManifest
    traces: dict[str, TraceRecord] = field(default_factory=dict)
    scores: list[ItemScores] | None = None
    summary: RunSummary | None = None


def read_traces(path: Path) -> dict[str, TraceRecord]:
    """Return the trace records written so far, by item id; a last line cut short by a kill is left
    out (that item runs again on --resume)."""
    path = Path(path)
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8", errors="replace")
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    return {record.item_id: record for record in read_jsonl(TraceRecord, path, text)}


def read_run(folder: Path) -> Run:
    """Return the run in `folder`; a folder that is not a run is one line."""
    folder = Path(folder)
    if not (folder / MANIFEST).is_file():
        raise NotFound(f"{folder} is not a run folder (no {MANIFEST}); `evalrun run` writes one")
    run = Run(folder, RunManifest.read(folder / MANIFEST), read_traces(folder / TRACES))
    if (folder / SCORES).exists():
        run.scores = list(read_jsonl(ItemScores, folder / SCORES))
    if (folder / SUMMARY).exists():
        run.summary = RunSummary.read(folder / SUMMARY)
    return run


def scored_run(folder: Path) -> Run:
    """Return the scored run in `folder`; one that is not scored yet is one line."""
    run = read_run(folder)
    if run.summary is None or run.scores is None:
        raise NotFound(f"{folder} has not been scored yet (no summary.json): `evalrun run --resume --out {folder}`")
    return run
