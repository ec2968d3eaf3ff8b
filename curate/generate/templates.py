"""Questions from mined pairs and probes, by template, in the language of their passages (no model).

A code with near codes (LG-4031 beside LG-4032 and LG-4033) is asked once, "What does LG-4031 mean?",
its passage the evidence and each near code's passage a near miss. Any other confusable question
asks about one side of a near-copy pair (which side: by the pair's hash, so both sides of a KB's pairs
get asked) in a way only that side answers:

- a code or a name names the side: "What does LG-4032 mean?", "安贞门站是什么？";
- a number, a date or a negation is asked from the side's own sentence, the differing token turned
  into a question word ("LG-4031 tokens expire after how many days?", "到发线多少条？"), the side told
  apart by its document's title, else its section. Two sides in one document and section with only
  the answer to tell them apart give no question (counted: "nothing but the answer tells the two
  sides apart").

An unanswerable question asks about the probe's token: "What does LG-5042 mean?", "瑞乌鲁火山是什么？",
"What does Travel policy say about 2027?".

Each candidate's evidence is its side's passage (grade 2) and the other side's (grade 0, the near
miss); its key point is its side's passage. Mined questions are drafts a person accepts, edits or
rejects; a model rewrites them when one is configured.
"""

from __future__ import annotations

import hashlib
import re

from curate.records.generated import (
    Candidate,
    CandidateEvidence,
    CandidateKeyPoint,
    Generation,
    MinedPair,
    Passage,
    Probe,
)
from curate.text.normalize import language_of

TEMPLATES = "mined-templates-1"
_LIST_MARK = re.compile(r"^\s*(?:[-*+•]\s+|\d{1,3}[.)、]\s*)")
_END = re.compile(r"[\s。．.!！?？;；:：,，、]+$")
ASK = {
    "en": {"code": "What does {token} mean?", "name": "What is {token}?",
           "year": "What does {where} say about {token}?", "yes_no": "According to {where}, is it true that {text}?",
           "cloze": "According to {where}: {text}?", "cloze_alone": "{text}?"},
    "zh": {"code": "{token} 是什么意思？", "name": "{token}是什么？",
           "year": "《{where}》中关于{token}年是怎么说的？", "yes_no": "根据《{where}》，{text}吗？",
           "cloze": "根据《{where}》，{text}？", "cloze_alone": "{text}？"},
}
WORD = {
    "en": {"number": "how many", "date": "when"},
    "zh": {"number": "多少", "date": "何时"},
}


def side_of(pair: MinedPair) -> MinedPair:
    """Return the pair with the side to ask as `a`: a or b by the parity of the pair's hash."""
    if int(hashlib.sha256(pair.pair_id.encode("utf-8")).hexdigest(), 16) % 2 == 0:
        return pair
    return pair.model_copy(update={"a": pair.b, "b": pair.a, "token_a": pair.token_b, "token_b": pair.token_a,
                                   "differs": " ≠ ".join(reversed(pair.differs.split(" ≠ ")))})


def _sentence(text: str) -> str:
    """Return a passage without its list mark and its closing punctuation."""
    return _END.sub("", _LIST_MARK.sub("", text)).strip()


def _where(asked: Passage, other: Passage) -> str | None:
    """Return what tells the asked side apart from the other: its title, else its section; None."""
    if asked.title and asked.title != other.title:
        return asked.title
    if asked.section and asked.section != other.section:
        return asked.section if not asked.title else f"{asked.title} › {asked.section}"
    return None


def pair_question(pair: MinedPair) -> tuple[str, str] | str:
    """Return (question, template name) asking about side `a` of a pair, or why none can be asked.

    >>> from curate.records.generated import Passage
    >>> a = Passage(chunk_id="c1", doc_id="d1", text="- LG-4031 tokens expire after 30 days.", title="Tokens 2025")
    >>> b = Passage(chunk_id="c2", doc_id="d2", text="- LG-4031 tokens expire after 60 days.", title="Tokens 2026")
    >>> pair = MinedPair(pair_id="p-1", kind="near_copy", difference="number", differs="30 ≠ 60", token_a="30",
    ...                  token_b="60", score=97.0, a=a, b=b)
    >>> pair_question(pair)
    ('According to Tokens 2025: LG-4031 tokens expire after how many days?', 'cloze')
    """
    language = "zh" if language_of(pair.a.text) == "zh" else "en"
    ask = ASK[language]
    if pair.difference in ("code", "name") and pair.token_a:
        return ask[pair.difference].format(token=pair.token_a), pair.difference
    where = _where(pair.a, pair.b)
    if pair.difference == "negation":
        if where is None:
            return "nothing but the answer tells the two sides apart"
        return ask["yes_no"].format(where=where, text=_sentence(pair.a.text)), "yes_no"
    text = _sentence(pair.a.text)
    if not pair.token_a or pair.token_a not in text:
        return "the differing token is not in the passage's sentence"
    if where is None:
        return "nothing but the answer tells the two sides apart"
    asked = text.replace(pair.token_a, WORD[language][pair.difference], 1)
    if language == "zh":   # "补贴为 500 元" asks "补贴为多少元"
        asked = re.sub(rf"\s*({WORD['zh'][pair.difference]})\s*", r"\1", asked)
    return ask["cloze"].format(where=where, text=asked), "cloze"


