"""What a report shows of the retrieval the judge graded (`evalrun run --judge-retrieval`): the judge's
grades read from RUN/retrieval_grades.jsonl, and the page's section "Retrieval judged by the judge" (the
lines `evalrun show` prints, the judged/ metrics on both layers, the agreement with the labels, the
possibly missing evidence).

The grades file is read only for a run whose summary has a judged retrieval section; one that is missing
or damaged leaves the page whole, and the page says why the grades are not shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from curate import RETRIEVAL_GRADES, InputError, JudgedGrades, read_judged_grades
from evalrun import numbers
from evalrun.records import GradeAgreement, JudgedRetrieval, RunSummary
from evalrun.views import format_summary, judged_lines, judged_names

MAX_MISSING_ROWS = 200   # possibly missing chunks listed; the summary's count and the items hold the rest
REASON_SHOWN = 300       # characters of a judge's reason in the section (an opened item shows up to 1,000)
GRADES = ("2", "1", "0")
# Lines of `judged_lines` that say the judge could not grade all it was asked to: shown as warnings.
ALARMS = ("JUDGE BUDGET", "retrieval judged (")


@dataclass
class JudgedInputs:
    """The judge's grades of a run's retrieved chunks by item id, and why they could not be read, if not."""

    grades: dict[str, JudgedGrades] = field(default_factory=dict)
    problem: str | None = None


def read_grades(folder: Path, section: JudgedRetrieval | None) -> JudgedInputs:
    """Return the judge's grades of the run in `folder`; none for a run made without --judge-retrieval
    (`section` None), and for a file that is missing or cannot be read, none and the reason in one line."""
    if section is None:
        return JudgedInputs()
    path = Path(folder) / RETRIEVAL_GRADES
    if not path.is_file():
        return JudgedInputs(problem=f"{RETRIEVAL_GRADES} is missing from the run folder {folder}")
    try:
        return JudgedInputs(grades=read_judged_grades(Path(folder)))
    except (InputError, OSError, ValueError) as exc:   # a damaged line, bad bytes, an unreadable file
        return JudgedInputs(problem=f"{RETRIEVAL_GRADES} could not be read: {' '.join(str(exc).split())}")


def _shortened(text: str, limit: int = REASON_SHOWN) -> str:
    """Return `text` on one line, cut to `limit` characters with an ellipsis.

    >>> _shortened("a  b\\nc"), _shortened("abcdef", 4)
    ('a b c', 'abc…')
    """
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _agreement_row(label: str, found: GradeAgreement) -> dict:
    kappa = "undefined" if found.kappa is None else f"{found.kappa:.2f}"
    ci = (f"[{found.kappa_ci95[0]:.2f}, {found.kappa_ci95[1]:.2f}]" if found.kappa_ci95 else found.note or "")
    return {"label": label, "chunks": found.chunks, "labelled_items": found.items,
            "agreement": numbers.percent(found.agreement) or "—", "kappa": kappa, "ci": ci}


def judged_panel(summary: RunSummary, judged: JudgedInputs, item_ids: set[str]) -> dict | None:
    """Return the page's section on the retrieval the judge graded (`judged`: its grades as read, `item_ids`:
    the items the page holds), or None when the run has none."""
    section = summary.judged_retrieval
    if section is None:
        return None
    overall = summary.metrics.get("all", {})
    lines = [{"text": line, "alarm": line.startswith(ALARMS)} for line in judged_lines(section)]
    rows = [(name, format_summary(overall.get(f"judged/candidates/{name}")),
             format_summary(overall.get(f"judged/context/{name}"))) for name in judged_names(overall)]
    found = section.agreement
    agreement = []
    if found is not None:
        agreement.append(_agreement_row("all", found))
        agreement += [_agreement_row(language, a) for language, a in section.agreement_by_language.items()]
    confusion = ([(judge, [found.confusion.get(judge, {}).get(label, 0) for label in GRADES]) for judge in GRADES]
                 if found is not None and found.confusion else [])
    missing = []
    for item_id, chunk_ids in section.possibly_missing.items():
        record = judged.grades.get(item_id)
        reasons = {g.chunk_id: g.reason for g in record.grades} if record is not None else {}
        missing += [(item_id, chunk_id, _shortened(reasons.get(chunk_id) or "")) for chunk_id in chunk_ids]
    cost = None if section.cost is None else numbers.usd(section.cost)
    return {"section": section, "lines": lines, "alarm": any(line["alarm"] for line in lines), "rows": rows,
            "agreement": agreement, "confusion": confusion, "missing": missing[:MAX_MISSING_ROWS],
            "unlisted": max(0, len(missing) - MAX_MISSING_ROWS), "missing_items": len(section.possibly_missing),
            "cost": cost, "problem": judged.problem, "item_ids": item_ids}
