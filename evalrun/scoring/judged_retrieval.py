"""Retrieval judged where nobody labelled evidence (`evalrun run --judge-retrieval`): the judge grades each
of an item's top K candidates and every chunk of its context 0/1/2, under the relevance guideline
annotators follow, in the item's language.

- Asked per item, in batches of at most BATCH passages, in chunk id order (the system's ranking is not
  shown: it cannot sway a grade, and a rerun that retrieves the same chunks in another order is served
  from the cache). Chunks with the same text are graded once; each copy gets the grade.
- Not graded, and counted as not relevant: a chunk the asker may not use (a permission leak or a stale
  chunk, see `evalrun.scoring.scope`). Not graded, and the item's judged metrics unscored with the
  reason: a chunk whose text is unknown, a grade the judge did not give, a request the budget stopped.
- Metrics, kept apart from the labelled ones under `judged/` (`judged/candidates/precision@5`,
  `judged/context/ndcg@3`, ...): hit_rate, precision, MRR and nDCG as `evalrun.metrics` defines them,
  with the judge's grades as the relevance (>= 1 relevant; the grade is nDCG's gain), copies counted
  once. Recall needs every relevant chunk of the KB and is not computed. nDCG's ideal ranking is that
  of the graded chunks (both layers): an item with no chunk graded relevant has no nDCG (unscored, with
  the reason), while its hit rate, precision and MRR are 0. Candidates are judged at the K up to the
  graded depth; the context at every K.
- Holes in the gold labels: on an item with labelled evidence, a chunk graded 2 that is neither
  evidence nor a copy of it is possibly missing evidence (listed per item, counted).
- Agreement with the labels: on labelled items, every graded chunk's judge grade against its labelled
  grade (0 when nobody labelled it): agreement and Cohen's kappa with its interval on relevant (>= 1)
  or not, overall and per language, and the 3 x 3 table of grades.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from curate import (
    ChunkGrade,
    EvalItem,
    Judge,
    JudgedGrades,
    Prompt,
    Verdict,
    Workspace,
    cut,
    messages_tokens,
    relevance_grading,
)
from evalrun.metrics import retrieval_metrics
from evalrun.judged_records import GradeAgreement, JudgedRetrieval, JudgeEstimate
from evalrun.scoring.aggregate import percentile_intervals, resample_counts
from evalrun.scoring.kappa import KAPPA_RESAMPLES, SEED as KAPPA_SEED, cohen_kappa, kappas
from evalrun.scoring.retrieval_prompts import BATCH, RETRIEVAL

PREFIX = "judged/"
METRICS = ("hit_rate", "precision", "mrr", "ndcg")
MAX_TOKENS = 800
MAX_PASSAGE = 1500   # characters of one chunk shown to the judge
LAYERS = ("candidates", "context")
REFERENCE = {"en": "Reference answer: {answer}\n", "zh": "参考答案：{answer}\n"}
NO_RELEVANT = "no chunk graded relevant: nDCG has no ideal ranking"
RELEVANT, NOT_RELEVANT = "relevant", "not relevant"


def judged_name(layer: str, metric: str) -> str:
    """Return a judged metric's name, e.g. judged/candidates/precision@5."""
    return f"{PREFIX}{layer}/{metric}"


@dataclass
class ItemGrading:
    """One item's chunks to grade, the requests that grade them, and what came back."""

    item: EvalItem
    layers: dict[str, list[str]]
    """The chunk ids of each layer as graded: the top K candidates, the whole context."""
    graded: list[str] = field(default_factory=list)
    """Chunks asked about, one per text, in chunk id order."""
    copy_of: dict[str, str] = field(default_factory=dict)
    """Chunk -> the chunk with the same text that is graded for it."""
    not_graded: dict[str, str] = field(default_factory=dict)
    unusable: set[str] = field(default_factory=set)
    """Chunks the asker may not use: not graded, not relevant."""
    requests: list[tuple[Prompt, dict, list[str]]] = field(default_factory=list)
    """(prompt, payload, the chunk of each passage number)."""
    grades: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    unreported: list[str] = field(default_factory=list)
    """Layers the trace does not report (no 'candidates' or 'context' key): their judged metrics are unscored."""

    def grade(self, chunk_id: str) -> int | None:
        """Return a chunk's grade (its copy's), None when it has none."""
        return self.grades.get(self.copy_of.get(chunk_id, chunk_id))


