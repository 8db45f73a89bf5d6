"""Three verdicts, and the rules that decide one from an interval or a p-value.

A criterion is **met** when the trials show it holds, **missed** when they show it does not, and
**inconclusive** when they can show neither: the interval straddles the threshold, or a one-sided
test is not significant either way. Inconclusive is never met. A behaviour decides its verdict with
one of the helpers below rather than comparing bounds by hand, so every behaviour draws the line
at the same place:

=====================================  ================================  ===================================  ============
helper                                 met                               missed                               inconclusive
=====================================  ================================  ===================================  ============
``at_least(estimate, threshold)``      low >= threshold                  high < threshold                     otherwise
``strictly_above(estimate, t)``        low > t                           high <= t                            otherwise
``at_most(estimate, ceiling)``         high <= ceiling                   low > ceiling                        otherwise
``inside(estimate, low, high)``        the interval within [low, high]   no point in common with the band     otherwise
``equivalent(difference, margin)``     the interval within (-m, m)       no point in common with (-m, m)      otherwise
``significant(p, alpha, opposite=)``   p < alpha                         the opposite direction's p < alpha   otherwise
``faithful(fidelity)``                 faithful                          unfaithful                           inconclusive
=====================================  ================================  ===================================  ============

An estimate with no valid observation (n = 0) or a bound that is NaN, and a p-value that is NaN or
None (a test that could not be computed), are **missed**: nothing meets the criterion (where no
answer was valid, the finding says "no valid answer").

``strictly_above`` is for a criterion that a constant answer at the threshold must not meet (a
dictator who keeps $50 every time has the degenerate interval [50, 50]: it keeps at least half, but
not more than half). ``equivalent`` is two one-sided tests: their null hypotheses include the margin
itself, so an interval that reaches the margin has not shown equivalence (open bounds), where
``inside`` asks of a band of acceptable values that the interval lie in it (closed bounds).

**A one-sided claim** ("the script overstates success", "cooperation rises with the prompt") is met
when its test is significant. A test that is not significant has not shown the claim false, only
failed to show it true: that is inconclusive. The claim is missed only where the opposite direction
is itself significant (the agents coordinate *more* than the script), given as ``opposite=``, the
one-sided p-value of the contrary claim; without it, a non-significant claim stays inconclusive.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

K = TypeVar("K")


class Verdict(str, enum.Enum):
    """What the trials say of a criterion. The value is the word shown and stored: "met", "missed",
    "inconclusive"."""

    MET = "met"
    MISSED = "missed"
    INCONCLUSIVE = "inconclusive"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @classmethod
    def of(cls, value: Any) -> Verdict | None:
        """A verdict from what a behaviour may give: a ``Verdict``, its word, or a bool as the two
        verdicts before (True met, False missed); None stays None (no verdict: a descriptive row)."""
        if value is None or isinstance(value, cls):
            return value
        if isinstance(value, str):
            try:
                return cls(value)
            except ValueError:
                raise ValueError(f"a verdict is one of {', '.join(v.value for v in cls)}, got {value!r}") from None
        if isinstance(value, bool) or _is_numpy_bool(value):
            return cls.MET if value else cls.MISSED
        raise TypeError(f"a verdict is a Verdict, its word or a bool, got {type(value).__name__} {value!r}")


MET, MISSED, INCONCLUSIVE = Verdict.MET, Verdict.MISSED, Verdict.INCONCLUSIVE
#: The verdicts that are findings, in the order they are listed.
NOT_MET = (MISSED, INCONCLUSIVE)


class Interval(Protocol):
    """What the helpers read of an estimate (``stats.Estimate``): its bounds and how many valid
    observations are behind them."""

    value: float
    low: float
    high: float
    n: int


def at_least(estimate: Interval, threshold: float) -> Verdict:
    """Met when the whole interval is at or above ``threshold``, missed when it is all below."""
    if not _measured(estimate):
        return MISSED
    return _decide(estimate.low >= _number(threshold), estimate.high < threshold)


def strictly_above(estimate: Interval, threshold: float) -> Verdict:
    """Met when the whole interval is above ``threshold``; missed when none of it is (an interval
    that is the threshold itself included)."""
    if not _measured(estimate):
        return MISSED
    return _decide(estimate.low > _number(threshold), estimate.high <= threshold)


def at_most(estimate: Interval, ceiling: float) -> Verdict:
    """Met when the whole interval is at or below ``ceiling``, missed when it is all above."""
    if not _measured(estimate):
        return MISSED
    return _decide(estimate.high <= _number(ceiling), estimate.low > ceiling)


def inside(estimate: Interval, low: float, high: float) -> Verdict:
    """Met when the interval lies within the band [``low``, ``high``] (its ends included), missed
    when it has no point in common with it."""
    if not _measured(estimate):
        return MISSED
    low, high = _band(low, high)
    return _decide(low <= estimate.low and estimate.high <= high, estimate.high < low or estimate.low > high)


def equivalent(difference: Interval, margin: float) -> Verdict:
    """Two one-sided tests: met when the interval of the difference lies strictly within
    (-``margin``, ``margin``) (give it the 1 - 2 alpha interval), missed when it lies wholly outside
    it, at or beyond one end."""
    if not _measured(difference):
        return MISSED
    if not _number(margin) > 0:
        raise ValueError(f"an equivalence margin is above 0, got {margin!r}")
    return _decide(-margin < difference.low and difference.high < margin,
                   difference.high <= -margin or difference.low >= margin)  # fmt: skip


def significant(p: float | None, alpha: float = 0.05, *, opposite: float | None = None) -> Verdict:
    """A one-sided claim: met when its p-value ``p`` is under ``alpha``; missed when the contrary
    claim's one-sided p-value ``opposite`` is; inconclusive otherwise (see the module's note)."""
    if not 0 < _number(alpha) < 1:
        raise ValueError(f"alpha is between 0 and 1, got {alpha!r}")
    if p is None or math.isnan(_p_value(p)):
        return MISSED
    if p < alpha:
        return MET
    if opposite is not None and not math.isnan(_p_value(opposite)) and opposite < alpha:
        return MISSED
    return INCONCLUSIVE


@dataclass(frozen=True)
class Claim:
    """One claim of a family, judged with the others: its verdict, its p-value raw and adjusted by
    Holm's method over the family, and the contrary claim's p-value adjusted likewise."""

    verdict: Verdict
    p: float
    p_adjusted: float
    opposite_adjusted: float
    family_size: int


def family(claims: Mapping[K, tuple[float, float]], alpha: float = 0.05) -> dict[K, Claim]:
    """A family of one-sided claims decided together. ``claims`` maps each claim to (its one-sided p,
    the contrary claim's one-sided p). Holm's step-down method keeps the chance that any claim of
    the family is met by chance at ``alpha``; the contrary claims are adjusted as a family of their
    own, so that a claim is missed only where its contrary survives the same correction. NaN p-values
    (nothing to test) stay NaN and their claim is missed, as ``significant`` says."""
    from .stats import holm  # stats imports numpy and scipy; the verdicts themselves need neither

    names = list(claims)
    raw = [float(claims[name][0]) for name in names]
    adjusted, contrary = holm(raw), holm([float(claims[name][1]) for name in names])
    size = sum(not math.isnan(p) for p in raw)
    return {
        name: Claim(significant(adjusted[i], alpha, opposite=contrary[i]), raw[i], adjusted[i], contrary[i], size)
        for i, name in enumerate(names)
    }


def faithful(fidelity: Any) -> Verdict:
    """The verdict of a fidelity comparison (``pytest_gaamas.fidelity.Fidelity``; None when the
    model made no valid choice): faithful is met, unfaithful missed, inconclusive inconclusive."""
    if fidelity is None:
        return MISSED
    return {"faithful": MET, "unfaithful": MISSED, "inconclusive": INCONCLUSIVE}[fidelity.verdict]


def _decide(met: bool, missed: bool) -> Verdict:
    return MET if met else MISSED if missed else INCONCLUSIVE


def _measured(estimate: Interval) -> bool:
    """Whether there is an interval to judge: valid observations, and bounds that are numbers."""
    if estimate.n <= 0:
        return False
    low, high = float(estimate.low), float(estimate.high)
    if math.isnan(low) or math.isnan(high) or math.isnan(float(estimate.value)):
        return False
    if low > high:
        raise ValueError(f"an interval's low bound is at most its high bound, got [{low}, {high}]")
    return True


def _number(value: float) -> float:
    """A threshold as given, refused when it is not a number: a NaN threshold would decide
    everything silently one way."""
    if isinstance(value, bool) or math.isnan(float(value)):
        raise ValueError(f"a threshold is a number, got {value!r}")
    return value


def _band(low: float, high: float) -> tuple[float, float]:
    if _number(low) > _number(high):
        raise ValueError(f"a band's low end is at most its high end, got [{low}, {high}]")
    return low, high


def _p_value(p: float) -> float:
    value = float(p)
    if not math.isnan(value) and not 0 <= value <= 1:
        raise ValueError(f"a p-value lies in [0, 1], got {p!r}")
    return value


def _is_numpy_bool(value: Any) -> bool:
    dtype = getattr(value, "dtype", None)
    return dtype is not None and getattr(dtype, "kind", "") == "b" and getattr(value, "shape", None) == ()
