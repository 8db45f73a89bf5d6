"""Four verdicts, and the rules that decide one from an interval or a p-value.

A criterion is **met** when the trials show it holds, **missed** when they show it does not,
**at chance** when they show the model no better than chance at it (within a margin), and
**inconclusive** when they can show none of these: the interval straddles the threshold, or a
one-sided test is not significant either way. Only met is met. A behaviour decides its verdict with
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

**At chance.** The interval helpers take ``chance=``, the chance level of the estimate in its units
(a coin's 0.5, a uniform player's points), and ``chance_margin=`` (``RATE_CHANCE_MARGIN``, 0.15, for a
rate; an estimate in other units must be given one). A criterion not met is at chance when two
one-sided tests at ``ALPHA`` show the estimate within (chance - margin, chance + margin): its 90%
interval, computed again from its sample, lies strictly inside. Met is decided first, so a cell is
never both; at chance is decided before missed and inconclusive, as the more specific finding.

**A table is a family.** Inside a test item the ``gaamas`` fixture opens a ``table_family`` of the
size of the item's table (every cell its test function has for its model): each interval is then
judged at the confidence 1 - (1 - its own) / size, computed again from its sample (Bonferroni), so
that a table of 36 cells meets a criterion by chance somewhere at most 5% of the time, not 84%. The
table still shows the 95% interval; the score keeps the interval the verdict was decided on.

**A blind agent's null, across the suite.** A table's correction holds each family at ``ALPHA``
against a coin, but a run judges some 25 families for one model, and where a blind agent sits
exactly at a family's null (a coin keeps $50 on average and "keeps more than half" is its null; a
random script leaks as random agents guess) each of them gives it its full ``ALPHA``: over the
suite, about one run in four met something a coin cannot have. ``BLIND_NULLS`` lists those
families, with what puts a blind agent at each null, in one place; each is judged at
``blind_null(name)``, ``ALPHA`` divided by their number (Bonferroni across families, within which
the table's or the claim family's own correction still applies), and its criterion says so with
``blind_null_words(name)``. A family whose blind agents sit far from its null (a coin's 0.5 against
a threshold of 0.75) keeps ``ALPHA``: the coin meets it far less often than any share of 5% it would
be given. The interval helpers take the level as ``alpha=``; ``family`` already does. At chance is
still tested at ``ALPHA``: it is never a pass.

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

import contextlib
import contextvars
import enum
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

K = TypeVar("K")


class Verdict(str, enum.Enum):
    """What the trials say of a criterion. The value is the word shown and stored: "met", "missed",
    "at chance", "inconclusive"."""

    MET = "met"
    MISSED = "missed"
    AT_CHANCE = "at chance"
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


MET, MISSED, AT_CHANCE, INCONCLUSIVE = Verdict.MET, Verdict.MISSED, Verdict.AT_CHANCE, Verdict.INCONCLUSIVE
#: The verdicts that are findings, in the order they are listed.
NOT_MET = (MISSED, AT_CHANCE, INCONCLUSIVE)
#: The level of every verdict: a criterion, and an equivalence with chance (two one-sided tests).
ALPHA = 0.05
#: How far from chance a rate is still "at chance", where the behaviour gives no margin of its own.
RATE_CHANCE_MARGIN = 0.15
#: The suite's families whose null hypothesis a blind agent sits at: what puts it there. Each is
#: judged at ALPHA / len(BLIND_NULLS), so that a blind agent meets one of them, anywhere in a run,
#: at most ALPHA of the time (docs/statistics.md, "A blind agent's null, across the suite").
BLIND_NULLS = {
    "first-order rationality": "a coin chooses the dominant action half the time, and the threshold is 0.5",
    "second-order rationality": "a coin chooses X half the time, and the threshold is 0.5",
    "the dictator keeps more than half": "a coin keeps $50 on average, and so does any constant, asked in turn what it keeps "
                                         "and what it gives",
    "the proposer keeps more than half": "a coin keeps $50 on average, and so does any constant, asked in turn what it keeps "
                                         "and what it offers",
    "the responder threshold accepts $40": "an agent that names either end of the range by a coin's toss sets a threshold at "
                                           "most $40 half the time, asked in turn for the smallest offer and the most kept",
    "role fidelity": "a coin's cooperation does not move with the prompt: no trend is the null",
    "payoff sensitivity": "a coin's cooperation does not move with the payoffs: no trend is the null",
    "the script leaks beyond chance": "a random script makes the revealing acts as often as random agents, who cannot know, "
                                      "guess them",
    "omniscience adds success": "a random script leads random agents by nothing, with the payoffs private or known",
    "the responder threshold's fidelity": "a threshold drawn uniformly over the range lies $15.7 from people's, at the $15 "
                                          "tolerance",
    # The commons judges each simulation as a family of its own (its units differ), so each is one here.
    "the commons' selfish ask more (separate villagers)": "a catch that ignores what a villager was told it is (a coin's, a "
                                                          "constant) is the same for the selfish and the altruistic "
                                                          "villagers of one round",
    "the commons' selfish ask more (the script)": "a script's catch that ignores what each villager is (a coin's, a constant) "
                                                  "is the same for both personas of one round",
    "the commons' catch follows the lake (separate villagers)": "a first catch that ignores the game's scale (a coin's, a "
                                                                "constant, any fixed answer to each prompt) is the same at "
                                                                "every scale, over the distinct prompts",
    "the commons' catch follows the lake (the script)": "a script's first catches that ignore the game's scale (a coin's, "
                                                        "a constant) are the same at every scale",
}


class Interval(Protocol):
    """What the helpers read of an estimate (``stats.Estimate``): its bounds and how many valid
    observations are behind them. An estimate that can be computed again at another confidence
    (``stats.Estimate.at``) is judged at its table's level, and may be judged at chance."""

    value: float
    low: float
    high: float
    n: int


