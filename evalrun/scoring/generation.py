"""The generation layer, through the judge: correctness and completeness against the key points,
faithfulness to the final context (claims, hallucination rate), answer relevance, citation accuracy.

Correctness compares the answer with the item's key points; faithfulness compares its claims with
the context the system actually gave its model. They answer different questions and stay separate.

Every question goes through `Judge.ask_many` (bounded concurrency, disk cache, retries, repair). A
metric that needs a verdict the judge could not give is `unscored` for that item with the reason —
never 0, never 1.

Metrics (per answerable item with a non-empty, non-refused answer):

* ``generation/completeness`` = key points covered / key points (the judge marks each key point
  covered, missing or contradicted); ``generation/correctness`` = 1 when every key point is covered
  and so none is missing or contradicted, else 0 (binary: the answer is right or it is not);
  ``generation/key_points_contradicted`` = key points contradicted / key points.
* ``generation/faithfulness`` = claims supported by the context / claims;
  ``generation/hallucination_rate`` = unsupported / claims. With an empty context no claim is
  supported (no question is asked); a context the trace does not report leaves them, and citation
  accuracy, unscored.
* ``generation/answer_relevance``: yes 1, partly 0.5, no 0.
* ``generation/citation_accuracy`` = correct citations / citations (see evalrun.scoring.claims for which
  claim a citation belongs to). A citation of a chunk not in the context is wrong and flagged in
  ``details["citations_outside_context"]``; an inline citation is correct when its chunk supports
  its claim; a listed one (in the trace's ``citations`` but not inline) when its chunk supports at
  least one claim. Answers without citations get no citation score (not unscored: nothing to score).

Attribution: ``generation_miss`` when the caller says all the evidence reached the context and the
answer is still not correct (correctness 0: a key point missing or contradicted, which is the same as
completeness < 1); ``hallucination`` when any claim was judged unsupported.
"""

from __future__ import annotations

import copy
import sys
from collections import Counter
from collections.abc import Collection, Iterable

from curate import (
    Budget,
    CurateError,
    EvalItem,
    InputError,
    Judge,
    JudgeConfig,
    Prompt,
    Verdict,
    Workspace,
    cut,
    resolve_judge,
)
from evalrun.records import ItemScores, JudgeAgreement, JudgeReport, Trace
from evalrun.scoring.claims import Claim, split_claims, strip_markers
from evalrun.scoring.generation_prompts import GENERATION

MAX_PASSAGE = 1500   # characters of one chunk shown to the judge
MAX_CONTEXT = 4000   # characters of the whole context shown to the judge
NO_CONTEXT = "the trace reports no context (no 'context' key)"
METRICS = ("generation/correctness", "generation/completeness", "generation/key_points_contradicted",
           "generation/faithfulness", "generation/hallucination_rate", "generation/answer_relevance")
NO_JUDGE = "not computed: --no-judge (no judge was asked)"
NOT_CONFIGURED = "no judge configured"


def prompt(name: str, language: str) -> Prompt:
    """Return a generation prompt in the item's language (English for any language but Chinese)."""
    return GENERATION.get(name, language)


class ChunkIds:
    """Membership in any of several collections (the KB's chunk ids are not copied per item)."""

    def __init__(self, *collections):
        self.collections = collections

    def __contains__(self, chunk_id) -> bool:
        return any(chunk_id in c for c in self.collections)


def _passage_text(passage, chunk_texts: dict[str, str]) -> str | None:
    return chunk_texts.get(passage.chunk_id) or passage.text


def context_text(trace: Trace, chunk_texts: dict[str, str]) -> str | None:
    """Return the final context as the judge sees it (None when a chunk's text is unknown)."""
    parts = []
    for passage in trace.context or ():
        text = _passage_text(passage, chunk_texts)
        if text is None:
            return None
        parts.append(f"[{passage.chunk_id}] {cut(text, MAX_PASSAGE)}")
    return cut("\n".join(parts), MAX_CONTEXT)


