"""Confidence intervals for the scores: Wilson for rates, a seeded bootstrap for means.

Every interval is deterministic for given data, so a replayed run prints the same table byte for byte.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as _scipy_stats

CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 9_999
#: Fixed, so that the interval of a mean depends on the data alone.
BOOTSTRAP_SEED = 20_140_601


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its confidence interval and the number of observations behind it."""

    value: float
    low: float
    high: float
    n: int

    def as_json(self) -> dict:
        def finite(x: float) -> float | None:
            return None if math.isnan(x) else x

        return {"value": finite(self.value), "ci": [finite(self.low), finite(self.high)], "n": self.n}


def wilson(successes: int, n: int, confidence: float = CONFIDENCE) -> Estimate:
    """A rate with its Wilson score interval (good coverage also at 0, 1 and small n)."""
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, {n}], got {successes}")
    z = float(_scipy_stats.norm.ppf(0.5 + confidence / 2))
    rate = successes / n
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n))
    return Estimate(rate, max(0.0, centre - half), min(1.0, centre + half), n)


def mean(values, confidence: float = CONFIDENCE) -> Estimate:
    """A mean with its bias-corrected and accelerated bootstrap interval.

    BCa is used because scores such as the CCEI are bounded and skewed. Constant data have a
    degenerate interval at the value itself.
    """
    data = np.asarray(values, dtype=float)
    n = len(data)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    centre = float(data.mean())
    if n == 1 or np.all(data == data[0]):
        return Estimate(centre, centre, centre, n)
    result = _scipy_stats.bootstrap(
        (data,),
        np.mean,
        confidence_level=confidence,
        n_resamples=BOOTSTRAP_RESAMPLES,
        method="BCa",
        random_state=np.random.default_rng(BOOTSTRAP_SEED),
    )
    low, high = result.confidence_interval
    if not (np.isfinite(low) and np.isfinite(high)):  # BCa can degenerate on near-constant data
        low, high = np.percentile(data, [50 * (1 - confidence), 50 * (1 + confidence)])
    return Estimate(centre, float(low), float(high), n)
