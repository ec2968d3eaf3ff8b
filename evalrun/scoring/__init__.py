"""Scoring a run: retrieval per layer, generation through the judge (`generation`, `claims`),
aggregates with intervals (`aggregate`), the summary (`summary`); `score_run` does it all."""

from evalrun.scoring.score import score_run

__all__ = ["score_run"]
