"""What a judge review looks like in Argilla, and what a submitted response says (pure but for the SDK's
settings objects).

One record per item, in one dataset per run review. Its one field, `review`, is laid out in two
columns: on the left the question, the reference answer, the key points and the context chunks (the
gold ones marked); on the right the system's answer and the judge's verdicts, each with its reason,
numbered K1.. (key points), C1.. (claims) and R (relevance). The form asks, per verdict, "agree" or the
right verdict, and one reason for the record. The one required question, `overall`, says whether the
verdicts are all reasonable or some are wrong; a reviewer marks only the wrong ones, and a verdict left
unmarked is agreed with (so agreeing with a record is one click).

Markup is shown, never run. Argilla 2.8 puts a custom field's record, as JSON, inside a <script> of the
field's frame, unescaped: a "</script>" in any text would end that script and what follows would run
with the page's rights. So every text of the field is HTML-escaped here (no "<" ever reaches Argilla in
it) and the template writes it with triple braces (as the HTML it now is: the escaped text), and a
record's id is the item id only when it is plain (`record_id`).

Verdict questions are not required (a record has as many verdicts as its answer has key points and
claims, the form has room for MAX_KEY_POINTS and MAX_CLAIMS). A response that says some verdicts are
wrong but marks none cannot be read: its metrics are not reviewed on that item, and the pull says so.
"""

from __future__ import annotations

import hashlib
import html
import re
from dataclasses import dataclass, field

from curate import EvalItem, argilla_sdk
from evalrun.records import Trace
from evalrun.review.verdicts import VALUES, JudgedVerdict

MAX_KEY_POINTS = 6
MAX_CLAIMS = 8
MAX_PASSAGE = 1500   # characters of a context chunk shown
PLAIN_ID = re.compile(r"[A-Za-z0-9_.:\-]{1,200}")
AGREE = "agree"
OVERALL = {"reasonable": "✓ every verdict is reasonable", "wrong": "✗ some are wrong: mark them below"}
SLOT_PREFIX = {"key_point": "K", "claim": "C", "relevance": "R"}
KIND_TITLES = {"key_point": "key point", "claim": "claim", "relevance": "relevance of the answer"}

TEMPLATE = """
<style>
.rv{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:18px;font-size:15px;line-height:1.5}
.rv h4{margin:10px 0 4px;font-size:13px;text-transform:uppercase;color:#555}
.rv .box{white-space:pre-wrap;padding:6px 8px;background:#f7f7f8;border-radius:4px;margin:4px 0}
.rv .gold{border-left:4px solid #c9a227;background:#fdf8e6}
.rv .id{font-family:monospace;font-size:12px;color:#666}
.rv .verdict{border:1px solid #ddd;border-radius:4px;padding:6px 8px;margin:6px 0}
.rv .said{font-weight:600}
</style>
<div class="rv">
<div class="left">
<h4>问题 Question</h4><div class="box">{{{record.fields.review.question}}}</div>
{{#if record.fields.review.reference}}<h4>参考答案 Reference answer</h4>
<div class="box">{{{record.fields.review.reference}}}</div>{{/if}}
{{#if record.fields.review.key_points.length}}<h4>要点 Key points</h4>
{{#each record.fields.review.key_points}}<div class="box"><b>{{{this.slot}}}</b> {{{this.text}}}</div>{{/each}}{{/if}}
<h4>上下文 Context (★ = gold evidence)</h4>
{{#each record.fields.review.context}}<div class="box{{#if this.gold}} gold{{/if}}"><span class="id">{{{this.id}}}</span>
{{#if this.gold}}★ {{/if}}{{{this.text}}}</div>{{else}}<div class="box">(no context)</div>{{/each}}
</div>
<div class="right">
<h4>系统的回答 The system's answer</h4><div class="box">{{{record.fields.review.answer}}}</div>
<h4>评审模型的判断 The judge's verdicts</h4>
{{#each record.fields.review.verdicts}}<div class="verdict"><b>{{{this.slot}}}</b> {{{this.kind}}}: {{{this.about}}}<br>
judge: <span class="said">{{{this.verdict}}}</span> ({{{this.choices}}})<br><i>{{{this.reason}}}</i></div>{{/each}}
{{#if record.fields.review.not_shown}}<div class="box">{{{record.fields.review.not_shown}}}</div>{{/if}}
</div>
</div>
"""


def slot_names(kind: str) -> list[str]:
    """Return the form's question names for verdicts of a kind, in order."""
    count = {"key_point": MAX_KEY_POINTS, "claim": MAX_CLAIMS, "relevance": 1}[kind]
    return ["relevance"] if kind == "relevance" else [f"{kind}_{n}" for n in range(1, count + 1)]


def settings(guidelines: str, min_submitted: int = 1):
    """Return the Argilla settings of a judge review dataset."""
    rg = argilla_sdk()
    questions = [rg.LabelQuestion(name="overall", title="Are the judge's verdicts reasonable?", labels=OVERALL,
                                  required=True)]
    for kind in ("relevance", "key_point", "claim"):   # relevance first: every record has it
        labels = {AGREE: "✓ agree"} | {value: f"✗ {value}" for value in VALUES[kind]}
        for n, name in enumerate(slot_names(kind), start=1):
            slot = SLOT_PREFIX[kind] + ("" if kind == "relevance" else str(n))
            questions.append(rg.LabelQuestion(
                name=name, title=f"{slot}: agree, or the right verdict" + ("" if kind == "relevance" else
                                                                            " (if the record has it)"),
                labels=labels, required=False,
                description=f"The judge's verdict {slot} ({KIND_TITLES[kind]}): mark it when it is wrong; "
                            "unmarked, it is agreed with. Leave empty when the record has no such verdict."))
    questions.append(rg.TextQuestion(name="reason", title="Why you disagree (start with the verdict, e.g. K2: ...)",
                                     required=False))
    metadata = [rg.TermsMetadataProperty(name=name) for name in ("language", "difficulty", "stratum")]
    return rg.Settings(guidelines=guidelines, fields=[rg.CustomField(name="review", title="Review", template=TEMPLATE)],
                       questions=questions, metadata=metadata,
                       distribution=rg.TaskDistribution(min_submitted=min_submitted))