def said(verdict: Verdict) -> dict:
    """Return what one judge answer said: {"verdict", "reason"}, or {"unscored": why}."""
    if verdict.output is None:
        return {"unscored": verdict.unscored or "no verdict"}
    return {"verdict": verdict.output.verdict, "reason": verdict.output.reason}


def _ratio(verdicts: list[Verdict], wanted: str) -> tuple[float | None, str | None]:
    """Return (share of verdicts equal to `wanted`, None), or (None, reason) when any is unscored."""
    for verdict in verdicts:
        if verdict.output is None:
            return None, verdict.unscored or "no verdict"
    return sum(v.output.verdict == wanted for v in verdicts) / len(verdicts), None


class _Plan:
    """The judge questions of one item, and where their verdicts go."""

    def __init__(self, item: EvalItem, trace: Trace, chunk_texts: dict[str, str]):
        self.item, self.trace = item, trace
        self.requests: list[tuple[Prompt, dict, int]] = []
        self.slots: dict[str, list[int]] = {"key_points": [], "claims": [], "relevance": [], "citations": []}
        self.result = {"values": {}, "unscored": {}, "attribution": [],
                       "details": {"claims": [], "citations_outside_context": [], "citation_verdicts": []}}
        language = item.language
        context_ids = [p.chunk_id for p in trace.context or ()]
        known = ChunkIds(set(trace.citations) | set(context_ids), chunk_texts)
        answer = strip_markers(trace.answer or "", known)
        self.claims: list[Claim] = split_claims(trace.answer or "", known)
        self.result["details"]["claims"] = [c.text for c in self.claims]
        if item.key_points:
            for key_point in item.key_points:
                self._ask("key_points", prompt("gen_key_point", language),
                          {"question": item.question, "answer": answer, "key_point": key_point.text})
        else:
            for name in ("correctness", "completeness", "key_points_contradicted"):
                self.result["unscored"][f"generation/{name}"] = "no key points labelled"
        self._ask("relevance", prompt("gen_answer_relevance", language), {"question": item.question, "answer": answer})
        # A context the trace does not report is not an empty one: there is nothing to check claims against.
        self.context = None if trace.context is None else context_text(trace, chunk_texts)
        if not self.claims:
            for name in ("faithfulness", "hallucination_rate"):
                self.result["unscored"][f"generation/{name}"] = "no claims in the answer"
        elif trace.context is None:
            for name in ("faithfulness", "hallucination_rate"):
                self.result["unscored"][f"generation/{name}"] = NO_CONTEXT
        elif self.context is None:
            for name in ("faithfulness", "hallucination_rate"):
                self.result["unscored"][f"generation/{name}"] = "a context chunk's text is unknown"
        elif trace.context:
            for claim in self.claims:
                self._ask("claims", prompt("gen_claim_supported", language),
                          {"context": self.context, "claim": claim.text})
        # Citations: (chunk id, claims it must support), in order; outside the context: wrong, no question.
        inline = [(chunk_id, [c.text]) for c in self.claims for chunk_id in c.citations]
        cited_inline = {chunk_id for chunk_id, _ in inline}  # an inline citation of a KB chunk counts even if unlisted
        listed = [(chunk_id, [c.text for c in self.claims]) for chunk_id in dict.fromkeys(trace.citations)
                  if chunk_id not in cited_inline]
        self.citations = inline + listed
        # Per citation: True/False decided here, a reason it cannot be scored, or the request index to read.
        self.citation_ok: list[bool | str | int] = []
        by_id = {p.chunk_id: p for p in trace.context or ()}
        for chunk_id, claims in self.citations:
            passage = by_id.get(chunk_id)
            text = None if passage is None else _passage_text(passage, chunk_texts)
            if trace.context is None:
                self.citation_ok.append(NO_CONTEXT)
            elif passage is None:
                self.result["details"]["citations_outside_context"].append(chunk_id)
                self.citation_ok.append(False)
            elif text is None:
                self.citation_ok.append("a cited chunk's text is unknown")
            elif not claims:
                self.citation_ok.append("no claims in the answer")
            else:
                self.citation_ok.append(len(self.requests))
                self._ask("citations", prompt("gen_citation", language),
                          {"chunk_id": chunk_id, "passage": cut(text, MAX_CONTEXT),
                           "claims": "\n".join(f"- {c}" for c in claims)})

    def _ask(self, slot: str, chosen: Prompt, payload: dict) -> None:
        self.slots[slot].append(len(self.requests))
        self.requests.append((chosen, payload, 0))

    def finish(self, verdicts: list[Verdict], evidence_in_context: bool) -> dict:
        """Return the item's result from the verdicts of its requests (once per repeat: each call starts
        from what was decided before asking)."""
        result = copy.deepcopy(self.result)
        values, unscored, details = result["values"], result["unscored"], result["details"]
        mine = {slot: [verdicts[n] for n in positions] for slot, positions in self.slots.items()}
        # What the judge said, kept for the reader (`evalrun report`): key points and claims in order.
        details["key_point_verdicts"] = [said(v) for v in mine["key_points"]]
        details["claim_verdicts"] = [said(v) for v in mine["claims"]]
        details["relevance_verdict"] = said(mine["relevance"][0])
        if self.item.key_points:
            covered, reason = _ratio(mine["key_points"], "covered")
            contradicted, _ = _ratio(mine["key_points"], "contradicted")
            if reason:
                for name in ("correctness", "completeness", "key_points_contradicted"):
                    unscored[f"generation/{name}"] = reason
            else:
                correct = 1.0 if covered == 1.0 else 0.0   # every key point covered: none missing or contradicted
                values["generation/correctness"] = correct
                values["generation/completeness"] = covered
                values["generation/key_points_contradicted"] = contradicted
                if evidence_in_context and not correct:
                    result["attribution"].append("generation_miss")
        relevance = mine["relevance"][0]
        if relevance.output is None:
            unscored["generation/answer_relevance"] = relevance.unscored or "no verdict"
        else:
            values["generation/answer_relevance"] = {"yes": 1.0, "partly": 0.5, "no": 0.0}[relevance.output.verdict]
        if self.claims and self.context is not None:
            if not self.trace.context:
                supported, reason, any_unsupported = 0.0, None, True
            else:
                supported, reason = _ratio(mine["claims"], "supported")
                any_unsupported = any(v.output is not None and v.output.verdict == "not_supported" for v in mine["claims"])
            if reason:
                unscored["generation/faithfulness"] = unscored["generation/hallucination_rate"] = reason
            else:
                values["generation/faithfulness"] = supported
                values["generation/hallucination_rate"] = 1.0 - supported
            if any_unsupported:
                result["attribution"].append("hallucination")
        if self.citations:
            ok: list[bool | str] = []
            for decided in self.citation_ok:
                if isinstance(decided, bool) or isinstance(decided, str):
                    ok.append(decided)
                else:
                    verdict = verdicts[decided]
                    ok.append(verdict.unscored or "no verdict" if verdict.output is None
                              else verdict.output.verdict == "supports")
            details["citation_verdicts"] = [{"chunk_id": c, "correct": o if isinstance(o, bool) else None}
                                            for (c, _), o in zip(self.citations, ok)]
            reason = next((o for o in ok if isinstance(o, str)), None)
            if reason:
                unscored["generation/citation_accuracy"] = reason
            else:
                values["generation/citation_accuracy"] = sum(ok) / len(ok)
        return result