def plan(item: EvalItem, layers: Mapping[str, Sequence[str] | None], k: int, texts: Mapping[str, str],
         unusable: Mapping[str, str], guideline: tuple[str, str]) -> ItemGrading:
    """Return an item's grading: its top `k` candidates and its context (`layers`; None: not reported),
    less the chunks the asker may not use (`unusable`: chunk -> why), one request per BATCH passages.

    >>> g = plan(EvalItem(id="q", question="Who?", language="en", source="human"),
    ...          {"candidates": ["b", "a", "c"], "context": ["a"]}, 2, {"a": "A.", "b": "A."}, {}, ("rules", "g-1"))
    >>> g.graded, g.copy_of, len(g.requests), g.layers
    (['a'], {'b': 'a'}, 1, {'candidates': ['b', 'a'], 'context': ['a']})
    """
    shown = {layer: list(ids[:k] if layer == "candidates" else ids)
             for layer, ids in layers.items() if ids is not None}
    grading = ItemGrading(item, shown, unreported=[layer for layer in LAYERS if layers.get(layer) is None])
    first_of_text: dict[str, str] = {}
    for chunk_id in sorted({c for ids in shown.values() for c in ids}):
        if chunk_id in unusable:
            grading.not_graded[chunk_id] = unusable[chunk_id]
            grading.unusable.add(chunk_id)
        elif not texts.get(chunk_id):
            grading.not_graded[chunk_id] = "its text is unknown (not in the KB snapshot, and the trace gave none)"
        elif texts[chunk_id] in first_of_text:
            grading.copy_of[chunk_id] = first_of_text[texts[chunk_id]]
        else:
            first_of_text[texts[chunk_id]] = chunk_id
            grading.graded.append(chunk_id)
    language = "zh" if item.language == "zh" else "en"
    chosen = RETRIEVAL.get("ret_grade", language)
    reference = REFERENCE[language].format(answer=item.reference_answer) if item.reference_answer else ""
    for start in range(0, len(grading.graded), BATCH):
        batch = grading.graded[start:start + BATCH]
        passages = "\n\n".join(f"[{n}] {cut(texts[c], MAX_PASSAGE)}" for n, c in enumerate(batch, start=1))
        payload = {"guideline": guideline[0], "question": item.question, "reference": reference, "passages": passages}
        grading.requests.append((chosen, payload, batch))
    return grading


def read_grades(grading: ItemGrading, verdicts: Sequence[Verdict]) -> None:
    """Put the judge's grades of each request into `grading`; a passage it gave no grade is not graded, why said."""
    for (_, _, batch), verdict in zip(grading.requests, verdicts):
        if verdict.output is None:
            for chunk_id in batch:
                grading.not_graded[chunk_id] = f"the judge gave no grades: {verdict.unscored or 'no verdict'}"
            continue
        given = {}
        for entry in verdict.output.grades:
            given.setdefault(entry.passage, entry)   # a passage graded twice: its first grade
        for n, chunk_id in enumerate(batch, start=1):
            entry = given.get(n)
            if entry is None:
                grading.not_graded[chunk_id] = f"the judge graded {len(given)} of {len(batch)} passages, not this one"
            else:
                grading.grades[chunk_id] = entry.grade
                grading.reasons[chunk_id] = entry.reason
    for chunk_id, first in grading.copy_of.items():   # a copy shares its text's fate
        if first in grading.not_graded:
            grading.not_graded[chunk_id] = grading.not_graded[first]


