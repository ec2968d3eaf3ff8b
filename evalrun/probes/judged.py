"""Judge verdicts on probe answers, where a judge is configured: one question per answered variant
(`evalrun.probes.judge_prompts`, in the variant's language), its verdict mapped to passed, failed or
undecided with method "judge".

They are counted apart from the lexical verdicts, never instead of them: a verdict the judge could not
give (an endpoint error, an unparsable reply, the budget) is no verdict, counted per probe, and the
lexical one stands. A variant whose call failed is not sent, nor one with nothing to judge it against (an
item without an accepted answer or key point; a rewrite whose original question got no answer): it has
no judge verdict, and that is no failure of the judge. Every question goes through `Judge.ask_many`
(bounded concurrency, the workspace's judge cache, retries, one repair), with long texts cut.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from curate import Budget, EvalItem, Judge, Prompt, Verdict, Workspace, cut
from evalrun.probes.build import accepted_answers
from evalrun.probes.judge_prompts import NO_ANSWER, OUTCOMES, PROBE_PROMPTS, TASKS
from evalrun.probes.records import ProbeVariant, ProbeVerdict
from evalrun.probes.score import Answered
from evalrun.records import Trace
from evalrun.scoring.generation import no_judge_reason

MAX_ANSWER = 1500     # characters of an answer shown to the judge
MAX_PASSAGE = 1500    # characters of a planted passage
MAX_QUESTION = 500    # characters of a question
MAX_REFERENCE = 800   # characters of the accepted answers, together
MAX_VALUE = 200       # characters of a changed fact's value
MAX_REASON = 240      # characters of the judge's reason kept in a verdict's `what`
NOTHING_ASKED = "no answered variant to judge"


def answer_text(trace: Trace, language: str) -> str:
    """Return an answer as the judge is shown it: its text cut, or what stands for an answer without text.

    >>> answer_text(Trace(item_id="v", question="q", answer=None, refused=True), "en")
    '(no answer: the assistant said it cannot answer)'
    """
    text = (trace.answer or "").strip()
    if text:
        return cut(text, MAX_ANSWER)
    return NO_ANSWER["zh" if language == "zh" else "en"]["refused" if trace.refused else "empty"]


def reference_of(item: EvalItem | None) -> str | None:
    """Return what an answer is judged against, one per line: the item's accepted answers, else its key
    points; None when it has neither.

    >>> reference_of(EvalItem(id="q", question="?", language="en", source="human", reference_answer="45 days",
    ...                       answers=["forty-five days"]))
    '- forty-five days\\n- 45 days'
    """
    if item is None:
        return None
    found = accepted_answers(item) or [k.text for k in item.key_points if k.text.strip()]
    return cut("\n".join(f"- {a}" for a in found), MAX_REFERENCE) if found else None


def question_of(one: Answered, item: EvalItem | None, clean: Answered | None) -> tuple[Prompt, dict] | None:
    """Return the judge's question about one answered variant (its prompt and payload); None when its call
    failed or there is nothing to judge it against."""
    variant, trace = one.variant, one.trace
    if trace is None:
        return None
    task = TASKS[variant.expected]
    payload = {"question": cut(variant.question, MAX_QUESTION), "answer": answer_text(trace, variant.language)}
    if task == "probe_answer":
        reference = reference_of(item)
        if reference is None:
            return None
        payload["reference"] = reference
    elif task == "probe_counterfactual":
        planted = next((c for c in variant.context if c.role == "counterfactual" and c.change), None)
        if planted is None:
            return None
        payload.update(passage=cut(planted.text, MAX_PASSAGE), old=cut(planted.change["from"], MAX_VALUE),
                       new=cut(planted.change["to"], MAX_VALUE))
    elif task == "probe_injection":
        planted = next((c for c in variant.context if c.role == "injection"), None)
        if planted is None:
            return None
        payload.update(planted=cut(planted.text, MAX_PASSAGE),
                       instruction=cut(planted.instruction or planted.text, MAX_PASSAGE))
    elif task == "probe_rewrite":
        if clean is None or clean.trace is None:
            return None
        payload.update(original=cut(clean.variant.question, MAX_QUESTION),
                       original_answer=answer_text(clean.trace, variant.language))
    return PROBE_PROMPTS.get(task, variant.language), payload


def judge_requests(done: Sequence[Answered], items: Mapping[str, EvalItem]
                   ) -> list[tuple[ProbeVariant, Prompt, dict]]:
    """Return the judge's questions about the answered variants, each with its variant, in their order."""
    clean = {a.variant.item_id: a for a in done if a.variant.probe == "clean"}
    asked = []
    for one in done:
        question = question_of(one, items.get(one.variant.item_id), clean.get(one.variant.item_id))
        if question is not None:
            asked.append((one.variant, *question))
    return asked


def verdict_from(variant: ProbeVariant, prompt: Prompt, reply: Verdict) -> ProbeVerdict | None:
    """Return the variant's judge verdict from the judge's reply; None when the reply holds no verdict."""
    if reply.output is None:
        return None
    said = reply.output.verdict
    reason = " ".join(reply.output.reason.split())
    what = f"judge: {said.replace('_', ' ')}" + (f": {cut(reason, MAX_REASON)}" if reason else "")
    return ProbeVerdict(variant_id=variant.variant_id, verdict=OUTCOMES[prompt.name][said], what=what,
                        method="judge")


def usage_line(stats) -> str:
    """Return what the judge did, in one line: requests, cache hits, tokens, cost."""
    cost = "unknown" if stats.cost is None else f"${stats.cost:,.4f}"
    return (f"{stats.requests:,} requests, {stats.cache_hits:,} from the cache, {stats.prompt_tokens:,}+"
            f"{stats.completion_tokens:,} tokens, cost {cost}")


def judge_verdicts(workspace: Workspace, done: Sequence[Answered], items: Mapping[str, EvalItem], *,
                   no_judge: bool = False, budget: Budget | None = None
                   ) -> tuple[list[ProbeVerdict], dict[str, int], str | None, str | None]:
    """Return (the judge's verdicts, the variants whose verdict it could not give per probe, why no judge was
    asked at all or None, what the judge did in one line or None): nothing is sent with `no_judge` or without
    a configured judge that answers. With `budget`, no request is sent that could go past it: those variants
    are counted among the verdicts the judge could not give."""
    config, reason = no_judge_reason(workspace, no_judge)
    if reason is not None:
        return [], {}, reason, None
    asked = judge_requests(done, items)
    if not asked:
        return [], {}, NOTHING_ASKED, None
    judge = Judge(config, workspace.root / "cache" / "judge", budget=budget)
    replies = judge.ask_many([(prompt, payload, 0) for _, prompt, payload in asked], "judging probe answers")
    verdicts, failed = [], Counter()
    for (variant, prompt, _), reply in zip(asked, replies):
        verdict = verdict_from(variant, prompt, reply)
        if verdict is None:
            failed[variant.probe] += 1
        else:
            verdicts.append(verdict)
    return verdicts, dict(failed), None, usage_line(judge.stats)
