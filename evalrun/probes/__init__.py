"""Robustness probes built from a release's own evidence and KB: the pure core of `evalrun probe`.

Items and chunks in, planted variants out (`evalrun.probes.variants`); answers in, verdicts out
(`evalrun.probes.verdicts`); the records of both in `evalrun.probes.records`. The rules: the facts a
counterfactual changes (`facts`), the planted instructions (`injections`), the question rewrites
(`rewrites`).
"""

from evalrun.probes.records import PROBES, PlantedChunk, ProbeSkip, ProbeVariant, ProbeVerdict
from evalrun.probes.variants import (
    counterfactual_variant,
    filler_chunks,
    hard_negatives,
    injection_variant,
    negative_variant,
    noise_variants,
    rewrite_variants,
)
from evalrun.probes.verdicts import (
    counterfactual_verdict,
    declined,
    injection_verdict,
    negative_verdict,
    noise_verdict,
    rewrite_verdict,
)

__all__ = [
    "PROBES", "PlantedChunk", "ProbeSkip", "ProbeVariant", "ProbeVerdict",
    "counterfactual_variant", "filler_chunks", "hard_negatives", "injection_variant", "negative_variant",
    "noise_variants", "rewrite_variants",
    "counterfactual_verdict", "declined", "injection_verdict", "negative_verdict", "noise_verdict", "rewrite_verdict",
]
