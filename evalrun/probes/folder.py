"""The records of a probe run folder (`evalrun probe`) and `read_probe_run`, their one reader.

    probe.json          ProbeManifest: the release, the target, the settings, the probes run and not run
    variants.jsonl      ProbeVariant: every variant asked, exactly as it was planted (the clean ones too)
    skips.jsonl         ProbeSkip: every variant that could not be built, and why
    traces.jsonl        TraceRecord per variant (item_id is the variant's id): what the target returned
    verdicts.jsonl      ProbeVerdict per variant and method (lexical; judge where one is configured)
    probe_scores.jsonl  ItemScores per item: its value of each probe metric (the mean of its variants'; a
                        judge-decided metric's under judge/<name>), what `compare` pairs two probe runs on
    probe_summary.json  ProbeSummary: metrics with n and intervals, paired to the clean variants, curves,
                        attack success, failures

Planted texts live only here: nothing of a probe run is written to the release or the KB snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from curate import NotFound, Record, VersionedRecord, read_jsonl
from evalrun.probes.records import ProbeSkip, ProbeVariant, ProbeVerdict
from evalrun.records import ItemScores, LeakageGate, MetricSummary, TraceRecord, read_traces

MANIFEST = "probe.json"
VARIANTS = "variants.jsonl"
SKIPS = "skips.jsonl"
TRACES = "traces.jsonl"
VERDICTS = "verdicts.jsonl"
SUMMARY = "probe_summary.json"
SCORES = "probe_scores.jsonl"
JUDGED = "judge/"   # the prefix of a judge-decided metric's values in probe_scores.jsonl

Mode = Literal["oracle_context", "end_to_end"]


class ProbeSettings(Record):
    """How a probe run builds its variants and calls its target."""

    probes: list[str] = Field(description="The probes asked for (noise, negative, counterfactual, injection, rewrite).")
    seed: int = Field(0, description="The seed every random choice is drawn from: the same seed, release and KB "
                      "give the same variants (and the same variant ids, which `compare` pairs on).")
    rates: list[float] = Field(default_factory=lambda: [0.0, 0.2, 0.4, 0.6, 0.8],
                               description="noise: the shares of the context that are hard negatives.")
    positions: list[str] = Field(default_factory=lambda: ["first", "middle", "last"],
                                 description="noise: where the gold chunks stand in the context.")
    size: int = Field(5, ge=1, le=50, description="Chunks in a noise or negative context.")
    templates: list[str] = Field(default_factory=list, description="injection: the templates planted (all by default).")
    rewrite_rules: list[str] = Field(default_factory=lambda: ["typo", "colloquial", "word_order", "llm"],
                                     description="rewrite: the rules applied; llm: rephrased by the model of "
                                     "[generator] or [judge] (without one, each item's skip says so).")
    absent: int = Field(20, ge=0, description="End-to-end targets: questions about content the KB does not hold "
                        "(codes, years, names mined as absent), asked as the negative probe.")
    limit: int | None = Field(None, ge=1, description="Probe at most this many items (the first by id); None: all.")
    concurrency: int = Field(4, ge=1, description="Calls to the target at once.")
    timeout: float = Field(60.0, gt=0, allow_inf_nan=False, description="Seconds per call to the target.")
    max_response_bytes: int = Field(10_000_000, ge=1, description="Largest HTTP response body a target may send.")
    k: int = Field(5, ge=1, le=100, description="End-to-end targets: the cutoff of the candidates' recall, paired "
                   "between a rewritten question and the original.")
    allow_unchecked: bool = Field(False, description="Probe although the release's leakage check is missing or failed.")
    no_judge: bool = Field(False, description="Ask no judge: lexical verdicts only.")
    budget_usd: float | None = Field(None, gt=0, allow_inf_nan=False, description="--budget: the most the judge's "
                                     "verdicts may cost, USD (needs [judge.prices]); a verdict past it is not asked "
                                     "and counted as one the judge could not give.")
    budget_tokens: int | None = Field(None, gt=0, description="--budget-tokens: the same limit in tokens.")


class ProbeManifest(VersionedRecord):
    """probe.json: what was probed, with which target, and how."""

    SCHEMA = 1
    dataset: str = Field(description="Dataset name.")
    version: str = Field(description="Release version (vN).")
    ref: str = Field(description="NAME@vN as given.")
    content_sha256: str = Field(description="The release's content hash.")
    kb_snapshot: str | None = Field(None, description="The KB snapshot the variants were built from.")
    target: str = Field(description="The system under test, in one line.")
    mode: Mode = Field(description="oracle_context: the target is given each variant's context "
                       "(`generate(question, context)`) and runs every probe; end_to_end: it retrieves for itself "
                       "and runs the probes that plant no context (negative via absent content, rewrite).")
    settings: ProbeSettings = Field(description="How the variants were built and the target called.")
    run: list[str] = Field(description="The probes run.")
    not_run: dict[str, str] = Field(default_factory=dict, description="Probes asked for that could not run, and why.")
    notes: list[str] = Field(default_factory=list, description="How the variants were made: where the hard "
                             "negatives came from (near misses, BM25, embeddings, or why a source was not used), what "
                             "the model did for the rewrite probe's llm rule.")
    judge: dict[str, Any] = Field(default_factory=dict, description="The judge's configuration, or why none.")
    prompt_versions: dict[str, str] = Field(default_factory=dict, description="The versions of the judge's probe "
                                            "prompts, when a judge is configured.")
    leakage_gate: LeakageGate = Field(description="The leakage gate's decision, as `evalrun run` takes it.")
    started_at: str = Field(description="When the probe run started (UTC).")
    packages: dict[str, str] = Field(default_factory=dict, description="Versions of the packages that ran.")


class ProbeMetric(Record):
    """One probe metric over the items (a variant's value is 1 passed / 0 failed; an item's value is the mean
    of its variants'; undecided and failed calls have none and are counted apart)."""

    name: str = Field(description="noise/accuracy@0.6, injection/success, rewrite/consistent, ...")
    probe: str = Field(description="The probe (clean for the unprobed variants).")
    method: Literal["lexical", "judge"] = Field("lexical", description="How the variants were decided.")
    lower_is_better: bool = Field(False, description="True for attack success: lower is better.")
    summary: MetricSummary = Field(description="n items, the mean and its 95% interval.")
    variants: int = Field(0, description="Variants with a value (an item may have several).")
    undecided: int = Field(0, description="Variants the verdict could not decide (no value: never passed or failed).")
    errors: int = Field(0, description="Variants whose call failed or timed out (no value, counted here).")


class PairedToClean(Record):
    """A probe metric against the same items' clean accuracy: the paired test `compare` uses."""

    name: str = Field(description="The probe metric.")
    n: int = Field(description="Items with a value both clean and probed.")
    left_out: int = Field(0, description="Items with a value on one side only.")
    clean: float | None = Field(None, description="Their clean accuracy.")
    probed: float | None = Field(None, description="Their value under the probe.")
    difference: float | None = Field(None, description="probed - clean.")
    ci95: tuple[float, float] | None = Field(None, description="95% interval of the difference.")
    p_value: float | None = Field(None, description="Two-sided p of 'no change' (McNemar for 0/1, else sign flip).")
    test: str | None = Field(None, description="The test.")
    fell: int = Field(0, description="Items worse under the probe.")
    rose: int = Field(0, description="Items better under the probe.")


class CurvePoint(Record):
    """One point of an accuracy curve (by noise rate, or by gold position)."""

    x: str = Field(description="The noise rate (0.6) or the gold position (middle).")
    metric: str = Field(description="The metric it reads.")
    mean: float | None = Field(None, description="Accuracy.")
    ci95: tuple[float, float] | None = Field(None, description="Its 95% interval.")
    n: int = Field(0, description="Items.")


class ProbeFailure(Record):
    """A variant the system failed: the item, what was planted, and the answer."""

    variant_id: str = Field(description="The variant.")
    item_id: str = Field(description="The item (absent:<probe> for a question about absent content).")
    probe: str = Field(description="The probe.")
    rule: str | None = Field(None, description="The rate and position, changed fact, template or rewrite rule.")
    question: str = Field(description="The question asked.")
    planted: str | None = Field(None, description="What was planted: the instruction, the changed fact, the hard "
                                "negatives' ids, the rewritten question.")
    answer: str | None = Field(None, description="The answer.")
    what: str = Field(description="The verdict's line.")
    method: Literal["lexical", "judge"] = Field("lexical", description="Whose verdict.")


class ProbeSummary(VersionedRecord):
    """probe_summary.json: each probe's metrics, paired to the clean variants, curves, attacks, failures."""

    SCHEMA = 1
    ref: str = Field(description="NAME@vN.")
    target: str = Field(description="The system under test.")
    mode: Mode = Field(description="oracle_context or end_to_end.")
    items: int = Field(description="Items probed.")
    variants: dict[str, int] = Field(default_factory=dict, description="Variants asked, per probe.")
    skipped: dict[str, dict[str, int]] = Field(default_factory=dict, description="Variants not built, per probe "
                                               "and reason.")
    not_run: dict[str, str] = Field(default_factory=dict, description="Probes that could not run, and why.")
    errors: dict[str, int] = Field(default_factory=dict, description="Failed or timed-out calls, per probe.")
    metrics: list[ProbeMetric] = Field(default_factory=list, description="Every probe metric.")
    paired: list[PairedToClean] = Field(default_factory=list, description="Probe metrics against clean accuracy.")
    curves: dict[str, list[CurvePoint]] = Field(default_factory=dict, description="by_rate and by_position: noise "
                                                "accuracy curves.")
    failures: list[ProbeFailure] = Field(default_factory=list, description="Every failed variant.")
    judge_failed: dict[str, int] = Field(default_factory=dict, description="Judge verdicts that could not be had, "
                                         "per probe (the lexical verdict stands; counted apart).")
    judge_note: str | None = Field(None, description="Why no judge verdicts were asked, when none were.")
    judge_usage: str | None = Field(None, description="What the judge did: requests, cache hits, tokens, cost.")
    scored_at: str = Field(description="When it was scored (UTC).")

    def metric(self, name: str, method: str = "lexical") -> ProbeMetric | None:
        """Return the metric called `name` (decided by `method`), or None."""
        return next((m for m in self.metrics if m.name == name and m.method == method), None)


@dataclass
class ProbeRun:
    """A probe run folder as read."""

    folder: Path
    manifest: ProbeManifest
    variants: list[ProbeVariant] = field(default_factory=list)
    skips: list[ProbeSkip] = field(default_factory=list)
    traces: dict[str, TraceRecord] = field(default_factory=dict)
    verdicts: list[ProbeVerdict] = field(default_factory=list)
    scores: list[ItemScores] | None = None
    summary: ProbeSummary | None = None


def is_probe_run(folder: Path) -> bool:
    """Return whether `folder` is a probe run folder (it holds probe.json)."""
    return (Path(folder) / MANIFEST).is_file()


def read_probe_run(folder: Path) -> ProbeRun:
    """Return the probe run in `folder`; a folder that is not one is one line."""
    folder = Path(folder)
    if not is_probe_run(folder):
        raise NotFound(f"{folder} is not a probe run folder (no {MANIFEST}); `evalrun probe` writes one")
    run = ProbeRun(folder, ProbeManifest.read(folder / MANIFEST))
    if (folder / VARIANTS).exists():
        run.variants = list(read_jsonl(ProbeVariant, folder / VARIANTS))
    if (folder / SKIPS).exists():
        run.skips = list(read_jsonl(ProbeSkip, folder / SKIPS))
    run.traces = read_traces(folder / TRACES)
    if (folder / VERDICTS).exists():
        run.verdicts = list(read_jsonl(ProbeVerdict, folder / VERDICTS))
    if (folder / SCORES).exists():
        run.scores = list(read_jsonl(ItemScores, folder / SCORES))
    if (folder / SUMMARY).exists():
        run.summary = ProbeSummary.read(folder / SUMMARY)
    return run


def scored_probe_run(folder: Path) -> ProbeRun:
    """Return the scored probe run in `folder`; one not scored yet is one line."""
    run = read_probe_run(folder)
    if run.summary is None or run.scores is None:
        raise NotFound(f"{folder} has not been scored yet (no {SUMMARY}): finish it with `evalrun probe --resume "
                       f"--out {folder}` and the options it was started with")
    return run
