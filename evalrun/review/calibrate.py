"""What people's reviews say about the judge of a run: per judged metric, agreement and Cohen's kappa of
the verdicts (overall, per language, per difficulty), the confusion table, the worst disagreements with
the reviewers' reasons, and the prediction-powered estimate of the metric's mean beside the estimate from
the reviewed items alone (`evalrun.review.stats`).

Agreement is counted over verdicts (a key point, a claim, the relevance), one per reviewer: the metrics of
one kind of verdict (correctness, completeness and key_points_contradicted all come from the key-point
verdicts) share it. The estimate is over the items whose verdicts of that kind could be reviewed (the
candidates of the sample's design), each reviewed item's value the mean of its reviewers'; the strata are
the sample's, coarsened (its last dimensions dropped) for a metric until each holds a reviewed item, and
the coarsening is said.

A judge is not trusted on a metric when kappa is below `[review] min_kappa` of curate.toml (default
MIN_KAPPA, "substantial" agreement on the Landis and Koch scale) over at least `[review] min_verdicts`
reviewed verdicts (default MIN_VERDICTS); fewer are too few to decide either way, and said so
(`Calibration.too_few`, `Calibration.untrusted`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from pathlib import Path

from curate import EvalItem, InputError, Releases, Workspace, load_release
from evalrun.records import ItemScores, scored_run
from evalrun.review.records import REVIEWS, STATE, Review, ReviewState, read_reviews
from evalrun.review.stats import Agreement, PPIEstimate, cohen_kappa, ppi_mean, reviews_needed
from evalrun.review.verdicts import KIND_OF, VALUES, judged_verdicts
from evalrun.review.verdicts import METRICS as METRICS_OF

MIN_KAPPA = 0.6
MIN_VERDICTS = 30
WORST = 5


@dataclass(frozen=True)
class Disagreement:
    """A review whose value differs from the judge's."""

    item_id: str
    reviewer: str
    judge_value: float
    person_value: float
    reason: str | None


@dataclass
class MetricCalibration:
    """What the reviews say about one judged metric."""

    metric: str
    reviews: int                                   # reviews with a person's value
    items_reviewed: int
    agreement: Agreement                           # over the verdicts the metric is made of
    by_language: dict[str, Agreement] = field(default_factory=dict)
    by_difficulty: dict[str, Agreement] = field(default_factory=dict)
    estimate: PPIEstimate | None = None
    strata_used: int = 0                           # dimensions of the sample's strata kept for the estimate
    worst: list[Disagreement] = field(default_factory=list)
    needed: int | None = None                      # reviews that would bring the interval to `width`


@dataclass
class Calibration:
    """A run's calibration: per metric, and the metrics the judge is not trusted on."""

    metrics: dict[str, MetricCalibration]
    min_kappa: float
    min_verdicts: int
    dimensions: list[str]
    refused: int = 0                               # reviews of another judge configuration, left out
    width: float | None = None

    @property
    def too_few(self) -> dict[str, str]:
        """Return {metric: how few verdicts were reviewed} for the metrics with fewer than `min_verdicts`."""
        return {name: f"{m.agreement.n} verdicts reviewed, fewer than {self.min_verdicts} ([review] min_verdicts): "
                      "agreement and kappa below are too uncertain to decide on"
                for name, m in self.metrics.items() if m.agreement.n < self.min_verdicts}

    @property
    def untrusted(self) -> dict[str, str]:
        """Return {metric: why the judge is not trusted on it}: kappa below `min_kappa` over at least
        `min_verdicts` verdicts."""
        found = {}
        for name, m in self.metrics.items():
            kappa = m.agreement.kappa
            if kappa is not None and kappa < self.min_kappa and m.agreement.n >= self.min_verdicts:
                found[name] = (f"kappa {kappa:.2f} over {m.agreement.n} verdicts is below {self.min_kappa:g} "
                               "([review] min_kappa)")
        return found