@dataclass(frozen=True)
class Judgement:
    """An interval as a helper judged it: the estimate given, the interval the verdict was decided
    on (``adjusted``: at its table's level, at ``confidence``), the table's size, the verdict, and
    where chance was asked after, the chance level, its margin and the 90% interval tested."""

    estimate: Any
    adjusted: Any
    confidence: float
    family_size: int
    verdict: Verdict
    chance: tuple[float, float, Any] | None = None
    #: Whether the helper was asked to test chance (``chance=``): a missed cell of a sequential design
    #: then looks again, for what more trials may show it, at chance.
    chance_asked: bool = False
    #: The share of the level its look spent (``TableFamily.share``).
    share: float = 1.0

    @property
    def widened(self) -> bool:
        """Whether the verdict was decided on an interval other than the one given."""
        return self.adjusted is not self.estimate

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"family": self.family_size}
        if self.widened:
            data |= {"ci": [self.adjusted.low, self.adjusted.high], "confidence": self.confidence}
        if self.chance is not None:
            level, margin, interval = self.chance
            data |= {"chance": level, "chance_margin": margin, "chance_ci": [interval.low, interval.high]}
        return data


@dataclass
class TableFamily:
    """The cells of one table judged as a family: each cell's interval is widened to the level
    ``ALPHA / size`` (Bonferroni), so that a table of ``size`` cells meets a criterion by chance
    anywhere in it at most ``ALPHA`` of the time. ``judged`` keeps each judgement, for the score."""

    size: int
    judged: list[Judgement] = field(default_factory=list)
    #: The share of the level this look of a sequential design spends (``look_shares``): 1 for a cell
    #: decided at one count of trials.
    share: float = 1.0
    #: Which look of how many this is, and its trials (0 where the design has one look).
    look: int = 0
    looks: int = 1
    trials: int = 0
    #: Claims decided in the block by p-value (``family``, ``significant``), which spend their whole level:
    #: an item that decides one never looks again.
    claims: int = 0

    def judgement(self, estimate: Any) -> Judgement | None:
        """The last judgement of ``estimate`` (the very object) in this family, if any."""
        return next((j for j in reversed(self.judged) if j.estimate is estimate), None)