def metrics(grading: ItemGrading, ks: Sequence[int], k: int, precision_denominator: str
            ) -> tuple[dict[str, float], dict[str, str]]:
    """Return the item's judged metrics (values, unscored reasons) on both layers (see the module)."""
    values: dict[str, float] = {}
    unscored: dict[str, str] = {}
    qrels = {c: g for c, g in grading.grades.items() if g >= 1}
    groups = {c: first for c, first in grading.copy_of.items()}
    for layer in grading.unreported:
        for K in (K for K in ks if layer == "context" or K <= k):
            for metric in METRICS:
                unscored[judged_name(layer, f"{metric}@{K}")] = f"the trace reports no {layer} (no '{layer}' key)"
    for layer, ids in grading.layers.items():
        cutoffs = [K for K in ks if layer == "context" or K <= k]
        if not cutoffs:
            continue
        missing = next((c for c in ids if c in grading.not_graded and c not in grading.unusable), None)
        if missing is not None:
            for K in cutoffs:
                for metric in METRICS:
                    unscored[judged_name(layer, f"{metric}@{K}")] = f"chunk {missing} not graded: " \
                                                                     f"{grading.not_graded[missing]}"
            continue
        if not qrels:
            for K in cutoffs:
                for metric in METRICS:
                    name = judged_name(layer, f"{metric}@{K}")
                    if metric == "ndcg":
                        unscored[name] = NO_RELEVANT
                    elif metric == "precision" and precision_denominator == "returned" and not ids:
                        unscored[name] = "nothing returned: precision over returned is undefined"
                    else:
                        values[name] = 0.0
            continue
        scored = retrieval_metrics({"q": qrels}, {"q": ids}, cutoffs, precision_denominator=precision_denominator,
                                   groups={"q": groups})["q"]
        for name, value in scored.items():
            if name.split("@")[0] not in METRICS:
                continue
            if value is None:
                unscored[judged_name(layer, name)] = "nothing returned: precision over returned is undefined"
            else:
                values[judged_name(layer, name)] = float(value)
    return values, unscored


def possibly_missing(grading: ItemGrading, gold: Mapping[str, object]) -> list[str]:
    """Return the chunks graded 2 that are neither labelled evidence nor a copy of it (`gold`: every
    chunk id of the item's evidence, copies included, mapped to its group), in chunk id order."""
    return sorted(c for c in {*grading.graded, *grading.copy_of} if grading.grade(c) == 2 and c not in gold
                  and c not in grading.not_graded)


def record(grading: ItemGrading, model: str, snapshot: str | None, labelled: bool, missing: list[str],
           guideline: str) -> JudgedGrades:
    """Return the item's line of retrieval_grades.jsonl."""
    chunks = sorted({*grading.graded, *grading.copy_of} - set(grading.not_graded))
    version = grading.requests[0][0].version if grading.requests else RETRIEVAL.get(
        "ret_grade", grading.item.language).version
    return JudgedGrades(item_id=grading.item.id, kb_snapshot=snapshot, judge_model=model, prompt_version=version,
                        guideline_version=guideline, labelled=labelled,
                        grades=[ChunkGrade(chunk_id=c, grade=grading.grade(c),
                                           reason=grading.reasons.get(grading.copy_of.get(c, c), ""),
                                           copy_of=grading.copy_of.get(c)) for c in chunks],
                        not_graded=dict(sorted(grading.not_graded.items())), possibly_missing=missing)


def estimate(gradings: Sequence[ItemGrading], judge: Judge) -> JudgeEstimate:
    """Return what grading will ask: requests not in the cache, their estimated prompt tokens, the most
    answer tokens, and the most it costs (None when the model has no price)."""
    asking = [(p, payload) for g in gradings for p, payload, _ in g.requests if not judge.cached(p, payload)]
    prompt_tokens = sum(messages_tokens(p.messages(payload)) for p, payload in asking)
    answer_tokens = len(asking) * judge.config.max_tokens
    return JudgeEstimate(requests=len(asking), cached=sum(len(g.requests) for g in gradings) - len(asking),
                         prompt_tokens=prompt_tokens, answer_tokens_most=answer_tokens,
                         usd_most=judge.config.cost(prompt_tokens, answer_tokens))


def grader(judge: Judge) -> Judge:
    """Return the judge as grading asks it: answers of up to MAX_TOKENS tokens (eight grades with reasons)."""
    return Judge(dataclasses.replace(judge.config, max_tokens=max(judge.config.max_tokens, MAX_TOKENS)),
                 judge.cache_dir, judge.transport, judge.budget)


def guidelines(workspace: Workspace, items: Sequence[EvalItem]) -> dict[str, tuple[str, str]]:
    """Return the grading part of the relevance guideline per language the items are in (en or zh)."""
    return {language: relevance_grading(workspace, language)
            for language in sorted({"zh" if i.language == "zh" else "en" for i in items})}


