"""Measured difficulty: features of each item (`features`), the rule that turns them into easy,
medium or hard (`rule`), the target mix and a balanced subset (`mix`), and measuring a dataset
(`measure`), with dense ranks only when they are honest and quick (`dense`)."""

from curate.checks.difficulty.measure import DifficultyReport, ItemDifficulty, grade, stale_grade
from curate.checks.difficulty.rule import DifficultyRules, classify, type_misfit

__all__ = ["DifficultyReport", "DifficultyRules", "ItemDifficulty", "classify", "grade", "stale_grade",
           "type_misfit"]