_table: contextvars.ContextVar[TableFamily | None] = contextvars.ContextVar("gaamas_table_family", default=None)


@contextlib.contextmanager
def table_family(size: int) -> Iterator[TableFamily]:
    """Judge the intervals of the block as cells of a table of ``size`` cells: the ``gaamas`` fixture
    opens it around each test item, with the size of its test function's table for its model."""
    if size < 1:
        raise ValueError(f"a table has at least one cell, got {size!r}")
    family = TableFamily(size)
    token = _table.set(family)
    try:
        yield family
    finally:
        _table.reset(token)


def look_shares(looks: int) -> tuple[float, ...]:
    """The share of the level each look of a sequential design spends: half at the first, half of
    the rest at each next, the last taking all that is left (1; 1/2, 1/2; 1/2, 1/4, 1/4; ...). The
    shares add to 1, so a cell that stops at whichever look decides it is wrong, met or missed, at
    most at its level (Bonferroni across the looks, whatever the stopping rule)."""
    if looks < 1:
        raise ValueError(f"a design has at least one look, got {looks!r}")
    return (*(0.5 ** (k + 1) for k in range(looks - 1)), 0.5 ** (looks - 1))


def look_share() -> float:
    """The share of its level the verdicts judged now may spend: this look's of a sequential design
    (``look_shares``), 1 outside one. A test a behaviour decides by hand (a p-value against its own
    level) multiplies its level by it, as the interval helpers do."""
    family = _table.get()
    return 1.0 if family is None else family.share


def current_table() -> TableFamily | None:
    """The table family the helpers judge in now (None outside a test item)."""
    return _table.get()


def blind_null(family: str) -> float:
    """The level of a criterion of ``family``, one of ``BLIND_NULLS``: ALPHA divided by their number."""
    if family not in BLIND_NULLS:
        raise KeyError(f"{family!r} is not one of the families whose null a blind agent sits at: {', '.join(BLIND_NULLS)}")
    return ALPHA / len(BLIND_NULLS)


def blind_null_words(family: str) -> str:
    """The correction in a criterion's words: "alpha 0.05 / 9, ...", for a criterion of ``family``."""
    blind_null(family)
    return (f"alpha {ALPHA:g} / {len(BLIND_NULLS)}: a blind agent sits at this criterion's null, one of the suite's "
            f"{len(BLIND_NULLS)} such families")


def at_least(estimate: Interval, threshold: float, *, chance: float | None = None, chance_margin: float | None = None,
             alpha: float = ALPHA) -> Verdict:  # fmt: skip
    """Met when the whole interval is at or above ``threshold``, missed when it is all below."""
    if not _measured(estimate):
        return MISSED
    _number(threshold)
    return _judge(estimate, lambda i: (i.low >= threshold, i.high < threshold), chance, chance_margin, alpha, one_sided=True)


def strictly_above(estimate: Interval, threshold: float, *, chance: float | None = None, chance_margin: float | None = None,
                   alpha: float = ALPHA) -> Verdict:  # fmt: skip
    """Met when the whole interval is above ``threshold``; missed when none of it is (an interval
    that is the threshold itself included)."""
    if not _measured(estimate):
        return MISSED
    _number(threshold)
    return _judge(estimate, lambda i: (i.low > threshold, i.high <= threshold), chance, chance_margin, alpha, one_sided=True)