def score_generation(items_by_id: dict[str, EvalItem], traces_by_id: dict[str, Trace], chunk_texts: dict[str, str],
                     judge: Judge, evidence_in_context: Collection[str] = frozenset(),
                     repeats: int = 1) -> dict[str, dict]:
    """Return {item id: {"values", "unscored", "attribution", "details", "problems"}} for every answerable item
    whose trace has a non-empty answer that is not a refusal and no error; all questions in one `ask_many`.
    "problems": each distinct way the judge's usage in its replies about the item was no token count.

    With `repeats` > 1 every question is asked that many times (each repeat its own cache entry): the
    first verdicts score, and each further repeat's values go to ``details["repeats"]`` (a list of
    {metric: value}), from which `judge_agreement` measures how often the judge changes its mind."""
    plans: list[_Plan] = []
    for item_id, trace in traces_by_id.items():
        item = items_by_id.get(item_id)
        if item is None or not item.answerable or trace.error or trace.is_refusal():
            continue
        plans.append(_Plan(item, trace, chunk_texts))
    requests = [(chosen, payload, repeat) for repeat in range(repeats)
                for plan in plans for chosen, payload, _ in plan.requests]
    verdicts = judge.ask_many(requests, "judging answers") if requests else []
    results, position = {}, 0
    usage: dict[str, Counter] = {}   # item -> how often each usage problem came back
    for repeat in range(repeats):
        for plan in plans:
            mine = verdicts[position:position + len(plan.requests)]
            position += len(plan.requests)
            if repeat == 0:
                results[plan.item.id] = plan.finish(mine, plan.item.id in evidence_in_context)
                if repeats > 1:
                    results[plan.item.id]["details"]["repeats"] = []
            else:
                again = plan.finish(mine, plan.item.id in evidence_in_context)
                results[plan.item.id]["details"]["repeats"].append(again["values"])
            # a judge reply whose usage is no token count: the verdict stands, its tokens are in no sum
            usage.setdefault(plan.item.id, Counter()).update(v.usage_problem for v in mine if v.usage_problem)
    for item_id, result in results.items():
        result["problems"] = [f"{problem} ({n} of the judge's answers about this item)"
                              for problem, n in usage[item_id].items()]
    return results


