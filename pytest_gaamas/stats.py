"""The statistics of the scores: intervals for one sample, and the two-sample questions a run asks,
of people (is the model's distribution of choices theirs?) and of an earlier run (did a cell drop?).

Intervals: Wilson for rates, a bias-corrected bootstrap for means, Newcombe's hybrid score interval
for a difference of rates, Welch's for a difference of means. Tests: a permutation test of the
Wasserstein distance between two samples (any two distributions, ties and discreteness included),
Fisher's exact test and Welch's t-test for a change between runs, the Cochran-Armitage test for a
trend in a rate, two one-sided tests for the equivalence of two rates, the
log-rank test of which societies survive longer, the Mann-Whitney test of which games go better, and
Holm's correction for many cells or a family of claims. The trend, log-rank and Mann-Whitney p-values
are exact permutation p-values (``conditional_tail``), not normal approximations: the suite's 30
trials a cell and 10 societies a cell are where those fail. Every resampling is seeded, so a replayed
run prints the same table byte for byte.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from .lazy import OnFirstUse

_special = OnFirstUse("scipy.special")
_scipy_stats = OnFirstUse("scipy.stats")


CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 9_999
#: Fixed, so that the interval of a mean depends on the data alone.
BOOTSTRAP_SEED = 20_140_601


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its confidence interval and the number of observations behind it.

    ``kind`` and ``sample`` keep what a later comparison needs: a rate's 0/1 outcomes, a mean's values,
    a difference's influence values (``influence_sample``), one an observation, whose mean is the estimate.
    ``confidence`` is the interval's two-sided coverage; ``recompute`` (a difference's) makes the same
    estimate at another one, where the sample alone cannot (see ``at``).
    """

    value: float
    low: float
    high: float
    n: int
    kind: str = "mean"  # "rate" or "mean": which two-sample test compares it with another run
    sample: tuple[float, ...] = field(default=(), compare=False, repr=False)
    confidence: float = field(default=CONFIDENCE, compare=False)
    recompute: Callable[[float], Estimate] | None = field(default=None, compare=False, repr=False)

    def at(self, confidence: float) -> Estimate | None:
        """The same estimate with its interval at ``confidence``, computed again from what it was
        computed from: Wilson for a rate, the same BCa bootstrap for a mean, a difference's own
        interval; itself at its own confidence. None where nothing can compute it again (an estimate
        built by hand, a mean without an interval)."""
        if not 0 < confidence < 1:
            raise ValueError(f"a confidence lies between 0 and 1, got {confidence!r}")
        if confidence == self.confidence:
            return self
        if self.recompute is not None:
            return self.recompute(confidence)
        if self.n == 0 or len(self.sample) != self.n or math.isnan(self.low) or math.isnan(self.high):
            return None
        if self.kind == "rate":
            return wilson(self.successes, self.n, confidence)
        return mean(self.sample, confidence)

    @property
    def successes(self) -> int:
        """A rate's number of successes (its 0/1 sample summed)."""
        return round(sum(self.sample))

    def as_json(self) -> dict:
        def finite(x: float) -> float | None:
            return None if math.isnan(x) else x

        return {"value": finite(self.value), "ci": [finite(self.low), finite(self.high)], "n": self.n}


def wilson(successes: int, n: int, confidence: float = CONFIDENCE) -> Estimate:
    """A rate with its Wilson score interval (good coverage also at 0, 1 and small n)."""
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, "rate")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, {n}], got {successes}")
    low, high = _wilson_bounds(successes, n, confidence)
    return Estimate(successes / n, low, high, n, "rate", (1.0,) * successes + (0.0,) * (n - successes), confidence)


def clopper_pearson(successes: int, n: int, confidence: float = CONFIDENCE) -> Estimate:
    """A rate with its exact (Clopper-Pearson) interval: each end is the one-sided exact binomial
    bound at (1 + ``confidence``) / 2, so a verdict reading one end is an exact one-sided test."""
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, "rate")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, {n}], got {successes}")
    tail = (1 - confidence) / 2
    low = 0.0 if successes == 0 else float(_special.betaincinv(successes, n - successes + 1, tail))
    high = 1.0 if successes == n else float(_special.betaincinv(successes + 1, n - successes, 1 - tail))
    return Estimate(successes / n, low, high, n, "rate", (1.0,) * successes + (0.0,) * (n - successes), confidence)


def _wilson_bounds(successes: int, n: int, confidence: float) -> tuple[float, float]:
    z = _z(confidence)
    rate = successes / n
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def _z(confidence: float) -> float:
    return float(_special.ndtri(0.5 + confidence / 2))  # scipy.stats.norm.ppf's own computation


def mean(values, confidence: float = CONFIDENCE) -> Estimate:
    """A mean with its bias-corrected and accelerated bootstrap interval.

    BCa is used because scores such as the CCEI are bounded and skewed. Constant data have a
    degenerate interval at the value itself.
    """
    point = average(values)
    if point.n == 0:
        return point
    centre, n, sample, data = point.value, point.n, point.sample, np.asarray(point.sample)
    if n == 1 or np.all(data == data[0]):
        return Estimate(centre, centre, centre, n, "mean", sample, confidence)
    low, high = bca_mean_interval(data, confidence)
    if not (np.isfinite(low) and np.isfinite(high)):  # BCa can degenerate on near-constant data
        low, high = np.percentile(data, [50 * (1 - confidence), 50 * (1 + confidence)])
    return Estimate(centre, float(low), float(high), n, "mean", sample, confidence)