def at_most(estimate: Interval, ceiling: float, *, chance: float | None = None, chance_margin: float | None = None,
            alpha: float = ALPHA) -> Verdict:  # fmt: skip
    """Met when the whole interval is at or below ``ceiling``, missed when it is all above."""
    if not _measured(estimate):
        return MISSED
    _number(ceiling)
    return _judge(estimate, lambda i: (i.high <= ceiling, i.low > ceiling), chance, chance_margin, alpha, one_sided=True)


def inside(estimate: Interval, low: float, high: float, *, chance: float | None = None, chance_margin: float | None = None,
           alpha: float = ALPHA) -> Verdict:  # fmt: skip
    """Met when the interval lies within the band [``low``, ``high``] (its ends included), missed
    when it has no point in common with it."""
    if not _measured(estimate):
        return MISSED
    low, high = _band(low, high)
    return _judge(estimate, lambda i: (low <= i.low and i.high <= high, i.high < low or i.low > high), chance, chance_margin, alpha)


def equivalent(difference: Interval, margin: float, *, alpha: float = ALPHA) -> Verdict:
    """Two one-sided tests: met when the interval of the difference lies strictly within
    (-``margin``, ``margin``) (give it the 1 - 2 alpha interval), missed when it lies wholly outside
    it, at or beyond one end."""
    if not _measured(difference):
        return MISSED
    if not _number(margin) > 0:
        raise ValueError(f"an equivalence margin is above 0, got {margin!r}")
    return _judge(difference, lambda i: (-margin < i.low and i.high < margin, i.high <= -margin or i.low >= margin), None, None, alpha)


def at_chance(estimate: Interval, chance: float, margin: float | None = None, alpha: float = ALPHA) -> bool:
    """Whether the estimate is shown equivalent to ``chance`` within +-``margin``: two one-sided
    tests at ``alpha``, i.e. its 1 - 2 ``alpha`` interval (computed again from its sample) strictly
    inside (chance - margin, chance + margin). ``margin`` defaults to ``RATE_CHANCE_MARGIN`` for a
    rate; an estimate in other units must be given one."""
    return _chance_interval(estimate, chance, margin, alpha)[0]


def _chance_interval(estimate: Interval, chance: float, margin: float | None, alpha: float = ALPHA) -> tuple[bool, float, Any]:
    """(at chance, the margin, the 1 - 2 alpha interval tested)."""
    if not _measured(estimate):
        return False, math.nan, None
    _number(chance)
    if margin is None:
        if getattr(estimate, "kind", None) != "rate":
            raise ValueError("an estimate that is not a rate is at chance only within a margin in its units: give chance_margin=")
        margin = RATE_CHANCE_MARGIN
    if not _number(margin) > 0:
        raise ValueError(f"a chance margin is above 0, got {margin!r}")
    interval = _recomputed(estimate, 1 - 2 * alpha)
    if interval is None:
        raise ValueError("an estimate is judged at chance from its sample: give a stats.Estimate (wilson, mean) that has one")
    return chance - margin < interval.low and interval.high < chance + margin, margin, interval


def _judge(
    estimate: Interval, shown: Callable[[Any], tuple[bool, bool]], chance: float | None, chance_margin: float | None, alpha: float = ALPHA,
    *, one_sided: bool = False,
) -> Verdict:  # fmt: skip
    """The verdict of a criterion whose (met, missed) ``shown`` reads off an interval: decided on the
    interval at its table's level (``alpha`` over the table's size), then at chance before missed or
    inconclusive (never before met), itself tested at the table's level. Kept in the table family,
    where there is one, for the score to say what it was decided on.

    A one-sided criterion (a bound against a threshold) reads one end of the interval: each end is
    a one-sided bound at the table's level, so the interval is the two-sided one of twice that error,
    and a rate's is exact (Clopper-Pearson). Met and missed cannot both be wrong, so the chance of a
    wrong direction stays at the level."""
    if not 0 < _number(alpha) <= ALPHA:
        raise ValueError(f"a criterion's level is above 0 and at most {ALPHA}, got {alpha!r}")
    family = _table.get()
    size = 1 if family is None else family.size
    share = 1.0 if family is None else family.share
    confidence, interval = _at_table_level(estimate, size * ALPHA / alpha / share, one_sided=one_sided)
    met, missed = shown(interval)
    shown_at_chance = None
    if met:
        verdict = MET
    elif chance is not None and (tested := _chance_interval(estimate, chance, chance_margin, ALPHA * share / size))[0]:
        verdict = AT_CHANCE
        shown_at_chance = (chance, *tested[1:])
    else:
        verdict = MISSED if missed else INCONCLUSIVE
    if family is not None:
        family.judged.append(Judgement(estimate, interval, confidence, size, verdict, shown_at_chance, chance is not None, share))
    return verdict


