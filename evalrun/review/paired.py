"""The judge's error carried into a comparison: per judged metric, the prediction-powered paired difference
of NEW and BASE (`evalrun.review.stats.ppi_paired_difference`) from the judge's values on every item both
runs scored and people's values on the reviewed ones.

The design is one sample's: BASE's review (else NEW's), its strata and items. An item counts as reviewed
in a run when people reviewed that run's answer to it; a review carries over to the other run when that
run gave the same answer with the same context (`answer_digest`: the item and its answer did not change,
so neither did what people said of it), which is how `evalrun review push NEW --like BASE` spares the
reviewers every answer that did not change. The estimate is over the sample's candidates that both runs
scored; the strata are coarsened for a metric until each holds an item reviewed in both runs, as in
`evalrun.review.calibrate`.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from curate import InputError
from evalrun.records import Run, trace_from
from evalrun.review.calibrate import by_coarser_strata
from evalrun.review.records import JudgedDifference, Reviewed, answer_digest
from evalrun.review.stats import ppi_paired_difference
from evalrun.review.verdicts import KIND_OF


def answers(run: Run) -> dict[str, str]:
    """Return {item id: the digest of the run's answer and context} for the items whose trace has an answer."""
    found = {}
    for item_id, record in run.traces.items():
        if record.error is not None or record.kind != "trace":
            continue
        try:
            trace = trace_from(record.trace, item_id=item_id, question="")
        except InputError:
            continue
        found[item_id] = answer_digest(trace)
    return found


def people(reviewed: Reviewed) -> dict[str, dict[str, tuple[str, float, bool]]]:
    """Return {metric: {item id: (the answer reviewed, the mean of its reviewers' values, whether the reviews
    were carried over from another run)}}."""
    values: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    carried: set[tuple[str, str, str]] = set()
    for review in reviewed.reviews:
        if review.person_value is not None:
            key = (review.metric, review.item_id, review.answer_digest)
            values[key].append(review.person_value)
            if review.carried_from:
                carried.add(key)
    found: dict[str, dict[str, tuple[str, float, bool]]] = defaultdict(dict)
    for key, said in sorted(values.items()):
        found[key[0]][key[1]] = (key[2], sum(said) / len(said), key in carried)
    return found


def _side(item_id: str, answer: str | None, own: dict, other: dict) -> tuple[float | None, bool]:
    """Return (people's value of this run's answer, whether it was carried from the other run's review)."""
    mine = own.get(item_id)
    if mine is not None and mine[0] == answer:
        return mine[1], mine[2]
    theirs = other.get(item_id)
    if theirs is not None and theirs[0] == answer:
        return theirs[1], True
    return None, False


def judge_corrected(base: Run, new: Run, base_reviewed: Reviewed, new_reviewed: Reviewed) -> list[JudgedDifference]:
    """Return the prediction-powered paired difference of every judged metric reviewed in either run (none
    when neither run was reviewed)."""
    state = base_reviewed.state or new_reviewed.state
    if state is None or not (base_reviewed.reviews or new_reviewed.reviews):
        return []
    base_people, new_people = people(base_reviewed), people(new_reviewed)
    base_answers, new_answers = answers(base), answers(new)
    base_rows = {r.item_id: r.values for r in base.scores or []}
    new_rows = {r.item_id: r.values for r in new.scores or []}
    found = []
    for metric in sorted(set(base_people) | set(new_people)):
        if metric not in KIND_OF:
            continue
        ids = [i for i in state.strata if metric in base_rows.get(i, {}) and metric in new_rows.get(i, {})]
        reviewed, ys_base, ys_new, carried = [], [], [], 0
        for k, item_id in enumerate(ids):
            b, b_carried = _side(item_id, base_answers.get(item_id), base_people.get(metric, {}),
                                 new_people.get(metric, {}))
            n, n_carried = _side(item_id, new_answers.get(item_id), new_people.get(metric, {}),
                                 base_people.get(metric, {}))
            if b is not None and n is not None:
                reviewed.append(k)
                ys_base.append(b)
                ys_new.append(n)
                carried += b_carried or n_carried
        f_base = np.array([base_rows[i][metric] for i in ids], dtype=float)
        f_new = np.array([new_rows[i][metric] for i in ids], dtype=float)
        estimate, keep = by_coarser_strata(state, ids, len(reviewed), lambda strata: ppi_paired_difference(
            f_base, f_new, reviewed, ys_base, ys_new, strata=strata))
        found.append(JudgedDifference(
            metric=metric, items=len(ids), reviewed=len(reviewed), carried=carried,
            judge_difference=float(np.mean(f_new - f_base)) if ids else None,
            difference=estimate.estimate if estimate else None, ci95=estimate.ci95 if estimate else None,
            reviewed_only=estimate.classical if estimate else None,
            reviewed_only_ci95=estimate.classical_ci95 if estimate else None,
            strata=", ".join(state.dimensions[:keep]) or "none",
            note=estimate.note if estimate else "no item of the sample was scored in both runs"))
    return found