def average(values) -> Estimate:
    """A mean without its interval (NaN bounds): for a value that is drawn, never judged."""
    data = np.asarray(values, dtype=float)
    if len(data) == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    return Estimate(float(data.mean()), math.nan, math.nan, len(data), "mean", tuple(float(x) for x in data))


def bca_mean_interval(data: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """``scipy.stats.bootstrap((data,), np.mean, method="BCa")`` at :data:`BOOTSTRAP_RESAMPLES` from
    :data:`BOOTSTRAP_SEED`, step for step: the same draws, the same arithmetic, the same interval to
    the last bit (``tests/test_stats.py`` holds it to scipy's), without the general machinery that
    took twice as long as the resampling itself for the suite's hundreds of means. NaN where BCa is
    undefined, as scipy's."""
    n = len(data)
    theta_b = np.mean(data[np.random.default_rng(BOOTSTRAP_SEED).integers(0, n, (BOOTSTRAP_RESAMPLES, n))], axis=-1)
    theta = np.expand_dims(np.mean(data, axis=-1), axis=-1)
    below = np.count_nonzero(theta_b < theta, axis=-1) + np.count_nonzero(theta_b <= theta, axis=-1)
    z0 = _special.ndtri(below.astype(theta.dtype) / (2 * BOOTSTRAP_RESAMPLES))
    leave_one_out = np.broadcast_to(np.arange(n), (n, n))[~np.eye(n, dtype=bool)].reshape((n, n - 1))
    theta_i = np.mean(data[leave_one_out], axis=-1)
    count = float(n)
    u = (count - 1) * (np.mean(theta_i, axis=-1, keepdims=True) - theta_i)
    acceleration = 1 / 6 * (np.sum(u**3, axis=-1) / count**3) / (np.sum(u**2, axis=-1) / count**2) ** (3 / 2)
    z_alpha = float(_special.ndtri((1 - confidence) / 2))
    lower, upper = z0 + z_alpha, z0 - z_alpha
    with _quiet(), np.errstate(divide="ignore", invalid="ignore"):  # undefined BCa is NaN, as scipy's
        alphas = _special.ndtr(z0 + lower / (1 - acceleration * lower)), _special.ndtr(z0 + upper / (1 - acceleration * upper))
        low, high = _linear_quantiles(theta_b, np.stack(alphas, axis=-1))
    return float(low), float(high)


def _linear_quantiles(values: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """``scipy.stats.quantile(values, probabilities)`` (its default, linear interpolation, Hyndman
    and Fan's 7th) for one sample of finite values, step for step; NaN where a probability is
    outside [0, 1] or NaN. Without importing scipy.stats, most of a second in every playing process."""
    y = np.sort(values)
    n = np.asarray([len(y)], dtype=y.dtype)
    p = np.asarray(probabilities, dtype=y.dtype)
    undefined = (p > 1) | (p < 0) | np.isnan(p)
    p = np.where(undefined, 0.5, p)
    jg = p * n + (1 - p)
    jp1 = jg // 1
    j = jp1 - 1
    g = jg % 1
    g = np.where(j < 0, 0.0, g)
    j, jp1 = np.clip(j, 0.0, n - 1), np.clip(jp1, 0.0, n - 1)
    quantiles = (1 - g) * y[j.astype(np.int64)] + g * y[jp1.astype(np.int64)]
    return np.where(undefined, np.nan, quantiles)


# -- differences between two samples ---------------------------------------------------------------


def rate_difference(k1: int, n1: int, k2: int, n2: int, confidence: float = CONFIDENCE) -> Estimate:
    """p1 - p2 with Newcombe's hybrid score interval (his method 10, from the two Wilson intervals):
    good coverage at 0 and 1 and at small n, where the Wald interval fails."""
    if n1 == 0 or n2 == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, "rate")
    p1, p2 = k1 / n1, k2 / n2
    (l1, u1), (l2, u2) = _wilson_bounds(k1, n1, confidence), _wilson_bounds(k2, n2, confidence)
    z, d = _z(confidence), p1 - p2
    low = d - z * math.sqrt(l1 * (1 - l1) / n1 + u2 * (1 - u2) / n2)
    high = d + z * math.sqrt(u1 * (1 - u1) / n1 + l2 * (1 - l2) / n2)
    outcomes = [(1.0, (1.0,) * k1 + (0.0,) * (n1 - k1)), (-1.0, (1.0,) * k2 + (0.0,) * (n2 - k2))]
    return Estimate(d, low, high, n1 + n2, "rate", influence_sample(d, outcomes), confidence,
                    recompute=functools.partial(rate_difference, k1, n1, k2, n2))  # fmt: skip


def mean_difference(a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE) -> Estimate:
    """mean(a) - mean(b) with Welch's interval (unequal variances); degenerate when both are constant."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) == 0 or len(y) == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    d = float(x.mean() - y.mean())
    again = functools.partial(mean_difference, tuple(x), tuple(y))
    sample = influence_sample(d, [(1.0, x), (-1.0, y)])
    if len(x) < 2 or len(y) < 2 or (np.ptp(x) == 0 and np.ptp(y) == 0):
        return Estimate(d, d, d, len(x) + len(y), sample=sample, confidence=confidence, recompute=again)
    with _quiet():
        interval = _scipy_stats.ttest_ind(x, y, equal_var=False).confidence_interval(confidence)
    return Estimate(d, float(interval.low), float(interval.high), len(x) + len(y), sample=sample, confidence=confidence, recompute=again)


def influence_sample(value: float, terms: Sequence[tuple[float, npt.ArrayLike]]) -> tuple[float, ...]:
    """The sample of a signed sum of independent groups' means (``value``; a difference of two rates,
    of two means, a difference in differences), one value an observation: ``value`` plus the
    observation's influence on it, ``sign`` x (its deviation from its group's mean) x N / (its group's
    size), N the observations of all groups. Their mean is ``value`` and the variance of their mean,
    read as N draws, is the estimate's own (the sum of each group's variance over its size), so a
    later run's estimate is compared with this one as two means are (``change_test``); the group's
    raw observations would not say which group each came from."""
    groups = [(sign, np.asarray(values, dtype=float)) for sign, values in terms]
    total = sum(len(values) for _, values in groups)
    if any(len(values) == 0 for _, values in groups):
        return ()
    return tuple(float(x) for sign, values in groups for x in value + sign * (values - values.mean()) * total / len(values))


def rates_equivalent(k1: int, n1: int, k2: int, n2: int, margin: float, alpha: float = 0.05) -> tuple[bool, Estimate]:
    """Two one-sided tests at level ``alpha``: the rates are equivalent within +-``margin`` when the
    1 - 2 alpha interval of their difference lies inside it. Returns the verdict and that interval."""
    difference = rate_difference(k1, n1, k2, n2, confidence=1 - 2 * alpha)
    return difference.n > 0 and -margin < difference.low and difference.high < margin, difference


# -- distributions ----------------------------------------------------------------------------------

PERMUTATIONS = 9_999


def _support_counts(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The gaps of the pooled support, and how many of each sample sit at each of its values: what
    every Wasserstein needs."""
    support, index = np.unique(np.concatenate([a, b]), return_inverse=True)
    count_a = np.bincount(index[: len(a)], minlength=len(support))
    count_b = np.bincount(index[len(a):], minlength=len(support))
    return np.diff(support), count_a, count_b


