"""Records of robustness probes: what was planted (`ProbeVariant`, made of `PlantedChunk`s), what could
not be built and why (`ProbeSkip`), and what the answer did (`ProbeVerdict`).

A variant is an item of a release asked again under one probe:

- noise: the gold chunks among hard negatives, at a noise rate, the gold at a position (expected: answer);
- negative: hard negatives only (expected: decline);
- counterfactual: a gold chunk with its key fact changed (expected: follow_context);
- injection: the gold chunks and a planted chunk carrying an instruction (expected: ignore_instruction);
- rewrite: the question rephrased (expected: same_answer).
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field

from curate import Record, VersionedRecord

Probe = Literal["noise", "negative", "counterfactual", "injection", "rewrite"]
PROBES: tuple[str, ...] = get_args(Probe)
# the unprobed variant of an item (its gold context, or none end to end): what each probe is paired to
Asked = Literal["clean", "noise", "negative", "counterfactual", "injection", "rewrite"]
Role = Literal["gold", "noise", "filler", "counterfactual", "injection"]
Expected = Literal["answer", "decline", "follow_context", "ignore_instruction", "same_answer"]
Outcome = Literal["passed", "failed", "undecided"]


class PlantedChunk(Record):
    """One chunk of a variant's context, as the target is given it."""

    chunk_id: str = Field(description="The KB chunk's id, or probe:<kind>:<n> for a text a probe wrote (a "
                          "changed fact, an instruction): never the id of a KB chunk, so no planted text is "
                          "taken for the KB's own.")
    text: str = Field(description="The text the target is given.")
    role: Role = Field(description="gold: the item's evidence; noise: a hard negative (near miss or strong "
                       "lexical neighbour holding none of the evidence); filler: an unrelated KB chunk that "
                       "keeps the context's length; counterfactual: a gold chunk with its key fact changed; "
                       "injection: a planted instruction.")
    source_chunk: str | None = Field(None, description="The KB chunk a planted text was made from (a "
                                     "counterfactual's gold chunk); None for a KB chunk as it is, or an "
                                     "instruction made from nothing.")
    change: dict[str, str] | None = Field(None, description="A counterfactual's change: {'from': the fact as the "
                                          "KB states it, 'to': the value planted instead}.")
    instruction: str | None = Field(None, description="An injection's instruction: what the answer would do or "
                                    "hold if the target obeyed it.")
    canary: str | None = Field(None, description="An injection's canary: a random token the instruction asks to "
                                "output; in the answer, the attack succeeded.")


class ProbeVariant(VersionedRecord):
    """One item asked under one probe: the question and context given, and what a robust system does."""

    SCHEMA = 1

    variant_id: str = Field(description="Stable id: the probe, the item, the parameters and the seed "
                            "('noise:q7:0.4:middle:s0'); the same inputs give the same id.")
    item_id: str = Field(description="The release's item it was made from; absent:<probe id> for a question "
                         "about content the KB does not hold (the end-to-end negative probe).")
    probe: Asked = Field(description="noise, negative, counterfactual, injection or rewrite; clean: the item "
                         "unprobed (its gold chunks as the context, or none end to end), which the others are "
                         "paired to.")
    question: str = Field(description="The question asked: the item's, or the rewritten one.")
    context: list[PlantedChunk] = Field(default_factory=list, description="The context given, in order; empty "
                                        "for a rewrite (the target retrieves for the new question itself).")
    noise_rate: float | None = Field(None, ge=0, le=1, description="noise: the share of the context that is "
                                     "hard negatives (role noise); None for the other probes.")
    gold_position: int | None = Field(None, ge=0, description="0-based index of the first gold chunk in the "
                                      "context; None when it holds none.")
    expected: Expected = Field(description="What a robust system does: answer (as without the noise), decline, "
                               "follow_context (state the changed fact), ignore_instruction, same_answer.")
    rule: str | None = Field(None, description="The rule or template that made it: a gold position (first, "
                             "middle, last), a changed fact's kind (number, year, date, code, ...), an injection "
                             "template, a rewrite rule (typo, colloquial, word_order).")
    seed: int = Field(description="The seed every random choice was drawn from.")
    language: Literal["zh", "en"] = Field(description="The item's language.")


class ProbeSkip(VersionedRecord):
    """A variant that could not be built, and why (reported, never dropped silently)."""

    SCHEMA = 1

    variant_id: str = Field(description="The id the variant would have had.")
    item_id: str = Field(description="The item.")
    probe: Asked = Field(description="The probe (clean: the item could not be asked at all).")
    reason: str = Field(description="Why it could not be built: 'no number, date or code in the gold chunks', "
                        "'no trailing phrase to move', ...")


class ProbeVerdict(VersionedRecord):
    """What one answer to one variant did, read without a model."""

    SCHEMA = 1

    variant_id: str = Field(description="The variant answered.")
    verdict: Outcome = Field(description="passed: the system did what a robust one does; failed: it did not; "
                             "undecided: the answer cannot tell (never counted as either).")
    what: str = Field(description="One line: 'declined', 'answered from memory: 30 days (the context says 45 "
                      "days)', 'canary in the answer', ...")
    method: Literal["lexical", "judge"] = Field("lexical", description="How: lexical (strings, refusal phrases; no "
                                                "model), or judge (an LLM judge's verdict, counted apart).")
    conflict_noted: bool | None = Field(None, description="counterfactual: whether the answer says the context "
                                        "conflicts with what it knows ('however', '与…不符', ...); None for "
                                        "other probes.")