def agreement(per_item: Sequence[Sequence[tuple[int, int]]]) -> GradeAgreement:
    """Return how the judge's grades agree with the labelled ones (`per_item`: each item's (judge, labelled)
    grade per chunk): agreement and kappa on relevant (>= 1) or not over the chunks, its 95% interval a
    percentile bootstrap over the items (an item's chunks are resampled together: they are not independent),
    and the 3 x 3 table."""
    pairs = [pair for item in per_item for pair in item]
    binary = cohen_kappa([RELEVANT if j >= 1 else NOT_RELEVANT for j, _ in pairs],
                         [RELEVANT if g >= 1 else NOT_RELEVANT for _, g in pairs], labels=[RELEVANT, NOT_RELEVANT])
    table = Counter(pairs)
    confusion = {str(j): {str(g): table[j, g] for g in (0, 1, 2)} for j in (0, 1, 2)}
    interval = None
    if binary.kappa is not None and len(per_item) >= 2:
        cells = np.array([[sum((j >= 1) == a and (g >= 1) == b for j, g in item) for a in (True, False)
                           for b in (True, False)] for item in per_item], dtype=np.float64)
        rng = np.random.default_rng(KAPPA_SEED)
        tables = np.vstack([counts @ cells for counts in resample_counts(len(per_item), rng, KAPPA_RESAMPLES)])
        found = percentile_intervals(kappas(tables.reshape(-1, 2, 2))[2][:, None], np.array([-1.0]), np.array([1.0]))[0]
        if found is not None:
            interval = (min(found[0], binary.kappa), max(found[1], binary.kappa))
    return GradeAgreement(chunks=len(pairs), items=len(per_item), agreement=binary.agreement, kappa=binary.kappa,
                          kappa_ci95=interval, note=binary.note if binary.kappa is None else (
                              None if interval is not None else "too few items for an interval"),
                          confusion=confusion)


@dataclass
class RetrievalInputs:
    """What scoring knows of each item that grading needs."""

    items: list[EvalItem]
    """The items as scored (only the evidence their askers may use)."""
    layers: dict[str, dict[str, list[str] | None]]
    """Item -> its layers as scored (chunk ids; None: not reported)."""
    unusable: dict[str, dict[str, str]]
    """Item -> chunk -> why the asker may not use it (its leaks and stale chunks)."""
    labels: dict[str, dict[str, int]]
    """Labelled item -> chunk (evidence and copies) -> its labelled grade."""
    texts: dict[str, str]
    """Chunk -> text (the snapshot's, else the trace's)."""


def all_names(ks: Sequence[int], k: int) -> list[str]:
    """Return every judged metric name a run with cutoffs `ks` grading the top `k` candidates reports."""
    return [judged_name(layer, f"{metric}@{K}") for layer in LAYERS for metric in METRICS for K in ks
            if layer == "context" or K <= k]


def grade_run(judge: Judge | None, reason: str | None, inputs: RetrievalInputs, rows: Mapping, settings,
              snapshot: str | None, workspace: Workspace, say=print) -> tuple[JudgedRetrieval, list[JudgedGrades]]:
    """Grade every answerable item's retrieved chunks, put the judged metrics into `rows` (by item id), and
    return the run's judged retrieval section and the lines of retrieval_grades.jsonl. `judge` None: no
    judge can grade (`reason` says why), and every judged metric is unscored with it."""
    ks, k = settings.ks, settings.judge_retrieval_k or max(settings.ks)
    graded = [i for i in inputs.items if i.answerable and i.id in inputs.layers]
    section = JudgedRetrieval(status="scored", k=k, items=len(graded), budget=None,
                              unlabelled_items=sum(i.id not in inputs.labels for i in graded),
                              prompt_versions=RETRIEVAL.versions())
    if judge is None:
        for item in graded:
            rows[item.id].unscored.update(dict.fromkeys(all_names(ks, k), reason))
        section.status = f"unscored: {reason}"
        return section, []
    judge = grader(judge)
    chosen = guidelines(workspace, graded)
    section.model, section.guideline_versions = judge.config.model, {lang: v for lang, (_, v) in chosen.items()}
    section.budget = judge.budget.describe() if judge.budget is not None else None
    gradings = [plan(item, inputs.layers[item.id], k, inputs.texts, inputs.unusable.get(item.id, {}),
                     chosen["zh" if item.language == "zh" else "en"]) for item in graded]
    section.estimate = estimate(gradings, judge)
    say(estimate_line(section.estimate, section.budget))
    requests = [(p, payload, 0) for g in gradings for p, payload, _ in g.requests]
    verdicts = judge.ask_many(requests, "grading retrieved chunks") if requests else []
    position, lines = 0, []
    pairs: dict[str, list[list[tuple[int, int]]]] = {}   # language -> per labelled item, (judge, label) per chunk
    not_graded, grades, why_unscored = Counter(), Counter(), Counter()
    for grading in gradings:
        item = grading.item
        read_grades(grading, verdicts[position:position + len(grading.requests)])
        position += len(grading.requests)
        values, unscored = metrics(grading, ks, k, settings.precision_denominator)
        rows[item.id].values.update(values)
        rows[item.id].unscored.update(unscored)
        if unscored:
            why_unscored[next(iter(unscored.values())).split(":")[0]] += 1
        labels = inputs.labels.get(item.id)
        missing = possibly_missing(grading, labels) if labels is not None else []
        if missing:
            section.possibly_missing[item.id] = missing
        chunks = sorted({*grading.graded, *grading.copy_of} - set(grading.not_graded))
        grades.update(grading.grade(c) for c in grading.graded if c not in grading.not_graded)
        not_graded.update(reason_kind(why) for why in grading.not_graded.values())
        if labels is not None and chunks:
            language = "zh" if item.language == "zh" else "en"
            pairs.setdefault(language, []).append([(grading.grade(c), labels.get(c, 0)) for c in chunks])
        lines.append(record(grading, judge.config.model, snapshot, labels is not None, missing,
                            chosen["zh" if item.language == "zh" else "en"][1]))
    stats = judge.stats
    section.chunks = sum(grades.values())
    section.grades = {str(g): grades[g] for g in (0, 1, 2)}
    section.not_graded, section.unscored_items = dict(not_graded), dict(why_unscored)
    section.requests, section.cache_hits = stats.requests, stats.cache_hits
    section.prompt_tokens, section.completion_tokens, section.cost = stats.prompt_tokens, stats.completion_tokens, stats.cost
    section.budget_refused = stats.unscored.get("not asked", 0)
    everything = [item for found in pairs.values() for item in found]
    if everything:
        section.agreement = agreement(everything)
        section.agreement_by_language = {lang: agreement(found) for lang, found in sorted(pairs.items())}
    return section, lines