@dataclass
class Shown:
    """What a record shows: the verdicts in its slots, and per kind how many did not fit."""

    verdicts: list[JudgedVerdict]
    left_out: dict[str, int] = field(default_factory=dict)


def shown(found: dict[str, list[JudgedVerdict]]) -> Shown:
    """Return the verdicts that fit the form; a kind with more verdicts than slots is left out whole (its
    metrics need every verdict to be reviewed) and counted."""
    kept, left_out = [], {}
    for kind, verdicts in found.items():
        if len(verdicts) > len(slot_names(kind)):
            left_out[kind] = len(verdicts)
        else:
            kept += verdicts
    return Shown(kept, left_out)


def record_id(item_id: str) -> str:
    """Return the Argilla record id of an item: its id when plain, else a digest of it (an id is written
    into the field's frame as it is, so it must hold no markup).

    >>> record_id("t-1"), record_id("<b>x</b>")
    ('t-1', 'item-e31e3a8eedaa6559')
    """
    if PLAIN_ID.fullmatch(item_id):
        return item_id
    return "item-" + hashlib.sha256(item_id.encode("utf-8")).hexdigest()[:16]


def _escaped(value):
    """Return `value` with every string in it HTML-escaped (see the module)."""
    if isinstance(value, str):
        return html.escape(value, quote=True)
    if isinstance(value, list):
        return [_escaped(v) for v in value]
    if isinstance(value, dict):
        return {k: _escaped(v) for k, v in value.items()}
    return value


def record_value(item: EvalItem, trace: Trace, chunk_texts: dict[str, str], show: Shown) -> dict:
    """Return the value of the `review` field of an item's record, every text HTML-escaped."""
    gold = {c for e in item.evidence for c in e.chunk_ids}
    context = [{"id": p.chunk_id, "gold": p.chunk_id in gold,
                "text": (chunk_texts.get(p.chunk_id) or p.text or "(text unknown)")[:MAX_PASSAGE]}
               for p in trace.context or ()]
    verdicts = [{"slot": SLOT_PREFIX[v.kind] + ("" if v.kind == "relevance" else str(v.index + 1)),
                 "kind": KIND_TITLES[v.kind], "about": "" if v.kind == "relevance" else v.about,
                 "verdict": v.verdict, "choices": " / ".join(VALUES[v.kind]), "reason": v.reason}
                for v in show.verdicts]
    not_shown = "; ".join(f"{n} {KIND_TITLES[kind]} verdicts: too many for the form, not reviewed here"
                          for kind, n in show.left_out.items())
    return _escaped({"question": item.question, "reference": item.reference_answer or "",
                     "key_points": [{"slot": f"K{k}", "text": p.text} for k, p in enumerate(item.key_points, start=1)],
                     "context": context, "answer": trace.answer or "", "verdicts": verdicts, "not_shown": not_shown})


@dataclass
class ReviewAnswer:
    """One reviewer's submitted response to one record: per slot question, "agree" or a verdict."""

    user: str
    overall: str | None = None
    slots: dict[str, str] = field(default_factory=dict)
    reason: str | None = None
    updated_at: str | None = None


def review_answers(responses: list[dict], usernames: dict[str, str]) -> list[ReviewAnswer]:
    """Return the submitted responses of a record, one per user, as the Argilla API lists them; a draft or
    discarded response is no review."""
    answers = []
    for response in responses:
        if response.get("status") != "submitted":
            continue
        user = usernames.get(str(response.get("user_id")), str(response.get("user_id")))
        answer = ReviewAnswer(user, updated_at=response.get("updated_at"))
        for name, holder in (response.get("values") or {}).items():
            value = holder.get("value") if isinstance(holder, dict) else None
            if name == "overall":
                answer.overall = value if isinstance(value, str) else None
            elif name == "reason":
                answer.reason = value.strip() if isinstance(value, str) and value.strip() else None
            elif isinstance(value, str):
                answer.slots[name] = value
        answers.append(answer)
    return sorted(answers, key=lambda a: a.user)


def person_verdict(kind: str, judge: str, said: str | None) -> tuple[str | None, str | None]:
    """Return (the reviewer's verdict, why it cannot be read): "agree", or no mark, is the judge's verdict; a
    value of another kind of verdict is refused.

    >>> person_verdict("claim", "supported", "agree"), person_verdict("claim", "supported", "not_supported")
    (('supported', None), ('not_supported', None))
    >>> person_verdict("claim", "supported", "covered")[1]
    "'covered' is not a claim verdict (supported / not_supported)"
    """
    if said is None or said == AGREE:
        return judge, None
    if said not in VALUES[kind]:
        return None, f"{said!r} is not a {KIND_TITLES[kind]} verdict ({' / '.join(VALUES[kind])})"
    return said, None