def _wasserstein_from_counts(count_a: np.ndarray, count_b: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    """W1 = integral of |F_a - F_b|, for counts over the support (last axis; leading axes batch)."""
    cdf_a = np.cumsum(count_a, axis=-1)[..., :-1] / count_a.sum(axis=-1, keepdims=True)
    cdf_b = np.cumsum(count_b, axis=-1)[..., :-1] / count_b.sum(axis=-1, keepdims=True)
    return np.abs(cdf_a - cdf_b) @ gaps


def wasserstein(a: Sequence[float], b: Sequence[float]) -> float:
    """The first Wasserstein (earth mover's) distance between two samples, in their units: how far,
    on average, one distribution's mass must move to become the other."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) == 0 or len(y) == 0:
        raise ValueError("the Wasserstein distance needs two non-empty samples")
    gaps, count_a, count_b = _support_counts(x, y)
    return float(_wasserstein_from_counts(count_a, count_b, gaps))


@dataclass(frozen=True)
class DistributionTest:
    """How far sample a lies from sample b: W1 with a one-sided bootstrap upper bound, and the
    permutation p-value of H0: both are draws from one distribution, with the statistic it used."""

    distance: float
    upper: float
    p_value: float
    statistic: str
    n_a: int
    n_b: int


def _chi_square_from_counts(count_a: np.ndarray, count_b: np.ndarray) -> np.ndarray:
    pooled = count_a + count_b
    total = pooled.sum(axis=-1, keepdims=True)
    expected_a = pooled * count_a.sum(axis=-1, keepdims=True) / total
    expected_b = pooled - expected_a
    return np.sum((count_a - expected_a) ** 2 / expected_a + (count_b - expected_b) ** 2 / expected_b, axis=-1)


#: Each bin of the discrete test expects at least this many of the model's choices under H0.
MIN_EXPECTED = 5


def choice_bins(reference: npt.ArrayLike, n: int) -> np.ndarray:
    """Upper edges of bins over the reference (people's) values, for a chi-square with ``n`` choices:
    a value that people choose often enough to expect ``MIN_EXPECTED`` of n choices there (50, 100)
    is a bin of its own; rarer values are pooled with their neighbours until a bin expects as many.
    A value is in bin k when it is above edge k-1 and at most edge k; the last bin is open above."""
    values, counts = np.unique(np.asarray(reference, dtype=float), return_counts=True)
    least = min(1.0, MIN_EXPECTED / max(n, 1)) * counts.sum()
    bins: list[list[float]] = []  # [upper edge, mass]
    open_bin: list[float] | None = None
    for value, count in zip(values, counts):
        if count >= least:
            if open_bin is not None:
                bins.append(open_bin)
                open_bin = None
            bins.append([value, count])
            continue
        open_bin = [value, count] if open_bin is None else [value, open_bin[1] + count]
        if open_bin[1] >= least:
            bins.append(open_bin)
            open_bin = None
    if open_bin is not None:
        bins.append(open_bin)
    while len(bins) > 1:  # the smallest bin short of the least mass joins its smaller neighbour
        short = min(range(len(bins)), key=lambda i: bins[i][1])
        if bins[short][1] >= least:
            break
        if short == 0 or (short < len(bins) - 1 and bins[short + 1][1] < bins[short - 1][1]):
            bins[short + 1][1] += bins.pop(short)[1]  # the next bin keeps its upper edge
        else:
            bins[short - 1] = [bins[short][0], bins[short - 1][1] + bins.pop(short)[1]]
    return np.array([edge for edge, _ in bins[:-1]])


def compare_distributions(
    a: Sequence[float], b: Sequence[float], *, discrete: bool, resamples: int = PERMUTATIONS,
    confidence: float = CONFIDENCE,
) -> DistributionTest:  # fmt: skip
    """The Wasserstein distance between ``a`` (the model's choices) and ``b`` (people's), its upper
    ``confidence`` bound (``a`` resampled, ``b`` taken as the population), and a permutation test.

    The test's statistic: for ``discrete`` choices (dollars) the chi-square of the sample x bin
    table (bins from ``choice_bins``), which sees what people do and a distance does not: a quarter
    of dictators keep exactly $100 and a fifth exactly $50, a coin-flipping model almost never does.
    For continuous scores (a CCEI) W1 itself.
    A permutation of the pooled sample only changes how many of each bin (or distinct value) fall
    in ``a``: those counts are a multivariate hypergeometric draw, so every resample costs the size
    of the support, not of the samples, and 13,000 people cost no more than 30.
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) == 0 or len(y) == 0:
        raise ValueError("comparing distributions needs two non-empty samples")
    gaps, count_a, count_b = _support_counts(x, y)
    distance = float(_wasserstein_from_counts(count_a, count_b, gaps))
    rng = np.random.default_rng(BOOTSTRAP_SEED)

    if discrete:
        edges = choice_bins(y, len(x))
        bin_a = np.bincount(np.searchsorted(edges, x), minlength=len(edges) + 1)
        bin_b = np.bincount(np.searchsorted(edges, y), minlength=len(edges) + 1)
        observed = float(_chi_square_from_counts(bin_a, bin_b))
        pooled = bin_a + bin_b
        drawn = rng.multivariate_hypergeometric(pooled, len(x), size=resamples)
        permuted = _chi_square_from_counts(drawn, pooled - drawn)
    else:
        observed = distance
        pooled = count_a + count_b
        drawn = rng.multivariate_hypergeometric(pooled, len(x), size=resamples)
        permuted = _wasserstein_from_counts(drawn, pooled - drawn, gaps)
    # A tolerance, so that a resample whose statistic equals the observed one up to rounding counts
    # as at least as extreme (ties are common with discrete data).
    extreme = np.count_nonzero(permuted >= observed - 1e-9 * max(1.0, abs(observed)))
    p_value = (1 + extreme) / (1 + resamples)

    resampled = rng.multinomial(len(x), count_a / len(x), size=resamples)
    distances = _wasserstein_from_counts(resampled, np.broadcast_to(count_b, resampled.shape), gaps)
    upper = max(float(np.quantile(distances, confidence)), distance)
    return DistributionTest(distance, upper, float(p_value), distribution_test_name(discrete), len(x), len(y))


def distribution_test_name(discrete: bool) -> str:
    """What ``compare_distributions`` tests with, in words, for criteria and reports."""
    return "permutation chi-square over bins of people's choices" if discrete else "permutation test of the Wasserstein distance"


# -- exact conditional tests of a linear statistic --------------------------------------------------

#: Above this many partial tables in one half of the enumeration, the exact tail gives way to a
#: seeded Monte Carlo of the same conditional distribution (memory: about 40 bytes a table).
EXACT_TABLES = 2_000_000
#: Draws of the Monte Carlo fallback; its p is (b + 1) / (m + 1), never 0.
CONDITIONAL_RESAMPLES = 20_000
#: Statistics within this much of the observed one (on scores scaled to [0, 1]) count as ties:
#: a sum of floats taken in another order differs from the observed one only by rounding.
TIE_TOLERANCE = 1e-9


def _log_binomial(n: int, k: np.ndarray) -> np.ndarray:
    return _special.gammaln(n + 1) - _special.gammaln(k + 1) - _special.gammaln(n - k + 1)


def _partial_tables(sizes, scores, later_sizes, later_scores, total: int, threshold: float, tolerance: float, settle: bool):
    """Every way to draw from the classes of ``sizes`` (with ``scores``) part of ``total`` draws, the
    rest to come from the classes after them (``later_*``): arrays of the number drawn, the statistic
    sum(score x drawn) and the log of the number of ways, merged where the number drawn and the
    statistic agree (integer scores such as ranks collapse to few tables); None past EXACT_TABLES.

    Pruned as the network algorithm does: a table that cannot reach ``threshold`` however the rest
    is drawn is dropped; with ``settle``, one that reaches it however the rest is drawn is dropped
    too, its deals (its ways times every way to draw the rest) returned, as a log, beside the tables."""
    buckets = total / (tolerance * 1e-3) + 2  # the statistic lies in [0, total]
    if (total + 1) * buckets >= 2**62:
        return None
    drawn, statistic, log_ways = np.zeros(1, dtype=np.int64), np.zeros(1), np.zeros(1)
    settled = [-math.inf]
    for i, (size, score) in enumerate(zip(sizes, scores)):
        if len(drawn) * (size + 1) > EXACT_TABLES:
            return None
        taken = np.arange(size + 1)
        drawn = (drawn[:, None] + taken).ravel()
        statistic = (statistic[:, None] + score * taken).ravel()
        log_ways = (log_ways[:, None] + _log_binomial(size, taken)).ravel()
        # What the rest can add: the largest and smallest sums of r of its draws, for every r.
        rest = np.repeat(np.r_[scores[i + 1:], later_scores], np.r_[sizes[i + 1:], later_sizes].astype(np.int64))
        rest.sort()
        most, least = np.r_[0.0, np.cumsum(rest[::-1])], np.r_[0.0, np.cumsum(rest)]
        left = total - drawn
        possible = (left >= 0) & (left <= len(rest))
        drawn, statistic, log_ways, left = drawn[possible], statistic[possible], log_ways[possible], left[possible]
        undecided = statistic + most[left] >= threshold
        if settle:
            reached = statistic + least[left] >= threshold
            settled.append(_log_sum(log_ways[reached] + _log_binomial(len(rest), left[reached])))
            undecided &= ~reached
        drawn, statistic, log_ways = drawn[undecided], statistic[undecided], log_ways[undecided]
        if not len(drawn):
            break  # every table decided
        # Sorted by (drawn, statistic) as one integer key, equal statistics merged: a bucket is a
        # thousandth of the tie tolerance, so merging moves a statistic by far less than a tie, even
        # over a few hundred classes.
        key = drawn * np.int64(buckets) + np.round(statistic / (tolerance * 1e-3)).astype(np.int64)
        order = np.argsort(key)
        drawn, statistic, log_ways, key = drawn[order], statistic[order], log_ways[order], key[order]
        first = np.flatnonzero(np.r_[True, np.diff(key) != 0])
        drawn, statistic, log_ways = drawn[first], statistic[first], np.logaddexp.reduceat(log_ways, first)
    return drawn, statistic, log_ways, _log_sum(np.array(settled))


def conditional_tail(drawn: npt.ArrayLike, sizes: npt.ArrayLike, scores: npt.ArrayLike) -> float:
    """P(T >= t) for T = sum(score x drawn) over classes, when the draws are dealt among the classes
    at random with their sizes fixed (a multivariate hypergeometric: the conditional null of a
    permutation test), t being the observed T; one-sided, ties included.

    Exact: the classes are split in two halves, each half's partial tables enumerated (the number
    drawn, its statistic, its count of ways; equal statistics merged; tables already sure to reach t,
    or never to, set aside), and the halves joined by the number drawn, a sorted search giving each
    table the ways of the other half that reach t. Eight groups of 30 are at most two sets of about
    10^6 tables. Past ``EXACT_TABLES`` a half, a seeded Monte Carlo of ``CONDITIONAL_RESAMPLES``
    draws of the same distribution answers instead."""
    drawn, sizes = np.asarray(drawn, dtype=np.int64), np.asarray(sizes, dtype=np.int64)
    scores = np.asarray(scores, dtype=float)
    if not (len(drawn) == len(sizes) == len(scores)) or np.any(drawn < 0) or np.any(drawn > sizes):
        raise ValueError("each class needs a size, a score and a number drawn between 0 and its size")
    if not np.all(np.isfinite(scores)):
        raise ValueError("each class's score must be a finite number")
    spread = float(np.ptp(scores)) if len(scores) else 0.0
    total = int(drawn.sum())
    if spread == 0 or total in (0, int(sizes.sum())):
        return 1.0  # every deal gives the observed statistic
    scaled = (scores - scores.min()) / spread  # in [0, 1], so that one tolerance fits every scale
    tolerance = TIE_TOLERANCE * max(1, total)
    threshold = float(scaled @ drawn) - tolerance
    a, b = _balanced_halves(sizes)
    # The first half sets aside the tables already sure to reach t; the second may only drop those that
    # never can, or a deal would be counted from both sides.
    first = _partial_tables(sizes[a], scaled[a], sizes[b], scaled[b], total, threshold, tolerance, settle=True)
    second = _partial_tables(sizes[b], scaled[b], sizes[a], scaled[a], total, threshold, tolerance, settle=False) if first else None
    if first is None or second is None:
        rng = np.random.default_rng(BOOTSTRAP_SEED)
        deals = rng.multivariate_hypergeometric(sizes, total, size=CONDITIONAL_RESAMPLES)
        return float((1 + np.count_nonzero(deals @ scaled >= threshold)) / (1 + CONDITIONAL_RESAMPLES))
    (drawn_a, statistic_a, ways_a, settled), (drawn_b, statistic_b, ways_b, _) = first, second  # sorted by drawn, then statistic
    tail = [settled]
    starts_a = np.flatnonzero(np.r_[True, np.diff(drawn_a) != 0]) if len(drawn_a) else np.array([], dtype=np.int64)
    for start, end in zip(starts_a, [*starts_a[1:], len(drawn_a)]):
        low, high = np.searchsorted(drawn_b, [total - drawn_a[start], total - drawn_a[start] + 1])
        if low == high:
            continue
        # The ways of the other half from each of its statistics upward, as log sums.
        upward = np.logaddexp.accumulate(ways_b[low:high][::-1])[::-1]
        reach = np.searchsorted(statistic_b[low:high], threshold - statistic_a[start:end], side="left")
        reaching = reach < high - low
        tail.append(_log_sum(ways_a[start:end][reaching] + upward[reach[reaching]]))
    every = float(_log_binomial(int(sizes.sum()), np.array(total)))
    return float(min(1.0, math.exp(_log_sum(np.array(tail)) - every)))


def _log_sum(logs: np.ndarray) -> float:
    """log(sum(exp(logs))) without overflow (scipy's logsumexp); -inf for nothing."""
    return float(_special.logsumexp(logs)) if len(logs) else -math.inf


def _balanced_halves(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Class indices in two halves whose numbers of partial tables are about equal."""
    halves: tuple[list[int], list[int]] = ([], [])
    weight = [0.0, 0.0]
    for i in np.argsort(-sizes, kind="stable"):
        side = 0 if weight[0] <= weight[1] else 1
        halves[side].append(int(i))
        weight[side] += math.log(sizes[i] + 1)
    return np.array(sorted(halves[0]), dtype=np.int64), np.array(sorted(halves[1]), dtype=np.int64)


# -- trends and many tests ---------------------------------------------------------------------------


def trend_test(successes: Sequence[int], totals: Sequence[int], scores: Sequence[float]) -> tuple[float, float]:
    """Cochran-Armitage: does the rate rise with ``scores`` across groups? Returns (Z, one-sided p of
    a rise). Z, for display, equals sqrt(N) times the correlation of the 0/1 outcomes with their
    group's score. The p is exact: P(sum(score x successes) >= observed) over every way the total
    successes could have fallen among the groups (``conditional_tail``), not the normal
    approximation, which at 30 trials a group can be off by half (2 of 90 answers off, both in the
    lowest group: exact 0.109, normal 0.040)."""
    k, n, x = (np.asarray(v, dtype=float) for v in (successes, totals, scores))
    whole = np.all(k == np.round(k)) and np.all(n == np.round(n))
    if not (len(k) == len(n) == len(x)) or not whole or np.any(k < 0) or np.any(k > n):
        raise ValueError("trend_test needs, for each group, a whole number of successes between 0 and its total, and a score")
    total = n.sum()
    if total == 0:
        return math.nan, math.nan
    rate = k.sum() / total
    t = float(np.sum(x * (k - n * rate)))
    variance = rate * (1 - rate) * (np.sum(n * x * x) - np.sum(n * x) ** 2 / total)
    if variance <= 0:
        return 0.0, 1.0  # no variation in the outcome or in the scores: no evidence of a trend
    z = t / math.sqrt(variance)
    return z, conditional_tail(k.astype(np.int64), n.astype(np.int64), x)


def survives_longer(first: Sequence[int], second: Sequence[int], horizon: int) -> tuple[float, float]:
    """Do the societies of ``first`` survive longer than those of ``second``? Each value is the
    rounds a society completed; one that completed all ``horizon`` rounds is censored there (it
    might have lived on), one that did not collapsed in the round after. The log-rank test, one-sided:
    (Z, p), Z positive where ``first`` lives longer. (NaN, 1.0) when there is nothing to tell apart:
    no collapse at all, or every society of both collapsing in the same round.

    Z is the textbook log-rank statistic, for display. The p is a permutation test's, exact: the
    log-rank numerator (expected minus observed collapses of ``first``) is a sum of per-society
    scores (the pooled cumulative hazard at its time, less one if it collapsed), so relabelling the
    pooled societies is a hypergeometric deal of ``first``'s places among the distinct
    (time, collapsed) pairs, enumerated by ``conditional_tail``. At 10 societies a side, with many
    collapsing in the same round, the normal approximation is not to be trusted."""
    if not first or not second:
        return math.nan, 1.0

    def times(rounds: Sequence[int]):
        collapsed = [r + 1 for r in rounds if r < horizon]
        return _scipy_stats.CensoredData(uncensored=collapsed, right=[horizon] * (len(rounds) - len(collapsed)))

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=RuntimeWarning)  # no variance: said as NaN below
        z = float(_scipy_stats.logrank(times(first), times(second), alternative="less").statistic)
    if math.isnan(z):
        return math.nan, 1.0
    # Each society as (time, collapsed): collapsed in the round after the last it completed.
    pooled = np.array([(r + 1, 1) if r < horizon else (horizon, 0) for r in (*first, *second)])
    kinds, kind_of = np.unique(pooled, axis=0, return_inverse=True)
    kind_of = kind_of.ravel()
    sizes, in_first = np.bincount(kind_of), np.bincount(kind_of[: len(first)], minlength=len(kinds))
    # The pooled Nelson-Aalen hazard: at each collapse time, the collapses over those still at risk
    # (a society censored at that time is still at risk then).
    at_risk = np.array([sizes[kinds[:, 0] >= t].sum() for t in kinds[:, 0]])
    hazard_steps = np.where(kinds[:, 1] == 1, sizes / at_risk, 0.0)
    cumulative_hazard = np.array([hazard_steps[kinds[:, 0] <= t].sum() for t in kinds[:, 0]])
    return -z, conditional_tail(in_first, sizes, cumulative_hazard - kinds[:, 1])


def stochastically_greater(first: Sequence[float], second: Sequence[float]) -> float:
    """The one-sided p of the Mann-Whitney U test that values of ``first`` tend to exceed those of
    ``second`` (rates per game, bounded and tied: no normality assumed). 1.0 when there is nothing to
    tell apart: an empty side, or one value throughout both.

    Exact under ties: the sum of ``first``'s mid-ranks over every way its places could fall among the
    pooled distinct values (``conditional_tail``), where scipy's exact method assumes no ties and
    its normal approximation is rough at 30 a side with many ties."""
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if len(a) == 0 or len(b) == 0 or np.ptp(np.concatenate([a, b])) == 0:
        return 1.0
    _, value_of = np.unique(np.concatenate([a, b]), return_inverse=True)
    sizes = np.bincount(value_of)
    mid_ranks = np.cumsum(sizes) - (sizes - 1) / 2
    return conditional_tail(np.bincount(value_of[: len(a)], minlength=len(sizes)), sizes, mid_ranks)


#: Above this many pairs the sign-flip test draws its relabellings instead of taking every one.
EXACT_PAIRS = 16


def paired_greater(first: Sequence[float], second: Sequence[float]) -> float:
    """The one-sided p of the sign-flip permutation test that ``first`` exceeds ``second`` pair by
    pair (the same society's selfish and altruistic villagers): under the null each pair's
    difference is as likely negative as positive, so the p is the share of the 2^n sign patterns
    whose sum of differences reaches the observed one. Exact (every pattern) up to ``EXACT_PAIRS``
    pairs, seeded draws above; 1.0 with no pair or no difference."""
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired_greater needs as many values on each side, got {len(a)} and {len(b)}")
    differences = (a - b)[a != b]
    if len(differences) == 0:
        return 1.0
    observed = differences.sum()
    if len(differences) <= EXACT_PAIRS:
        signs = 1 - 2 * ((np.arange(2 ** len(differences))[:, None] >> np.arange(len(differences))) & 1)
    else:
        signs = np.random.default_rng(0).choice((-1, 1), size=(PERMUTATIONS, len(differences)))
        signs = np.vstack([np.ones(len(differences), dtype=int), signs])  # the observed labelling counts once
    sums = signs @ np.abs(differences)
    return float(np.mean(sums >= observed - 1e-12 * max(1.0, abs(observed))))  # a tie with the observed sum counts


#: Draws of ``exchanged_within_greater`` where its labellings are too many to try: enough that the
#: smallest p it can give (1 / (draws + 1)) is below a Holm step of the commons' paradox family.
EXCHANGE_DRAWS = 199_999


def exchanged_within_greater(strata: Sequence[tuple[Sequence[float], Sequence[float]]]) -> float:
    """The one-sided p that the first group's values exceed the second's within each stratum (a
    society's selfish and altruistic villagers, each villager one value): the statistic is the sum
    over the strata of the first group's mean minus the second's, and under the null the labels are
    exchangeable among a stratum's members, its group sizes kept. Exact (every labelling) up to
    ``EXACT_LABELLINGS`` labellings; past it, ``EXCHANGE_DRAWS`` seeded draws, the observed labelling
    counted among them, so the p is never below 1 / (draws + 1). 1.0 with no stratum holding both."""
    tables = []
    observed = 0.0
    for first, second in strata:
        values = np.asarray([*first, *second], dtype=float)
        k, n = len(first), len(first) + len(second)
        if k == 0 or k == n:
            continue
        chosen = np.zeros((math.comb(n, k), n), dtype=bool)
        for row, members in enumerate(itertools.combinations(range(n), k)):
            chosen[row, list(members)] = True
        differences = (chosen @ values) / k - (~chosen @ values) / (n - k)
        tables.append(differences)
        observed += float(values[:k].mean() - values[k:].mean())
    if not tables:
        return 1.0
    tolerance = 1e-9 * max(1.0, abs(observed))
    if math.prod(len(t) for t in tables) <= EXACT_LABELLINGS:
        sums = np.zeros(1)
        for table in tables:
            sums = (sums[:, None] + table[None, :]).ravel()
        return float(np.mean(sums >= observed - tolerance))
    rng = np.random.default_rng(0)
    sums = sum(table[rng.integers(0, len(table), EXCHANGE_DRAWS)] for table in tables)
    return float((1 + np.count_nonzero(sums >= observed - tolerance)) / (EXCHANGE_DRAWS + 1))


#: Up to this many labellings ``ordered_groups_greater`` tries them all; past it, seeded draws.
EXACT_LABELLINGS = 50_000


def ordered_groups_greater(groups: Sequence[Sequence[float]]) -> tuple[float, float]:
    """Whether values rise from each group to the next (the societies of a lake a quarter, one and four
    times as large): Jonckheere-Terpstra's statistic, each pair of values from an earlier and a later
    group counting 1 where the later is larger and 1/2 on a tie, as a concordance from -1 (every pair
    falls) to 1 (every pair rises), with the one-sided p of the permutation test that they rise. Under
    the null the group labels are exchangeable, so the p is the share of the labellings with the same
    group sizes whose statistic reaches the observed one: exact (every labelling) up to
    ``EXACT_LABELLINGS``, seeded draws above. (nan, 1.0) with fewer than two non-empty groups."""
    return ordered_groups_greater_within([groups])


def ordered_groups_greater_within(strata: Sequence[Sequence[Sequence[float]]]) -> tuple[float, float]:
    """``ordered_groups_greater`` where the values come in strata (the selfish and the altruistic
    villagers), each with its own groups in the same order: the statistic is summed over the strata and
    the labels are exchanged only within a stratum, so what sets the strata apart (a persona that asks
    more) cannot pass for a rise. Exact while the strata's labellings, multiplied, number at most
    ``EXACT_LABELLINGS``; past it, ``PERMUTATIONS`` seeded draws beside the observed labelling, so
    the smallest p is 1 / (``PERMUTATIONS`` + 1). (nan, 1.0) where no stratum has two non-empty groups."""
    frozen = tuple(tuple(tuple(float(v) for v in group) for group in groups) for groups in strata)
    return _ordered_within(frozen)


@functools.lru_cache(maxsize=256)
def _ordered_within(strata: tuple[tuple[tuple[float, ...], ...], ...]) -> tuple[float, float]:
    # Cached because a behaviour judges every cell of its family in each cell's item.
    blocks = []  # per stratum: its statistic under each labelling tried, the observed labelling's first
    observed = pairs = 0.0
    counts = []
    for groups in strata:
        sizes = [len(g) for g in groups if len(g)]
        if len(sizes) < 2:
            continue
        values = np.concatenate([np.asarray(g, dtype=float) for g in groups if len(g)])
        rises = (values[None, :] > values[:, None]) + 0.5 * (values[None, :] == values[:, None])
        labels = np.repeat(np.arange(len(sizes)), sizes)
        observed += float(_rising_pairs(labels[None, :], rises, len(sizes))[0])
        pairs += sum(a * b for i, a in enumerate(sizes) for b in sizes[i + 1:])
        counts.append(math.factorial(len(values)) // math.prod(math.factorial(s) for s in sizes))
        blocks.append((sizes, labels, rises))
    if not blocks:
        return math.nan, 1.0
    if math.prod(counts) <= EXACT_LABELLINGS:
        statistics = np.zeros(1)
        for sizes, _, rises in blocks:  # every labelling of every stratum: the sums of all their pairings
            statistics = np.add.outer(statistics, _rising_pairs(np.array(list(_labellings(sizes))), rises, len(sizes))).ravel()
    else:
        rng = np.random.default_rng(0)
        statistics = np.zeros(PERMUTATIONS + 1)
        for sizes, labels, rises in blocks:
            drawn = np.vstack([labels, np.array([rng.permutation(labels) for _ in range(PERMUTATIONS)])])
            statistics = statistics + _rising_pairs(drawn, rises, len(sizes))
    p = float(np.mean(statistics >= observed - 1e-9))
    return 2 * observed / pairs - 1, p


def _rising_pairs(labellings: npt.NDArray[np.int_], rises: npt.NDArray[np.float64], groups: int) -> npt.NDArray[np.float64]:
    """Jonckheere-Terpstra's statistic under each labelling (a row): the sum of ``rises`` over the
    pairs whose first value is labelled with an earlier group than the second."""
    one_hot = (labellings[:, :, None] == np.arange(groups)).astype(float)  # labelling x value x group
    between = one_hot.transpose(0, 2, 1) @ rises @ one_hot  # labelling x group x group: the rises from one to the other
    return (between * np.triu(np.ones((groups, groups)), 1)).sum(axis=(1, 2))


def _labellings(sizes: Sequence[int]):
    """Every assignment of group labels 0..len(sizes)-1 to sum(sizes) places, group g taking sizes[g] of them."""
    total = sum(sizes)

    def fill(labels: list[int], free: tuple[int, ...], group: int):
        if group == len(sizes) - 1:
            for place in free:
                labels[place] = group
            yield tuple(labels)
            return
        for chosen in itertools.combinations(free, sizes[group]):
            for place in chosen:
                labels[place] = group
            yield from fill(labels, tuple(p for p in free if p not in chosen), group + 1)

    yield from fill([0] * total, tuple(range(total)), 0)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment: the family-wise error rate stays at alpha over all the cells
    compared, with more power than Bonferroni. NaN p-values (cells not testable) stay NaN."""
    indexed = [(p, i) for i, p in enumerate(p_values) if not math.isnan(p)]
    m = len(indexed)
    adjusted = [math.nan] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(indexed)):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


def holm_family(p_values: Mapping[str, float]) -> dict[str, tuple[float, float]]:
    """A family of claims corrected together: each claim's (raw p, Holm-adjusted p), in the order
    given. Claim a member of the family supported only where its adjusted p clears alpha, and show
    both."""
    names = list(p_values)
    return {name: (p_values[name], adjusted) for name, adjusted in zip(names, holm([p_values[name] for name in names]))}


#: The alternative of a change test, by which way is worse: a drop (old > new), a rise, or either.
ALTERNATIVE = {"down": "greater", "up": "less", "both": "two-sided"}


def change_test(old: Estimate, new: Estimate, worse: str = "both") -> float:
    """The p-value of H0: the two runs measured the same thing, against the alternative that the
    new one is ``worse`` ("down": lower, "up": higher, "both": either); Fisher's exact test for
    rates, a permutation test of the difference of means for means (``mean_change``), and for a
    difference of rates, whose sample is its influence values (``influence_sample``), not 0/1
    outcomes. Both are exact, so neither reaches 0 with finite samples: two constant samples that
    differ are as far apart as their sizes can show, not infinitely far. NaN where either side has no
    data."""
    if old.n == 0 or new.n == 0 or old.kind != new.kind or not old.sample or not new.sample:
        return math.nan
    alternative = ALTERNATIVE[worse]
    if old.kind == "rate" and _outcomes(old.sample) and _outcomes(new.sample):
        k_old, k_new = old.successes, new.successes
        table = [[k_old, old.n - k_old], [k_new, new.n - k_new]]
        return float(_scipy_stats.fisher_exact(table, alternative=alternative).pvalue)
    return mean_change(old.sample, new.sample, alternative)


def _outcomes(sample: Sequence[float]) -> bool:
    return all(x in (0.0, 1.0) for x in sample)


def mean_change(old: Sequence[float], new: Sequence[float], alternative: str = "two-sided", resamples: int = PERMUTATIONS) -> float:
    """The permutation p-value of H0: ``old`` and ``new`` are draws from one distribution, by the
    difference of their means (old - new; ``alternative`` "greater", "less" or "two-sided", as
    scipy's). ``resamples`` seeded relabellings of the pooled values, the observed one counted among
    them, so the p is at least 1 / (resamples + 1): no normality assumed, and no p of 0 from two
    constant samples, whose Welch statistic is infinite."""
    a, b = np.asarray(old, dtype=float), np.asarray(new, dtype=float)
    if len(a) == 0 or len(b) == 0:
        return math.nan
    pooled = np.concatenate([a, b])
    if np.ptp(pooled) == 0:
        return 1.0
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    shuffled = rng.permuted(np.broadcast_to(pooled, (resamples, len(pooled))), axis=1)
    total = pooled.sum()

    def difference(first_sums):
        return first_sums / len(a) - (total - first_sums) / len(b)

    observed = difference(a.sum())
    drawn = difference(shuffled[:, : len(a)].sum(axis=1))
    tie = 1e-9 * max(1.0, float(np.abs(pooled).max()))
    reached = {"greater": drawn >= observed - tie, "less": drawn <= observed + tie,
               "two-sided": np.abs(drawn) >= abs(observed) - tie}[alternative]  # fmt: skip
    return float((1 + np.count_nonzero(reached)) / (1 + resamples))


@contextlib.contextmanager
def _quiet():
    """scipy warns of precision loss on nearly constant samples (29 answers of $10 and one of $10.5);
    the result stands, and the warning would only alarm a reader of the run."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Precision loss occurred", category=RuntimeWarning)
        warnings.filterwarnings("ignore", message=".*catastrophic cancellation", category=RuntimeWarning)
        yield