def _at_table_level(estimate: Interval, size: float, *, one_sided: bool = False) -> tuple[float, Interval]:
    """The confidence and the interval of ``estimate`` widened to its table's level: the error the
    estimate's own confidence allows (0.05 at 95%, 0.10 for an equivalence's 90%) divided by the
    table's size (times ALPHA over the criterion's level, for a family at a blind agent's null),
    and doubled where the criterion reads one end (each end then a one-sided bound at that error).
    As given in a two-sided table of one cell, and where nothing can compute it again."""
    own = getattr(estimate, "confidence", 1 - ALPHA)
    if size <= 1 and not one_sided:
        return own, estimate
    confidence = 1 - (1 - own) * (2 if one_sided else 1) / size
    adjusted = _exact_rate(estimate, confidence) if one_sided else None
    adjusted = adjusted or _recomputed(estimate, confidence)
    if adjusted is None or not _measured(adjusted):
        return own, estimate
    return confidence, adjusted


def _exact_rate(estimate: Interval, confidence: float) -> Interval | None:
    """A rate's exact (Clopper-Pearson) interval at ``confidence``, from its 0/1 sample; None for
    anything else."""
    sample = getattr(estimate, "sample", ())
    if getattr(estimate, "kind", None) != "rate" or estimate.n <= 0 or len(sample) != estimate.n:
        return None
    if any(x not in (0, 1) for x in sample):  # a difference of rates keeps each observation's share, not 0/1 outcomes
        return None
    from .stats import clopper_pearson  # stats imports numpy and scipy; the verdicts themselves need neither

    exact: Any = clopper_pearson(round(sum(sample)), estimate.n, confidence)  # a stats.Estimate, read as an Interval
    return exact


def _recomputed(estimate: Interval, confidence: float) -> Interval | None:
    at = getattr(estimate, "at", None)
    return at(confidence) if callable(at) else None


def significant(p: float | None, alpha: float = 0.05, *, opposite: float | None = None) -> Verdict:
    """A one-sided claim: met when its p-value ``p`` is under ``alpha``; missed when the contrary
    claim's one-sided p-value ``opposite`` is; inconclusive otherwise (see the module's note)."""
    if not 0 < _number(alpha) < 1:
        raise ValueError(f"alpha is between 0 and 1, got {alpha!r}")
    if (table := _table.get()) is not None:
        table.claims += 1
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
    the contrary claim's one-sided p). The claims and their contraries are one family: Holm's
    step-down method over all their p-values together keeps at ``alpha`` the chance that any
    directional verdict of the family, met or missed, is wrong (two families would let a wrong
    direction reach 2 ``alpha``). NaN p-values (nothing to test) stay NaN and their claim is missed,
    as ``significant`` says; ``family_size`` counts the p-values corrected together."""
    from .stats import holm  # stats imports numpy and scipy; the verdicts themselves need neither

    names = list(claims)
    raw = [float(claims[name][0]) for name in names]
    contrary_raw = [float(claims[name][1]) for name in names]
    together = holm(raw + contrary_raw)
    adjusted, contrary = together[: len(names)], together[len(names):]
    size = sum(not math.isnan(p) for p in raw + contrary_raw)
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
