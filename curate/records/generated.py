"""Questions made from the knowledge base (`curate generate`): what mining found, every candidate with
the verdict of every filter, and the generation record an item keeps.

- `MinedPair`: two passages of the KB that read alike but differ in a code, number, date, name or
  negation (a confusable pair), with what differs;
- `Probe`: a code, year, version or name shaped like the KB's that no document contains;
- `Candidate`: one question (mined from a pair or probe, or written by a model from seed chunks), its
  evidence and near misses, and for each filter whether it passed and why; a line of
  datasets/NAME/generated/RUN/candidates.jsonl;
- `Generation`: what an item made this way keeps of how it was made (`EvalItem.generation`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from curate.records.base import Record, VersionedRecord

Difference = Literal["code", "number", "date", "name", "negation"]
PairKind = Literal["near_copy", "near_code"]
ProbeKind = Literal["code", "year", "version", "name"]
Method = Literal["mined", "llm"]
CANDIDATES = "candidates.jsonl"


class Passage(Record):
    """A passage of one chunk (a sentence, a list item or a line), with its place in the source."""

    chunk_id: str = Field(description="The chunk holding the passage.")
    doc_id: str = Field(description="Its document.")
    start: int | None = Field(None, description="Offset of the passage in the document (None when the chunk's "
                              "offset is unknown).")
    end: int | None = Field(None, description="Offset one past its end in the document.")
    text: str = Field(description="The passage text, as the chunk has it.")
    title: str | None = Field(None, description="The document's title, if known.")
    section: str | None = Field(None, description="The heading path above the chunk, if known.")


class MinedPair(VersionedRecord):
    """Two passages that a reader, or a retriever, can mistake for each other."""

    pair_id: str = Field(description="Stable id: 'p-' and a hash of both passages.")
    kind: PairKind = Field(description="near_copy: two passages that read alike and differ in a few tokens; "
                           "near_code: two codes that differ in one character, each stated in a passage of its own.")
    difference: Difference = Field(description="What the differing tokens are: code, number, date, name, negation.")
    differs: str = Field(description="What differs, as 'token in a ≠ token in b'.")
    token_a: str = Field(description="The token of `a` that `b` does not have ('' for a negation only b has).")
    token_b: str = Field(description="The token of `b` in its place.")
    score: float = Field(description="How alike the two passages read (0-100, rapidfuzz ratio of their folded text).")
    a: Passage = Field(description="One side.")
    b: Passage = Field(description="The other side.")


class Probe(VersionedRecord):
    """A token shaped like the knowledge base's that no document contains: a question about it has no answer."""

    probe_id: str = Field(description="Stable id: 'u-' and a hash of the token.")
    kind: ProbeKind = Field(description="code, year, version or name.")
    token: str = Field(description="The made-up token (LG-4034, 2027, 3.9, a title with one character changed).")
    looks_like: list[str] = Field(description="The real tokens of the KB it was made from, nearest first.")
    near: list[Passage] = Field(default_factory=list, description="Passages stating those real tokens (the near "
                                "misses a system may answer from).")


class FilterVerdict(Record):
    """One filter's verdict on one candidate."""

    passed: bool | None = Field(description="True: passed; False: the candidate is dropped (or tagged, for a filter "
                                "the user chose to keep); None: the filter could not decide (said in `reason`).")
    reason: str = Field(description="Why, in one line.")


class Generation(Record):
    """How an item was made (kept on the item: `EvalItem.generation`)."""

    method: Method = Field(description="mined: from the KB index by rule, no model; llm: written by a model.")
    run: str = Field(description="The generate run (datasets/NAME/generated/RUN).")
    candidate_id: str = Field(description="The candidate in that run's candidates.jsonl.")
    template: str | None = Field(None, description="The question template a mined candidate used.")
    model: str | None = Field(None, description="The model that wrote it (llm).")
    prompt_version: str | None = Field(None, description="Version hash of the prompt (llm).")
    seed_chunks: list[str] = Field(default_factory=list, description="The chunks it was made from.")
    pair_id: str | None = Field(None, description="The mined pair it asks about, if any.")
    probe_id: str | None = Field(None, description="The probe it asks about, if any.")
    near_miss: list[str] = Field(default_factory=list,
                                 description="Evidence ids (grade 0) of the passages it is meant to be confused with.")
    features: dict[str, float] = Field(default_factory=dict, description="Measured when generated: bm25_rank (the "
                                       "rank of the first evidence chunk for the question under plain BM25; 0 when "
                                       "not in the top 100), never used to drop a question.")


class CandidateEvidence(Record):
    """A passage a candidate cites, with its grade: 2 evidence, 0 a near miss."""

    evidence_id: str = Field(description="e1, e2, ...; key points cite it.")
    passage: Passage = Field(description="The passage.")
    grade: Literal[0, 2] = Field(description="2: states the answer; 0: a near miss it must not be answered from.")