def thresholds(workspace: Workspace | None) -> tuple[float, int]:
    """Return (the kappa below which a judge is not trusted, the verdicts needed to decide):
    `[review] min_kappa` and `min_verdicts` of curate.toml, else MIN_KAPPA and MIN_VERDICTS."""
    kappa = workspace.setting("review", "min_kappa") if workspace is not None else None
    verdicts = workspace.setting("review", "min_verdicts") if workspace is not None else None
    if kappa is not None and (isinstance(kappa, bool) or not isinstance(kappa, (int, float)) or not -1 <= kappa <= 1):
        raise workspace.setting_error(f"must be a number from -1 to 1, got {kappa!r}", "review", "min_kappa")
    if verdicts is not None and (isinstance(verdicts, bool) or not isinstance(verdicts, int) or verdicts < 1):
        raise workspace.setting_error(f"must be a whole number of at least 1, got {verdicts!r}", "review",
                                      "min_verdicts")
    return (MIN_KAPPA if kappa is None else float(kappa)), (MIN_VERDICTS if verdicts is None else verdicts)


def _pairs(reviews: list[Review]) -> tuple[list[str], list[str]]:
    judge, person = [], []
    for review in reviews:
        for verdict in review.verdicts:
            if verdict.person is not None:
                judge.append(verdict.judge)
                person.append(verdict.person)
    return judge, person


def _agreement(reviews: list[Review], kind: str) -> Agreement:
    judge, person = _pairs(reviews)
    return cohen_kappa(judge, person, VALUES[kind])


def by_coarser_strata(state: ReviewState, ids: list[str], reviewed: int, estimate_with):
    """Return (the estimate `estimate_with(strata)` makes over the sample's strata of the items `ids`, the
    dimensions kept): the strata's last dimensions dropped, one at a time, until every stratum holds a
    reviewed item and the estimate can be made (or there are fewer than 2 `reviewed` items, when none can)."""
    estimate, keep = None, 0
    for keep in range(len(state.dimensions), -1, -1):
        estimate = estimate_with([" · ".join(state.strata[i].split(" · ")[:keep]) or "all" for i in ids])
        if estimate.estimate is not None or reviewed < 2:
            break
    return estimate, keep


def _estimate(metric: str, rows: dict[str, ItemScores], state: ReviewState, people: dict[str, float]
              ) -> tuple[PPIEstimate | None, int]:
    """Return the prediction-powered estimate of the metric's mean over the sample's candidates that have a
    value, and the strata dimensions kept."""
    ids = [i for i in state.strata if i in rows and metric in rows[i].values]
    judged = np.array([rows[i].values[metric] for i in ids], dtype=float)
    reviewed = [k for k, i in enumerate(ids) if i in people]
    values = [people[ids[k]] for k in reviewed]
    return by_coarser_strata(state, ids, len(reviewed),
                             lambda strata: ppi_mean(judged, reviewed, values, strata=strata))


def calibrate(items: list[EvalItem] | None, rows: list[ItemScores], state: ReviewState, reviews: list[Review],
              threshold: float = MIN_KAPPA, width: float | None = None, min_verdicts: int = MIN_VERDICTS
              ) -> Calibration:
    """Return what the reviews of a run say about its judge (pure: see the module); `items` None (the release
    cannot be read): no agreement per language and difficulty."""
    by_id = {i.id: i for i in items or ()}
    scored = {row.item_id: row for row in rows}
    kept = [r for r in reviews if r.judge_digest == state.judge_digest]
    result = Calibration({}, threshold, min_verdicts, state.dimensions, refused=len(reviews) - len(kept),
                         width=width)
    by_metric: dict[str, list[Review]] = defaultdict(list)
    for review in kept:
        if review.metric in KIND_OF and (items is None or review.item_id in by_id):
            by_metric[review.metric].append(review)
    for metric in sorted(by_metric):
        found = by_metric[metric]
        kind = KIND_OF[metric]
        valued = [r for r in found if r.person_value is not None]
        per_item: dict[str, list[float]] = defaultdict(list)
        for review in valued:
            per_item[review.item_id].append(review.person_value)
        people = {i: sum(v) / len(v) for i, v in per_item.items()}
        calibration = MetricCalibration(metric, len(valued), len(people), _agreement(found, kind))
        for attribute, target in (("language", calibration.by_language),
                                  ("difficulty", calibration.by_difficulty)) if items is not None else ():
            groups: dict[str, list[Review]] = defaultdict(list)
            for review in found:
                groups[getattr(by_id[review.item_id], attribute) or "ungraded"].append(review)
            target.update({group: _agreement(members, kind) for group, members in sorted(groups.items())})
        calibration.estimate, calibration.strata_used = _estimate(metric, scored, state, people)
        calibration.worst = [Disagreement(r.item_id, r.reviewer, r.judge_value, r.person_value, r.reason)
                             for r in sorted(valued, key=lambda r: (-abs(r.person_value - r.judge_value), r.item_id))
                             if r.person_value != r.judge_value][:WORST]
        if width is not None and calibration.estimate is not None and calibration.estimate.estimate is not None:
            calibration.needed = reviews_needed(calibration.estimate, width)
        result.metrics[metric] = calibration
    return result