def judge_agreement(rows: Iterable[ItemScores]) -> dict[str, JudgeAgreement]:
    """Return, per generation metric, over the items with a value on every repeat, how many had
    values that differed between repeats, and how often the first value and a repeat's differed
    (the judge's own flip rate, for a 0/1 metric).

    >>> rows = [ItemScores(item_id=i, answerable=True, values={"generation/correctness": v},
    ...                    generation={"repeats": [{"generation/correctness": w}]})
    ...         for i, v, w in (("a", 1.0, 1.0), ("b", 1.0, 0.0), ("c", 0.0, 0.0), ("d", 0.0, 0.0))]
    >>> judge_agreement(rows)["generation/correctness"].model_dump()
    {'items': 4, 'unstable': 1, 'compared': 4, 'changed': 1, 'rate': 0.25}
    """
    items, unstable, compared, changed = Counter(), Counter(), Counter(), Counter()
    for row in rows:
        repeats = (row.generation or {}).get("repeats") or []
        if not repeats:
            continue
        for name in METRICS:
            first = row.values.get(name)
            again = [values.get(name) for values in repeats]
            if first is None or None in again:
                continue
            differ = sum(value != first for value in again)
            items[name] += 1
            unstable[name] += differ > 0
            compared[name] += len(again)
            changed[name] += differ
    return {name: JudgeAgreement(items=items[name], unstable=unstable[name], compared=compared[name],
                                 changed=changed[name], rate=changed[name] / compared[name])
            for name in METRICS if items[name]}


def configured_judge(workspace: Workspace, no_judge: bool = False, given: JudgeConfig | None = None) -> dict:
    """Return the judge configured now, as a run's manifest records it: its public settings, or
    {"unavailable": why there is none} (`no_judge`: --no-judge, whatever is configured; `given`: this judge,
    whatever is configured, as `evalrun rejudge` asks)."""
    if no_judge:
        return {"unavailable": "--no-judge"}
    if given is not None:
        return given.public()
    try:
        return resolve_judge(workspace).public()
    except CurateError as exc:
        return {"unavailable": str(exc)}


def _judge_unreachable(config: JudgeConfig) -> str | None:
    """Return why the judge endpoint cannot be reached, or None when it answers at all."""
    import httpx
    try:
        httpx.get(config.base_url.rstrip("/") + "/models", timeout=3.0)
        return None
    except httpx.HTTPError as exc:
        return f"judge endpoint {config.base_url} not reachable ({type(exc).__name__})"