class CandidateKeyPoint(Record):
    """A fact the answer must state, with the evidence that states it."""

    text: str = Field(description="The fact.")
    evidence_ids: list[str] = Field(description="Evidence ids (grade 2) that state it.")


class Candidate(VersionedRecord):
    """One question made from the KB and what every filter said of it."""

    candidate_id: str = Field(description="Stable id within the run.")
    qtype: Literal["single", "multi_evidence", "confusable", "unanswerable", "conditional"] = Field(
        description="The question type.")
    language: Literal["zh", "en"] = Field(description="The language of its evidence, which the question must be in.")
    question: str = Field(description="The question.")
    reference_answer: str | None = Field(None, description="The answer (None for an unanswerable one).")
    answerable: bool = Field(True, description="False for an unanswerable probe.")
    key_points: list[CandidateKeyPoint] = Field(default_factory=list, description="Facts the answer must state.")
    evidence: list[CandidateEvidence] = Field(default_factory=list, description="Evidence and near misses.")
    generation: Generation = Field(description="How it was made.")
    filters: dict[str, FilterVerdict] = Field(default_factory=dict,
                                              description="Each filter's verdict, by filter name.")
    kept: bool | None = Field(None, description="True: added to the dataset; False: dropped (the filters say why); "
                              "None: not yet filtered.")
    item_id: str | None = Field(None, description="The item it became, when kept.")


class Spread(Record):
    """How the kept questions spread over the KB's documents (sampling goes round the documents)."""

    documents: int = Field(description="Documents of the snapshot.")
    asked: int = Field(description="Documents at least one kept question's evidence (or near miss) is in.")
    top_share: float = Field(description="Share of the kept questions from the document that gave the most (0-1).")
    top: list[str] = Field(default_factory=list, description="The documents that gave the most, 'doc: n'.")


class GenerateRun(VersionedRecord):
    """One `curate generate` run: datasets/NAME/generated/RUN/run.json (its candidates beside it)."""

    run: str = Field(description="The run id: 'g-' and a hash of the snapshot and the settings, so the same "
                     "command run again is the same run (it resumes, and adds nothing twice).")
    dataset: str = Field(description="The dataset the kept questions were added to.")
    kb_snapshot: str = Field(description="The KB snapshot the questions were made from.")
    types: list[str] = Field(description="The question types asked for.")
    n: int = Field(description="How many questions were asked for, over all the types.")
    seed: int = Field(description="The sampling seed.")
    state: Literal["running", "complete"] = Field(description="running until the kept items are saved.")
    mined: dict[str, int] = Field(default_factory=dict, description="Pairs and probes mined, by kind.")
    left_out: dict[str, int] = Field(default_factory=dict, description="Alike passages mining left out, by why.")
    not_asked: dict[str, int] = Field(default_factory=dict,
                                      description="Mined pairs no question could be made of, by why.")
    not_made: dict[str, str] = Field(default_factory=dict,
                                     description="Types asked for that this run could not make, and why.")
    candidates: int = Field(0, description="Candidates made and filtered.")
    kept: int = Field(0, description="Candidates that passed every filter and were chosen.")
    by_type: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="Per type: candidates, kept, and dropped per reason (the filter's name, "
        "or 'over --n': passed, but the sample was full).")
    added: list[str] = Field(default_factory=list, description="The items added to the dataset.")
    already: list[str] = Field(default_factory=list, description="Kept items a previous run of the same command "
                               "had added already (not added twice).")
    spread: Spread | None = Field(None, description="How the kept questions spread over the documents.")
    closed_book: str = Field("", description="How the closed-book filter ran: the model, or why it did not.")
    model: str | None = Field(None, description="The model that wrote questions and answered closed-book, if any.")
    seeds: int = Field(0, description="Seed chunks (or pairs) the model was asked to write a question from.")
    seeds_skipped: dict[str, int] = Field(default_factory=dict, description="Chunks not used as seeds, by why.")
    not_written: dict[str, str] = Field(default_factory=dict, description="Seeds that gave no candidate and why "
                                        "(the call failed, the budget stopped it, a quote not in its chunk).")
    calls: dict[str, int] = Field(default_factory=dict, description="Requests sent and answers served from the "
                                  "cache (a run started again pays only for what it had not asked).")
    tokens: dict[str, int] = Field(default_factory=dict, description="Prompt and completion tokens the endpoint "
                                   "reported for the requests sent.")
    cost: float | None = Field(None, description="USD those requests cost at the prices in curate.toml; None when "
                               "no price is known (never 0 for unknown).")
    budget: str | None = Field(None, description="The budget the run was held to (--budget, --budget-tokens).")