def calibrate_run(workspace: Workspace | None, folder: Path, width: float | None = None) -> Calibration:
    """Return the calibration of the run in `folder` from its review state and pulled reviews (`workspace`
    None: the thresholds' defaults, and no agreement per language and difficulty)."""
    folder = Path(folder)
    reviewed = read_reviews(folder)
    if reviewed.state is None:
        raise InputError(f"{folder}: no review was pushed (no {STATE}); `evalrun review push` and `pull` first",
                         field="RUN")
    if not reviewed.reviews:
        raise InputError(f"{folder}: no review pulled yet; `evalrun review pull {folder}` once reviewers have "
                         "answered", field="RUN")
    if width is not None and not 0 < width <= 1:
        raise InputError(f"must be between 0 and 1, got {width}", field="width")
    run = scored_run(folder)
    items = None
    if workspace is not None:
        _, items = load_release(Releases(workspace, run.manifest.dataset).path(run.manifest.version))
    kappa, verdicts = thresholds(workspace)
    return calibrate(items, run.scores or [], reviewed.state, reviewed.reviews, kappa, width, verdicts)


def has_reviews(folder: Path) -> bool:
    """Return whether a run folder holds pulled reviews (a calibration can be made)."""
    folder = Path(folder)
    return (folder / STATE).exists() and (folder / REVIEWS).exists() and (folder / REVIEWS).stat().st_size > 0


@dataclass
class JudgesAgreement:
    """How two judges' verdicts on the same answers agree, for the metrics of one kind of verdict."""

    metric: str
    items: int                                     # answers both judges gave every verdict of the kind
    agreement: Agreement
    by_language: dict[str, Agreement] = field(default_factory=dict)
    by_difficulty: dict[str, Agreement] = field(default_factory=dict)


def judges_agreement(items: list[EvalItem], first: list[ItemScores], second: list[ItemScores]
                     ) -> dict[str, JudgesAgreement]:
    """Return, per judged metric, the agreement of two judges' verdicts on the same answers (a run and its
    `evalrun rejudge` copy): the first judge's as rows, the second's as columns, verdict by verdict over
    the items where both gave every verdict of the kind (pure)."""
    a, b = {r.item_id: r for r in first}, {r.item_id: r for r in second}
    pairs: dict[str, list[tuple[EvalItem, str, str]]] = defaultdict(list)
    for item in items:
        if item.id not in a or item.id not in b:
            continue
        mine, theirs = judged_verdicts(item, a[item.id]), judged_verdicts(item, b[item.id])
        for kind in set(mine) & set(theirs):
            if len(mine[kind]) == len(theirs[kind]):
                pairs[kind] += [(item, x.verdict, y.verdict) for x, y in zip(mine[kind], theirs[kind])]
    found = {}
    for kind, kept in sorted(pairs.items()):
        def agreement(subset):
            return cohen_kappa([x for _, x, _ in subset], [y for _, _, y in subset], VALUES[kind])
        whole = agreement(kept)
        groups: dict[str, dict[str, list]] = {"language": defaultdict(list), "difficulty": defaultdict(list)}
        for entry in kept:
            groups["language"][entry[0].language].append(entry)
            groups["difficulty"][entry[0].difficulty or "ungraded"].append(entry)
        for metric in METRICS_OF[kind]:
            found[metric] = JudgesAgreement(metric, len({e[0].id for e in kept}), whole,
                                            {g: agreement(v) for g, v in sorted(groups["language"].items())},
                                            {g: agreement(v) for g, v in sorted(groups["difficulty"].items())})
    return dict(sorted(found.items()))