def _no_judge(workspace: Workspace, no_judge: bool, given: JudgeConfig | None = None
              ) -> tuple[JudgeConfig | None, str | None, str | None]:
    """Return (the judge's settings, why no judge scores the run, which kind of why): `no_judge`
    contacts none; a configured one (or the one `given`) is asked whether it answers at all."""
    if no_judge:
        return None, NO_JUDGE, "no-judge"
    try:
        config = given or resolve_judge(workspace)
    except InputError as exc:
        if exc.field == "judge":   # neither base_url nor model set anywhere
            return None, NOT_CONFIGURED, "not-configured"
        return None, str(exc), "misconfigured"
    reason = _judge_unreachable(config)
    return config, reason, "unreachable" if reason else None


def no_judge_reason(workspace: Workspace, no_judge: bool, given: JudgeConfig | None = None
                    ) -> tuple[JudgeConfig | None, str | None]:
    """Return (the judge's settings, None), or (None, why no judge can be asked)."""
    config, reason, _ = _no_judge(workspace, no_judge, given)
    return (None, reason) if reason else (config, None)


def score_judged(workspace: Workspace, rows: dict[str, ItemScores], items: list[EvalItem],
                 answered: dict[str, Trace], chunk_texts: dict[str, str], evidence_in_context: set[str],
                 repeats: int = 1, problems: Counter | None = None, no_judge: bool = False,
                 given: JudgeConfig | None = None, budget: Budget | None = None) -> JudgeReport:
    """Score the generation layer through the workspace's judge into `rows` (by item id) for the
    traces that have an answer; return what the judge did, or why it could not (`no_judge`: none is
    asked). `problems` counts, by kind, the items whose rows got a problem (a judge usage that is no
    token count; `given`: the judge to ask, whatever is configured; `budget`: the run's judge budget, shared
    with the retrieval grading)."""
    config, reason, absent = _no_judge(workspace, no_judge, given)
    if reason is not None:
        for item in items:
            trace = answered.get(item.id)
            if item.answerable and trace is not None and not trace.error and not trace.is_refusal():
                for name in METRICS:
                    rows[item.id].unscored[name] = reason
        return JudgeReport(status=f"unscored: {reason}", absent=absent, prompt_versions=GENERATION.versions())
    judge = Judge(config, workspace.root / "cache" / "judge", budget=budget)
    scored = score_generation({i.id: i for i in items}, answered, chunk_texts, judge, evidence_in_context, repeats)
    for item_id, result in scored.items():
        row = rows[item_id]
        row.values.update(result["values"])
        row.unscored.update(result["unscored"])
        row.attribution.extend(result["attribution"])
        row.generation = result["details"]
        row.problems.extend(result["problems"])
        if result["problems"] and problems is not None:
            problems["invalid judge usage"] += 1
    stats = judge.stats
    examples: dict[str, str] = {}
    for item_id, result in scored.items():
        for name, why in result["unscored"].items():
            for kind in stats.unscored:   # a kind is the reason without its details: how it starts
                if why.startswith(kind):
                    examples.setdefault(kind, f"{item_id} {name}: {why}")
    if stats.scrubbed:
        print(f"evalrun: warning: {stats.scrubbed} answers of the judge quoted its API key (an echoed Authorization "
              "header?): the key was replaced by *** before they were cached or scored", file=sys.stderr, flush=True)
    return JudgeReport(status="scored", config=config.public(), prompt_versions=GENERATION.versions(),
                       requests=stats.requests, cache_hits=stats.cache_hits, prompt_tokens=stats.prompt_tokens,
                       completion_tokens=stats.completion_tokens, cost=stats.cost, unscored=dict(stats.unscored),
                       unscored_examples=examples,
                       usage_left_out=stats.usage_left_out,
                       repeats=repeats, agreement=judge_agreement(rows[i] for i in scored) if repeats > 1 else {})