def pair_candidate(pair: MinedPair, run: str) -> Candidate | str:
    """Return the confusable candidate of a pair (its side `a` asked; `side_of` chooses), or why none."""
    made = pair_question(pair)
    if isinstance(made, str):
        return made
    question, template = made
    language = "zh" if language_of(pair.a.text) == "zh" else "en"
    answer = _sentence(pair.a.text)
    return Candidate(
        candidate_id=f"confusable-{pair.pair_id}", qtype="confusable", language=language, question=question,
        reference_answer=answer,
        key_points=[CandidateKeyPoint(text=answer, evidence_ids=["e1"])],
        evidence=[CandidateEvidence(evidence_id="e1", passage=pair.a, grade=2),
                  CandidateEvidence(evidence_id="e2", passage=pair.b, grade=0)],
        generation=Generation(method="mined", run=run, candidate_id=f"confusable-{pair.pair_id}",
                              template=f"{TEMPLATES}/{template}", seed_chunks=[pair.a.chunk_id, pair.b.chunk_id],
                              pair_id=pair.pair_id, near_miss=["e2"]))


def code_candidates(pairs: list[MinedPair], run: str) -> list[Candidate]:
    """Return one confusable candidate per code of the near-code pairs: its passage the evidence, the
    passages of the codes one digit away the near misses (in the order found)."""
    stated: dict[tuple[str, str], Passage] = {}      # (language, code) -> its passage
    near: dict[tuple[str, str], list[Passage]] = {}
    for pair in pairs:
        if pair.kind != "near_code":
            continue
        language = "zh" if language_of(pair.a.text) == "zh" else "en"   # both sides: mining pairs one language
        for code, own, other in ((pair.token_a, pair.a, pair.b), (pair.token_b, pair.b, pair.a)):
            stated.setdefault((language, code), own)
            if other.text not in [n.text for n in near.setdefault((language, code), [])]:
                near[language, code].append(other)
    candidates = []
    for (language, code), own in stated.items():
        answer = _sentence(own.text)
        evidence = [CandidateEvidence(evidence_id="e1", passage=own, grade=2)]
        evidence += [CandidateEvidence(evidence_id=f"e{k}", passage=other, grade=0)
                     for k, other in enumerate(near[language, code], start=2)]
        key = "c-" + hashlib.sha256(f"{language}:{code}".encode("utf-8")).hexdigest()[:10]
        candidates.append(Candidate(
            candidate_id=f"confusable-{key}", qtype="confusable", language=language,
            question=ASK[language]["code"].format(token=code), reference_answer=answer,
            key_points=[CandidateKeyPoint(text=answer, evidence_ids=["e1"])], evidence=evidence,
            generation=Generation(method="mined", run=run, candidate_id=f"confusable-{key}",
                                  template=f"{TEMPLATES}/code", seed_chunks=[e.passage.chunk_id for e in evidence],
                                  near_miss=[e.evidence_id for e in evidence[1:]])))
    return candidates


def probe_candidate(probe: Probe, run: str) -> Candidate:
    """Return the unanswerable candidate of a probe: its near passages as near misses (grade 0)."""
    language = "zh" if probe.near and language_of(probe.near[0].text) == "zh" else "en"
    ask = ASK[language]
    if probe.kind == "year" and probe.near:
        where = probe.near[0].title or probe.near[0].section or probe.near[0].doc_id
        question, template = ask["year"].format(where=where, token=probe.token), "year"
    elif probe.kind == "name":
        question, template = ask["name"].format(token=probe.token), "name"
    else:
        question, template = ask["code"].format(token=probe.token), "code"
    evidence = [CandidateEvidence(evidence_id=f"e{k}", passage=near, grade=0)
                for k, near in enumerate(probe.near, start=1)]
    return Candidate(
        candidate_id=f"unanswerable-{probe.probe_id}", qtype="unanswerable", language=language, question=question,
        answerable=False, evidence=evidence,
        generation=Generation(method="mined", run=run, candidate_id=f"unanswerable-{probe.probe_id}",
                              template=f"{TEMPLATES}/{template}", seed_chunks=[n.chunk_id for n in probe.near],
                              probe_id=probe.probe_id, near_miss=[e.evidence_id for e in evidence]))