def reason_kind(why: str) -> str:
    """Return a reason a chunk was not graded without its details, for counting: up to the second colon when
    the judge gave no grades (what it said instead), else up to the first.

    >>> reason_kind("the judge gave no grades: HTTP 400 from the judge (after 1 attempts)")
    'the judge gave no grades: HTTP 400 from the judge'
    >>> reason_kind("not usable for the asker: permission leak (candidates)")
    'not usable for the asker'
    """
    parts = why.split(": ")
    kept = ": ".join(parts[:2]) if why.startswith("the judge gave no grades") else parts[0]
    return kept.split(" (")[0]


def estimate_line(found: JudgeEstimate, budget: str | None) -> str:
    """Return the line said before grading: what it will ask and cost at most, against the budget."""
    cost = f", at most ${found.usd_most:,.2f}" if found.usd_most is not None else ", unpriced ([judge.prices])"
    line = (f"evalrun: grading retrieved chunks: {found.requests:,} requests to send ({found.cached:,} in the cache), "
            f"about {found.prompt_tokens:,} prompt tokens and at most {found.answer_tokens_most:,} answer "
            f"tokens{cost}")
    return line + (f"; budget {budget}: no request is sent past it" if budget else "")


def rough_estimate(items: Sequence[EvalItem], chunk_texts: Sequence[str], k: int, workspace: Workspace,
                   config) -> JudgeEstimate:
    """Return what grading a run will ask at most, before the system has retrieved anything: every answerable
    item's top `k` candidates (its context among them), each a chunk of the snapshot's mean length, none in
    the cache."""
    answerable = [i for i in items if i.answerable]
    mean_chunk = (sum(messages_tokens([{"content": cut(t, MAX_PASSAGE)}]) for t in chunk_texts) / len(chunk_texts)
                  if chunk_texts else 0.0)
    per_request = {lang: messages_tokens(RETRIEVAL.get("ret_grade", lang).messages(
        {"guideline": text, "question": "", "reference": "", "passages": ""}))
        for lang, (text, _) in guidelines(workspace, answerable).items()}
    requests = prompt_tokens = 0
    for item in answerable:
        batches = -(-k // BATCH)
        requests += batches
        prompt_tokens += batches * (per_request["zh" if item.language == "zh" else "en"]
                                    + messages_tokens([{"content": item.question}])) + round(k * mean_chunk)
    answer = requests * max(config.max_tokens, MAX_TOKENS)
    return JudgeEstimate(requests=requests, prompt_tokens=prompt_tokens, answer_tokens_most=answer,
                         usd_most=config.cost(prompt_tokens, answer))
